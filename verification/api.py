"""The Cashback API's verification endpoints: events a brand's system reports, its participants
and their claims. Thin views: parse, call one service, answer."""

import functools
import json

from django.http import Http404, HttpResponse
from django.urls import path
from django.utils.translation import gettext_lazy as _
from drf_spectacular.utils import (
    OpenApiResponse,
    PolymorphicProxySerializer,
    extend_schema,
    extend_schema_field,
)
from rest_framework import exceptions, serializers, status
from rest_framework.response import Response

from joyback.api.auth import api_key_required
from joyback.api.events import inbound_event_accept
from joyback.api.exceptions import ApiError, api_error_response
from joyback.api.idempotency import IdempotencyConflict, RequestIdempotency
from joyback.api.models import InboundEvent, InboundEventStatus
from joyback.api.pagination import LIST_PARAMETERS, list_envelope, paginated
from joyback.api.views import ApiView, api_function_view, input_validate, json_body
from joyback.machine import machine_endpoint
from joyback.money import KNOWN_CURRENCIES
from joyback.queue import standing_work_inline
from verification.cashback import INVALID_PHONE, phone_e164
from verification.inbox import inbound_events_process
from verification.selectors import (
    claim_get_for_api,
    claims_for_brand,
    participant_get_for_brand,
    participants_for_brand,
)


class MinorUnitsField(serializers.IntegerField):
    """Whole minor units as a JSON integer: "12.50", 12.5, true are refused, never rounded."""

    default_error_messages = {"invalid": _("An amount is a whole number of minor units (cents), like 1250.")}

    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, int):
            self.fail("invalid")
        return super().to_internal_value(data)


@extend_schema_field(
    {
        "type": "string",
        "pattern": "^[A-Z]{3}$",
        "description": "An ISO 4217 currency code in capitals, like EUR (a code ISO 4217 does not "
        "list, such as 000 or XYZ, is refused with invalid_currency)",
    }
)
class CurrencyField(serializers.CharField):
    default_error_messages = {"invalid_currency": _("Give an ISO 4217 currency code, like EUR.")}

    def __init__(self, **kwargs):
        super().__init__(min_length=3, max_length=3, **kwargs)

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        if value not in KNOWN_CURRENCIES:
            self.fail("invalid_currency")
        return value


class CustomerInput(serializers.Serializer):
    id = serializers.CharField(max_length=120, required=False, help_text="The brand's own customer id")
    email = serializers.EmailField(max_length=254, required=False)
    phone = serializers.CharField(max_length=32, required=False, help_text="International form: +49151…")

    def validate_phone(self, value):
        if value.strip() and phone_e164(value) is None:
            raise serializers.ValidationError(INVALID_PHONE, code="invalid_phone")
        return value

    def validate(self, attrs):
        if not any(attrs.get(name, "").strip() for name in ("id", "email", "phone")):
            raise serializers.ValidationError(
                _("Name the customer by id, email or phone."), code="customer_required"
            )
        return attrs


class PurchaseEventInput(serializers.Serializer):
    type = serializers.ChoiceField(choices=["purchase"])
    order_id = serializers.CharField(max_length=100)
    amount = MinorUnitsField(min_value=1, max_value=10**12)
    currency = CurrencyField()
    customer = CustomerInput()
    campaign_id = serializers.IntegerField(min_value=1, max_value=2**62, required=False)
    referral_code = serializers.CharField(
        max_length=40,
        required=False,
        help_text="The poster's referral code the order came with (any case): the poster earns the "
        "campaign's referral reward on it, held until the return window closes",
    )


class ActionEventInput(serializers.Serializer):
    type = serializers.ChoiceField(choices=["action"])
    customer = CustomerInput()
    campaign_id = serializers.IntegerField(min_value=1, max_value=2**62, required=False)
    reference = serializers.CharField(max_length=200, required=False, default="")


class RefundEventInput(serializers.Serializer):
    type = serializers.ChoiceField(choices=["refund"])
    order_id = serializers.CharField(max_length=100)
    reason = serializers.CharField(max_length=200, required=False, default="")


class LikeEventInput(serializers.Serializer):
    type = serializers.ChoiceField(choices=["like"])
    open_id = serializers.CharField(
        max_length=128, help_text="The TikTok open_id of the person, as the Business API names them"
    )
    video_id = serializers.CharField(max_length=64, help_text="The brand's video that was liked")
    like_id = serializers.CharField(
        max_length=100, required=False, default="", help_text="The brand's own reference of the like"
    )
    campaign_id = serializers.IntegerField(min_value=1, max_value=2**62, required=False)


class CommentEventInput(serializers.Serializer):
    type = serializers.ChoiceField(choices=["comment"])
    open_id = serializers.CharField(
        max_length=128, help_text="The TikTok open_id of the commenter, as the Business API names them"
    )
    video_id = serializers.CharField(max_length=64, help_text="The brand's video that was commented on")
    comment_id = serializers.CharField(max_length=100, help_text="TikTok's id of the comment")
    campaign_id = serializers.IntegerField(min_value=1, max_value=2**62, required=False)


EVENT_INPUTS = {
    "purchase": PurchaseEventInput,
    "action": ActionEventInput,
    "refund": RefundEventInput,
    "like": LikeEventInput,
    "comment": CommentEventInput,
}


class ClaimOutput(serializers.Serializer):
    id = serializers.IntegerField()
    campaign_id = serializers.IntegerField()
    participant_id = serializers.IntegerField()
    trigger = serializers.CharField(source="rule.trigger")
    status = serializers.CharField()
    reason = serializers.CharField()
    amount = serializers.IntegerField(help_text="Minor units")
    currency = serializers.CharField()
    order_id = serializers.CharField(source="purchase.order_id", allow_null=True, default=None)
    confirm_at = serializers.DateTimeField(source="check_at", allow_null=True)
    referral = serializers.CharField(
        source="evidence.referral",
        default=None,
        allow_null=True,
        help_text="A purchase reported with a referral_code: referred (the poster's reward was made), "
        "or why not (code_unknown, below_minimum, not_first_order, referral_cap, fully_claimed...)",
    )
    created_at = serializers.DateTimeField()
    decided_at = serializers.DateTimeField(allow_null=True)


class EventAccepted(serializers.Serializer):
    id = serializers.UUIDField(help_text="Follow it at GET /api/v1/events/{id}")
    type = serializers.CharField()
    status = serializers.ChoiceField(choices=["received"])


class EventOutput(serializers.Serializer):
    class EventError(serializers.Serializer):
        code = serializers.CharField(
            help_text="Stable, e.g. no_campaign, order_unknown, currency_mismatch, login_first, rule_cap"
        )
        message = serializers.CharField()
        field = serializers.CharField(allow_null=True)

    id = serializers.UUIDField()
    type = serializers.CharField()
    status = serializers.ChoiceField(choices=InboundEventStatus.choices)
    new_claim = serializers.BooleanField(
        allow_null=True, help_text="false: reported before, the same claim as then; null until processed"
    )
    claim = ClaimOutput(allow_null=True)
    error = EventError(allow_null=True, help_text="Why it was refused")
    created_at = serializers.DateTimeField()
    processed_at = serializers.DateTimeField(allow_null=True)


def _accepted_body(event, *, livemode: bool) -> bytes:
    return json.dumps(
        {"id": str(event.id), "type": event.type, "status": "received", "livemode": livemode}
    ).encode()


class EventApi(ApiView):
    """Report a purchase (a cashback claim, held until its return window closes), a custom
    action, the refund of an order, or a like or comment on the brand's TikTok video.

    A like or comment names the person by TikTok open_id and is rewarded once per person and
    rule, only if that person already logged in with TikTok on the campaign (else refused with
    login_first), within the rule's total cap.

    The event is checked and stored, then answered 202 at once; a worker makes the claim within
    moments. Follow it by GET /api/v1/events/{id} or by webhook (event.processed / event.refused,
    and the claim's own purchase.* and reward.* events). A purchase reported again with its order
    id is the same claim."""

    # Every POST is answered by event_create (see events_endpoint); this view documents it in the
    # schema and answers the other methods (405, OPTIONS) as every API endpoint does.
    scopes = {"POST": "events"}

    @extend_schema(
        operation_id="events_create",
        request=PolymorphicProxySerializer(
            component_name="Event",
            # Named by their type, so that the discriminator maps each value (a list leaves spectacular
            # to guess the value from a ChoiceField, which it cannot: the mapping's key became null).
            serializers=EVENT_INPUTS,
            resource_type_field_name="type",
        ),
        responses={202: OpenApiResponse(EventAccepted, description="Stored; processed in the background")},
    )
    def post(self, request):
        raise exceptions.MethodNotAllowed(request.method)  # never reached: events_endpoint routes POST


@api_function_view
def event_create(request):
    """POST /api/v1/events, a plain function view: the API's busiest endpoint, where a new event and
    its Idempotency-Key are one statement."""
    api_key = api_key_required(request, scope="events")
    idempotency = RequestIdempotency(request, api_key)
    idempotency.replay_if_cached()
    try:
        payload, kind = _event_input(request)
    except exceptions.APIException as refusal:
        return idempotency.refused(api_error_response(refusal))
    accept = functools.partial(
        inbound_event_accept,
        api_key=api_key,
        type=kind,
        payload=payload,
        answer=functools.partial(_accepted_body, livemode=api_key.livemode),
    )
    try:
        try:
            event, body = accept(**idempotency.for_write())
        except IdempotencyConflict:
            event, body = accept(**idempotency.taken())
    except Exception:
        idempotency.release()
        raise
    standing_work_inline(inbound_events_process, ids=[event.pk])
    return HttpResponse(body, status=status.HTTP_202_ACCEPTED, content_type="application/json")


_event_api = EventApi.as_view()


# The schema generator and DRF's OPTIONS see EventApi (its attributes are copied on the endpoint).
@machine_endpoint
@functools.wraps(_event_api)
def events_endpoint(request):
    if request.method == "POST":
        return event_create(request)
    return _event_api(request)


def _event_input(request) -> tuple[dict, str]:
    data = json_body(request)
    kind = data.get("type") if isinstance(data, dict) else None
    if not isinstance(kind, str) or kind not in EVENT_INPUTS:
        raise ApiError(
            "invalid_type", _("type is one of purchase, action, refund, like, comment."), field="type"
        )
    return input_validate(EVENT_INPUTS[kind], data), kind


class EventDetailApi(ApiView):
    """A reported event: received, then processed (with its claim) or refused (with the reason)."""

    scopes = {"GET": "events"}

    @extend_schema(operation_id="events_retrieve", responses=EventOutput)
    def get(self, request, event_id):
        event = InboundEvent.objects.filter(pk=event_id, brand_id=request.auth.brand_id).first()
        if event is None:
            raise Http404
        event.claim = (
            claim_get_for_api(brand_id=event.brand_id, claim_id=event.claim_id) if event.claim_id else None
        )
        return Response(EventOutput(event).data)


class ParticipantOutput(serializers.Serializer):
    class IdentityOutput(serializers.Serializer):
        provider = serializers.CharField()
        subject = serializers.CharField()
        verified_at = serializers.DateTimeField()

    id = serializers.IntegerField()
    created_at = serializers.DateTimeField()
    identities = IdentityOutput(many=True)


class ParticipantListApi(ApiView):
    """The people who claimed rewards from the brand, newest first."""

    scopes = {"GET": "read"}

    @extend_schema(
        operation_id="participants_list",
        parameters=LIST_PARAMETERS,
        responses=list_envelope("ParticipantList", ParticipantOutput),
    )
    def get(self, request):
        return paginated(request, participants_for_brand(brand_id=request.auth.brand_id), ParticipantOutput)


class ParticipantDetailApi(ApiView):
    """One participant and the identities that prove who they are."""

    scopes = {"GET": "read"}

    @extend_schema(operation_id="participants_retrieve", responses=ParticipantOutput)
    def get(self, request, participant_id: int):
        participant = participant_get_for_brand(brand_id=request.auth.brand_id, participant_id=participant_id)
        if participant is None:
            raise Http404
        return Response(ParticipantOutput(participant).data)


class ClaimListApi(ApiView):
    """Claims of every campaign of the brand, newest first."""

    scopes = {"GET": "read"}

    @extend_schema(
        operation_id="claims_list",
        parameters=LIST_PARAMETERS,
        responses=list_envelope("ClaimList", ClaimOutput),
    )
    def get(self, request):
        return paginated(request, claims_for_brand(brand_id=request.auth.brand_id), ClaimOutput)


class ClaimDetailApi(ApiView):
    """One claim: its status, reward and (for a purchase) order id."""

    scopes = {"GET": "read"}

    @extend_schema(operation_id="claims_retrieve", responses=ClaimOutput)
    def get(self, request, claim_id: int):
        claim = claim_get_for_api(brand_id=request.auth.brand_id, claim_id=claim_id)
        if claim is None:
            raise Http404
        return Response(ClaimOutput(claim).data)


# Called by brands' backends: the machine handler answers it (config.machine_urls).
machine_urlpatterns = [path("events", events_endpoint, name="api_events")]

urlpatterns = [
    *machine_urlpatterns,
    path("events/<uuid:event_id>", EventDetailApi.as_view(), name="api_event"),
    path("participants", ParticipantListApi.as_view(), name="api_participants"),
    path("participants/<int:participant_id>", ParticipantDetailApi.as_view(), name="api_participant"),
    path("claims", ClaimListApi.as_view(), name="api_claims"),
    path("claims/<int:claim_id>", ClaimDetailApi.as_view(), name="api_claim"),
]
