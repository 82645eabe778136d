"""The demo brand's audience: people who opted in on WhatsApp through the real webhook path (their
consent recorded with the message as proof), two who sent STOP, one +1 number and one Meta caps;
the sandbox's templates synced, a sandbox Klaviyo connected and synced, and one template sent with
its statuses back. Run after demo_seed (make run does); safe to run again."""

import secrets
import time

from django.core.management.base import BaseCommand
from django.utils import timezone

from campaigns.models import Brand, Campaign, Membership, Role
from payouts.audience.broadcasts import broadcast_create, broadcasts_send_due, templates_sync
from payouts.audience.crm import crm_connect, crm_sync
from payouts.models import Broadcast, CrmConnection
from verification.models import ConsentRecord, ProviderEvent
from verification.providers.whatsapp import InboundMessage
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
        templates_sync(livemode=brand.livemode)
        if not CrmConnection.objects.filter(brand=brand).exists():
            connection = crm_connect(
                brand=brand, user=owner.user, kind="klaviyo", api_key="pk_demo_sandbox_key"
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
