"""TikTok, WhatsApp and shops. In the sandbox the adapters reach the app's own sandbox endpoints
(same wire format), with the sandbox's own secrets (config.variables)."""

from config.env import UNSET as _UNSET
from config.settings.base import env
from config.variables import VARIABLES as _VARIABLES

# The sandbox's own secrets, published in config.variables: the defaults while the sandbox is on, and
# a startup error in production (joyback.safety), whether left to default or copied into the
# environment.
SANDBOX_SECRETS = {
    var.name: var.sandbox[0] if isinstance(var.sandbox, list) else var.sandbox
    for var in _VARIABLES
    if var.is_secret and var.sandbox is not _UNSET
}

TIKTOK_CLIENT_KEY = env.get("TIKTOK_CLIENT_KEY")
TIKTOK_CLIENT_SECRET = env.get("TIKTOK_CLIENT_SECRET")
TIKTOK_AUTHORIZE_URL = env.get("TIKTOK_AUTHORIZE_URL")
TIKTOK_API_BASE = env.get("TIKTOK_API_BASE")
TIKTOK_WEBHOOK_TOLERANCE = env.get("TIKTOK_WEBHOOK_TOLERANCE")
# TikTok's oEmbed (the content library's embeds) and the Business API (Spark Ads authorisation
# codes, read with the platform's advertiser token).
TIKTOK_OEMBED_URL = env.get("TIKTOK_OEMBED_URL")
TIKTOK_BUSINESS_API_BASE = env.get("TIKTOK_BUSINESS_API_BASE")
# Read the "Paid partnership" label back through TikTok's Commercial Content API (a research product:
# on only with an approved client) for shares whose campaign's audience is in the EEA.
TIKTOK_COMMERCIAL_CONTENT = env.get("TIKTOK_COMMERCIAL_CONTENT")
TIKTOK_ADS_ACCESS_TOKEN = env.get("TIKTOK_ADS_ACCESS_TOKEN")
TIKTOK_ADVERTISER_ID = env.get("TIKTOK_ADVERTISER_ID")
# Posting through JoyBack (TikTok Direct Post): TikTok takes videos up to 4 GB.
TIKTOK_POST_MAX_BYTES = env.get("TIKTOK_POST_MAX_BYTES")

# Shops: JoyBack's Shopify app (its OAuth install proves a shop is the brand's), and where a shop's
# own endpoints are: the shop itself, or in the sandbox the sandbox shops answering for any domain.
SHOPIFY_API_KEY = env.get("SHOPIFY_API_KEY")
SHOPIFY_API_SECRET = env.get("SHOPIFY_API_SECRET")
SHOP_HOST_BASE = env.get("SHOP_HOST_BASE")

WHATSAPP_APP_SECRET = env.get("WHATSAPP_APP_SECRET")
WHATSAPP_VERIFY_TOKEN = env.get("WHATSAPP_VERIFY_TOKEN")
WHATSAPP_BUSINESS_NUMBER = env.get("WHATSAPP_BUSINESS_NUMBER")
WHATSAPP_API_BASE = env.get("WHATSAPP_API_BASE")
WHATSAPP_PHONE_NUMBER_ID = env.get("WHATSAPP_PHONE_NUMBER_ID")
WHATSAPP_ACCESS_TOKEN = env.get("WHATSAPP_ACCESS_TOKEN")
WHATSAPP_BUSINESS_ACCOUNT_ID = env.get("WHATSAPP_BUSINESS_ACCOUNT_ID")
WHATSAPP_APP_ID = env.get("WHATSAPP_APP_ID")
KLAVIYO_API_BASE = env.get("KLAVIYO_API_BASE")
HUBSPOT_API_BASE = env.get("HUBSPOT_API_BASE")
VIES_API_BASE = env.get("VIES_API_BASE")
MAILCHIMP_API_BASE = env.get("MAILCHIMP_API_BASE")

# The sandbox TikTok as an app TikTok has not audited yet: it lets it post only privately.
SANDBOX_TIKTOK_UNAUDITED = env.get("SANDBOX_TIKTOK_UNAUDITED")
# Posts a creator may publish through apps in a day before TikTok answers spam_risk_too_many_posts.
SANDBOX_TIKTOK_POSTS_PER_DAY = env.get("SANDBOX_TIKTOK_POSTS_PER_DAY")
# What the sandbox TikTok's creator_info says of every creator: "" (each as their display name
# says: one with "limited" in it has comments and duets off and 15-second posts, "banned" cannot
# post, "capped" meets the app's daily user cap), or "limited", "banned", "capped" for all of them.
SANDBOX_TIKTOK_CREATOR = env.get("SANDBOX_TIKTOK_CREATOR")
# Posts through the API wait in the studio until a tester passes moderation (else public at once).
SANDBOX_TIKTOK_HOLD_MODERATION = env.get("SANDBOX_TIKTOK_HOLD_MODERATION")
