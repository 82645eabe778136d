"""Seed the demo: an admin, a demo brand with one member per role, and a funded balance.

Safe to run again: it finds what exists instead of adding a second copy.
"""

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from campaigns.models import Brand, Role
from campaigns.services import brand_create, brand_deposit_record, member_add

DEMO_PASSWORD = "joyback-demo"  # noqa: S105 - printed by make run, demo data only
ADMIN_EMAIL = "admin@joyback.localhost"
DEMO_BRAND_SLUG = "demo"


def user_get_or_create(email: str, **extra):
    User = get_user_model()
    user = User.objects.filter(email=email).first()
    if user is None:
        user = User.objects.create_user(email=email, password=DEMO_PASSWORD, **extra)
    return user


class Command(BaseCommand):
    help = "Create the demo brand, its members and an admin (idempotent)."

    def handle(self, *args, **options):
        User = get_user_model()
        if not User.objects.filter(email=ADMIN_EMAIL).exists():
            User.objects.create_superuser(email=ADMIN_EMAIL, password=DEMO_PASSWORD)
        owner = user_get_or_create("owner@demo.localhost", first_name="Olivia", last_name="Owner")
        brand = Brand.objects.filter(slug=DEMO_BRAND_SLUG).first()
        if brand is None:
            brand = brand_create(name="Demo Brand", slug=DEMO_BRAND_SLUG, owner=owner, currency="EUR")
        for role in (Role.FINANCE, Role.MARKETER, Role.VIEWER):
            member_add(brand=brand, user=user_get_or_create(f"{role}@demo.localhost"), role=role)
        brand_deposit_record(brand=brand, amount=10_000_00, currency="EUR", bank_reference="DEMO-DEPOSIT-1")
        self.stdout.write(self.style.SUCCESS("Demo ready."))
        self.stdout.write(f"  admin:  {ADMIN_EMAIL} / {DEMO_PASSWORD}")
        for role in Role:
            self.stdout.write(f"  {role.value + ':':8}{role.value}@demo.localhost / {DEMO_PASSWORD}")
