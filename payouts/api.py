"""The Cashback API's payout endpoints: standalone payouts (create, list, get, cancel) and the
reconciliation report. Payee details go in once and only ever come back masked."""

from django.http import Http404
from django.urls import path
from django.utils.translation import gettext as _
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.response import Response

from campaigns.models import Brand
from campaigns.services.funding import BrandNotVerified, brand_money_allowed_check
from joyback.api.exceptions import ApiError
from joyback.api.models import ApiKey
from joyback.api.pagination import LIST_PARAMETERS, list_envelope, paginated
from joyback.api.views import ApiView
from joyback.ledger.models import AccountKind
from joyback.ledger.selectors import account_find
from payouts.forms import PayeeForm
from payouts.manual.services import payout_cancel, payout_manual_enter
from payouts.models import Payout
from payouts.models.payouts import PayoutStatus
from payouts.rails import rail_for
from payouts.reconciliation.selectors import summary_tiles
from payouts.selectors import payout_get_for_brand, payout_history
from payouts.submission.states import PayoutRefused
from verification.api import CurrencyField, MinorUnitsField

BANK_FIELDS = ("iban", "sort_code", "account_number", "routing_number", "bic")


class PayeeInput(serializers.Serializer):
    """Who is paid: a name as their bank knows it, a contact, and the bank details the currency's rail
    needs (EUR: iban; GBP: sort_code and account_number; USD: routing_number and account_number;
    the SWIFT currencies: bic and account_number)."""

    name = serializers.CharField(max_length=140)
    email = serializers.EmailField(max_length=254, required=False, allow_blank=True)
    phone = serializers.CharField(max_length=32, required=False, allow_blank=True, help_text="+49151…")
    iban = serializers.CharField(max_length=42, required=False, allow_blank=True)
    sort_code = serializers.CharField(max_length=10, required=False, allow_blank=True)
    account_number = serializers.CharField(max_length=34, required=False, allow_blank=True)
    routing_number = serializers.CharField(max_length=12, required=False, allow_blank=True)
    bic = serializers.CharField(max_length=11, required=False, allow_blank=True)
    name_latin = serializers.CharField(
        max_length=140,
        required=False,
        allow_blank=True,
        help_text="The name as the payee's bank writes it in Latin letters, when `name` is not in them",
    )
    address_line = serializers.CharField(
        max_length=70, required=False, allow_blank=True, help_text="SWIFT currencies: street and number"
    )
    address_city = serializers.CharField(max_length=70, required=False, allow_blank=True)
    address_postal_code = serializers.CharField(max_length=10, required=False, allow_blank=True)
    address_region = serializers.CharField(
        max_length=3, required=False, allow_blank=True, help_text="State or province (US and Canada)"
    )
    address_country = serializers.CharField(max_length=2, required=False, allow_blank=True)


class PayoutInput(serializers.Serializer):
    amount = MinorUnitsField(min_value=1, max_value=10**12)
    currency = CurrencyField()
    payee = PayeeInput()


def _mask_name(name: str) -> str:
    return " ".join(f"{word[0]}•••" for word in name.split() if word)


def _mask_email(email: str | None) -> str | None:
    if not email:
        return None
    local, _at, domain = email.partition("@")
    return f"{local[:1]}•••@{domain}"


def _mask_phone(phone: str | None) -> str | None:
    if not phone:
        return None
    return f"{phone[:3]}•••{phone[-2:]}"


class PayeeOutput(serializers.Serializer):
    name = serializers.SerializerMethodField(help_text="Masked: initials only")
    email = serializers.SerializerMethodField(help_text="Masked")
    phone = serializers.SerializerMethodField(help_text="Masked")
    rail = serializers.CharField()
    country = serializers.CharField()
    account = serializers.CharField(source="account_masked", help_text="Masked")

    def get_name(self, payee) -> str:
        return _mask_name(payee.holder_name)

    def get_email(self, payee) -> str | None:
        return _mask_email(payee.email)

    def get_phone(self, payee) -> str | None:
        return _mask_phone(payee.phone)


class PayoutOutput(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.ChoiceField(choices=PayoutStatus.choices)
    amount = serializers.IntegerField(help_text="Minor units")
    currency = serializers.CharField()
    scheme = serializers.CharField()
    reason_code = serializers.CharField(help_text="The bank's ISO 20022 reason, when rejected or returned")
    end_to_end_id = serializers.CharField(help_text="The reference the bank sees")
    manual = serializers.BooleanField(help_text="A standalone payout, not a reward's")
    payee = PayeeOutput()
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()
    settled_at = serializers.DateTimeField(allow_null=True)


class PayoutEventOutput(serializers.Serializer):
    from_status = serializers.CharField()
    to_status = serializers.CharField()
    reason_code = serializers.CharField()
    at = serializers.DateTimeField()


class PayoutDetailOutput(PayoutOutput):
    history = PayoutEventOutput(many=True, help_text="Every transition, oldest first")


def _brand_payout(request, payout_id: int) -> Payout:
    payout = payout_get_for_brand(brand=request.auth.brand_id, payout_id=payout_id)
    if payout is None:
        raise Http404
    return payout


def _detail(payout: Payout) -> dict:
    payout.history = payout_history(payout=payout)
    return PayoutDetailOutput(payout).data


def _payee_checked(payee: dict, currency: str) -> PayeeForm:
    """The dashboard's own checks of name, contact and the rail's bank details; the brand vouches
    for the payee's consent by sending them."""
    form = PayeeForm(data={**payee, "consent": "on"}, currency=currency)
    if not form.is_valid():
        for name, errors in form.errors.as_data().items():
            error = errors[0]
            field = "payee" if name == "__all__" else f"payee.{name}"
            raise ApiError(error.code or "invalid", " ".join(error.messages), field=field)
    return form


def _funding_check(*, brand_id: int, currency: str, amount: int) -> None:
    """Refuse before anything is stored; the posting itself checks again under its lock."""
    funding = account_find(kind=AccountKind.BRAND_FUNDING, brand_id=brand_id, currency=currency)
    if funding is None or funding.balance - funding.held < amount:
        raise ApiError(
            "insufficient_funds",
            _("The brand's %(currency)s funding account does not hold enough for this payout.")
            % {"currency": currency},
            field="amount",
            status_code=409,
        )


class PayoutListApi(ApiView):
    """Standalone payouts: make one to anybody with bank details, or list the brand's payouts."""

    scopes = {"GET": "payouts", "POST": "payouts"}

    @extend_schema(
        operation_id="payouts_list",
        parameters=[
            *LIST_PARAMETERS,
            OpenApiParameter("status", {"type": "string", "enum": PayoutStatus.values}),
            OpenApiParameter("created_after", {"type": "string", "format": "date-time"}),
            OpenApiParameter("created_before", {"type": "string", "format": "date-time"}),
        ],
        responses=list_envelope("PayoutList", PayoutOutput),
    )
    def get(self, request):
        payouts = Payout.objects.filter(brand_id=request.auth.brand_id).select_related("payee")
        wanted = request.query_params.get("status")
        if wanted:
            if wanted not in PayoutStatus.values:
                raise ApiError(
                    "invalid",
                    _("status is one of %(statuses)s.") % {"statuses": ", ".join(PayoutStatus.values)},
                    field="status",
                )
            payouts = payouts.filter(status=wanted)
        for name, lookup in (("created_after", "created_at__gte"), ("created_before", "created_at__lt")):
            raw = request.query_params.get(name)
            if raw:
                try:
                    moment = serializers.DateTimeField().to_internal_value(raw)
                except serializers.ValidationError:
                    raise ApiError(
                        "invalid",
                        _("%(name)s is a date and time like 2026-12-01T00:00:00Z.") % {"name": name},
                        field=name,
                    ) from None
                payouts = payouts.filter(**{lookup: moment})
        return paginated(request, payouts, PayoutOutput)

    @extend_schema(
        operation_id="payouts_create",
        request=PayoutInput,
        responses={
            201: OpenApiResponse(
                PayoutDetailOutput,
                description="Funded from the brand's funding account; above the approval threshold its "
                "status is awaiting_approval until a second person approves it in the dashboard.",
            )
        },
    )
    def post(self, request):
        serializer = PayoutInput(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        currency = data["currency"]
        if rail_for(currency) is None:
            raise ApiError(
                "currency_unsupported",
                _("Payouts in %(currency)s are not offered.") % {"currency": currency},
                field="currency",
            )
        brand = Brand.objects.get(pk=request.auth.brand_id)
        try:
            brand_money_allowed_check(brand=brand)
        except BrandNotVerified as refused:
            raise ApiError("brand_not_verified", str(refused), status_code=403) from None
        form = _payee_checked(data["payee"], currency)
        _funding_check(brand_id=request.auth.brand_id, currency=currency, amount=data["amount"])
        api_key = ApiKey.objects.select_related("created_by").get(pk=request.auth.pk)
        try:
            payout = payout_manual_enter(
                brand=brand,
                name=form.cleaned_data["name"],
                email=form.cleaned_data["email"],
                phone=form.cleaned_data["phone"],
                bank_account=form.bank_account,
                currency=currency,
                amount=data["amount"],
                # What a key does, the person who made it did: they cannot be its second approver.
                created_by=api_key.created_by,
                api_key=api_key,
                name_latin=form.cleaned_data.get("name_latin", ""),
                address=form.address,
            )
        except PayoutRefused as refused:
            raise ApiError("payout_refused", refused.message, status_code=409) from None
        return Response(_detail(_brand_payout(request, payout.pk)), status=status.HTTP_201_CREATED)


class PayoutDetailApi(ApiView):
    """One payout with its history."""

    scopes = {"GET": "payouts"}

    @extend_schema(operation_id="payouts_retrieve", responses=PayoutDetailOutput)
    def get(self, request, payout_id: int):
        return Response(_detail(_brand_payout(request, payout_id)))


class PayoutCancelApi(ApiView):
    """Stop a payout that has not left for the bank yet (awaiting approval, created or payee
    verified); the money goes back to the brand's funding. Later it is refused with 409."""

    scopes = {"POST": "payouts"}

    @extend_schema(operation_id="payouts_cancel", request=None, responses=PayoutDetailOutput)
    def post(self, request, payout_id: int):
        payout = _brand_payout(request, payout_id)
        try:
            payout_cancel(payout=payout, actor=None, note="cancelled by API")
        except PayoutRefused as refused:
            raise ApiError("payout_not_cancellable", refused.message, status_code=409) from None
        return Response(_detail(_brand_payout(request, payout_id)))


class ReportRow(serializers.Serializer):
    currency = serializers.CharField()
    funded = serializers.IntegerField(help_text="Deposited into the brand's funding account")
    available = serializers.IntegerField(help_text="Funding and budgets not reserved")
    reserved = serializers.IntegerField(help_text="Held for pending claims")
    paid = serializers.IntegerField(help_text="Payouts settled")
    in_transit = serializers.IntegerField(help_text="Payouts on their way to the bank")
    returned = serializers.IntegerField(help_text="Payouts returned by the payee's bank")
    unmatched = serializers.IntegerField(help_text="Open reconciliation exceptions")
    unmatched_amount = serializers.IntegerField(help_text="Their amounts, signed as on the bank account")


class ReconciliationReportApi(ApiView):
    """The brand's money per currency, in minor units: what was funded, reserved, paid, is in
    transit, came back, and what the bank statements show that nothing matched yet."""

    scopes = {"GET": "read"}

    @extend_schema(
        operation_id="reconciliation_report",
        responses=inline_serializer(name="ReconciliationReport", fields={"data": ReportRow(many=True)}),
    )
    def get(self, request):
        tiles = summary_tiles(brand=Brand.objects.get(pk=request.auth.brand_id))
        names = [name for name in ReportRow().fields if name != "currency"]
        rows = [
            {"currency": tile["currency"], **{name: tile.get(name, 0) for name in names}} for tile in tiles
        ]
        return Response({"data": ReportRow(rows, many=True).data})


urlpatterns = [
    path("payouts", PayoutListApi.as_view(), name="api_payouts"),
    path("payouts/<int:payout_id>", PayoutDetailApi.as_view(), name="api_payout"),
    path("payouts/<int:payout_id>/cancel", PayoutCancelApi.as_view(), name="api_payout_cancel"),
    path("reconciliation/report", ReconciliationReportApi.as_view(), name="api_reconciliation_report"),
]
