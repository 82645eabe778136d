"""What each finding means, in the reader's language: codes are stored, words chosen when shown.

A person whose caption failed is told, for every reason, what is wrong (quoting what was found),
what to write instead (the campaign's wording, naming the brand) and the policy it comes from, in
their own language (`caption_reasons`). The brand's pages use the shorter `EXPLAIN`.
"""

from collections.abc import Sequence
from dataclasses import dataclass

from django.utils import translation
from django.utils.translation import gettext_lazy as _

# Told to the person who posted: exactly what to change.
FIX = {
    "missing": _("Your caption has no disclosure. Start it with the wording below."),
    "ambiguous_only": _(
        "Tags like #sp, #collab, #partner or “thanks to the brand” do not tell people it is an ad. "
        "Start your caption with the wording below."
    ),
    "not_in_post": _(
        "A disclosure in a comment or your profile does not count: it must be in the caption itself."
    ),
    "wrong_language": _(
        "Your disclosure is in a language your audience may not read. Use the wording below."
    ),
    "below_the_fold": _(
        "Your disclosure is hidden behind “more”. Move it to the very start of your caption."
    ),
    "not_first": _("Here the disclosure must come first: start your caption with it."),
    "buried_in_hashtags": _(
        "Your disclosure is buried among hashtags at the end. Move it to the start of your caption."
    ),
    "contest_word_missing": _("This is a contest: say “contest” or “sweepstakes” in the disclosure."),
    "contest_word_unclear": _("“Giveaway” may not be clear enough: say “contest” or “sweepstakes”."),
    "label_off": _("Switch on the platform's paid-partnership label for this post."),
    "brand_not_named": _("Name the brand in your disclosure."),
    "negated": _("Your caption says it is not an ad, but it is: remove that and keep the disclosure."),
    "denied": _("Your caption says it is not an ad, but it is: start it with the wording below."),
    "other_sponsor": _("Your disclosure names another sponsor: name the brand of this campaign."),
    "inside_word": _("A disclosure word inside another word does not count: use the wording below."),
    "not_up_front": _(
        "Put the disclosure at the very start of your caption, on its own: use the wording below."
    ),
    "doubtful_context": _(
        "Something in your caption may contradict or blur the disclosure: keep the wording below and "
        "nothing that says otherwise."
    ),
    "other_company": _("Your caption names another company as paying: name the brand of this campaign."),
    "not_the_mark": _("Here the disclosure must use the word the law asks for: use the wording below."),
    "mark_with_link": _(
        "A review with a shopping link must say “广告” (advertisement): use the wording below."
    ),
}

# Shown to the brand: why the verdict.
EXPLAIN = {
    "missing": _("No disclosure in the caption."),
    "ambiguous_only": _("Only an ambiguous tag (#sp, #spon, #collab, #partner, thanks-brand)."),
    "not_in_post": _("Disclosed only outside the post (a comment or the profile)."),
    "wrong_language": _("Disclosed only in a language the policy does not accept here."),
    "below_the_fold": _("The disclosure is not in the visible part of the caption."),
    "not_first": _("The policy wants the disclosure up front; it is not first."),
    "buried_in_hashtags": _("The disclosure is only in the cluster of hashtags at the end."),
    "contest_word_missing": _("A contest without “contest” or “sweepstakes”."),
    "contest_word_unclear": _("A contest named only by an unclear word (giveaway)."),
    "label_off": _("The platform reports the paid-partnership label off."),
    "brand_not_named": _("The brand is not named."),
    "negated": _("The caption denies being an ad."),
    "denied": _("The caption only denies being an ad; it discloses nothing."),
    "bare_hashtag": _("Only a bare hashtag: “Sponsored by [brand]” is clearer."),
    "label_unverified": _("The platform cannot report its label; the person's word is recorded."),
    "other_sponsor": _("The disclosure names a different sponsor than the brand."),
    "inside_word": _("A disclosure word only inside another word (“ad-free”, “广告牌”)."),
    "not_up_front": _(
        "The disclosure is not in a position the checker accepts on its own (first or a closing hashtag)."
    ),
    "doubtful_context": _("Words near the disclosure may contradict it or use it in another sense."),
    "other_company": _("The caption names another company as paying."),
    "not_the_mark": _(
        "The policy asks for its own mark (“Werbung”, “广告”); another disclosure word is used."
    ),
    "mark_with_link": _("A review with a shopping link without the mark “广告”."),
}

# What is wrong, said to the person; %(found)s is what the checker found, %(brand)s the brand.
WHAT = {
    "missing": _("Your caption does not say that it is an ad."),
    "ambiguous_only": _(
        "Tags like #sp, #collab or #partner, or thanking %(brand)s, do not tell people you were paid."
    ),
    "not_in_post": _("A disclosure in a comment or in your profile does not count."),
    "wrong_language": _("Your disclosure is in a language your audience may not read."),
    "below_the_fold": _("Your disclosure is hidden behind “more”, where most people never look."),
    "not_first": _("Here the disclosure has to come before anything else."),
    "buried_in_hashtags": _("Your disclosure is lost among the hashtags at the end."),
    "contest_word_missing": _("This campaign is a contest, and your caption does not say so."),
    "contest_word_unclear": _("A word like “giveaway” or “win” may not make it clear this is a contest."),
    "label_off": _("The platform's paid-partnership label is switched off."),
    "brand_not_named": _("Your disclosure does not name %(brand)s."),
    "negated": _("Your caption says it is not an ad, but you are paid for it."),
    "denied": _("Your caption says it is not an ad, but you are paid for it."),
    "other_sponsor": _(
        "Your disclosure names “%(found)s” as the sponsor, but this campaign is paid by %(brand)s."
    ),
    "inside_word": _(
        "“%(found)s” is not a disclosure: the word is part of another word that means something else."
    ),
    "not_up_front": _("Your disclosure is not at the start of your caption, where people see it first."),
    "doubtful_context": _(
        "“%(found)s” in your caption may make people doubt that this is an ad, so a person checks it first."
    ),
    "other_company": _("Your caption says “%(found)s” pays, but this campaign is paid by %(brand)s."),
    "not_the_mark": _("“%(found)s” is not the mark the law asks for here."),
    "mark_with_link": _("With a shopping link, “%(found)s” is not enough: the law asks for “广告”."),
}

# What to write instead; %(wording)s is the campaign's disclosure in the person's language.
INSTEAD = {
    "missing": _("Start your caption with “%(wording)s”."),
    "ambiguous_only": _("Start your caption with “%(wording)s”."),
    "not_in_post": _("Put “%(wording)s” at the start of the caption itself."),
    "wrong_language": _("Write “%(wording)s” instead."),
    "below_the_fold": _("Move it to the very start: “%(wording)s”."),
    "not_first": _("Start your caption with “%(wording)s”, before anything else."),
    "buried_in_hashtags": _("Start your caption with “%(wording)s” instead of ending with a hashtag."),
    "contest_word_missing": _("Start your caption with “%(wording)s”."),
    "contest_word_unclear": _("Start your caption with “%(wording)s”."),
    "label_off": _(
        "Switch on the paid-partnership label when you post, and keep “%(wording)s” in your caption."
    ),
    "brand_not_named": _("Write “%(wording)s”."),
    "negated": _("Remove “not an ad” and start your caption with “%(wording)s”."),
    "denied": _("Remove “not an ad” and start your caption with “%(wording)s”."),
    "other_sponsor": _("Write “%(wording)s”, naming %(brand)s."),
    "inside_word": _("Write the disclosure as its own words: “%(wording)s”."),
    "not_up_front": _("Start your caption with “%(wording)s”."),
    "doubtful_context": _("Start your caption with “%(wording)s” and remove what says otherwise."),
    "other_company": _("Write “%(wording)s”, naming %(brand)s."),
    "not_the_mark": _("Start your caption with “%(wording)s”."),
    "mark_with_link": _("Start your caption with “%(wording)s”."),
}

# The policies, as a person should read their names.
POLICY_NAMES = {
    "us-ftc": _("US: FTC Endorsement Guides (16 CFR 255) and Consumer Reviews Rule (16 CFR 465)"),
    "uk-asa": _("UK: ASA CAP Code and the CMA's guidance for influencers"),
    "eu-de": _("Germany and Austria: UWG § 5a and MStV § 22 (EU Unfair Commercial Practices Directive)"),
    "eu-es": _("Spain: General Advertising Law and the Autocontrol code for influencers"),
    "cn-adlaw": _("China: Advertising Law, article 14"),
    "eu-ucpd": _("EU: Unfair Commercial Practices Directive"),
}


@dataclass(frozen=True)
class Reason:
    code: str
    what: str
    instead: str
    policies: tuple[str, ...]


def policy_name(label: str) -> str:
    code = label.split("@")[0]
    return str(POLICY_NAMES.get(code, code))


def caption_reasons(
    verdict,
    *,
    wording: str,
    brand: str,
    language: str,
    policies: Sequence = (),
) -> list[Reason]:
    """Every reason a caption failed, worded for the person who posted it in `language`.

    `verdict` is a CaptionVerdict, or a list of stored reason codes (a case keeps only the codes;
    then every policy in `policies` is named)."""
    codes = getattr(verdict, "reasons", verdict)
    found = getattr(verdict, "detail", lambda code: "")
    every = tuple(getattr(policy, "label", policy) for policy in policies)
    reasons = []
    with translation.override(language):
        for code in codes:
            if code not in WHAT:
                continue
            labels = tuple(verdict.policies_for(code)) if hasattr(verdict, "policies_for") else ()
            names = {"wording": wording, "brand": brand, "found": found(code) or wording}
            reasons.append(
                Reason(
                    code=code,
                    what=str(WHAT[code]) % names,
                    instead=str(INSTEAD[code]) % names,
                    policies=tuple(dict.fromkeys(policy_name(label) for label in labels or every)),
                )
            )
    return reasons


def label_advice(*, policies: Sequence, language: str) -> list[str]:
    """Why the label is, or is not, required under each policy in force."""
    with translation.override(language):
        return [
            str(_("%(policy)s: %(why)s") % {"policy": policy_name(policy.label), "why": policy.label_why})
            for policy in policies
            if getattr(policy, "label_why", "")
        ]


def fix_texts(codes) -> list[str]:
    return [str(FIX[code]) for code in codes if code in FIX]


def explain_texts(codes) -> list[str]:
    return [str(EXPLAIN.get(code, code)) for code in codes]
