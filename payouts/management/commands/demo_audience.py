"""The demo brand's audience: people who opted in on WhatsApp through the real webhook path (their
consent recorded with the message as proof), two who sent STOP, one +1 number and one Meta caps;
three of them who also confirmed the brand's email news (the double opt-in's link), the sandbox's
own WhatsApp Business Account connected (the sandbox's Embedded Signup) and its
templates synced, the sandbox Klaviyo, HubSpot and Mailchimp connected and synced, and one template
sent with its statuses back. Run after demo_seed (make run does); safe to run again."""

import secrets
import time

from django.core.management.base import BaseCommand
from django.utils import timezone

from campaigns.models import Brand, Campaign, Membership, Role
from campaigns.services.consent import consent_wording_save
from payouts.audience.broadcasts import (
    broadcast_create,
    broadcasts_send_due,
    templates_sync,
    whatsapp_account_connect,
    whatsapp_account_for,
)
from payouts.audience.crm import crm_connect, crm_sync
from payouts.audience.email_optin import email_optin_confirm, email_optin_request
from payouts.models import Broadcast, CrmConnection
from verification.models import ConsentRecord, Identity, ProviderEvent
from verification.providers.whatsapp import InboundMessage
from verification.sandbox.whatsapp import signup_code
from verification.services.participants import participant_create
from verification.services.provider_events import (
    optin_code_get_or_create,
    provider_events_process,
    whatsapp_messages_store,
)

# Name, WhatsApp number (wa_id), language, and whether they later sent STOP.
PEOPLE = [
    ("Lena Fischer", "4915112340001", "de", False),
    ("Marco Rossi", "393331234002", "en", False),
    ("Ana Núñez", "34612340003", "es", False),
    ("Wei Zhang", "8613812340004", "zh-hans", False),
    ("Jonas Weber", "4915112340005", "de", True),
    ("Sofia Costa", "351912340006", "en", True),
    ("Sam Miller", "12025550107", "en", False),  # a +1 number: no marketing templates
    ("Kai Braun", "4915112340049", "de", False),  # Meta caps this one (131049)
]


# Who of them also asked for the brand's email news, and confirmed it by the mailed link.
EMAIL_PEOPLE = {
    "4915112340001": "lena@example.com",
    "34612340003": "ana@example.com",
    "351912340006": "sofia@example.com",
}
EMAIL_WORDS = {
    "en": "I agree that {brand} sends me news and offers by email. I can unsubscribe from any mail.",
    "de": "Ich bin einverstanden, dass {brand} mir Neuigkeiten und Angebote per E-Mail schickt. "
    "Abmelden kann ich mich in jeder Mail.",
    "es": "Acepto que {brand} me envíe noticias y ofertas por correo electrónico. "
    "Puedo darme de baja en cualquier correo.",
    "zh-hans": "我同意 {brand} 通过电子邮件向我发送资讯和优惠。我可以在任何邮件中退订。",
}
# The sandbox CRMs' keys: a Klaviyo private key, a HubSpot private app token (with its subscription
# type), a Mailchimp key of the us21 datacenter (with its audience, one with GDPR fields).
CRMS = [
    ("klaviyo", "pk_demo_sandbox_key", ""),
    ("hubspot", "pat-na1-demo-sandbox", "7"),
    ("mailchimp", "0123456789abcdef0123456789abcdef-us21", "gdprdemo01"),
]


def _email_optins(*, campaign, owner) -> None:
    for language, words in EMAIL_WORDS.items():
        if not campaign.consent_wordings.filter(channel="email", language=language).exists():
            text = words.format(brand=campaign.brand.name)
            consent_wording_save(campaign=campaign, channel="email", language=language, text=text, user=owner)
    wording = campaign.consent_wordings.filter(channel="email", language="en").first()
    for wa_id, email in EMAIL_PEOPLE.items():
        identity = Identity.objects.filter(brand=campaign.brand, provider="whatsapp", subject=wa_id).first()
        if (
            identity is None
            or ConsentRecord.objects.filter(participant_id=identity.participant_id, channel="email").exists()
        ):
            continue
        links = []
        email_optin_request(
            participant=identity.participant,
            campaign=campaign,
            email=email,
            wording_id=wording.pk,
            agreed=True,
            confirm_url_for=lambda token, links=links: links.append(token) or token,
        )
        email_optin_confirm(token=links[0])


def _inbound(*, wa_id: str, name: str, text: str, kind: str = "text") -> None:
    message_id = f"wamid.{secrets.token_urlsafe(36)}"
    ids = whatsapp_messages_store(
        messages=[InboundMessage(message_id, wa_id, text, str(int(time.time())), name, kind=kind)]
    )
    provider_events_process(ids=ids)


class Command(BaseCommand):
    help = "Give the demo brand an audience, a CRM sync and a template send (idempotent)."

    def handle(self, *args, **options):
        brand = Brand.objects.filter(slug="demo").first()
        campaign = Campaign.objects.filter(slug="demo-whatsapp").first()
        owner = Membership.objects.filter(brand=brand, role=Role.OWNER).select_related("user").first()
        if brand is None or campaign is None or owner is None:
            self.stderr.write("Run demo_seed first.")
            return
        if not ConsentRecord.objects.filter(brand=brand).exists():
            for name, wa_id, language, stops in PEOPLE:
                person = participant_create(brand=brand)
                code = optin_code_get_or_create(campaign=campaign, participant=person, language=language)
                _inbound(wa_id=wa_id, name=name, text=f"JOY {code.code}")
                if stops:
                    stop = {"de": "Abmelden", "es": "Baja"}.get(language, "STOP")
                    _inbound(wa_id=wa_id, name=name, text=stop)
        _email_optins(campaign=campaign, owner=owner.user)
        if whatsapp_account_for(brand=brand) is None:
            # The brand's own account, as the owner's Embedded Signup in the sandbox ends.
            whatsapp_account_connect(brand=brand, user=owner.user, code=signup_code(brand.name))
        templates_sync(brand=brand)
        for kind, key, list_id in CRMS:
            if not CrmConnection.objects.filter(brand=brand, kind=kind).exists():
                connection = crm_connect(
                    brand=brand, user=owner.user, kind=kind, api_key=key, list_id=list_id
                )
                crm_sync(connection_id=connection.pk)
        if not Broadcast.objects.filter(brand=brand).exists():
            broadcast_create(
                brand=brand,
                user=owner.user,
                template_name="joyback_news",
                parameters=[brand.name, "our summer collection is in: 10% off for the club this week"],
                send_at=timezone.now(),
                campaign_id=campaign.pk,
            )
            broadcasts_send_due()
            provider_events_process(
                ids=list(ProviderEvent.objects.filter(processed_at__isnull=True).values_list("pk", flat=True))
            )
        self.stdout.write(self.style.SUCCESS("Demo audience ready: /brands/demo/audience/"))
