import hashlib
import json
import logging
from datetime import timedelta
from functools import partial
from urllib.parse import urljoin

from django.conf import settings
from django.core.mail import send_mail
from django.db import connection, transaction
from django.db.models import CharField, Exists, F, OuterRef, Q, Value
from django.db.models.functions import Cast, Concat
from django.utils import timezone, translation
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from campaigns.services import BrandNotVerified, brand_money_allowed_check
from joyback.api.services import webhook_event_emit
from joyback.crypto import encrypt
from joyback.ledger.models import Account, AccountKind, Transaction
from joyback.ledger.services import (
    InsufficientFunds,
    Posting,
    account_get_or_create,
    platform_bank,
    posting_post,
    transaction_reverse,
    transfer_post,
)
from joyback.modes import brand_livemode
from joyback.money import money_format
from joyback.postgresql.prepared import prepared_fetchall
from joyback.queue import claim_and_process, enqueue_on_commit, standing_work_inline
from payouts import psp
from payouts.fingerprints import payee_fingerprints
from payouts.iso20022.pain001 import pain001_files
from payouts.iso20022.pain002 import pain002_parse
from payouts.iso20022.types import CreditTransfer, Debtor
from payouts.links import status_page_path
from payouts.models import (
    OPEN_STATUSES,
    HoldReason,
    Notification,
    PayeeAccount,
    PayeeSubmission,
    PaymentBatch,
    Payout,
    PayoutAlert,
    PayoutEvent,
    PayoutScheme,
    PayoutStatus,
    Rail,
    TransferEvent,
    VopCheck,
    VopChoice,
    VopResult,
)
from payouts.providers import provider
from payouts.rails import BankAccount
from payouts.reconciliation_selectors import payouts_paused
from payouts.selectors import (
    brand_confirmed_funds,
    brand_paid_account_before,
    brand_paid_out,
    manual_payouts_count_since,
    manual_payouts_in_window,
    participant_latest_campaign,
    payee_submissions_unfinished,
    vop_latest,
)
from verification.models import ActionClaim, ClaimStatus, Participant
from verification.providers import whatsapp
from verification.services import (
    participant_create,
    participant_payable_account,
    participants_flag,
)

logger = logging.getLogger(__name__)


def payee_account_save(
    *,
    participant: Participant,
    name: str,
    email: str,
    phone: str,
    bank_account: BankAccount,
    currency: str,
    consent_version: str,
    language: str = "en",
    onboard: bool = True,
    status_url: str = "",
    campaign_name: str = "",
    submission: PayeeSubmission | None = None,
) -> PayeeAccount | None:
    """The participant's bank details from now on; an earlier account is kept, marked replaced.
    With a status_url, the private status link is mailed to them once the details are stored.
    From a submission: None when a newer submission of theirs was stored already."""
    with transaction.atomic(durable=True):
        # Two submissions of one person (a double click, two tabs) take turns here instead of
        # both replacing the current account and colliding on the one-current-payee constraint.
        Participant.objects.select_for_update().filter(pk=participant.pk).first()
        if submission is not None and not _submission_claim(submission):
            return None
        fingerprints = payee_fingerprints(account=json.dumps(bank_account.details), email=email, phone=phone)
        _details_lock(brand_id=participant.brand_id, fingerprints=fingerprints.values())
        now = timezone.now()
        PayeeAccount.objects.filter(participant=participant, replaced_at__isnull=True).update(replaced_at=now)
        payee = PayeeAccount.objects.create(
            participant=participant,
            holder_name=name,
            email=email or None,
            phone=phone or None,
            rail=bank_account.rail,
            currency=currency,
            country=bank_account.country,
            account=json.dumps(bank_account.details),
            account_masked=bank_account.masked,
            **fingerprints,
            bank_name=bank_account.bank_name,
            consent_at=now,
            consent_version=consent_version,
            language=language,
        )
        _shared_details_flag(payee)
        if onboard:
            enqueue_on_commit("payouts.tasks.payee_verify_task", payee.pk)
        if status_url:
            # Queued from inside the transaction: with the database as broker the task row commits
            # with the details, in the same commit (joyback.queue).
            enqueue_on_commit(
                "payouts.tasks.status_link_send_task", payee.pk, status_url, campaign_name, language
            )
    return payee


def _submission_claim(submission: PayeeSubmission) -> bool:
    """Under the participant's lock: mark the submission processed, and the person's older waiting
    ones with it (superseded, never stored). False when it was processed already or the person
    sent newer details since: workers may take submissions in any order, and only the latest are
    worth storing, checking with the bank and mailing about."""
    now = timezone.now()
    theirs = PayeeSubmission.objects.filter(participant_id=submission.participant_id)
    if theirs.filter(created_at__gt=submission.created_at).exists():
        theirs.filter(pk=submission.pk, processed_at__isnull=True).update(processed_at=now, details="")
        return False
    theirs.filter(created_at__lt=submission.created_at, processed_at__isnull=True).update(
        processed_at=now, details=""
    )
    return bool(
        theirs.filter(pk=submission.pk, processed_at__isnull=True).update(processed_at=now, details="")
    )


# Bank details from the claim flow: the request stores them and answers; the standing worker makes
# them the person's payee account (payee_account_save: the locks, the shared-details check, VoP, the
# mail).

SUBMISSION_LEASE = timedelta(minutes=5)  # a worker that dies mid-way gives the details back after this
SUBMISSION_MAX_ATTEMPTS = 5


def payee_submission_accept(*, participant_id, brand_id: int, details: dict) -> str | None:
    """Keep the person's details (encrypted) for the standing worker: the participant's status
    token, or None, with nothing stored, unless the participant belongs to the brand and has at
    least one claim (their details are for paying a reward). One statement."""
    if not participant_id or not str(participant_id).isdigit():
        return None
    values = [encrypt(json.dumps(details)), timezone.now(), int(participant_id), brand_id]
    submission_id, token = (prepared_fetchall(_SUBMISSION_ACCEPT, values) or [(None, None)])[0]
    if token is not None:
        standing_work_inline(payee_submissions_process, ids=[submission_id])
    return token


_SUBMISSION_INSERT = (
    f"INSERT INTO {PayeeSubmission._meta.db_table} (id, participant_id, details, created_at) "  # noqa: S608
    f"SELECT gen_random_uuid(), p.id, %s, %s FROM {Participant._meta.db_table} p "
    "WHERE p.id = %s AND p.brand_id = %s "
    f"AND EXISTS (SELECT 1 FROM {ActionClaim._meta.db_table} c WHERE c.participant_id = p.id) "
    "RETURNING id, participant_id"
)
_SUBMISSION_ACCEPT = (
    f"WITH s AS ({_SUBMISSION_INSERT}) "  # noqa: S608
    f"SELECT s.id, p.token FROM s JOIN {Participant._meta.db_table} p ON p.id = s.participant_id"
)


def payee_submissions_process(*, limit: int = 50, ids: list | None = None) -> int:
    """Claim up to `limit` submissions still waiting (or these ids), oldest first, and make each the
    person's payee account; how many were claimed (payee_account_save stores a submission once)."""
    return claim_and_process(
        payee_submissions_unfinished().filter(attempts__lt=SUBMISSION_MAX_ATTEMPTS),
        process=lambda pk: payee_submission_process(submission_id=pk),
        limit=limit,
        lease=SUBMISSION_LEASE,
        order_by="created_at",
        ids=ids,
    )


def payee_submission_process(*, submission_id) -> PayeeAccount | None:
    """Make a submission the person's payee account (None when it was processed, or superseded)."""
    submission = (
        PayeeSubmission.objects.filter(pk=submission_id, processed_at__isnull=True)
        .select_related("participant")
        .first()
    )
    if submission is None:
        return None
    data = json.loads(submission.details)
    participant = submission.participant
    status_path = status_page_path(slug=data["campaign_slug"], token=participant.token)
    return payee_account_save(
        participant=participant,
        name=data["name"],
        email=data["email"],
        phone=data["phone"],
        bank_account=BankAccount(**data["bank_account"]),
        currency=data["currency"],
        consent_version=data["consent_version"],
        language=data["language"],
        status_url=urljoin(data["site"], status_path),
        campaign_name=data["campaign_name"],
        submission=submission,
    )


def _details_lock(*, brand_id: int, fingerprints) -> None:
    """Two people entering the same bank account, email or phone at the same moment would each
    miss the other (neither row is committed when the other looks): they take turns per detail,
    in a fixed order so that they cannot deadlock."""
    keys = sorted(
        {int(hashlib.sha256(f"{brand_id}:{fp}".encode()).hexdigest()[:15], 16) for fp in fingerprints if fp}
    )
    with connection.cursor() as cursor:
        for key in keys:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [key])


SHARED_DETAILS = [
    ("account_fingerprint", "payee_iban_shared", "the same bank account as participant #{other}"),
    ("email_fingerprint", "payee_email_shared", "the same email as participant #{other}"),
    ("phone_fingerprint", "payee_phone_shared", "the same phone number as participant #{other}"),
]


def _shared_details_flag(payee: PayeeAccount) -> None:
    """One bank account, email or phone behind several identities is the classic farm: every
    participant involved goes back to review before anything is paid out."""
    matches = Q()
    for field, _code, _detail in SHARED_DETAILS:
        if getattr(payee, field):
            matches |= Q(**{field: getattr(payee, field)})
    others = (
        PayeeAccount.objects.filter(matches, participant__brand_id=payee.participant.brand_id)
        .exclude(participant=payee.participant)
        .values_list("participant_id", *(field for field, _code, _detail in SHARED_DETAILS))
    )
    flags = []
    for other, *values in others:
        for (field, code, detail), value in zip(SHARED_DETAILS, values, strict=True):
            if value and value == getattr(payee, field):
                flags.append((payee.participant_id, code, detail.format(other=other)))
                flags.append((other, code, detail.format(other=payee.participant_id)))
    if flags:
        participants_flag(flags=flags)


def status_link_send(
    *, payee: PayeeAccount, status_url: str, campaign_name: str, language: str = "en"
) -> None:
    """Mail the private status link, in the person's language; run by the task queue, since mail
    is slow I/O that must not hold up the person's request."""
    if not payee.email:
        return
    with translation.override(language):
        _status_mail(payee=payee, status_url=status_url, campaign_name=campaign_name)


def _status_mail(*, payee: PayeeAccount, status_url: str, campaign_name: str) -> None:
    send_mail(
        subject=_("Your %(campaign)s reward") % {"campaign": campaign_name},
        message=_(
            "Hello %(name)s,\n\nthank you for taking part in %(campaign)s. Follow your reward and its "
            "payout here (keep this link private):\n\n%(url)s\n\nJoyBack"
        )
        % {"name": payee.holder_name, "campaign": campaign_name, "url": status_url},
        from_email=settings.DEFAULT_FROM_EMAIL,
        recipient_list=[payee.email],
    )


# Payouts: the person's payable -> in transit -> the bank. Every transition is a conditional update
# from the states it may leave, so two workers (or a worker and a bank report) never both act.

PAYEE_DATA_CODES = frozenset(
    {"AC01", "AC02", "AC03", "AC04", "AC06", "AG01", "BE04", "MD07", "RR03", "RC01", "MS02"}
)
# Instant-only technical refusals: the payee's bank was unreachable in time; a batch transfer works.
INSTANT_UNREACHABLE_CODES = frozenset({"AB05", "AB06", "AB07", "AB08", "AB09", "AB10", "CNOR"})


class PayoutRefused(Exception):
    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


_shared_accounts: dict[tuple, Account] = {}


def _shared_account(*, kind: str, currency: str, brand_id: int | None, name: str) -> Account:
    """A brand's in-transit account and the platform's bank never go away: looked up once per
    process. Remembered only once committed, so one made in a transaction that rolls back is not."""
    key = (kind, currency, brand_id)
    if key not in _shared_accounts:
        account = account_get_or_create(kind=kind, currency=currency, brand_id=brand_id, name=name)
        transaction.on_commit(partial(_shared_accounts.setdefault, key, account))
        return account
    return _shared_accounts[key]


def _in_transit(*, brand_id: int, currency: str) -> Account:
    return _shared_account(
        kind=AccountKind.PAYOUT_IN_TRANSIT,
        currency=currency,
        brand_id=brand_id,
        name=f"Payouts in transit {currency}",
    )


def _platform_bank(*, currency: str, brand_id: int) -> Account:
    """The platform's bank in the payout's mode: a test brand's payouts leave the sandbox bank."""
    if not brand_livemode(brand_id):
        return platform_bank(currency=currency, livemode=False)
    return _shared_account(
        kind=AccountKind.PLATFORM_BANK, currency=currency, brand_id=None, name=f"Platform bank {currency}"
    )


def scheme_for(payee: PayeeAccount) -> str:
    if payee.rail == Rail.SEPA:
        if not brand_livemode(payee.participant.brand_id):
            # Test payouts go one by one to the sandbox provider, never into the bank's files.
            return PayoutScheme.SEPA_INSTANT
        if settings.PAYOUT_SEPA_MODE == "instant" and not _instant_unreachable(payee):
            return PayoutScheme.SEPA_INSTANT
        return PayoutScheme.SEPA
    return {Rail.UK_FPS: PayoutScheme.FPS, Rail.US_ACH: PayoutScheme.ACH, Rail.SWIFT: PayoutScheme.SWIFT}[
        payee.rail
    ]


def _instant_unreachable(payee: PayeeAccount) -> bool:
    """The payee's bank could not take the last instant transfer in time (AB05, CNOR...): the
    next one goes as a batch SEPA credit transfer, which has a day to get there, instead of the
    sweep retrying instant every minute into the same timeout."""
    last = (
        Payout.objects.filter(payee=payee)
        .order_by("-created_at")
        .values_list("status", "reason_code")
        .first()
    )
    return last is not None and last[0] == PayoutStatus.REJECTED and last[1] in INSTANT_UNREACHABLE_CODES


def _event(payout: Payout, *, from_status: str, reason_code: str = "", detail: str = "", actor=None) -> None:
    PayoutEvent.objects.create(
        payout=payout,
        from_status=from_status,
        to_status=payout.status,
        reason_code=reason_code,
        detail=detail[:300],
        actor=actor,
    )


def _transition(
    payout: Payout, *, to: str, allowed_from, reason_code="", detail="", actor=None, **fields
) -> bool:
    """Move the payout if it is still in one of `allowed_from`; False when another step got there first."""
    moved = Payout.objects.filter(pk=payout.pk, status__in=list(allowed_from)).update(
        status=to, reason_code=reason_code, updated_at=timezone.now(), **fields
    )
    if not moved:
        return False
    before = payout.status
    if any(hasattr(value, "resolve_expression") for value in fields.values()):
        payout.refresh_from_db()
    else:
        payout.status, payout.reason_code = to, reason_code
        for name, value in fields.items():
            setattr(payout, name, value)
    _event(payout, from_status=before, reason_code=reason_code, detail=detail, actor=actor)
    return True


def _latest_unpaid_payout(participant: Participant, currency: str) -> Payout | None:
    return (
        Payout.objects.filter(
            participant=participant,
            currency=currency,
            status__in=[PayoutStatus.REJECTED, PayoutStatus.RETURNED],
            repaid_by__isnull=True,
        )
        .order_by("-pk")
        .first()
    )


def payout_for_participant(*, participant_id: int, currency: str, send_now: bool = False) -> Payout | None:
    """Pay out what the ledger owes the person, less what they owe back, in one payout.

    Nothing happens without current, usable bank details, or while another payout of theirs is
    still on its way (its resolution calls this again for whatever arrived meanwhile).

    send_now (a task worker, where waiting for the PSP is fine): the payout is sent by this call
    once it has committed, not by a queued task, which saves a trip through the queue between an
    approval and the bank; a crash in between leaves it to the sweep (next_check_at).
    """
    participant = Participant.objects.select_related("brand").get(pk=participant_id)
    if participant.brand.verified_at is None:
        # Staff withdrew the brand's verification: what people are owed stays owed (the sweep pays
        # it once the brand is verified again), nothing leaves meanwhile.
        return None
    payable = participant_payable_account(participant=participant, currency=currency)
    with transaction.atomic(durable=True):
        # The same lock payee_account_save takes: details cannot change under a payout being made.
        Participant.objects.select_for_update().filter(pk=participant.pk).first()
        crash_point("payout_locked")
        payee = PayeeAccount.objects.filter(participant=participant, replaced_at__isnull=True).first()
        if payee is None or payee.unusable_code or payee.currency != currency:
            return None
        if participant.claims.filter(status=ClaimStatus.NEEDS_REVIEW).exists():
            return None  # flagged: nothing leaves until a person decides (the decision calls again)
        if Payout.objects.filter(
            participant=participant, currency=currency, manual=False, status__in=OPEN_STATUSES
        ).exists():
            return None
        receivable = Account.objects.filter(
            kind=AccountKind.PARTICIPANT_RECEIVABLE,
            currency=currency,
            subject=participant.ledger_subject,
            brand_id=participant.brand_id,
        ).first()
        locked = {
            a.pk: a
            for a in Account.objects.select_for_update()
            .filter(pk__in=[payable.pk] + ([receivable.pk] if receivable else []))
            .order_by("pk")
        }
        gross = locked[payable.pk].balance
        owed_back = locked[receivable.pk].balance if receivable else 0
        if gross <= 0:
            return None
        netted = min(gross, owed_back)
        amount = gross - netted
        if amount <= 0:
            posting_post(
                posting=Posting(
                    reason="clawback_netted",
                    legs=((locked[payable.pk], netted), (locked[receivable.pk], -netted)),
                    reference=participant.ledger_subject,
                    description="Rewards netted against a clawback",
                )
            )
            return None
        payout = Payout.objects.create(
            brand_id=participant.brand_id,
            participant=participant,
            payee=payee,
            amount=amount,
            currency=currency,
            scheme=scheme_for(payee),
            repays=_latest_unpaid_payout(participant, currency),
            next_check_at=timezone.now() + timedelta(seconds=settings.PAYOUT_STALE_SECONDS),
        )
        legs = [
            (locked[payable.pk], gross),
            (_in_transit(brand_id=participant.brand_id, currency=currency), -amount),
        ]
        if netted:
            legs.append((locked[receivable.pk], -netted))
        posted = posting_post(
            posting=Posting(
                reason="payout",
                legs=tuple(legs),
                idempotency_key=f"payout:{payout.pk}",
                reference=f"payout:{payout.end_to_end_id}",
                description=f"Payout {payout.end_to_end_id}"
                + (f", {netted} netted against clawbacks" if netted else ""),
            )
        )
        payout.ledger_transaction_id = posted.pk
        detail = f"netted {netted}" if netted else ""
        claimed = send_now and _claim_at_creation(payout, detail=detail)
        if not claimed:
            Payout.objects.filter(pk=payout.pk).update(ledger_transaction_id=posted.pk)
            _event(payout, from_status="", detail=detail)
        crash_point("payout_posted")
        if not send_now:
            enqueue_on_commit("payouts.tasks.payout_submit_task", payout.pk)
    if claimed:
        return _send(payout)
    return payout_submit(payout_id=payout.pk) if send_now else payout


def _claim_at_creation(payout: Payout, *, detail: str) -> bool:
    """A worker that made the payout and already has a settled name check takes it through
    payee_verified to submitted in the creation's own transaction: the same steps, each recorded,
    in one commit instead of three."""
    if payout.scheme == PayoutScheme.SEPA:
        return False  # batch transfers wait for the next file
    check = vop_current(payee=payout.payee) if payout.payee.rail == Rail.SEPA else None
    if payout.payee.rail == Rail.SEPA and (check is None or not check.settled):
        return False
    now = timezone.now()
    fields = {
        "status": PayoutStatus.SUBMITTED,
        "submissions": 1,
        "submitted_at": now,
        "next_check_at": now + timedelta(seconds=settings.PAYOUT_STALE_SECONDS),
        "ledger_transaction_id": payout.ledger_transaction_id,
    }
    Payout.objects.filter(pk=payout.pk, status=PayoutStatus.CREATED).update(**fields)
    for name, value in fields.items():
        setattr(payout, name, value)
    vop = (
        f"VoP {check.result}{' / ' + check.choice if check.choice else ''}" if check else "VoP not applicable"
    )
    steps = [("", PayoutStatus.CREATED, detail), (PayoutStatus.CREATED, PayoutStatus.PAYEE_VERIFIED, vop)]
    steps.append((PayoutStatus.PAYEE_VERIFIED, PayoutStatus.SUBMITTED, ""))
    PayoutEvent.objects.bulk_create(
        PayoutEvent(payout=payout, from_status=before, to_status=after, detail=text, at=now)
        for before, after, text in steps
    )
    return True


def payee_vop_check(*, payee: PayeeAccount) -> VopCheck | None:
    """Ask the payee's bank whether the name holds the account (SEPA only: the scheme is European)."""
    if payee.rail != Rail.SEPA:
        return None
    details = json.loads(payee.account)
    answer = psp.payee_verify(
        iban=details["iban"], name=payee.holder_name, livemode=brand_livemode(payee.participant.brand_id)
    )
    payee.__dict__.pop("_vop_current", None)
    return VopCheck.objects.create(
        payee=payee,
        result=answer.result,
        bank_name_returned=answer.name or None,
        checked_at=timezone.now(),
    )


def vop_current(*, payee: PayeeAccount) -> VopCheck | None:
    # Asked twice while one payout is verified and sent; a person's later answer is read by the
    # next task, which loads the payee afresh.
    if "_vop_current" not in payee.__dict__:
        payee._vop_current = vop_latest(payee=payee)
    return payee._vop_current


def vop_choose(*, check: VopCheck, choice: str) -> VopCheck:
    """The person's answer to a close match or no match, recorded; a waiting payout then goes."""
    if choice not in VopChoice.values:
        raise PayoutRefused(_("Choose one of the options."))
    if check.result not in (VopResult.CLOSE_MATCH, VopResult.NO_MATCH):
        raise PayoutRefused(_("Your bank confirmed the name; there is nothing to choose."))
    if choice == VopChoice.BANK_NAME and not check.bank_name_returned:
        raise PayoutRefused(_("Your bank did not tell us a name to use."))
    with transaction.atomic(durable=True):
        updated = VopCheck.objects.filter(pk=check.pk, choice="").update(
            choice=choice, chosen_at=timezone.now()
        )
        if not updated:
            raise PayoutRefused(_("You have already answered."))
        for payout_id in Payout.objects.filter(payee=check.payee, status=PayoutStatus.CREATED).values_list(
            "pk", flat=True
        ):
            enqueue_on_commit("payouts.tasks.payout_submit_task", payout_id)
    check.refresh_from_db()
    return check


def _creditor_name(payout: Payout, check: VopCheck | None) -> str:
    if check and check.choice == VopChoice.BANK_NAME and check.bank_name_returned:
        return check.bank_name_returned
    return payout.payee.holder_name


def _payee_verify_step(payout: Payout) -> bool:
    """created -> payee_verified once VoP has an answer the payout may go on (or is not needed)."""
    payee = payout.payee
    check = vop_current(payee=payee)
    if payee.rail == Rail.SEPA and check is None:
        check = payee_vop_check(payee=payee)
    if check is not None and not check.settled:
        # Waiting for the person's answer on the status page; their choice wakes the payout.
        Payout.objects.filter(pk=payout.pk).update(reason_code="VOP", next_check_at=None)
        return False
    detail = (
        f"VoP {check.result}{' / ' + check.choice if check.choice else ''}" if check else "VoP not applicable"
    )
    with transaction.atomic(durable=True):
        return _transition(
            payout, to=PayoutStatus.PAYEE_VERIFIED, allowed_from=[PayoutStatus.CREATED], detail=detail
        )


def _order(payout: Payout) -> psp.PaymentOrder:
    details = json.loads(payout.payee.account)
    account = {
        Rail.SEPA: lambda d: {"iban": d["iban"], **({"bic": d["bic"]} if d.get("bic") else {})},
        Rail.UK_FPS: lambda d: {"sortCode": d["sort_code"], "accountNumber": d["account_number"]},
        Rail.US_ACH: lambda d: {"routingNumber": d["routing_number"], "accountNumber": d["account_number"]},
        Rail.SWIFT: lambda d: {"bic": d["bic"], "accountNumber": d["account_number"]},
    }[payout.payee.rail](details)
    return psp.PaymentOrder(
        end_to_end_id=payout.end_to_end_id,
        scheme=payout.scheme,
        amount=payout.amount,
        currency=payout.currency,
        creditor_name=_creditor_name(payout, vop_current(payee=payout.payee)),
        account=account,
        remittance=f"JoyBack reward {payout.end_to_end_id}",
    )


def payout_submit(*, payout_id: int) -> Payout:
    """Take a payout as far as it can go now: payee verified, then sent to the PSP exactly once."""
    payout = Payout.objects.select_related("payee").get(pk=payout_id)
    if payout.status == PayoutStatus.CREATED and not _payee_verify_step(payout):
        return payout
    if payout.status != PayoutStatus.PAYEE_VERIFIED or payout.scheme == PayoutScheme.SEPA:
        return payout  # batch SEPA transfers leave with the next pain.001 file
    if payouts_paused():
        # The ledger's bank and the bank's statement disagree: nothing leaves until staff clear
        # the alert; the sweep comes back for this payout.
        Payout.objects.filter(pk=payout.pk).update(
            next_check_at=timezone.now() + timedelta(seconds=settings.PAYOUT_STALE_SECONDS)
        )
        return payout
    crash_point("before_claim")
    # The claim is committed before anything leaves: from here on the payout is "sent" as far as
    # every other worker knows, and only a status query may decide it was not.
    with transaction.atomic(durable=True):
        claimed = _transition(
            payout,
            to=PayoutStatus.SUBMITTED,
            allowed_from=[PayoutStatus.PAYEE_VERIFIED],
            submissions=F("submissions") + 1,
            submitted_at=timezone.now(),
            next_check_at=timezone.now() + timedelta(seconds=settings.PAYOUT_STALE_SECONDS),
        )
    if not claimed:
        return Payout.objects.get(pk=payout.pk)
    return _send(payout)


def _send(payout: Payout) -> Payout:
    """The one call that moves money, for a payout already claimed (committed as submitted)."""
    crash_point("after_claim")
    try:
        status = psp.payment_submit(_order(payout))
    except psp.PspUnknown as error:
        crash_point("after_send")
        with transaction.atomic(durable=True):
            _transition(
                payout,
                to=PayoutStatus.UNKNOWN,
                allowed_from=[PayoutStatus.SUBMITTED],
                detail=str(error),
                next_check_at=timezone.now() + timedelta(seconds=2 * settings.PSP_TIMEOUT_SECONDS),
            )
        return payout
    crash_point("after_send")
    return payout_status_apply(payout=payout, status=status)


def payout_status_apply(*, payout: Payout, status: psp.PaymentStatus) -> Payout:
    """What the bank said of a payout, applied once whatever order the answers come in."""
    if status.returned:
        return payout_return(payout=payout, reason_code=status.reason_code or "MS03")
    if status.settled:
        return payout_settle(payout=payout, bank_reference=status.bank_reference)
    if status.rejected:
        return payout_reject(payout=payout, reason_code=status.reason_code or "MS03")
    with transaction.atomic(durable=True):
        _transition(
            payout,
            to=PayoutStatus.ACCEPTED,
            allowed_from=[PayoutStatus.SUBMITTED, PayoutStatus.UNKNOWN],
            reason_code="",
            detail=f"bank status {status.provider_status or status.status}",
            psp_reference=status.bank_reference or payout.psp_reference,
            next_check_at=timezone.now() + timedelta(seconds=settings.PAYOUT_STALE_SECONDS),
        )
    return payout


SENT = [PayoutStatus.SUBMITTED, PayoutStatus.ACCEPTED, PayoutStatus.UNKNOWN]


def _settlement_post(payout: Payout) -> None:
    """The money left the platform's bank: in transit -> bank, once per payout."""
    transfer_post(
        source=_in_transit(brand_id=payout.brand_id, currency=payout.currency),
        destination=_platform_bank(currency=payout.currency, brand_id=payout.brand_id),
        amount=payout.amount,
        reason="payout_settled",
        idempotency_key=f"payout-settled:{payout.pk}",
        reference=f"payout:{payout.end_to_end_id}",
    )


def payout_settle(*, payout: Payout, bank_reference: str = "") -> Payout:
    with transaction.atomic(durable=True):
        # First, as payout_for_participant takes it: a reward's payout task that found this payout
        # still open has released it, so its money is in the balance read below; one that comes
        # later finds this payout settled and pays the reward itself.
        person = Participant.objects.select_for_update().get(pk=payout.participant_id)
        if not _transition(
            payout,
            to=PayoutStatus.SETTLED,
            allowed_from=SENT,
            settled_at=timezone.now(),
            next_check_at=None,
            psp_reference=bank_reference or payout.psp_reference,
        ):
            return payout
        _settlement_post(payout)
        _notify(payout, kind="settled")
        _payout_event_emit(payout, "payout.settled")
        owed_meanwhile = Account.objects.filter(
            kind=AccountKind.PARTICIPANT_PAYABLE,
            currency=payout.currency,
            subject=person.ledger_subject,
            brand_id=person.brand_id,
            balance__gt=0,
        ).exists()
        if owed_meanwhile:  # left while this payout was open (one at a time): it goes next
            enqueue_on_commit("payouts.tasks.payout_for_participant_task", person.pk, payout.currency)
    return payout


def payout_reject(*, payout: Payout, reason_code: str, detail: str = "") -> Payout:
    """The bank refused it: the money goes back to what the person is owed."""
    with transaction.atomic(durable=True):
        if not _transition(
            payout,
            to=PayoutStatus.REJECTED,
            allowed_from=SENT,
            reason_code=reason_code,
            detail=detail,
            next_check_at=None,
        ):
            return payout
        transaction_reverse(
            original=Transaction.objects.get(pk=payout.ledger_transaction_id),
            reason="payout_rejected",
            idempotency_key=f"payout-rejected:{payout.pk}",
        )
        _after_failure(payout, reason_code)
        _payout_event_emit(payout, "payout.rejected")
    return payout


def payout_return(*, payout: Payout, reason_code: str, detail: str = "") -> Payout:
    """Paid, then sent back by the payee's bank (days later, perhaps): owed again, details to fix."""
    with transaction.atomic(durable=True):
        if payout.status != PayoutStatus.SETTLED and payout.status in SENT:
            # A return can overtake the settlement report; book the settlement first.
            payout_settle_locked = _transition(
                payout,
                to=PayoutStatus.SETTLED,
                allowed_from=SENT,
                settled_at=timezone.now(),
                next_check_at=None,
            )
            if payout_settle_locked:
                _settlement_post(payout)
                _payout_event_emit(payout, "payout.settled")
        if not _transition(
            payout,
            to=PayoutStatus.RETURNED,
            allowed_from=[PayoutStatus.SETTLED],
            reason_code=reason_code,
            detail=detail,
        ):
            return payout
        transfer_post(
            source=_platform_bank(currency=payout.currency, brand_id=payout.brand_id),
            destination=participant_payable_account(participant=payout.participant, currency=payout.currency),
            amount=payout.amount,
            reason="payout_returned",
            idempotency_key=f"payout-returned:{payout.pk}",
            reference=f"payout:{payout.end_to_end_id}",
        )
        _after_failure(payout, reason_code)
        _payout_event_emit(payout, "payout.returned")
    return payout


def _payout_event_emit(payout: Payout, event_type: str) -> None:
    """The brand's webhook, in the transition's transaction; never the payee's details."""
    webhook_event_emit(
        brand_id=payout.brand_id,
        type=event_type,
        data={
            "payout_id": payout.pk,
            "participant_id": payout.participant_id,
            "status": payout.status,
            "amount": payout.amount,
            "currency": payout.currency,
            "reason_code": payout.reason_code,
            "end_to_end_id": payout.end_to_end_id,
            "manual": payout.manual,
            "settled_at": payout.settled_at.isoformat() if payout.settled_at else None,
        },
    )


def _after_failure(payout: Payout, reason_code: str) -> None:
    if reason_code in PAYEE_DATA_CODES:
        PayeeAccount.objects.filter(pk=payout.payee_id, unusable_code="").update(unusable_code=reason_code)
        _notify(payout, kind="fix_details")
    else:
        _notify(payout, kind="delayed")


def payout_status_check(*, payout_id: int) -> Payout:
    """A payout sent with no final answer: ask the bank, and resend only if it never got it."""
    payout = Payout.objects.select_related("payee").get(pk=payout_id)
    if payout.status not in SENT:
        return payout
    status = psp.payment_status(payout.end_to_end_id)
    if status is not None:
        return payout_status_apply(payout=payout, status=status)
    if payout.status == PayoutStatus.ACCEPTED:
        return payout
    # The provider has no transfer with this reference (the crash or timeout came before the
    # request got there): the same request goes again with the same Idempotency-Key, so were the
    # first copy to arrive late after all, the provider answers the retry as a replay of it.
    with transaction.atomic(durable=True):
        reopened = _transition(
            payout,
            to=PayoutStatus.PAYEE_VERIFIED,
            allowed_from=[PayoutStatus.SUBMITTED, PayoutStatus.UNKNOWN],
            detail="not received by the bank; sending again",
        )
    return payout_submit(payout_id=payout.pk) if reopened else payout


class TransferWebhookRefused(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


TRANSFER_EVENT_LEASE = timedelta(minutes=2)
TRANSFER_EVENT_MAX_ATTEMPTS = 10


def transfer_webhook_receive(*, body: bytes, headers) -> int | None:
    """A provider's transfer webhook: refused unless signed with one of our keys, else stored in one
    statement (a redelivery is a no-op); the standing worker applies it. The new row's id, or None."""
    adapter = provider()
    if not adapter.webhook_verify(body, headers):
        raise TransferWebhookRefused(401, "signature missing or wrong")
    try:
        payload = json.loads(body)
        event_id = adapter.webhook_event_id(payload)
    except (ValueError, KeyError, TypeError):
        raise TransferWebhookRefused(400, "not a transfer webhook") from None
    rows = prepared_fetchall(
        "INSERT INTO payouts_transferevent (provider, event_id, payload, received_at, attempts) "
        "VALUES (%s, %s, %s::jsonb, %s, 0) ON CONFLICT (provider, event_id) DO NOTHING RETURNING id",
        [settings.PAYOUT_PROVIDER, event_id, json.dumps(payload), timezone.now()],
    )
    if not rows:
        return None
    standing_work_inline(transfer_events_process, ids=[rows[0][0]])
    return rows[0][0]


def transfer_events_process(*, limit: int = 200, ids: list[int] | None = None) -> int:
    """Apply stored transfer webhooks, oldest first; each is safe to apply again, and one that comes
    out of order never moves a payout back (every transition names the states it may leave)."""
    return claim_and_process(
        TransferEvent.objects.filter(processed_at__isnull=True, attempts__lt=TRANSFER_EVENT_MAX_ATTEMPTS),
        process=_transfer_event_apply,
        limit=limit,
        lease=TRANSFER_EVENT_LEASE,
        order_by="pk",
        ids=ids,
    )


def _transfer_event_apply(event_id: int) -> None:
    event = TransferEvent.objects.get(pk=event_id)
    found = provider().webhook_transfer(event.payload)
    outcome = "not_a_payout"
    if found is not None:
        reference, status = found
        payout = Payout.objects.filter(end_to_end_id=reference).first()
        if payout is not None:
            before = payout.status
            payout = payout_status_apply(payout=payout, status=status)
            outcome = f"{before}->{payout.status}" if payout.status != before else f"kept {payout.status}"
    TransferEvent.objects.filter(pk=event_id, processed_at__isnull=True).update(
        processed_at=timezone.now(), outcome=outcome[:40], claimed_until=None
    )


def payouts_due(*, now=None, limit: int = 200) -> list[tuple[int, str]]:
    now = now or timezone.now()
    return list(
        Payout.objects.filter(
            next_check_at__lte=now, status__in=[*SENT, PayoutStatus.CREATED, PayoutStatus.PAYEE_VERIFIED]
        )
        .order_by("next_check_at")
        .values_list("pk", "status")[:limit]
    )


def payouts_sweep(*, now=None) -> dict:
    """The standing worker pass: finish what a crash or a lost task left, ask about what is
    overdue, and read the bank's feed. Safe to run in several workers at once."""
    done = {"submitted": 0, "checked": 0, "events": 0}
    for payout_id, status in payouts_due(now=now):
        if status in (PayoutStatus.CREATED, PayoutStatus.PAYEE_VERIFIED):
            payout_submit(payout_id=payout_id)
            done["submitted"] += 1
        else:
            payout_status_check(payout_id=payout_id)
            done["checked"] += 1
    # The sandbox bank's webhooks, as the provider would send them (test-mode payouts' everywhere).
    from payouts.sandbox.bank import webhooks_deliver

    webhooks_deliver()
    done["events"] = transfer_events_process()
    # In instant mode too: a transfer the payee's bank could not take instantly goes by file.
    done["files"] = len(payment_batch_build())
    for participant_id, currency in participants_owed(limit=200):
        done["created"] = done.get("created", 0) + bool(
            payout_for_participant(participant_id=participant_id, currency=currency)
        )
    for notification_id in Notification.objects.filter(
        sent_at__isnull=True, created_at__lte=(now or timezone.now()) - timedelta(minutes=1)
    ).values_list("pk", flat=True)[:200]:
        notification_send(notification_id=notification_id)
    return done


def participants_owed(*, limit: int) -> list[tuple[int, str]]:
    """People with usable bank details, money owed and no payout under way: normally none, since
    every reward and every new payee enqueues its payout; these are the ones a crash or a lost
    task left behind."""
    subject = Concat(Value("participant:"), Cast("participant_id", CharField()))
    owed = Account.objects.filter(
        kind=AccountKind.PARTICIPANT_PAYABLE,
        subject=OuterRef("subject"),
        currency=OuterRef("currency"),
        balance__gt=0,
    )
    under_way = Payout.objects.filter(
        participant_id=OuterRef("participant_id"),
        currency=OuterRef("currency"),
        manual=False,
        status__in=OPEN_STATUSES,
    )
    return list(
        PayeeAccount.objects.filter(
            replaced_at__isnull=True, unusable_code="", participant__brand__verified_at__isnull=False
        )
        .annotate(subject=subject)
        .filter(Exists(owed), ~Exists(under_way))
        .exclude(participant__claims__status=ClaimStatus.NEEDS_REVIEW)
        .values_list("participant_id", "currency")[:limit]
    )


# Crash points: the tests stop a payout at each step as a killed process would, then restart.
_crash_at: set[str] = set()


class SimulatedCrash(BaseException):
    """Not an Exception: no handler in the code may swallow it, as none could swallow a kill."""


def crash_point(name: str) -> None:
    if name in _crash_at:
        _crash_at.discard(name)
        raise SimulatedCrash(name)


# Telling the person: one Notification row per payout, kind and channel (the unique key makes a
# replayed transition harmless), written with the transition and sent after commit.

REASON_TEXTS = {
    "AC01": gettext_lazy("the account number is not valid"),
    "AC04": gettext_lazy("the account is closed"),
    "AC06": gettext_lazy("the account is blocked"),
    "AG01": gettext_lazy("the bank does not allow this kind of payment to the account"),
    "MD07": gettext_lazy("the bank reports that the account holder has died"),
    "BE04": gettext_lazy("the bank needs the account holder's address"),
    "AM04": gettext_lazy("a problem on our side, which we are fixing"),
    "AM05": gettext_lazy("the bank saw it as a duplicate"),
    "AB05": gettext_lazy("the receiving bank did not answer in time"),
    "MS03": gettext_lazy("the bank gave no reason"),
}


def reason_text(code: str) -> str:
    return str(REASON_TEXTS.get(code, REASON_TEXTS["MS03"]))


def _notify(payout: Payout, *, kind: str) -> None:
    payee = payout.payee
    channels = [c for c, present in (("email", payee.email), ("whatsapp", payee.phone)) if present]
    for channel in channels:
        notification, created = Notification.objects.get_or_create(
            key=f"{payout.pk}:{kind}:{channel}", defaults={"payout": payout, "kind": kind, "channel": channel}
        )
        if created:
            # Sent by this process once the transition commits: a task of its own per message
            # would cost the worker more than the payout. A crash or a failed send leaves the row
            # unsent, and the standing sweep sends it.
            transaction.on_commit(partial(_notification_send_quietly, notification.pk))


def _notification_send_quietly(notification_id: int) -> None:
    try:
        notification_send(notification_id=notification_id)
    except Exception:
        logger.exception("notification %s not sent; the sweep tries again", notification_id)


def _status_url(participant: Participant) -> str:
    campaign = participant_latest_campaign(participant=participant)
    if campaign is None:
        return settings.SITE_URL
    return settings.SITE_URL + status_page_path(slug=campaign.slug, token=participant.token)


def _message(payout: Payout, kind: str) -> tuple[str, str, list[str]]:
    """Subject, body and the WhatsApp template's parameters, in the current language."""
    amount = money_format(payout.amount, payout.currency, translation.get_language() or "en")
    account = payout.payee.account_masked
    url = _status_url(payout.participant)
    if kind == "settled":
        return (
            _("Your reward of %(amount)s is paid") % {"amount": amount},
            _("%(amount)s is on its way to your account %(account)s and should be there now.")
            % {"amount": amount, "account": account},
            [amount, account],
        )
    reason = reason_text(payout.reason_code)
    if kind == "fix_details":
        return (
            _("Please check your bank details"),
            _(
                "We could not pay %(amount)s to %(account)s: %(reason)s. Please enter your bank details "
                "again and we will pay you at once: %(url)s"
            )
            % {"amount": amount, "account": account, "reason": reason, "url": url},
            [amount, account, reason, url],
        )
    return (
        _("Your payout is delayed"),
        _("Your payout of %(amount)s is delayed: %(reason)s. We will send it again; nothing to do for you.")
        % {"amount": amount, "reason": reason},
        [amount, reason],
    )


def notification_send(*, notification_id: int) -> bool:
    """Send one notification, once: the row is claimed before the message goes."""
    claimed = Notification.objects.filter(pk=notification_id, sent_at__isnull=True).update(
        sent_at=timezone.now()
    )
    if not claimed:
        return False
    notification = Notification.objects.select_related("payout__payee", "payout__participant").get(
        pk=notification_id
    )
    payout = notification.payout
    try:
        with translation.override(payout.payee.language or settings.LANGUAGE_CODE):
            subject, body, parameters = _message(payout, notification.kind)
            if notification.channel == "email":
                send_mail(subject, body, settings.DEFAULT_FROM_EMAIL, [payout.payee.email])
            else:
                message_id = whatsapp.template_send(
                    to=payout.payee.phone,
                    template=f"payout_{notification.kind}",
                    language=translation.get_language() or "en",
                    parameters=parameters,
                )
                Notification.objects.filter(pk=notification_id).update(provider_message_id=message_id)
    except Exception:
        # Unclaim, so the retry sends it; the error goes to the task log.
        Notification.objects.filter(pk=notification_id).update(sent_at=None)
        raise
    return True


def payee_onboard(*, payee_id: int) -> None:
    """New bank details: check the name with the bank, then pay out whatever the person is owed."""
    payee = PayeeAccount.objects.select_related("participant").get(pk=payee_id)
    if payee.replaced_at is not None:
        return
    if payee.rail == Rail.SEPA and vop_current(payee=payee) is None:
        payee_vop_check(payee=payee)
    payout_for_participant(participant_id=payee.participant_id, currency=payee.currency)


# What finance members and admins do with payouts.

CANCELLABLE = [PayoutStatus.AWAITING_APPROVAL, PayoutStatus.CREATED, PayoutStatus.PAYEE_VERIFIED]


def payout_cancel(*, payout: Payout, actor, note: str = "") -> Payout:
    """Stop a payout that has not left: the money stays owed to the person (or, for a manual
    payout, goes back to the brand's funding)."""
    with transaction.atomic(durable=True):
        if not _transition(
            payout,
            to=PayoutStatus.CANCELLED,
            allowed_from=CANCELLABLE,
            detail=note or "cancelled",
            actor=actor,
            next_check_at=None,
        ):
            raise PayoutRefused(
                _("This payout has already been sent to the bank; it can no longer be cancelled.")
            )
        transaction_reverse(
            original=Transaction.objects.get(pk=payout.ledger_transaction_id),
            reason="payout_cancelled",
            idempotency_key=f"payout-cancelled:{payout.pk}",
        )
    return payout


def payout_retry(*, payout: Payout, actor) -> Payout:
    """Pay again what a rejected or returned payout failed to pay, once the cause is fixed."""
    if payout.status not in (PayoutStatus.REJECTED, PayoutStatus.RETURNED):
        raise PayoutRefused(_("Only a rejected or returned payout can be paid again."))
    if payout.repaid_by.exists():
        raise PayoutRefused(_("This payout has already been paid again."))
    payee = PayeeAccount.objects.filter(participant=payout.participant, replaced_at__isnull=True).first()
    if payee is None or payee.unusable_code:
        raise PayoutRefused(
            _("The person has not corrected their bank details yet; it goes out once they do.")
        )
    if payout.manual:
        return payout_manual_create(
            brand=payout.brand,
            payee=payee,
            amount=payout.amount,
            created_by=actor,
            repays=payout,
            funded=True,
        )
    again = payout_for_participant(participant_id=payout.participant_id, currency=payout.currency)
    if again is None:
        raise PayoutRefused(
            _("Nothing to pay: another payout of this person is under way, or nothing is owed.")
        )
    PayoutEvent.objects.create(
        payout=again,
        from_status="",
        to_status=again.status,
        detail=f"retry of {payout.end_to_end_id}",
        actor=actor,
    )
    return again


def payout_manual_create(
    *, brand, payee: PayeeAccount, amount: int, created_by, repays: Payout | None = None, funded: bool = False
) -> Payout:
    """A payout a person makes by hand, from the brand's funding, within the brand's payout limits;
    above the threshold, past the window's approval threshold, or to a bank account the brand never
    paid, it waits for a second person's approval (maker-checker)."""
    if amount <= 0:
        raise PayoutRefused(_("Enter an amount above zero."))
    currency = payee.currency
    payable = participant_payable_account(participant=payee.participant, currency=currency)
    funding = account_get_or_create(kind=AccountKind.BRAND_FUNDING, currency=currency, brand_id=brand.pk)
    with transaction.atomic(durable=True):
        payout_limits_lock(brand_id=brand.pk, account_fingerprint=payee.account_fingerprint)
        hold_reasons = _payout_controls_check(
            brand=brand,
            currency=currency,
            account_fingerprint=payee.account_fingerprint,
            account_masked=payee.account_masked,
            amount=amount,
            from_funding=not funded,
        )
        needs_approval = bool(hold_reasons)
        payout = Payout.objects.create(
            brand=brand,
            participant=payee.participant,
            payee=payee,
            amount=amount,
            currency=currency,
            scheme=scheme_for(payee),
            manual=True,
            created_by=created_by,
            repays=repays,
            hold_reasons=",".join(hold_reasons),
            status=PayoutStatus.AWAITING_APPROVAL if needs_approval else PayoutStatus.CREATED,
            next_check_at=None
            if needs_approval
            else timezone.now() + timedelta(seconds=settings.PAYOUT_STALE_SECONDS),
        )
        legs = [(_in_transit(brand_id=brand.pk, currency=currency), -amount)]
        # A repayment is already owed to the person (the return put it back); a new one is funded now.
        legs.append((payable, amount) if funded else (funding, amount))
        try:
            posted = posting_post(
                posting=Posting(
                    reason="payout_manual",
                    legs=tuple(legs),
                    idempotency_key=f"payout:{payout.pk}",
                    reference=f"payout:{payout.end_to_end_id}",
                    description=f"Manual payout {payout.end_to_end_id}",
                )
            )
        except InsufficientFunds:
            raise PayoutRefused(
                _("The brand's funding account does not hold enough for this payout.")
            ) from None
        Payout.objects.filter(pk=payout.pk).update(ledger_transaction_id=posted.pk)
        payout.ledger_transaction_id = posted.pk
        _event(payout, from_status="", actor=created_by, detail="manual payout")
        _velocity_watch(brand=brand)
        if not needs_approval:
            enqueue_on_commit("payouts.tasks.payout_submit_task", payout.pk)
    return payout


# Payout controls: what a payment partner's risk review asks of payouts made by hand.

_LIMITS_LOCK = 0x4A42_4C49  # "JBLI": the advisory lock space of the payout limits


def payout_limits_lock(*, brand_id: int, account_fingerprint: str) -> None:
    """Manual payouts of one brand, and to one bank account, take turns while their limits are
    checked and their payout is stored: two made at once would each see the other's total as it
    was and could pass a limit together. The brand first, then the account; both before the
    participant's row and the ledger's accounts, which the payout locks next."""
    account_key = int(hashlib.sha256(account_fingerprint.encode()).hexdigest()[:7], 16)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [_LIMITS_LOCK, brand_id])
        cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [_LIMITS_LOCK + 1, account_key])


def _payout_controls_check(
    *,
    brand,
    currency: str,
    account_fingerprint: str,
    account_masked: str,
    amount: int,
    from_funding: bool = True,
) -> list[str]:
    """Refuse what no approval may allow (more than the funding holds or the bank confirmed, past a
    daily limit); the reasons the payout must wait for a second person otherwise. Run under
    payout_limits_lock (the ledger checks the funding again under its own lock)."""
    _brand_verified_check(brand)
    language = translation.get_language() or "en"
    if from_funding:
        funding = Account.objects.filter(
            kind=AccountKind.BRAND_FUNDING, brand_id=brand.pk, currency=currency, subject=""
        ).first()
        if funding is None or funding.available < amount:
            raise PayoutRefused(_("The brand's funding account does not hold enough for this payout."))
    confirmed = brand_confirmed_funds(brand_id=brand.pk, currency=currency)
    paid_out = brand_paid_out(brand_id=brand.pk, currency=currency)
    # A payment that came back no longer counts as paid out, so paying it again fits.
    if paid_out + amount > confirmed:
        raise PayoutRefused(
            _(
                "The bank has confirmed %(confirmed)s of this brand's transfers, and %(paid)s of it is paid "
                "out already: this payout would pay out more than the brand sent."
            )
            % {
                "confirmed": money_format(confirmed, currency, language),
                "paid": money_format(paid_out, currency, language),
            }
        )
    since = timezone.now() - timedelta(hours=settings.PAYOUT_LIMIT_WINDOW_HOURS)
    brand_total = manual_payouts_in_window(since=since, currency=currency, brand_id=brand.pk)
    if brand_total + amount > settings.PAYOUT_BRAND_DAILY_LIMIT:
        raise PayoutRefused(
            _(
                "This payout would take the brand's payouts of the last %(hours)s hours to %(total)s, "
                "above its limit of %(limit)s. Nothing was paid; try again later or ask us to raise "
                "the limit."
            )
            % {
                "hours": settings.PAYOUT_LIMIT_WINDOW_HOURS,
                "total": money_format(brand_total + amount, currency, language),
                "limit": money_format(settings.PAYOUT_BRAND_DAILY_LIMIT, currency, language),
            }
        )
    account_total = manual_payouts_in_window(
        since=since, currency=currency, account_fingerprint=account_fingerprint
    )
    if account_total + amount > settings.PAYOUT_ACCOUNT_DAILY_LIMIT:
        raise PayoutRefused(
            _(
                "The bank account %(account)s would receive %(total)s in the last %(hours)s hours, above "
                "the limit of %(limit)s for one account. Nothing was paid."
            )
            % {
                "account": account_masked,
                "hours": settings.PAYOUT_LIMIT_WINDOW_HOURS,
                "total": money_format(account_total + amount, currency, language),
                "limit": money_format(settings.PAYOUT_ACCOUNT_DAILY_LIMIT, currency, language),
            }
        )
    reasons = []
    if amount > settings.PAYOUT_APPROVAL_THRESHOLD:
        reasons.append(HoldReason.ABOVE_THRESHOLD)
    if settings.PAYOUT_NEW_ACCOUNT_APPROVAL and not brand_paid_account_before(
        brand_id=brand.pk, account_fingerprint=account_fingerprint
    ):
        reasons.append(HoldReason.NEW_ACCOUNT)
    if brand_total + amount > settings.PAYOUT_WINDOW_APPROVAL_THRESHOLD:
        reasons.append(HoldReason.WINDOW_TOTAL)
    return [str(reason.value) for reason in reasons]


def _brand_verified_check(brand) -> None:
    try:
        brand_money_allowed_check(brand=brand)
    except BrandNotVerified as refused:
        raise PayoutRefused(str(refused)) from None


def _velocity_watch(*, brand) -> None:
    """Many manual payouts in a short time is how a taken-over account empties a brand: raise an
    alert for platform staff, once per window (they are not refused: the limits do that)."""
    minutes = settings.PAYOUT_VELOCITY_WINDOW_MINUTES
    now = timezone.now()
    window_start = now - timedelta(
        minutes=now.minute % minutes, seconds=now.second, microseconds=now.microsecond
    )
    count = manual_payouts_count_since(brand_id=brand.pk, since=now - timedelta(minutes=minutes))
    if count <= settings.PAYOUT_VELOCITY_ALERT_COUNT:
        return
    limit = settings.PAYOUT_VELOCITY_ALERT_COUNT
    detail = f"{count} manual payouts within {minutes} minutes (alert above {limit})"
    _alert, created = PayoutAlert.objects.get_or_create(
        brand=brand, kind="velocity", window_start=window_start, defaults={"detail": detail}
    )
    if created:
        logger.warning("payout velocity alert for brand %s: %s", brand.pk, detail)


def payout_approve(*, payout: Payout, actor) -> Payout:
    """The checker's half of maker-checker: never the person who made the payout."""
    if payout.created_by_id == actor.pk:
        raise PayoutRefused(_("A second person must approve a payout you made yourself."))
    _brand_verified_check(payout.brand)
    with transaction.atomic(durable=True):
        if not _transition(
            payout,
            to=PayoutStatus.CREATED,
            allowed_from=[PayoutStatus.AWAITING_APPROVAL],
            actor=actor,
            detail="approved",
            approved_by=actor,
            next_check_at=timezone.now() + timedelta(seconds=settings.PAYOUT_STALE_SECONDS),
        ):
            raise PayoutRefused(_("This payout is not waiting for approval."))
        enqueue_on_commit("payouts.tasks.payout_submit_task", payout.pk)
    return payout


def payout_manual_enter(
    *,
    brand,
    name: str,
    email: str,
    phone: str,
    bank_account: BankAccount,
    currency: str,
    amount: int,
    created_by,
) -> Payout:
    """A finance member pays someone by hand: a payee of the brand's own, then the payout."""
    if amount <= 0:
        raise PayoutRefused(_("Enter an amount above zero."))
    # Checked before the payee is stored, so a refused payout leaves nothing behind; checked again
    # under the limits' lock when the payout is made.
    _payout_controls_check(
        brand=brand,
        currency=currency,
        account_fingerprint=payee_fingerprints(
            account=json.dumps(bank_account.details), email=None, phone=None
        )["account_fingerprint"],
        account_masked=bank_account.masked,
        amount=amount,
    )
    participant = participant_create(brand=brand)
    payee = payee_account_save(
        participant=participant,
        name=name,
        email=email,
        phone=phone,
        bank_account=bank_account,
        currency=currency,
        consent_version="manual",
        onboard=False,
    )
    return payout_manual_create(brand=brand, payee=payee, amount=amount, created_by=created_by)


# SEPA batch files: payouts verified and waiting leave together in pain.001 files, each file
# written once, stored byte for byte, and sent at most once.


def _transfer(payout: Payout) -> CreditTransfer:
    details = json.loads(payout.payee.account)
    return CreditTransfer(
        end_to_end_id=payout.end_to_end_id,
        amount_minor=payout.amount,
        currency=payout.currency,
        creditor_name=_creditor_name(payout, vop_current(payee=payout.payee)),
        creditor_iban=details["iban"],
        creditor_bic=details.get("bic", ""),
        remittance=f"JoyBack reward {payout.end_to_end_id}",
    )


def payment_batch_build(*, currency: str = "EUR", now=None) -> list[PaymentBatch]:
    """Put every verified SEPA batch payout into pain.001 files (split at the bank's cap)."""
    now = now or timezone.now()
    if payouts_paused():
        return []  # as for a single payout: nothing leaves while the bank and the ledger disagree
    with transaction.atomic(durable=True):
        payouts = list(
            Payout.objects.select_for_update(skip_locked=True)
            .filter(status=PayoutStatus.PAYEE_VERIFIED, scheme=PayoutScheme.SEPA, currency=currency)
            .filter(brand__livemode=True)  # the bank's files carry live money only
            .select_related("payee")
            .order_by("pk")[: settings.PAYOUT_FILE_MAX_TRANSACTIONS * 10]
        )
        if not payouts:
            return []
        by_id = {p.end_to_end_id: p for p in payouts}
        files = pain001_files(
            debtor=Debtor(
                name=settings.PAYOUT_DEBTOR_NAME,
                iban=settings.PAYOUT_DEBTOR_IBAN,
                bic=settings.PAYOUT_DEBTOR_BIC,
            ),
            transfers=[_transfer(p) for p in payouts],
            msg_id_prefix="JBP",
            created_at=now,
            execution_date=now.date(),
            max_per_file=settings.PAYOUT_FILE_MAX_TRANSACTIONS,
        )
        batches = []
        for file in files:
            batch, created = PaymentBatch.objects.get_or_create(
                msg_id=file.msg_id,
                defaults={
                    "currency": currency,
                    "number_of_transactions": file.number_of_transactions,
                    "control_sum": file.control_sum_minor,
                    "xml": file.xml,
                    "sha256": hashlib.sha256(file.xml).hexdigest(),
                },
            )
            if not created:
                # The same payouts again: only after the bank said it never got the file (the
                # status checks reopened every one of them), so the stored file may go once more.
                PaymentBatch.objects.filter(pk=batch.pk).update(sent_at=None)
            for end_to_end_id in file.end_to_end_ids:
                _transition(
                    by_id[end_to_end_id],
                    to=PayoutStatus.SUBMITTED,
                    allowed_from=[PayoutStatus.PAYEE_VERIFIED],
                    detail=f"in file {file.msg_id}",
                    batch=batch,
                    submissions=F("submissions") + 1,
                    submitted_at=now,
                    next_check_at=now + timedelta(seconds=settings.PAYOUT_STALE_SECONDS),
                )
            enqueue_on_commit("payouts.tasks.payment_batch_transmit_task", batch.pk)
            batches.append(batch)
    return batches


def payment_batch_transmit(*, batch_id: int) -> PaymentBatch:
    """Send a stored file; a file already sent is refused, never sent twice."""
    claimed = PaymentBatch.objects.filter(pk=batch_id, sent_at__isnull=True).update(sent_at=timezone.now())
    batch = PaymentBatch.objects.get(pk=batch_id)
    if not claimed:
        raise PayoutRefused(_("File %(msg_id)s has already been sent.") % {"msg_id": batch.msg_id})
    try:
        report = psp.payment_file_send(xml=bytes(batch.xml))
    except psp.PspUnknown:
        return batch  # its payouts are "submitted": their status checks find out what the bank got
    status_report_apply(xml=report)
    return batch


def status_report_apply(*, xml: bytes) -> int:
    """A pain.002 from the bank: each payout it speaks of moves, once, whatever order reports come in."""
    report = pain002_parse(xml)
    applied = 0
    payouts = Payout.objects.filter(batch__msg_id=report.original_msg_id).select_related("payee")
    # Our files hold one payment batch each (payment_batch_build sets no max_per_batch), so a
    # batch-level rejection that lists no transactions still reaches every payout of the file.
    batch_id = f"{report.original_msg_id}-1"
    for payout in payouts:
        status = report.status_of(payout.end_to_end_id, batch_id)
        if status is None:
            continue
        payout_status_apply(
            payout=payout,
            status=psp.PaymentStatus(status=status.status, reason_code=status.reason),
        )
        applied += 1
    return applied
