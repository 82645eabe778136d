"""Seed the demo: an admin, a demo brand (verified) with one member per role, and its campaigns as drafts.

The brand's money arrives as it would in production, through the bank: `demo_funding` (payouts)
has the sandbox bank receive the brand's transfer, fetches the bank's feed, funds the campaigns
and puts them live. Safe to run again: it finds what exists instead of adding a second copy.
"""

from allauth.account.models import EmailAddress
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from campaigns.models import Brand, Campaign, Package, Role
from campaigns.services.brands import brand_create, brand_legal_details_save, brand_verify, member_add
from campaigns.services.campaigns import campaign_create

DEMO_PASSWORD = "joyback-demo"  # noqa: S105 - printed by make run, demo data only
ADMIN_EMAIL = "admin@joyback.localhost"
DEMO_BRAND_SLUG = "demo"
DEMO_CAMPAIGNS = [
    ("demo-all-in-one", Package.ALL_IN_ONE, "Summer Glow", "Get paid for loving our summer range"),
    ("demo-tiktok", Package.TIKTOK_ONLY, "TikTok Creators", "Connect TikTok, share a clip, get paid"),
    ("demo-whatsapp", Package.WHATSAPP_REWARD, "WhatsApp Club", "Join our WhatsApp club and get 2 euros"),
    ("demo-cashback", Package.CASHBACK, "Cashback Week", "5 euros back on every order this week"),
]


def user_get_or_create(email: str, **extra):
    User = get_user_model()
    user = User.objects.filter(email=email).first()
    if user is None:
        user = User.objects.create_user(email=email, password=DEMO_PASSWORD, **extra)
    return user


class Command(BaseCommand):
    help = "Create the demo brand, its members, its draft campaigns and an admin (idempotent)."

    def add_arguments(self, parser):
        parser.add_argument(
            "--logins", action="store_true", help="only print the sign-ins and pages (as make run ends)"
        )
        parser.add_argument("--site", default="", help="the address the pages are served at")

    def handle(self, *args, **options):
        if options["logins"]:
            self.stdout.write(demo_logins(site=options["site"]))
            return
        User = get_user_model()
        if not User.objects.filter(email=ADMIN_EMAIL).exists():
            User.objects.create_superuser(email=ADMIN_EMAIL, password=DEMO_PASSWORD)
        admin = User.objects.get(email=ADMIN_EMAIL)
        owner = user_get_or_create("owner@demo.localhost", first_name="Olivia", last_name="Owner")
        brand = Brand.objects.filter(slug=DEMO_BRAND_SLUG).first()
        if brand is None:
            brand = brand_create(name="Demo Brand", slug=DEMO_BRAND_SLUG, owner=owner, currency="EUR")
        if not brand.verified:
            # Verified as staff would verify a real brand: who it is, the owner's confirmed email.
            EmailAddress.objects.update_or_create(
                user=owner, email=owner.email, defaults={"verified": True, "primary": True}
            )
            brand_legal_details_save(
                brand=brand, legal_name="Demo Brand GmbH", registration_number="HRB 000000", country="DE"
            )
            brand = brand_verify(brand=brand, actor=admin, note="Demo brand, seeded")
        for role in (Role.FINANCE, Role.MARKETER, Role.VIEWER):
            member_add(brand=brand, user=user_get_or_create(f"{role}@demo.localhost"), role=role)
        for slug, package, name, headline in DEMO_CAMPAIGNS:
            if Campaign.objects.filter(slug=slug).exists():
                continue
            campaign_create(
                brand=brand,
                slug=slug,
                name=name,
                package=package,
                currency="EUR",
                countries=["AT", "DE", "ES", "FR", "IT", "NL"],
                languages=["en", "de", "es", "zh-hans"],
                headline=headline,
                description="Demo campaign: sandbox providers stand in for TikTok, WhatsApp and the bank.",
            )
        self.stdout.write(self.style.SUCCESS("Demo ready."))


def demo_logins(*, site: str = "") -> str:
    """What a visitor needs to try the demo: the sign-ins and the pages, as `make run` ends with."""
    lines = [
        f"Sign in (password for all: {DEMO_PASSWORD}):",
        f"  admin      {ADMIN_EMAIL}",
    ]
    lines += [f"  {role.value:<10} {role.value}@demo.localhost" for role in Role]
    lines += ["Pages:", f"  brand dashboard   {site}/brands/", f"  admin             {site}/admin/"]
    lines += [f"  landing page      {site}/c/{slug}/" for slug, *_ in DEMO_CAMPAIGNS]
    lines += [
        f"  sandbox TikTok    {site}/sandbox/tiktok/studio/  (post videos, set their views)",
        f"  sandbox WhatsApp  {site}/sandbox/whatsapp/phone/",
    ]
    return "\n".join(lines)
