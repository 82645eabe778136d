"""Keys become the brand's on a database that already holds keys per API key: each row takes its
key's brand, and where two keys of one brand used the same Idempotency-Key the first answer stays."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

BEFORE = [("api", "0006_inbound_event_lease")]
AFTER = [("api", "0007_idempotency_key_per_brand")]


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_existing_keys_move_to_their_brand_and_the_first_answer_stays():
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    old = executor.loader.project_state(BEFORE).apps
    ApiKey, IdempotencyKey = old.get_model("api", "ApiKey"), old.get_model("api", "IdempotencyKey")
    now = timezone.now()
    first, second = (
        ApiKey.objects.create(brand_id=7, name=name, prefix=f"jb_{name}", secret_hash="x")
        for name in ("old", "new")
    )
    other_brand = ApiKey.objects.create(brand_id=8, name="theirs", prefix="jb_theirs", secret_hash="x")
    rows = {
        "first": IdempotencyKey.objects.create(
            api_key=first, key="k", request_hash="a", state="done", response_status=201,
            response_body="first", created_at=now, locked_at=now,
        ),
        "copy": IdempotencyKey.objects.create(
            api_key=second, key="k", request_hash="b", state="done", response_status=201,
            response_body="copy", created_at=now, locked_at=now,
        ),
        "theirs": IdempotencyKey.objects.create(
            api_key=other_brand, key="k", request_hash="c", state="done", response_status=201,
            response_body="theirs", created_at=now, locked_at=now,
        ),
    }  # fmt: skip

    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(AFTER)
    new = executor.loader.project_state(AFTER).apps.get_model("api", "IdempotencyKey")
    kept = {row.pk: (row.brand_id, row.response_body) for row in new.objects.all()}
    assert kept == {rows["first"].pk: (7, "first"), rows["theirs"].pk: (8, "theirs")}

    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())
