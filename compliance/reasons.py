"""What each finding means, in the reader's language: codes are stored, words chosen when shown."""

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
    "bare_hashtag": _("Only a bare hashtag: “Sponsored by [brand]” is clearer."),
    "label_unverified": _("The platform cannot report its label; the person's word is recorded."),
}


def fix_texts(codes) -> list[str]:
    return [str(FIX[code]) for code in codes if code in FIX]


def explain_texts(codes) -> list[str]:
    return [str(EXPLAIN.get(code, code)) for code in codes]
