"""Which participant this browser is: people never sign in, so the session remembers them per brand."""

from verification.selectors import participant_get


def _session_key(brand_id: int) -> str:
    return f"joyback.participant.{brand_id}"


def session_participant_id(request, campaign):
    """The id this browser's session names for the campaign's brand, unchecked (None if none)."""
    return request.session.get(_session_key(campaign.brand_id))


def session_participant(request, campaign):
    return participant_get(
        participant_id=session_participant_id(request, campaign), brand_id=campaign.brand_id
    )


def session_participant_set(session, participant) -> None:
    session[_session_key(participant.brand_id)] = participant.pk
