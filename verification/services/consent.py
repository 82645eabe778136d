"""The consent ledger's writes: a consent given with its proof, withdrawn from any channel, every
change a new row (the database refuses UPDATE and DELETE). A withdrawal ends sending at once: every
send reads the latest row first. It never takes a reward back (EDPB Guidelines 05/2020: a consent
paid for is valid only if it can be withdrawn without detriment)."""

import re
import unicodedata

from django.db import transaction
from django.utils import timezone

from campaigns.models import Campaign, ConsentChannel, ConsentWording
from verification.models import (
    ConsentAction,
    ConsentRecord,
    ConsentSource,
    Identity,
    Participant,
    Provider,
)

# What people send to stop messages, in the four languages (compared whole, without case, spaces
# or punctuation around it): carriers' and Meta's usual words, and each language's own.
OPT_OUT_WORDS = frozenset(
    {
        # en
        "stop", "stop all", "stop promotions", "unsubscribe", "opt out", "optout", "cancel", "end", "quit",
        # de
        "stopp", "abmelden", "abbestellen", "austragen", "kündigen", "keine werbung",
        # es
        "baja", "darme de baja", "dar de baja", "parar", "cancelar", "alto", "no más",
        # zh-hans
        "退订", "取消订阅", "停止", "取消", "td", "退出",
    }
)  # fmt: skip
_EDGES = re.compile(r"^[\s\W_]+|[\s\W_]+$", re.UNICODE)


def opt_out_word(text: str) -> bool:
    """Whether the whole message asks to stop ("STOP", "Baja.", " 退订 ")."""
    folded = unicodedata.normalize("NFKC", text or "").casefold()
    return " ".join(_EDGES.sub("", folded).split()) in OPT_OUT_WORDS


def _latest(*, participant_id: int, channel: str) -> ConsentRecord | None:
    return (
        ConsentRecord.objects.filter(participant_id=participant_id, channel=channel)
        .order_by("-at", "-pk")
        .first()
    )


def _recorded(participant_id, channel, action, source, proof) -> bool:
    # Under the person's lock: a provider's redelivery or a second click records once (and the
    # unique constraint holds it in the database too).
    return ConsentRecord.objects.filter(
        participant_id=participant_id, channel=channel, action=action, source=source, proof=proof[:200]
    ).exists()


def _person_lock(participant_id: int) -> None:
    # One person's consent changes take turns (the participant's row, as in the lock order).
    Participant.objects.select_for_update(no_key=True).filter(pk=participant_id).first()


def consent_record_give(
    *,
    identity: Identity,
    channel: str,
    campaign: Campaign | None,
    text: str,
    language: str,
    wording: ConsentWording | None,
    source: str,
    proof: str,
    at=None,
) -> ConsentRecord | None:
    """Record that the person agreed to `text` (the exact words shown) for `channel`; in the
    caller's transaction. None when this proof was recorded already (a redelivery)."""
    _person_lock(identity.participant_id)
    if _recorded(identity.participant_id, channel, ConsentAction.GIVEN, source, proof):
        return None
    return ConsentRecord.objects.create(
        brand_id=identity.brand_id,
        participant_id=identity.participant_id,
        identity=identity,
        channel=ConsentChannel(channel),
        action=ConsentAction.GIVEN,
        campaign=campaign,
        wording=wording,
        wording_version=wording.version if wording else 0,
        text=text,
        language=language,
        brand_name=campaign.brand.name if campaign else "",
        source=ConsentSource(source),
        proof=proof[:200],
        at=at or timezone.now(),
    )


def consent_record_withdraw(
    *, participant_id: int, channel: str, source: str, proof: str, at=None
) -> ConsentRecord | None:
    """Record a withdrawal if the person's latest consent on `channel` is given; in the caller's
    transaction. The withdrawal keeps the consent's contact, campaign and words, so the ledger reads
    what was ended. None when there was nothing to withdraw."""
    _person_lock(participant_id)
    latest = _latest(participant_id=participant_id, channel=channel)
    if latest is None or latest.action != ConsentAction.GIVEN:
        return None
    if _recorded(participant_id, channel, ConsentAction.WITHDRAWN, source, proof):
        return None
    return ConsentRecord.objects.create(
        brand_id=latest.brand_id,
        participant_id=participant_id,
        identity_id=latest.identity_id,
        channel=channel,
        action=ConsentAction.WITHDRAWN,
        campaign_id=latest.campaign_id,
        wording_id=latest.wording_id,
        wording_version=latest.wording_version,
        text=latest.text,
        language=latest.language,
        brand_name=latest.brand_name,
        source=ConsentSource(source),
        proof=proof[:200],
        at=max(at or timezone.now(), latest.at),
    )


def consent_withdraw(*, participant_id: int, channel: str, source: str, proof: str) -> ConsentRecord | None:
    """A withdrawal on its own (the status page, an unsubscribe link, the brand's CRM)."""
    with transaction.atomic(durable=True):
        return consent_record_withdraw(
            participant_id=participant_id, channel=channel, source=source, proof=proof
        )


def whatsapp_number_opt_out(*, wa_id: str, source: str, proof: str) -> int:
    """A stop from a WhatsApp number ends WhatsApp messages to it from every brand: the number
    people write to is JoyBack's for all brands, so a STOP cannot be told to be for one of them.
    How many consents it ended."""
    ended = 0
    people = (
        Identity.objects.filter(provider=Provider.WHATSAPP, subject=wa_id)
        .order_by("participant_id")
        .values_list("participant_id", flat=True)
    )
    for participant_id in people:
        with transaction.atomic(durable=True):
            if consent_record_withdraw(
                participant_id=participant_id, channel=ConsentChannel.WHATSAPP, source=source, proof=proof
            ):
                ended += 1
    return ended


def consents_withdraw_all(*, participant_id: int, source: str, proof: str) -> int:
    """Every channel's consent ended (the person's data erased); in the caller's transaction."""
    return sum(
        1
        for channel in ConsentChannel.values
        if consent_record_withdraw(participant_id=participant_id, channel=channel, source=source, proof=proof)
    )
