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
    "second_account": _("A second account of a person who already claimed"),
    # a referred sale's signals (verification/referrals.py)
    "self_referral": _("The poster bought with their own code"),
    "self_referral_email": _("A referred order with the poster's own email address"),
    "self_referral_phone": _("A referred order with the poster's own phone number"),
    "self_referral_address": _("A referred order to the poster's own billing address"),
    "self_referral_device": _("The referral link was opened in the poster's own browser"),
    "self_referral_bank_account": _("The buyer is paid to the poster's bank account"),
    "code_leaked": _("Many orders with one code from one site: the code may be on a coupon site"),
    "refund_ring": _("Most orders this poster referred were returned"),
}

# The same codes as CLAIM, said to the person whose claim it is: what happened, in a sentence, and
# what they can do next. A fraud signal is not spelled out to the person it holds back (it would
# teach the trick); they learn that a person looks at it and when they hear.
_HELD = _("A person at the brand looks at this claim before it is paid, as we do when something is unusual.")
_HELD_NEXT = _("Nothing to do: we write to you when it is decided, usually within two working days.")
_PAID_NEXT = _("Nothing to do: we send the money to your bank and tell you when it is on its way.")
_WAIT_NEXT = _("Nothing to do for now: this page updates by itself.")
_OTHER_NEXT = _("Other steps of this campaign, and other campaigns, can still earn you money.")
_CONTACT_NEXT = _("If you think this is a mistake, answer the message we sent you and a person looks again.")

PERSON = {
    "verified_identity": _("Your account was confirmed by the provider."),
    "thresholds_met": _("Your video reached the views and likes asked for."),
    "below_threshold": _("Your video did not reach the views or likes asked for before its window closed."),
    "disclosure_missing": _("Your video's caption did not carry the disclosure, so it could not be paid."),
    "disclosure_fix": _("Your video's disclosure needs a fix before it can be paid."),
    "compliance_review": _("The brand is checking your video's disclosure."),
    "post_deleted": _("Your video was no longer public when we checked it."),
    "tiktok_disconnected": _(
        "JoyBack's access to your TikTok was taken back, so we could not check your video."
    ),
    "awaiting_window": _("Your video is in; we check its views when its window closes."),
    "purchase_confirmed": _("The brand confirmed your purchase."),
    "return_window": _("The brand recorded your purchase; it is confirmed once the return period is over."),
    "refunded": _("Your purchase was refunded, so it earns no cashback."),
    "clawback": _("The reward was taken back."),
    "review_approved": _("A person at the brand looked at your claim and approved it."),
    "review_rejected": _("A person at the brand looked at your claim and did not approve it."),
    "reach_paid": _("Paid by the views your video reached."),
    "counted": _("We read your video's views; nothing new to pay yet."),
    "topped_up": _("Your video reached more views: your reward grew."),
    "held_for_review": _HELD,
    "ip_velocity": _HELD,
    "device_shared": _HELD,
    "device_new_at_address": _HELD,
    "campaign_velocity": _HELD,
    "empty_account": _HELD,
    "engagement_ratio": _HELD,
    "engagement_ratio_comments": _HELD,
    "engagement_spike": _HELD,
    "view_velocity": _HELD,
    "payee_iban_shared": _(
        "Your bank account is also given by another person, so a person checks before paying."
    ),
    "payee_email_shared": _(
        "Your email address is also given by another person, so a person checks before paying."
    ),
    "payee_phone_shared": _(
        "Your WhatsApp number is also given by another person, so a person checks before paying."
    ),
    "second_account": _("You claimed with a second account: each person earns a reward once."),
    "self_referral": _HELD,
    "self_referral_email": _HELD,
    "self_referral_phone": _HELD,
    "self_referral_address": _HELD,
    "self_referral_device": _HELD,
    "self_referral_bank_account": _HELD,
    "code_leaked": _HELD,
    "refund_ring": _HELD,
}

NEXT = {
    "verified_identity": _PAID_NEXT,
    "thresholds_met": _PAID_NEXT,
    "below_threshold": _(
        "Post another video with the disclosure and share its link here: it is counted from the start."
    ),
    "disclosure_missing": _(
        "Post the video again with the disclosure at the start of the caption, or post it through "
        "JoyBack, which adds it for you."
    ),
    "disclosure_fix": _("Change the caption as shown above, then press “I fixed it: check again”."),
    "compliance_review": _HELD_NEXT,
    "post_deleted": _("Keep the video public until its window closes. Post it again and share the new link."),
    "tiktok_disconnected": _("Connect TikTok again on the campaign's page, then share your video again."),
    "awaiting_window": _WAIT_NEXT,
    "purchase_confirmed": _PAID_NEXT,
    "return_window": _(
        "Nothing to do: the cashback is paid once the return period is over, on the date shown."
    ),
    "refunded": _OTHER_NEXT,
    "clawback": _CONTACT_NEXT,
    "review_approved": _PAID_NEXT,
    "review_rejected": _CONTACT_NEXT,
    "reach_paid": _PAID_NEXT,
    "counted": _WAIT_NEXT,
    "topped_up": _WAIT_NEXT,
    "held_for_review": _HELD_NEXT,
    "ip_velocity": _HELD_NEXT,
    "device_shared": _HELD_NEXT,
    "device_new_at_address": _HELD_NEXT,
    "campaign_velocity": _HELD_NEXT,
    "empty_account": _HELD_NEXT,
    "engagement_ratio": _HELD_NEXT,
    "engagement_ratio_comments": _HELD_NEXT,
    "engagement_spike": _HELD_NEXT,
    "view_velocity": _HELD_NEXT,
    "payee_iban_shared": _HELD_NEXT,
    "payee_email_shared": _HELD_NEXT,
    "payee_phone_shared": _HELD_NEXT,
    "second_account": _OTHER_NEXT,
    "self_referral": _HELD_NEXT,
    "self_referral_email": _HELD_NEXT,
    "self_referral_phone": _HELD_NEXT,
    "self_referral_address": _HELD_NEXT,
    "self_referral_device": _HELD_NEXT,
    "self_referral_bank_account": _HELD_NEXT,
    "code_leaked": _HELD_NEXT,
    "refund_ring": _HELD_NEXT,
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
    "set_by_joyback": _("Label set when posted through JoyBack"),
    "platform_on": _("TikTok shows the label on the video"),
    "platform_off": _("TikTok shows no label on the video"),
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


def said_to_person(code: str) -> tuple[str, str]:
    """What happened and what to do next, for the person whose claim it is; ("", "") for no code,
    the code itself for one without words (so a test finds it)."""
    if not code:
        return "", ""
    return str(PERSON.get(code, code)), str(NEXT.get(code, ""))


def said(kind: str, code: str) -> str:
    if not code:
        return ""
    return str(KINDS[kind].get(code, code))
