from django.apps import AppConfig


class CampaignsConfig(AppConfig):
    name = "campaigns"

    def ready(self):
        from campaigns.modes import brand_livemode_lookup
        from joyback.modes import brand_livemode_resolver_register

        brand_livemode_resolver_register(brand_livemode_lookup)
