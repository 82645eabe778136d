"""The one place that turns a stored code (a claim's reason, a fraud signal, a compliance verdict, a
label state, a ledger booking's reason) into words a person reads, in their language.

Pages, mails and exports show `said(kind, code)`, never the code; an unknown code is shown as it is,
so a new one is visible (and a test finds it) rather than hidden. Bank (ISO 20022) codes have their
own words in payouts and are shown beside them, for finance only.
"""

from django.utils.translation import gettext_lazy as _

CLAIM = {
    # why a claim ended as it did
    "verified_identity": _("Verified with the provider"),
    "thresholds_met": _("Reached the views and likes asked for"),
    "below_threshold": _("Did not reach the views or likes asked for"),
    "disclosure_missing": _("The post's disclosure was missing"),
    "disclosure_fix": _("Waiting for the person to fix the disclosure"),
    "compliance_review": _("Disclosure being reviewed by the brand"),
    "post_deleted": _("The post was deleted"),
    "tiktok_disconnected": _("TikTok access was taken back"),
    "awaiting_window": _("Waiting for the engagement window to close"),
    "purchase_confirmed": _("Purchase confirmed by the brand"),
    "return_window": _("Waiting for the purchase's return window to close"),
    "refunded": _("Purchase refunded"),
    "clawback": _("Reward taken back"),
    "review_approved": _("Approved by a reviewer"),
    "review_rejected": _("Rejected by a reviewer"),
    "reach_paid": _("Paid by the views the video reached"),
    "counted": _("Views read, nothing new to pay"),
    "topped_up": _("Views read, reward topped up"),
    "held_for_review": _("Views read, held for a person's look"),
    # fraud signals that hold a claim for review
    "ip_velocity": _("Many claims from one internet address"),
    "device_shared": _("Several people claimed from one browser"),
    "device_new_at_address": _("A new browser at an address someone else claimed from"),
    "campaign_velocity": _("Unusually many claims on the campaign at once"),
    "empty_account": _("An account with no followers and no videos"),
    "engagement_ratio": _("Far more likes per view than real audiences give"),
    "engagement_ratio_comments": _("Far more comments per view than real audiences give"),
    "engagement_spike": _("Far more views than the account's audience explains"),
    "view_velocity": _("Views grew far faster between two checks than real audiences give"),
    "payee_iban_shared": _("The same bank account as another person"),
    "payee_email_shared": _("The same email address as another person"),
    "payee_phone_shared": _("The same WhatsApp number as another person"),
}

VERDICT = {
    "compliant": _("Disclosure correct"),
    "non_compliant": _("Disclosure missing or wrong"),
    "needs_review": _("Needs a person's look"),
}

LABEL = {
    "attested_on": _("Label switched on, in the person's word"),
    "not_attested": _("Label not confirmed by the person"),
    "set_by_post": _("Label set when posted through JoyBack"),
    "unknown": _("Label state unknown"),
}

LEDGER = {
    "deposit": _("Bank transfer received"),
    "campaign_funding": _("Campaign funded"),
    "reward": _("Reward to a person"),
    "payout": _("Payout to a person's bank"),
    "payout_settled": _("Payout arrived"),
    "payout_returned": _("Payout came back from the bank"),
    "payout_rejected": _("Payout refused by the bank"),
    "payout_cancelled": _("Payout cancelled"),
    "payout_manual": _("Manual payout"),
    "clawback": _("Reward taken back"),
    "clawback_netted": _("Reward taken back from a later reward"),
    "deposit_returned": _("Bank transfer sent back to its sender"),
    "provider_sweep": _("Moved from a virtual account to the platform's account"),
}

# A deposit to a brand's virtual account, as the payment provider reported it.
FUNDING = {
    "received": _("Arriving"),
    "booked": _("Booked to your funding"),
    "returned": _("Sent back to the sender"),
}

# A payout's states, as its history lists them (the same words as the payout's status badge).
PAYOUT = {
    "awaiting_approval": _("Awaiting approval"),
    "created": _("Created"),
    "payee_verified": _("Payee verified"),
    "submitted": _("Submitted"),
    "accepted": _("Accepted by the bank"),
    "settled": _("Paid"),
    "rejected": _("Rejected"),
    "returned": _("Returned"),
    "unknown": _("Unknown, being checked"),
    "cancelled": _("Cancelled"),
}

# What became of a shop's order webhook (Shopify, WooCommerce), as the shop page lists them.
DELIVERY = {
    "ignored": _("Not an order that earns cashback"),
    "purchase_recorded": _("Purchase recorded"),
    "purchase_known": _("Purchase already recorded"),
    "refunded": _("Refund recorded, cashback taken back"),
    "refunded_before_payment": _("Refunded before the cashback was paid"),
    "refund_before_payment": _("Refund of an order not recorded yet"),
}

KINDS = {
    "claim": CLAIM,
    "verdict": VERDICT,
    "label": LABEL,
    "ledger": LEDGER,
    "payout": PAYOUT,
    "delivery": DELIVERY,
    "funding": FUNDING,
}


def said(kind: str, code: str) -> str:
    if not code:
        return ""
    return str(KINDS[kind].get(code, code))
