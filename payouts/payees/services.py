"""A person's bank details: stored from the claim flow's submissions by the standing worker, checked
with the bank, and the private status link mailed."""

import json
import logging
from urllib.parse import urljoin

from django.db import transaction
from django.utils import timezone

from joyback.crypto import encrypt
from joyback.ledger.models import AccountKind
from joyback.ledger.selectors import account_find
from joyback.queue import claim_and_process, enqueue_on_commit, standing_work_inline
from payouts import sql
from payouts.bank_accounts import BankAccount
from payouts.fingerprints import payee_fingerprints
from payouts.links import status_page_path
from payouts.models import PayeeAccount, PayeeSubmission
from payouts.models.payees import Rail
from payouts.notifications import disclosure_fix_notify, person_notify
from payouts.payees.changes import payee_change_record
from payouts.payees.shared_details import shared_details_flag, shared_details_lock
from payouts.selectors import payee_submissions_unfinished
from payouts.submission.outcomes import payouts_to_replaced_details_cancel
from payouts.vop import payee_details_missing, payee_vop_check, vop_current
from verification.models import Participant
from verification.services.rewards import participant_payout_due

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
    proof: str = "",
    name_latin: str = "",
    address: dict | None = None,
) -> PayeeAccount | None:
    """The participant's bank details from now on; an earlier account is kept, marked replaced,
    and the change recorded with its `proof` (payouts.payees.changes), the old contact told.
    With a status_url, the private status link is mailed to them once the details are stored.
    From a submission: None when a newer submission of theirs was stored already, or when it
    would replace details on file without proof of the person."""
    with transaction.atomic(durable=True):
        # Two submissions of one person (a double click, two tabs) take turns here instead of
        # both replacing the current account and colliding on the one-current-payee constraint.
        Participant.objects.select_for_update().filter(pk=participant.pk).first()
        if submission is not None and not _submission_claim(submission):
            return None
        fingerprints = payee_fingerprints(account=bank_account, email=email, phone=phone)
        shared_details_lock(brand_id=participant.brand_id, fingerprints=fingerprints.values())
        now = timezone.now()
        previous = PayeeAccount.objects.filter(participant=participant, replaced_at__isnull=True).first()
        if submission is not None and not proof and previous is not None:
            # The form refuses this already (payouts.payees.views); a submission that raced past it
            # changes nothing without the person's code.
            logger.warning("bank details of participant %s not changed: no proof", participant.pk)
            return None
        PayeeAccount.objects.filter(participant=participant, replaced_at__isnull=True).update(replaced_at=now)
        # What has not left for the old details goes to these instead (a new payout, its own check).
        payouts_to_replaced_details_cancel(participant_id=participant.pk)
        payee = PayeeAccount.objects.create(
            participant=participant,
            brand_id=participant.brand_id,
            holder_name=name,
            holder_name_latin=name_latin,
            address=json.dumps(address) if address else "",
            email=email or None,
            phone=phone or None,
            rail=bank_account.rail,
            currency=currency,
            country=bank_account.country,
            account=bank_account,
            account_masked=bank_account.masked,
            **fingerprints,
            bank_name=bank_account.bank_name,
            consent_at=now,
            consent_version=consent_version,
            language=language,
            unusable_code=payee_details_missing(
                name=name, name_latin=name_latin, rail=bank_account.rail, address=address
            ),
        )
        shared_details_flag(payee)
        if previous is not None:
            payee_change_record(previous=previous, payee=payee, proof=proof, now=now)
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

SUBMISSION_MAX_ATTEMPTS = 5


def payee_submission_accept(
    *, participant_id, brand_id: int, details: dict, first: bool = False
) -> str | None:
    """Keep the person's details (encrypted) for the standing worker: the participant's status
    token, or None, with nothing stored, unless the participant belongs to the brand and has at
    least one claim (their details are for paying a reward), and, with `first`, has no details on
    file or waiting (payouts.payees.changes.payee_details_on_file). One statement."""
    if not participant_id or not str(participant_id).isdigit():
        return None
    values = [encrypt(json.dumps(details)), timezone.now(), int(participant_id), brand_id]
    submission_id, token = sql.payee_submission_insert(values, first=first)
    if token is not None:
        standing_work_inline(payee_submissions_process, ids=[submission_id])
    return token


def payee_submissions_process(*, limit: int = 50, ids: list | None = None) -> int:
    """Claim up to `limit` submissions still waiting (or these ids), oldest first, and make each the
    person's payee account; how many were claimed (payee_account_save stores a submission once)."""
    return claim_and_process(
        payee_submissions_unfinished().filter(attempts__lt=SUBMISSION_MAX_ATTEMPTS),
        process=lambda pk: payee_submission_process(submission_id=pk),
        limit=limit,
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
        bank_account=_submitted_account(data["bank_account"]),
        currency=data["currency"],
        consent_version=data["consent_version"],
        language=data["language"],
        status_url=urljoin(data["site"], status_path),
        campaign_name=data["campaign_name"],
        submission=submission,
        proof=data.get("proof", ""),
        name_latin=data.get("name_latin", ""),
        address=data.get("address"),
    )


def _submitted_account(data: dict) -> BankAccount:
    """The account of a submission: its to_dict, or, from a machine still on the previous release
    during a rolling deploy, the previous check's result (rail, details, and what they derive)."""
    if "details" in data:
        return BankAccount(rail=data["rail"], **data["details"])
    return BankAccount.from_dict(data)


def status_link_send(
    *, payee: PayeeAccount, status_url: str, campaign_name: str, language: str = "en"
) -> None:
    """The private status link, by email, else WhatsApp, in the person's language (the payee's,
    which is the `language` they filled the form in); run by the task queue, once per set of bank
    details (a repeated task sends nothing more)."""
    person_notify(
        payee=payee,
        kind="status_link",
        key=f"status_link:{payee.pk}",
        context={"url": status_url, "campaign": campaign_name},
    )
    # A disclosure to fix that was found before the person gave a contact is told now.
    disclosure_fix_notify(participant_id=payee.participant_id)


def payee_onboard(*, payee_id: int) -> None:
    """New bank details: check the name with the bank, then mark the person due if they are owed,
    so the payout pipeline pays them in its next batch (payouts.pipeline) rather than one payout
    and one more queued task each. The check comes first so the batch finds its answer settled
    (or waiting for the person's choice) instead of asking the bank again."""
    payee = PayeeAccount.objects.select_related("participant").get(pk=payee_id)
    if payee.replaced_at is not None:
        return
    if payee.rail == Rail.SEPA and vop_current(payee=payee) is None:
        payee_vop_check(payee=payee)
    owed = account_find(
        kind=AccountKind.PARTICIPANT_PAYABLE,
        currency=payee.currency,
        subject=payee.participant.ledger_subject,
        brand_id=payee.participant.brand_id,
    )
    # Nothing owed yet: the approval that brings the money marks them itself.
    if owed is not None and owed.balance > 0:
        participant_payout_due(participant_id=payee.participant_id)
