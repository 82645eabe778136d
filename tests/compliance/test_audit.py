"""Every compliance decision is stored with its evidence, append-only and hash-chained."""

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import DatabaseError, connection, transaction

from compliance.checker import caption_check, compiled, policies_from_source
from compliance.models import ComplianceDecision
from compliance.selectors import audit_chain_problems
from compliance.services import caption_check_record

pytestmark = pytest.mark.django_db
POLICY = compiled(code="us-ftc", version=1, data=policies_from_source()[0])


def record(campaign, caption, claim_id):
    verdict = caption_check(caption, policies=[POLICY], brand=campaign.brand.name)
    with transaction.atomic():
        return caption_check_record(
            campaign=campaign, verdict=verdict, caption=caption, claim_id=claim_id, stage="submit"
        )


def test_a_decision_row_carries_its_evidence_and_links_to_the_one_before(summer):
    first = record(summer, "#ad coffee", 1)
    second = record(summer, "coffee #sp", 2)

    assert (second.seq, second.prev_hash) == (first.seq + 1, first.row_hash)
    assert second.verdict == "non_compliant" and second.reasons == ["ambiguous_only"]
    assert second.evidence["caption"] == "coffee #sp" and second.evidence["label_state"] == "unknown"
    assert second.policy_versions == ["us-ftc@1"] and second.checker_version.startswith("caption-checker/")
    assert audit_chain_problems() == []
    call_command("compliance_audit_check")


@pytest.mark.postgres
@pytest.mark.parametrize("statement", ["UPDATE {t} SET verdict = 'compliant'", "DELETE FROM {t}"])
def test_postgres_refuses_to_change_or_remove_a_decision(summer, statement):
    record(summer, "coffee #sp", 1)

    with (
        pytest.raises(DatabaseError, match="append-only"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute(statement.format(t="compliance_compliancedecision"))

    assert ComplianceDecision.objects.get(kind="caption_check").verdict == "non_compliant"


@pytest.mark.postgres
def test_an_edit_made_around_the_trigger_breaks_the_chain(summer):
    record(summer, "#ad coffee", 1)
    tampered = record(summer, "coffee #sp", 2)
    record(summer, "#ad more coffee", 3)

    with connection.cursor() as cursor:  # what a superuser could do: bypass the triggers
        cursor.execute("SET session_replication_role = replica")
        cursor.execute(
            "UPDATE compliance_compliancedecision SET verdict = 'compliant' WHERE id = %s", [tampered.pk]
        )
        cursor.execute("SET session_replication_role = DEFAULT")

    problems = audit_chain_problems()
    assert problems == [
        f"brand {summer.brand_id} decision #{tampered.seq} (id {tampered.pk}): "
        "its content does not match its hash (edited)"
    ]
    with pytest.raises(CommandError, match="1 break"):
        call_command("compliance_audit_check")


@pytest.mark.postgres
def test_a_removed_row_is_a_gap(summer):
    record(summer, "#ad coffee", 1)
    removed = record(summer, "coffee #sp", 2)
    record(summer, "#ad more coffee", 3)

    with connection.cursor() as cursor:
        cursor.execute("SET session_replication_role = replica")
        cursor.execute("DELETE FROM compliance_compliancedecision WHERE id = %s", [removed.pk])
        cursor.execute("SET session_replication_role = DEFAULT")

    assert any("a row is missing" in problem for problem in audit_chain_problems())


def test_pages_verify_the_chain_again_once_it_grows(summer, django_assert_num_queries):
    from compliance.selectors import audit_chain_problems_recent

    record(summer, "#ad coffee", 1)
    assert audit_chain_problems_recent(brand_id=summer.brand_id) == []
    with django_assert_num_queries(1):  # the chain's length; the verdict comes from the cache
        assert audit_chain_problems_recent(brand_id=summer.brand_id) == []

    record(summer, "coffee #sp", 2)
    with django_assert_num_queries(2):  # grown: verified again
        assert audit_chain_problems_recent(brand_id=summer.brand_id) == []
