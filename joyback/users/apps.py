from django.apps import AppConfig


class UsersConfig(AppConfig):
    name = "joyback.users"
    label = "users"
