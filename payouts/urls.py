from django.urls import include, path

from payouts import overview, payout_table
from payouts.audience import views as audience_views
from payouts.funding import views as funding_views
from payouts.manual import views as manual_views
from payouts.payees import views as payee_views
from payouts.reconciliation import views as reconciliation_views
from payouts.sandbox import bank as sandbox_bank
from payouts.sandbox import funding as sandbox_funding
from payouts.sandbox import hubspot as sandbox_hubspot
from payouts.sandbox import klaviyo as sandbox_klaviyo
from payouts.sandbox import mailchimp as sandbox_mailchimp
from payouts.sandbox import onboarding as sandbox_onboarding
from payouts.sandbox import vies as sandbox_vies
from payouts.submission import views as submission_views
from payouts.tax import views as tax_views

app_name = "payouts"

# Grouped by their first segment (a plain prefix is a string comparison), as in campaigns.urls.
claim_flow = [
    path("c/<slug:slug>/payee/", payee_views.payee, name="payee"),
    path("iban/", payee_views.iban_feedback, name="iban_feedback"),
    path("status/<str:token>/", payee_views.status_payout, name="status_payout"),
    path("status/<str:token>/change/", payee_views.payee_change, name="payee_change"),
    path("status/<str:token>/vop/", payee_views.status_vop_choose, name="status_vop_choose"),
    path("status/<str:token>/privacy/", payee_views.status_privacy, name="status_privacy"),
    path("status/<str:token>/tax/", tax_views.tax_details, name="tax_details"),
    path("privacy/<str:token>/", payee_views.privacy_confirm, name="privacy_confirm"),
    path("status/<str:token>/email/", audience_views.email_optin_view, name="email_optin"),
    path("email/confirm/<str:token>/", audience_views.email_optin_confirm_view, name="email_optin_confirm"),
]

brand_pages = [
    path("payouts/", manual_views.payout_list, name="payout_list"),
    path("payouts/all/", payout_table.payout_table, name="payout_table"),
    path("payouts/all/csv/", payout_table.payout_table_csv, name="payout_table_csv"),
    path("overview/funnel/", overview.overview_funnel, name="overview_funnel"),
    path("payouts/manual/", manual_views.payout_manual, name="payout_manual"),
    path("payouts/<int:payout_id>/", manual_views.payout_detail, name="payout_detail"),
    path("payouts/<int:payout_id>/action/", manual_views.payout_action, name="payout_action"),
    path("campaigns/<int:campaign_id>/payouts/", manual_views.campaign_payouts, name="campaign_payouts"),
    *audience_views.brand_pages(),
    *reconciliation_views.brand_pages(),
    *funding_views.brand_pages(),
]

# The sandbox bank: Adyen's Transfers API paths under /sandbox/bank/btl/v4/, and the bank's own
# Verification of Payee and pain.001 file channel under /sandbox/bank/v1/.
sandbox_bank_api = [
    path("payee-verifications", sandbox_bank.payee_verifications, name="sandbox_bank_vop"),
    path("payment-files", sandbox_bank.payment_files, name="sandbox_bank_files"),
]
sandbox_adyen_api = [
    path("transfers", sandbox_funding.transfers, name="sandbox_adyen_transfers"),
    path("transfers/<str:transfer_id>", sandbox_funding.transfer_detail, name="sandbox_adyen_transfer"),
    path("transactions", sandbox_funding.transactions, name="sandbox_adyen_transactions"),
]
# Adyen's Balance Platform (configuration) API paths under /sandbox/bank/bcl/v2/: virtual accounts.
sandbox_adyen_config_api = [
    path("balanceAccounts", sandbox_funding.balance_accounts, name="sandbox_adyen_balance_accounts"),
    path(
        "balanceAccounts/<str:account_id>",
        sandbox_funding.balance_account,
        name="sandbox_adyen_balance_account",
    ),
    path("balanceAccounts/<str:account_id>/sweeps", sandbox_funding.sweeps, name="sandbox_adyen_sweeps"),
    path("paymentInstruments", sandbox_funding.payment_instruments, name="sandbox_adyen_payment_instruments"),
    path("accountHolders", sandbox_onboarding.account_holders, name="sandbox_adyen_account_holders"),
]
# Adyen's Legal Entity Management API under /sandbox/bank/lem/v4/, and its hosted onboarding page.
sandbox_adyen_legal_entity_api = [
    path("legalEntities", sandbox_onboarding.legal_entities, name="sandbox_adyen_legal_entities"),
    path(
        "legalEntities/<str:legal_entity_id>/onboardingLinks",
        sandbox_onboarding.onboarding_links,
        name="sandbox_adyen_onboarding_links",
    ),
]

# Called by Adyen: the machine handler answers it (config.machine_urls).
machine_urlpatterns = [
    path("webhooks/adyen/balance-platform/", submission_views.adyen_webhook, name="adyen_webhook"),
]

# The sandbox Klaviyo, at Klaviyo's paths under /sandbox/klaviyo/.
sandbox_klaviyo_api = [
    path(
        "api/profile-subscription-bulk-create-jobs",
        sandbox_klaviyo.subscribe_jobs,
        name="sandbox_klaviyo_subscribe",
    ),
    path("api/profiles", sandbox_klaviyo.profiles, name="sandbox_klaviyo_profiles"),
]

# The sandbox HubSpot, at its Communication Preferences v4 paths under /sandbox/hubspot/.
sandbox_hubspot_api = [
    path(
        "communication-preferences/v4/definitions",
        sandbox_hubspot.definitions,
        name="sandbox_hubspot_definitions",
    ),
    path(
        "communication-preferences/v4/statuses/batch/write",
        sandbox_hubspot.batch_write,
        name="sandbox_hubspot_write",
    ),
    path(
        "communication-preferences/v4/statuses/batch/read",
        sandbox_hubspot.batch_read,
        name="sandbox_hubspot_read",
    ),
]

# The sandbox Mailchimp, at the Marketing API 3.0's paths under /sandbox/mailchimp/<datacenter>/.
sandbox_mailchimp_api = [
    path("3.0/lists/<str:list_id>", sandbox_mailchimp.list_read, name="sandbox_mailchimp_list"),
    path("3.0/lists/<str:list_id>/members", sandbox_mailchimp.members, name="sandbox_mailchimp_members"),
    path(
        "3.0/lists/<str:list_id>/members/<str:subscriber_hash>",
        sandbox_mailchimp.member,
        name="sandbox_mailchimp_member",
    ),
    path(
        "3.0/lists/<str:list_id>/members/<str:subscriber_hash>/tags",
        sandbox_mailchimp.member_tags,
        name="sandbox_mailchimp_tags",
    ),
    path("3.0/lists/<str:list_id>/webhooks", sandbox_mailchimp.webhooks, name="sandbox_mailchimp_webhooks"),
]

urlpatterns = [
    path("p/", include(claim_flow)),
    path("c/<slug:slug>/status/<str:token>/", payee_views.status_page, name="status_page"),
    path("brands/<slug:brand_slug>/", include(brand_pages)),
    path("sandbox/bank/v1/", include(sandbox_bank_api)),
    path("sandbox/bank/btl/v4/", include(sandbox_adyen_api)),
    path("sandbox/bank/bcl/v2/", include(sandbox_adyen_config_api)),
    path("sandbox/klaviyo/", include(sandbox_klaviyo_api)),
    path("sandbox/bank/lem/v4/", include(sandbox_adyen_legal_entity_api)),
    path(
        "sandbox/bank/onboarding/<str:legal_entity_id>/",
        sandbox_onboarding.onboarding_page,
        name="sandbox_onboarding_page",
    ),
    path("sandbox/hubspot/", include(sandbox_hubspot_api)),
    # The sandbox VIES, at the European Commission's REST API path under /sandbox/vies/rest-api/.
    path("sandbox/vies/rest-api/check-vat-number", sandbox_vies.check_vat_number, name="sandbox_vies_check"),
    path("sandbox/mailchimp/<str:dc>/", include(sandbox_mailchimp_api)),
    # Mailchimp's audience webhook: the secret is in the address, so it is no fixed machine path.
    path(
        "webhooks/mailchimp/<int:connection_id>/<str:secret>/",
        audience_views.mailchimp_webhook,
        name="mailchimp_webhook",
    ),
    *machine_urlpatterns,
]
