"""Approved rewards go to the bank in batches: the standing worker claims the people due, makes
their payouts in one transaction with one ledger batch, sends them, and settles them in one more.
A worker that dies anywhere in a batch, or two that race over the same people, still leave every
reward paid exactly once, one transfer per EndToEndId at the bank and the ledger whole."""

import contextlib
import itertools
import threading
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schwifty import IBAN

from joyback.ledger.models import Account, AccountKind
from joyback.ledger.selectors import ledger_drift
from payouts import pipeline
from payouts.forms import CONSENT_VERSION
from payouts.models import Payout, SandboxBankPayment, VopCheck
from payouts.payees.services import payee_account_save
from payouts.rails import iban_check
from payouts.sandbox.funding import play_money_add
from payouts.submission import create, outcomes
from payouts.submission.crash import SimulatedCrash, _crash_at
from payouts.submission.sweeps import payouts_sweep
from payouts.vop import payee_vop_check
from verification.models import Participant

pytestmark = pytest.mark.django_db
NUMBERS = itertools.count(1)
# The sandbox bank's magic last digits (tests/payouts/conftest.py IBANS): what it does with a transfer.
SUFFIX = {"settle": "3000", "timeout": "9200", "pending": "9300", "AC04": "9004"}
FINAL = {"settle": "settled", "timeout": "settled", "pending": "settled", "AC04": "rejected"}
BATCH_CRASH_POINTS = ["batch_claimed", "batch_posted", "batch_committed", "batch_sending", "batch_sent"]


def own_iban(number: int, outcome: str = "settle") -> str:
    """A valid IBAN of the person's own whose last four digits tell the sandbox bank what to do."""
    account = f"{number % 1_000_000:06d}{SUFFIX[outcome]}"
    return str(IBAN.generate("DE", bank_code="37040044", account_code=account))


def ready_person(campaign, *, outcome: str = "settle", vop: bool = True):
    """A person with a verified WhatsApp identity and bank details of their own (name checked with
    their bank unless vop=False), not yet rewarded."""
    from verification.services.participants import identity_attach, participant_create

    number = next(NUMBERS)
    person = participant_create(brand=campaign.brand)
    identity = identity_attach(
        participant=person, provider="whatsapp", subject=f"4917{number:08d}", display_name=f"Payee {number}"
    )
    payee = payee_account_save(
        participant=person,
        name=f"Payee {number}",
        email=f"payee-{number}@example.com",
        phone="",
        bank_account=iban_check(own_iban(number, outcome)),
        currency="EUR",
        consent_version=CONSENT_VERSION,
        onboard=False,
    )
    if vop:
        payee_vop_check(payee=payee)
    return person, identity


def approve(campaign, identity):
    from verification.services.rewards import action_reward

    claim = action_reward(rule=campaign.rules.get(trigger="whatsapp_optin"), identity=identity)
    assert claim.status == "approved", claim.reason
    return claim


def restart(*, batch: int = 100):
    """A new worker comes up later: the cluster's sweep, then the standing worker's passes, until
    nothing is left to do."""
    later = timezone.now() + timedelta(minutes=10)
    for _ in range(4):
        payouts_sweep(now=later)
        while pipeline.payouts_due_process(limit=batch):
            pass
        later += timedelta(minutes=10)


def assert_whole(people_outcomes):
    """Every person paid exactly what they were owed, once; the bank got one transfer per payout;
    nothing is left in transit; the ledger's balances are its entries."""
    for person, outcome in people_outcomes:
        payouts = list(Payout.objects.filter(participant=person))
        assert [p.status for p in payouts] == [FINAL[outcome]], (outcome, [p.status for p in payouts])
        for payout in payouts:
            assert SandboxBankPayment.objects.filter(end_to_end_id=payout.end_to_end_id).count() == 1
        payable = Account.objects.get(kind=AccountKind.PARTICIPANT_PAYABLE, subject=person.ledger_subject)
        assert payable.balance == (0 if FINAL[outcome] == "settled" else payouts[0].amount)
    in_transit = Account.objects.filter(kind=AccountKind.PAYOUT_IN_TRANSIT).values_list("balance", flat=True)
    assert sum(in_transit) == 0
    assert ledger_drift() == []


@pytest.fixture
def club(make_live_campaign):
    return make_live_campaign(slug="payday-club", budget=10_000_00)


def test_approvals_are_paid_in_one_batch_with_one_ledger_transaction_each_way(
    club, monkeypatch, django_capture_on_commit_callbacks
):
    people = [ready_person(club) for _ in range(5)]
    queued = []
    monkeypatch.setattr("joyback.queue._enqueue", lambda func, *args: queued.append(func))
    for _person, identity in people:
        approve(club, identity)
    assert Participant.objects.filter(payout_due_at__isnull=False).count() == 5
    batches = []
    real = create.postings_post
    for module in (create, outcomes):  # the making and the settling, each written once for N payouts
        monkeypatch.setattr(
            module, "postings_post", lambda **kw: batches.append(len(kw["postings"])) or real(**kw)
        )

    with django_capture_on_commit_callbacks(execute=True):  # the mails go after the commit
        assert pipeline.payouts_due_process() == 5

    assert batches == [5, 5]  # the payouts' postings, then their settlements
    assert not [func for func in queued if func.startswith("payouts.")]  # no task per payout
    assert Participant.objects.filter(payout_due_at__isnull=False).count() == 0
    assert_whole([(person, "settle") for person, _identity in people])
    payout = Payout.objects.filter(participant=people[0][0]).get()
    assert list(payout.events.values_list("from_status", "to_status")) == [
        ("", "created"),
        ("created", "payee_verified"),
        ("payee_verified", "submitted"),
        ("submitted", "settled"),
    ]
    assert payout.submissions == 1 and payout.psp_reference
    assert payout.notifications.get().sent_at is not None


def test_a_person_whose_name_the_bank_was_never_asked_about_is_asked_once(club):
    person, identity = ready_person(club, vop=False)
    approve(club, identity)
    pipeline.payouts_due_process()  # the name check is asked for, then the payout goes

    reward_again(club, person)
    pipeline.payouts_due_process()  # the answer kept is used

    statuses = Payout.objects.filter(participant=person).values_list("status", flat=True)
    assert list(statuses) == ["settled", "settled"]
    assert VopCheck.objects.filter(payee__participant=person).count() == 1


def test_nothing_is_paid_to_a_person_held_for_review_or_without_bank_details(club):
    from verification.services.participants import identity_attach, participant_create, participants_flag

    held, held_identity = ready_person(club)
    approve(club, held_identity)
    participants_flag(flags=[(held.pk, "payee_iban_shared", "the same bank account as someone")])
    nobody = participant_create(brand=club.brand)
    approve(club, identity_attach(participant=nobody, provider="whatsapp", subject="4915000000001"))

    assert pipeline.payouts_due_process() == 2

    assert not Payout.objects.exists()
    assert Participant.objects.filter(payout_due_at__isnull=False).count() == 0  # their own events wake them


@pytest.mark.parametrize("crash_at", BATCH_CRASH_POINTS)
def test_a_crash_anywhere_in_a_batch_sends_each_payout_once_and_loses_nothing(crash_at, club):
    outcomes = ["settle", "timeout", "AC04", "pending"]
    people = []
    for outcome in outcomes:
        person, identity = ready_person(club, outcome=outcome)
        approve(club, identity)
        people.append((person, outcome))
    _crash_at.add(crash_at)

    with pytest.raises(SimulatedCrash):
        pipeline.payouts_due_process()
    restart()

    assert_whole(people)
    assert all(p.submissions >= 1 for p in Payout.objects.all())


def test_a_failing_batch_falls_back_to_paying_its_people_one_by_one(club, monkeypatch):
    people = [ready_person(club) for _ in range(3)]
    for _person, identity in people:
        approve(club, identity)
    real = create._payouts_plan

    def plan_failing_for_many(payees, *args, **kwargs):
        # A batch of several fails; the same making for one person at a time works.
        if len(payees) > 1:
            raise ZeroDivisionError
        return real(payees, *args, **kwargs)

    monkeypatch.setattr(create, "_payouts_plan", plan_failing_for_many)

    assert pipeline.payouts_due_process() == 3

    assert_whole([(person, "settle") for person, _identity in people])


amounts_of_steps = st.lists(
    st.one_of(
        st.tuples(st.just("batch"), st.integers(1, 4)),
        st.tuples(st.just("crash"), st.sampled_from(BATCH_CRASH_POINTS), st.integers(1, 4)),
        st.tuples(st.just("approve"), st.integers(0, 3)),
        st.tuples(st.just("sweep")),
    ),
    max_size=8,
)


def test_any_interleaving_of_batches_and_crashes_pays_every_reward_exactly_once(club):
    @given(st.lists(st.sampled_from(list(SUFFIX)), min_size=1, max_size=4), amounts_of_steps)
    @settings(
        max_examples=15,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    def run(outcomes, steps):
        people = [(*ready_person(club, outcome=outcome), outcome) for outcome in outcomes]
        for _person, identity, _outcome in people:
            approve(club, identity)
        for step in steps:
            if step[0] == "batch":
                pipeline.payouts_due_process(limit=step[1])
            elif step[0] == "crash":
                _crash_at.add(step[1])
                with contextlib.suppress(SimulatedCrash):
                    pipeline.payouts_due_process(limit=step[2])
                _crash_at.clear()
            elif step[0] == "approve":
                # A second reward for one of them (a TikTok login), perhaps while a payout is open.
                person, _identity, _outcome = people[step[1] % len(people)]
                reward_again(club, person)
            else:
                payouts_sweep(now=timezone.now() + timedelta(minutes=10))
        restart(batch=3)
        for person, _identity, outcome in people:
            owed = sum(person.claims.filter(status="approved").values_list("amount", flat=True))
            payouts = Payout.objects.filter(participant=person)
            paid = sum(payouts.filter(status="settled").values_list("amount", flat=True))
            if outcome == "AC04":  # the account is closed: owed until they give new details
                assert paid == 0 and payouts.count() == 1
                assert payouts.get().status == "rejected"
            else:
                assert paid == owed, (outcome, steps, list(payouts.values_list("status", "amount")))
            for payout in payouts:
                assert SandboxBankPayment.objects.filter(end_to_end_id=payout.end_to_end_id).count() == 1
        in_transit = Account.objects.filter(kind=AccountKind.PAYOUT_IN_TRANSIT).values_list(
            "balance", flat=True
        )
        assert sum(in_transit) == 0
        assert ledger_drift() == []

    run()


def reward_again(campaign, person):
    from verification.models import ActionClaim
    from verification.services.participants import identity_attach
    from verification.services.rewards import action_reward

    if ActionClaim.objects.filter(participant=person, rule__trigger="tiktok_login").exists():
        return
    rule = campaign.rules.get(trigger="tiktok_login")
    identity = identity_attach(participant=person, provider="tiktok", subject=f"open-id-{person.pk}")
    action_reward(rule=rule, identity=identity)


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_workers_racing_over_the_same_people_never_submit_a_payout_twice(club, monkeypatch):
    # Set up without the inline pass a test's commit would run: the workers below take them.
    monkeypatch.setattr("verification.services.rewards.standing_work_soon", lambda name: None)
    people = []
    for number in range(12):
        person, identity = ready_person(club, outcome="timeout" if number % 4 == 0 else "settle")
        approve(club, identity)
        people.append((person, "timeout" if number % 4 == 0 else "settle"))
    barrier = threading.Barrier(3)
    failures = []

    def worker():
        try:
            barrier.wait()
            while pipeline.payouts_due_process(limit=2):
                pass
        except Exception as error:  # the assertion below says which
            failures.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=worker) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    restart()  # the lost answers (timeouts) are asked about

    assert_whole(people)
    assert set(Payout.objects.values_list("submissions", flat=True)) == {1}


def test_an_idle_worker_finds_the_people_due_with_one_statement(club, django_assert_num_queries):
    from joyback.queue import standing_work_waiting

    person, identity = ready_person(club)
    with django_assert_num_queries(1):
        assert standing_work_waiting() is False
    approve(club, identity)
    with django_assert_num_queries(1):
        assert standing_work_waiting() is True
    pipeline.payouts_due_process()
    assert standing_work_waiting() is False
    assert Payout.objects.get(participant=person).status == "settled"


def test_the_banks_match_is_kept_when_the_same_details_are_entered_again(club, monkeypatch):
    from payouts import psp

    person, _identity = ready_person(club)
    first = person.payee_accounts.get()
    asked = []
    real = psp.payee_verify
    monkeypatch.setattr(psp, "payee_verify", lambda **kw: asked.append(kw) or real(**kw))

    again = payee_account_save(
        participant=person,
        name=first.holder_name,
        email=first.email,
        phone="",
        bank_account=first.account,
        currency="EUR",
        consent_version=CONSENT_VERSION,
        onboard=False,
    )
    kept = payee_vop_check(payee=again)
    renamed = payee_account_save(
        participant=person,
        name="Someone Else",
        email=first.email,
        phone="",
        bank_account=first.account,
        currency="EUR",
        consent_version=CONSENT_VERSION,
        onboard=False,
    )
    payee_vop_check(payee=renamed)

    assert kept.result == "MTCH" and kept.checked_at == first.vop_checks.get().checked_at
    assert [call["name"] for call in asked] == ["Someone Else"]  # only the new name went to the bank


def test_a_test_brands_batch_settles_against_the_sandbox_bank_and_leaves_the_live_bank_alone(
    alpaca, make_live_campaign
):
    """Test and live payouts may share a batch; each settles against its own mode's platform bank."""
    from campaigns.modes import brand_test_twin
    from joyback.ledger.services import brand_balance_account, platform_bank

    twin = brand_test_twin(brand=alpaca)
    play_money_add(brand=twin, amount=50_00)
    test_club = make_live_campaign(slug="test-club", budget=50_00, brand=twin)
    live_club = make_live_campaign(slug="live-club", budget=50_00)
    test_person, test_identity = ready_person(test_club)
    live_person, live_identity = ready_person(live_club)
    live_bank = brand_balance_account(brand_id=alpaca.pk, currency="EUR").balance
    test_bank = platform_bank(currency="EUR", livemode=False).balance

    approve(test_club, test_identity)
    approve(live_club, live_identity)
    assert pipeline.payouts_due_process() == 2

    assert_whole([(test_person, "settle"), (live_person, "settle")])
    amount = test_club.rules.get(trigger="whatsapp_optin").reward_amount
    assert platform_bank(currency="EUR", livemode=False).balance == test_bank - amount
    # The live payout left Alpaca's own balance account at the provider.
    assert brand_balance_account(brand_id=alpaca.pk, currency="EUR").balance == live_bank - amount


def _broken_senders():
    from concurrent.futures import ThreadPoolExecutor

    def fail():
        raise RuntimeError("no database connection for this thread")

    broken = ThreadPoolExecutor(max_workers=1, initializer=fail)
    with contextlib.suppress(Exception):
        broken.submit(int).result()
    return broken


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_broken_set_of_senders_is_replaced_and_the_next_batch_goes_to_the_bank(club, monkeypatch, settings):
    settings.PAYOUT_SEND_THREADS = 2
    monkeypatch.setattr("verification.services.rewards.standing_work_soon", lambda name: None)
    broken = _broken_senders()
    monkeypatch.setattr(pipeline, "_pool", broken)
    people = []
    for _ in range(3):
        person, identity = ready_person(club)
        approve(club, identity)
        people.append((person, "settle"))

    assert pipeline.payouts_due_process() == 3

    assert pipeline._pool is not broken
    assert_whole(people)
    assert set(Payout.objects.values_list("submissions", flat=True)) == {1}
    pipeline.payouts_senders_stop()


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_pass_costs_the_same_statements_for_ten_people_as_for_one(club, monkeypatch, settings):
    from django.test.utils import CaptureQueriesContext

    settings.PAYOUT_SEND_THREADS = 2  # the sandbox bank answers on the senders' connections
    monkeypatch.setattr("verification.services.rewards.standing_work_soon", lambda name: None)
    counts, people = [], []
    for size in (1, 1, 10):  # the first pass also makes the brand's in-transit account
        for _ in range(size):
            person, identity = ready_person(club)
            approve(club, identity)
            people.append((person, "settle"))
        with CaptureQueriesContext(connection) as statements:
            assert pipeline.payouts_due_process() == size
        counts.append(len(statements))
    pipeline.payouts_senders_stop()

    # Claiming the people due is one statement; the receipts read their rows and the people's
    # status links in one statement each, whatever the number of people.
    # The brand's own balance account at the provider and whether its custody is blocked, once a
    # batch each, whatever the number of payouts.
    assert counts[1] == counts[2] <= 41, counts
    assert_whole(people)


def test_a_batch_reads_its_brands_webhook_endpoints_once_however_many_payouts_it_settles(club):
    from django.test.utils import CaptureQueriesContext

    from joyback.api.models import WebhookEndpoint, WebhookEvent
    from joyback.api.webhooks.endpoints import webhook_endpoint_create

    webhook_endpoint_create(
        brand_id=club.brand_id, url="https://club.example/hooks", event_types=["payout.settled"]
    )
    table = f'"{WebhookEndpoint._meta.db_table}"'
    reads = []
    for size in (1, 6):
        people = [ready_person(club) for _ in range(size)]
        for _person, identity in people:
            approve(club, identity)
        with CaptureQueriesContext(connection) as statements:
            assert pipeline.payouts_due_process() == size
        reads.append(sum(table in statement["sql"] for statement in statements))
        # The brand still hears of every payout settled, one event each.
        told = WebhookEvent.objects.filter(
            brand_id=club.brand_id,
            type="payout.settled",
            data__participant_id__in=[person.pk for person, _identity in people],
        )
        assert told.count() == size
        assert_whole([(person, "settle") for person, _identity in people])

    assert reads == [1, 1]


def test_in_batch_mode_a_test_brands_payout_made_by_the_pipeline_leaves_at_once(
    alpaca, make_live_campaign, settings
):
    """Test payouts never go into the bank's pain.001 files (only live money does): made by the
    pipeline in batch mode, a test brand's payout goes one by one to the sandbox provider, as the
    single path sends it, instead of waiting for a file that never takes it."""
    from campaigns.modes import brand_test_twin

    settings.PAYOUT_SEPA_MODE = "batch"
    twin = brand_test_twin(brand=alpaca)
    play_money_add(brand=twin, amount=50_00)
    test_club = make_live_campaign(slug="test-club", budget=50_00, brand=twin)
    person, identity = ready_person(test_club)

    approve(test_club, identity)
    assert pipeline.payouts_due_process() == 1
    payouts_sweep()  # the bank's file, were it to take the payout, is built here

    payout = Payout.objects.get(participant=person)
    assert payout.scheme == "sepa_instant"
    assert payout.status == "settled"
    assert SandboxBankPayment.objects.filter(end_to_end_id=payout.end_to_end_id).count() == 1
