"""The Cashback API's campaign endpoints: the brand's campaigns, their budgets, its balances."""

from django.http import Http404
from django.urls import path
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response

from campaigns.models import Brand
from campaigns.selectors import campaign_budget, campaign_get_for_brand, campaigns_for_brand
from joyback.api.pagination import LIST_PARAMETERS, list_envelope, paginated
from joyback.api.views import ApiView
from joyback.ledger.models import AccountKind
from joyback.ledger.selectors import accounts_for_brand


def api_brand(request) -> Brand:
    """The key's brand, for scoping queries only: its id, without reading the row (ApiKey.brand_id
    is no foreign key, so a key outliving its brand finds nothing instead of failing)."""
    return Brand(pk=request.auth.brand_id)


class CampaignOutput(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    slug = serializers.CharField()
    package = serializers.CharField()
    status = serializers.CharField()
    currency = serializers.CharField()
    starts_at = serializers.DateTimeField(allow_null=True)
    ends_at = serializers.DateTimeField(allow_null=True)
    created_at = serializers.DateTimeField()


class CampaignListApi(ApiView):
    """The brand's campaigns, newest first."""

    scopes = {"GET": "read"}

    @extend_schema(
        operation_id="campaigns_list",
        parameters=LIST_PARAMETERS,
        responses=list_envelope("CampaignList", CampaignOutput),
    )
    def get(self, request):
        return paginated(request, campaigns_for_brand(brand=api_brand(request)), CampaignOutput)


class CampaignDetailApi(ApiView):
    """One campaign with its budget: funded, available, held for pending claims, spent."""

    scopes = {"GET": "read"}

    class CampaignDetailOutput(CampaignOutput):
        class BudgetOutput(serializers.Serializer):
            funded = serializers.IntegerField(help_text="Minor units put into the budget")
            available = serializers.IntegerField()
            held = serializers.IntegerField(help_text="Reserved for pending claims")
            spent = serializers.IntegerField()

        budget = BudgetOutput()

    @extend_schema(operation_id="campaigns_retrieve", responses=CampaignDetailOutput)
    def get(self, request, campaign_id: int):
        campaign = campaign_get_for_brand(brand=api_brand(request), campaign_id=campaign_id)
        if campaign is None:
            raise Http404
        campaign.budget = campaign_budget(campaign=campaign)
        return Response(self.CampaignDetailOutput(campaign).data)


class BalanceListApi(ApiView):
    """The brand's ledger accounts: its funding and each campaign's budget, in minor units."""

    scopes = {"GET": "read"}

    class BalanceOutput(serializers.Serializer):
        id = serializers.IntegerField()
        kind = serializers.CharField()
        name = serializers.CharField()
        currency = serializers.CharField()
        balance = serializers.IntegerField(help_text="Minor units")
        held = serializers.IntegerField()
        available = serializers.IntegerField()

    # The brand's own accounts: its funding and each campaign's budget (not every person's payable).
    @extend_schema(
        operation_id="balances_list",
        responses=list_envelope("BalanceList", BalanceOutput),
    )
    def get(self, request):
        accounts = accounts_for_brand(
            brand_id=request.auth.brand_id, kinds=[AccountKind.BRAND_FUNDING, AccountKind.CAMPAIGN_BUDGET]
        )
        return Response({"data": self.BalanceOutput(accounts, many=True).data, "has_more": False})


urlpatterns = [
    path("campaigns", CampaignListApi.as_view(), name="api_campaigns"),
    path("campaigns/<int:campaign_id>", CampaignDetailApi.as_view(), name="api_campaign"),
    path("balances", BalanceListApi.as_view(), name="api_balances"),
]
