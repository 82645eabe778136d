from django.contrib.admin.apps import AdminConfig


class JoyBackAdminConfig(AdminConfig):
    """django.contrib.admin with JoyBack's admin site (joyback.admin_site), loaded when the apps are."""

    default_site = "joyback.admin_site.JoyBackAdminSite"
