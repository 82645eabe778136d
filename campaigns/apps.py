from django.apps import AppConfig


class CampaignsConfig(AppConfig):
    name = "campaigns"

    def ready(self):
        # deferred: ready() runs once every app's models are loaded
        from campaigns.modes import brand_livemode_lookup
        from joyback.modes import brand_livemode_resolver_register

        brand_livemode_resolver_register(brand_livemode_lookup)

        # deferred: ready() runs once every app's models are loaded
        from campaigns.services.brands import membership_grant_apply
        from campaigns.services.fees import fee_plan_change_apply
        from campaigns.services.limits import limit_change_apply
        from joyback.users.four_eyes import staff_grant_applier_register
        from joyback.users.models import AccessChangeKind

        staff_grant_applier_register(AccessChangeKind.MEMBERSHIP, membership_grant_apply)
        staff_grant_applier_register(AccessChangeKind.LIMIT, limit_change_apply)
        staff_grant_applier_register(AccessChangeKind.FEE_PLAN, fee_plan_change_apply)
