"""Seed the demo: an admin, a second staff member, a demo brand (verified) with one member per role,
its fee plan (asked for by the admin, confirmed by the second staff member, as every plan is), and its
campaigns as drafts.

The brand's money arrives as it would in production, on its own account at the payment provider:
`demo_funding` (payouts) onboards it at the sandbox provider, has its bank send a transfer to the
brand's own virtual IBAN, books it from the provider's signed webhooks, funds the campaigns and
puts them live. Safe to run again: it finds what exists instead of adding a second copy.
"""

from allauth.account.models import EmailAddress
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.core.management.base import BaseCommand

from campaigns.models import Brand, Campaign, FeePlan, Package, Role
from campaigns.services.brands import brand_create, brand_legal_details_save, brand_verify, member_add
from campaigns.services.campaigns import campaign_create
from campaigns.services.fees import fee_plan_change_request
from joyback.users.four_eyes import staff_grant_confirm

DEMO_PASSWORD = "joyback-demo"  # noqa: S105 - printed by make run, demo data only
ADMIN_EMAIL = "admin@joyback.localhost"
# The second staff member: a fee plan (like every money permission) needs a second person's yes.
STAFF_EMAIL = "ops@joyback.localhost"
# The demo brand's plan: 0.10 EUR per verified action and 2% of each reward.
DEMO_FEE_PER_ACTION, DEMO_FEE_BPS = 10, 200
DEMO_BRAND_SLUG = "demo"
# The tax demo's US company (payouts' demo_tax), a brand of its own with its own owner: it pays US
# creators in dollars, and the allowance it sets for its commissioned videos is its own, never the
# demo brand's (whose people are paid in euros).
US_BRAND_SLUG = "demo-us"
US_OWNER_EMAIL = "owner@demo-us.localhost"
DEMO_CAMPAIGNS = [
    ("demo-all-in-one", Package.ALL_IN_ONE, "Summer Glow", "Get paid for loving our summer range"),
    ("demo-tiktok", Package.TIKTOK_ONLY, "TikTok Creators", "Connect TikTok, share a clip, get paid"),
    ("demo-whatsapp", Package.WHATSAPP_REWARD, "WhatsApp Club", "Join our WhatsApp club and get 2 euros"),
    ("demo-cashback", Package.CASHBACK, "Cashback Week", "5 euros back on every order this week"),
]
DEMO_DESCRIPTION = "Demo campaign: sandbox providers stand in for TikTok, WhatsApp and the bank."
# The brand's own words in each language of the demo's pages, as a brand writes them in the
# campaign form: a visitor reading German sees a German headline, not the English one.
DEMO_TEXTS = {
    "demo-all-in-one": {
        "de": "Lass dich dafür bezahlen, dass du unsere Sommerkollektion liebst",
        "es": "Gana dinero por amar nuestra colección de verano",
        "zh-hans": "喜欢我们的夏季系列，就能拿到钱",  # noqa: RUF001 - Chinese punctuation
    },
    "demo-tiktok": {
        "de": "Verbinde TikTok, teile einen Clip, werde bezahlt",
        "es": "Conecta TikTok, comparte un clip y cobra",
        "zh-hans": "连接 TikTok，分享短视频，获得报酬",  # noqa: RUF001 - Chinese punctuation
    },
    "demo-whatsapp": {
        "de": "Tritt unserem WhatsApp-Club bei und erhalte 2 Euro",
        "es": "Únete a nuestro club de WhatsApp y recibe 2 euros",
        "zh-hans": "加入我们的 WhatsApp 俱乐部，获得 2 欧元",  # noqa: RUF001 - Chinese punctuation
    },
    "demo-cashback": {
        "de": "Diese Woche 5 Euro zurück auf jede Bestellung",
        "es": "Esta semana, 5 euros de vuelta en cada pedido",
        "zh-hans": "本周每笔订单返现 5 欧元",
    },
}
DEMO_DESCRIPTIONS = {
    "de": "Demo-Kampagne: Sandbox-Anbieter stehen für TikTok, WhatsApp und die Bank.",
    "es": "Campaña de demostración: proveedores de prueba sustituyen a TikTok, WhatsApp y el banco.",
    "zh-hans": "演示活动：由沙盒服务代替 TikTok、WhatsApp 和银行。",  # noqa: RUF001 - Chinese punctuation
}


def demo_texts(slug: str) -> dict:
    return {
        language: {"headline": headline, "description": DEMO_DESCRIPTIONS[language]}
        for language, headline in DEMO_TEXTS[slug].items()
    }


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
        brand = demo_brand(
            slug=DEMO_BRAND_SLUG,
            name="Demo Brand",
            owner=owner,
            currency="EUR",
            legal=("Demo Brand GmbH", "HRB 000000", "DE"),
            admin=admin,
        )
        for role in (Role.FINANCE, Role.MARKETER, Role.VIEWER):
            member_add(brand=brand, user=user_get_or_create(f"{role}@demo.localhost"), role=role)
        demo_fee_plan(brand=brand, admin=admin)
        demo_brief_reviewers()
        for slug, package, name, headline in DEMO_CAMPAIGNS:
            if Campaign.objects.filter(slug=slug).exists():
                # A demo seeded before its pages spoke every language gets its words now.
                Campaign.objects.filter(slug=slug, texts={}).update(texts=demo_texts(slug))
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
                description=DEMO_DESCRIPTION,
                texts=demo_texts(slug),
            )
        self.stdout.write(self.style.SUCCESS("Demo ready."))


def demo_brand(*, slug: str, name: str, owner, currency: str, legal: tuple[str, str, str], admin) -> Brand:
    """A demo brand as a real one comes to be: its owner signs up and says who the company is in
    law, and staff verify it (the owner's confirmed email, the legal details)."""
    brand = Brand.objects.filter(slug=slug).first()
    if brand is None:
        brand = brand_create(name=name, slug=slug, owner=owner, currency=currency)
    if not brand.verified:
        EmailAddress.objects.update_or_create(
            user=owner, email=owner.email, defaults={"verified": True, "primary": True}
        )
        legal_name, registration_number, country = legal
        brand_legal_details_save(
            brand=brand, legal_name=legal_name, registration_number=registration_number, country=country
        )
        brand = brand_verify(brand=brand, actor=admin, note=f"{name}, seeded")
    return brand


def demo_brief_reviewers() -> None:
    """The second staff member reviews briefs too: words the checker refuses for sure go live only
    once two staff members approve them, the admin and this one in the demo."""
    second = user_get_or_create(STAFF_EMAIL, first_name="Omar", last_name="Ops", is_staff=True)
    second.user_permissions.add(
        Permission.objects.get(content_type__app_label="compliance", codename="review_brief")
    )


def demo_fee_plan(*, brand: Brand, admin) -> None:
    """The admin asks for the demo brand's plan and the second staff member confirms it, so the
    brand's dry run shows fees, its payouts carry them and it gets a monthly invoice."""
    if FeePlan.objects.filter(brand=brand, currency="EUR").exists():
        return
    second = user_get_or_create(STAFF_EMAIL, first_name="Omar", last_name="Ops", is_staff=True)
    second.user_permissions.add(
        Permission.objects.get(content_type__app_label="users", codename="change_staffgrant")
    )
    grant = fee_plan_change_request(
        actor=admin, brand=brand, currency="EUR", per_action=DEMO_FEE_PER_ACTION, payout_bps=DEMO_FEE_BPS
    )
    staff_grant_confirm(grant_id=grant.pk, actor=type(second).objects.get(pk=second.pk))


def demo_logins(*, site: str = "") -> str:
    """What a visitor needs to try the demo: the sign-ins and the pages, as `make run` ends with."""
    lines = [
        f"Sign in (password for all: {DEMO_PASSWORD}):",
        f"  admin      {ADMIN_EMAIL}",
        f"  staff      {STAFF_EMAIL}  (the second person: confirms what the admin asks)",
    ]
    lines += [f"  {role.value:<10} {role.value}@demo.localhost" for role in Role]
    lines += [f"  US owner   {US_OWNER_EMAIL}  (the tax demo's US brand, paying in dollars)"]
    lines += ["Pages:", f"  brand dashboard   {site}/brands/", f"  admin             {site}/admin/"]
    lines += [f"  landing page      {site}/c/{slug}/" for slug, *_ in DEMO_CAMPAIGNS]
    lines += [
        f"  sandbox TikTok    {site}/sandbox/tiktok/studio/  (post videos, set their views)",
        f"  sandbox WhatsApp  {site}/sandbox/whatsapp/phone/",
    ]
    return "\n".join(lines)
