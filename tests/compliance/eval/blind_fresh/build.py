# -*- coding: utf-8 -*-
"""Build the blind evaluation set (captions.csv, rules.csv, README.md).

Every row below was written by hand by a compliance reviewer from the policy
texts only. Run: python3 build.py
"""
import csv
import io
import os
import sys
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))

# ---------------------------------------------------------------------------
# Sources, by country and topic
# ---------------------------------------------------------------------------
SRC = {
    "disclosure": {
        "US": "16 CFR 255.0, 255.5; FTC Disclosures 101 for Social Media Influencers",
        "GB": "CAP Code 2.1, 2.3, 2.4; ASA/CMA Influencers' guide to making clear that ads are ads; DMCC Act 2024 Sch. 20 (paid editorial content)",
        "IE": "ASAI Code (recognisability of marketing communications); ASAI guidance on influencer marketing",
        "DE": "UWG §5a(4); MStV §22(1); Leitfaden der Medienanstalten zur Werbekennzeichnung",
        "AT": "MedienG §26; öUWG §2, Anhang Z 11",
        "ES": "Código de conducta sobre el uso de influencers en la publicidad (AEA/Autocontrol 2021) y anexo; Ley 34/1988 art. 9; Ley 3/1991 art. 26",
        "CN": "《互联网广告管理办法》(2023) 第九条; 《广告法》第十四条",
    },
    "contest": {
        "US": "16 CFR 255.5; FTC Disclosures 101 (contests and sweepstakes)",
        "GB": "CAP Code 2.1, 2.4, 8.17; ASA/CMA Influencers' guide",
        "IE": "ASAI Code (recognisability; sales promotions); ASAI guidance on influencer marketing",
        "DE": "UWG §5a(4); MStV §22(1); Leitfaden der Medienanstalten (Gewinnspiele)",
        "AT": "MedienG §26; öUWG §2, Anhang Z 11",
        "ES": "Código de conducta AEA/Autocontrol sobre influencers (2021) y anexo; Ley 3/1991 art. 26",
        "CN": "《广告法》第十四条; 《互联网广告管理办法》第九条",
    },
    "false_relationship": {
        "US": "16 CFR 255.5; 16 CFR 255.1(a); FTC Act §5",
        "GB": "CAP Code 2.1, 2.4, 3.1; DMCC Act 2024 Sch. 20 (paid editorial content)",
        "IE": "ASAI Code (recognisability; misleading advertising)",
        "DE": "UWG §5, §5a(4); MStV §22(1); Leitfaden der Medienanstalten",
        "AT": "MedienG §26; öUWG §2, Anhang Z 11",
        "ES": "Ley 3/1991 art. 5, 7 y 26; Ley 34/1988 art. 9; Código de conducta AEA/Autocontrol sobre influencers",
        "CN": "《广告法》第四条、第十四条; 《互联网广告管理办法》第九条",
    },
    "honest_opinion": {
        "US": "16 CFR 255.1(a)-(c); 16 CFR 465.2, 465.4",
        "GB": "CAP Code 3.1, 3.45, 3.47; DMCC Act 2024 Sch. 20 (fake and incentivised reviews)",
        "IE": "ASAI Code (truthful presentation; testimonials and endorsements)",
        "DE": "UWG §5, §5a; UWG Anhang Nr. 23b, 23c",
        "AT": "öUWG §2; öUWG Anhang (gefälschte Bewertungen)",
        "ES": "Ley 3/1991 art. 5 y 7; Ley 34/1988 art. 3 e); Código de conducta AEA/Autocontrol (veracidad)",
        "CN": "《广告法》第四条、第二十八条、第三十八条",
    },
    "superlative": {
        "US": "16 CFR 255.1(a), (c); FTC Act §5 (substantiation)",
        "GB": "CAP Code 3.1, 3.7, 3.45, 3.47",
        "IE": "ASAI Code (substantiation; testimonials and endorsements)",
        "DE": "UWG §5 (Irreführung durch Spitzenstellungsbehauptung); UWG §5a",
        "AT": "öUWG §2",
        "ES": "Ley 3/1991 art. 5; Ley 34/1988 art. 3 e); Código de conducta AEA/Autocontrol (veracidad)",
        "CN": "《广告法》第九条第（三）项、第三十八条",
    },
    "engagement": {
        "US": "16 CFR 465.8; TikTok Community Guidelines (fake engagement)",
        "GB": "DMCC Act 2024 Sch. 20; CAP Code 3.1; TikTok Community Guidelines (fake engagement)",
        "IE": "Consumer Protection Act 2007 (misleading practices); TikTok Community Guidelines (fake engagement)",
        "DE": "UWG §5; UWG Anhang Nr. 23c; TikTok Community Guidelines (Fake Engagement)",
        "AT": "öUWG §2; TikTok Community Guidelines (Fake Engagement)",
        "ES": "Ley 3/1991 art. 5; Normas de la Comunidad de TikTok (interacción falsa)",
        "CN": "《反不正当竞争法》第八条; TikTok Community Guidelines (fake engagement)",
    },
    "health": {
        "US": "FTC Act §§5, 12; 16 CFR 255.1(c)",
        "GB": "CAP Code 15.1, 15.2; Regulation (EC) 1924/2006 as retained",
        "IE": "ASAI Code (food and health claims); Regulation (EC) 1924/2006",
        "DE": "VO (EG) 1924/2006 Art. 10; UWG §5",
        "AT": "VO (EG) 1924/2006 Art. 10; öUWG §2",
        "ES": "Reglamento (CE) 1924/2006 art. 10; Ley 3/1991 art. 5",
        "CN": "《广告法》第十七条、第二十八条",
    },
    "platform": {
        c: "TikTok Branded Content Policy" for c in ["US", "GB", "IE", "DE", "AT", "ES", "CN"]
    },
}
SRC["platform"]["US"] += "; 16 CFR 255.5"
SRC["platform"]["GB"] += "; CAP Code 2.1"
SRC["platform"]["IE"] += "; ASAI Code (recognisability)"
SRC["platform"]["DE"] += "; MStV §22(1)"
SRC["platform"]["AT"] += "; MedienG §26"
SRC["platform"]["ES"] += "; Ley 3/1991 art. 26"
SRC["platform"]["CN"] += "; 《互联网广告管理办法》第九条"

LAB = {
    "US": "'#ad'/'Ad'/'Sponsored'",
    "GB": "'#ad'/'Ad'/'Advert'",
    "IE": "'#ad'/'Ad'",
    "DE": "'Werbung'/'Anzeige'",
    "AT": "'Werbung'/'Anzeige'",
    "ES": "'publicidad'/'publi'",
    "CN": "'广告'",
}

# ---------------------------------------------------------------------------
# Caption kinds: default "why" and source topic
# ---------------------------------------------------------------------------
CAP_KIND = {
    # compliant
    "label_start": ("disclosure", "The paid post opens with a recognised label for this market (one of {lab}) in the audience's language, so viewers know it is an Alpaca Coffee ad before engaging."),
    "label_near_start": ("disclosure", "A recognised label (one of {lab}) follows only a two- or three-word hook and is visible without expanding the caption, so the ad is identifiable at once."),
    "sponsored_by": ("disclosure", "Stating at the start that Alpaca Coffee sponsors the video is plain, brand-specific disclosure of the paid relationship in the audience's language."),
    "paid_partnership": ("disclosure", "Saying at the start that it is a paid partnership with @drinkalpaca expressly discloses both the payment and the brand."),
    "collab_named": ("disclosure", "'En colaboración con' naming the brand at the start is a wording the Autocontrol annex accepts for paid posts."),
    "ambassador_named": ("disclosure", "'Embajador/a de' naming the brand at the start is accepted by the Autocontrol annex for an ongoing paid brand relationship."),
    "label_end_short": ("disclosure", "In a caption this short a recognised label (one of {lab}) at the end is seen together with the rest, so the ad is still clearly identifiable."),
    "contest_disclosed": ("contest", "The brand-funded giveaway carries a recognised label (one of {lab}) at the start, so entrants know the post is paid advertising."),
    # non-compliant
    "denial": ("false_relationship", "Alpaca Coffee paid for the post, so denying or joking away the relationship is false and leaves the ad undisclosed."),
    "label_other_sense": ("disclosure", "The label word is used in an unrelated sense, so nothing tells viewers that this post itself is paid advertising."),
    "other_sponsor": ("false_relationship", "The disclosure names a different sponsor and presents Alpaca Coffee as a free choice, concealing who actually paid for the post."),
    "disclosure_elsewhere": ("disclosure", "Pointing to comments, bio or a link is not a disclosure in the post itself; many viewers never see it."),
    "buried_label": ("disclosure", "The label comes only at the end of a long caption among hashtags, where it is truncated behind 'more' and not prominent."),
    "foreign_label": ("disclosure", "The only label is in a language the target audience cannot be assumed to understand, so the ad is not identifiable to them."),
    "ambiguous_label": ("disclosure", "This term does not clearly tell ordinary viewers that the post is paid advertising, so it is not an adequate label."),
    "gifted_when_paid": ("false_relationship", "Describing a paid post as a gift or PR sample understates the relationship and does not disclose the payment."),
    "label_inside_word": ("disclosure", "The label letters occur only inside another word or hashtag, which no viewer reads as an advertising label."),
    "contest_undisclosed": ("contest", "A brand-funded giveaway is advertising and needs a clear label; 'giveaway'/'win' alone does not disclose the paid relationship."),
    "contradicted_label": ("false_relationship", "The label is negated or described as unpaid, which is false for a paid post and cancels the disclosure."),
    "cooperation_with_link": ("disclosure", "The post carries a shopping link, so art. 9 requires the word '广告'; '合作'-type wording does not meet that requirement."),
    "no_label": ("disclosure", "A paid promotion with no label at all is covert advertising."),
    # needs review
    "borderline_label": ("disclosure", "borderline"),
}

CAPTIONS = []  # (country, language, contest, caption, expect, kind, why_override)


def cap(lang, country, caption, expect, kind, why=None, contest=""):
    CAPTIONS.append((country, lang, contest, caption, expect, kind, why))


C, N, R = "compliant", "non_compliant", "needs_review"

# ===========================================================================
# ENGLISH captions
# ===========================================================================
L = "en"
# --- compliant
cap(L, "US", "#ad okay so @drinkalpaca just dropped a caramel oat latte in a CAN?? 🦙☕ taste test w me", C, "label_start")
cap(L, "GB", "Ad | 5am gym girl era powered by Alpaca Coffee cold brew 💪 not me actually enjoying mornings now", C, "label_start")
cap(L, "IE", "#AD this is ur sign to swap the petrol station coffee for @drinkalpaca 🦙 honestly the hazelnut one slaps", C, "label_start")
cap(L, "US", "Sponsored by Alpaca Coffee ☕ rating every flavour out of 10, no skips", C, "sponsored_by")
cap(L, "US", "paid partnership with @drinkalpaca 🤝 3 ways I make iced coffee at home (budget edition)", C, "paid_partnership")
cap(L, "GB", "Advert: Alpaca Café's new oat flat white vs my usual order… thoughts below 👇", C, "label_start")
cap(L, "IE", "Advertisement 📢 spent the week drinking Alpaca Coffee instead of energy drinks, here's how it went", C, "label_start")
cap(L, "US", "AD 🦙 pov: you finally found a decaf that doesn't taste like sadness @drinkalpaca", C, "label_start")
cap(L, "GB", "#ad #AlpacaCoffee morning routine but make it cosy 🍂☕", C, "label_start")
cap(L, "US", "ad w/ @drinkalpaca — ranking their cold brews from 'fine' to 'i'd sell my car' 😂", C, "label_start")
cap(L, "IE", "#ad #ad #ad they really want me to make it obvious so: this is a paid ad for Alpaca Coffee ☕ ok now the review", C, "label_start")
cap(L, "US", "alpaca cold brew hits different 🦙 #ad", C, "label_end_short")
cap(L, "GB", "Monday fuel ☕🦙 #ad @drinkalpaca", C, "label_end_short")
cap(L, "IE", "iced caramel szn 🧊 Ad", C, "label_end_short")
cap(L, "US", "#ad GIVEAWAY 🎉 @drinkalpaca is letting me give away a year of coffee!! follow + tag a friend, ends Fri. No purchase necessary, 18+ US only, rules at link", C, "contest_disclosed", contest="yes")
cap(L, "GB", "AD – competition time! 🦙 win an Alpaca Coffee bundle: comment your fave flavour. UK 18+, closes 30 June, T&Cs in bio", C, "contest_disclosed", contest="yes")
cap(L, "IE", "#ad 🎁 GIVEAWAY w/ Alpaca Café — 3 winners get a month of cold brew. like, follow @drinkalpaca, tag 2 mates. ends Sunday, ROI only", C, "contest_disclosed", contest="yes")
cap(L, "US", "Advertisement for Alpaca Coffee: honest review, liked the mocha, the vanilla was way too sweet for me tbh", C, "label_start")
cap(L, "US", "#sponsored by @drinkalpaca ☕ coffee chat + life update bc a lot happened", C, "sponsored_by")
cap(L, "GB", "#Advert 🦙 Alpaca Coffee paid me to try their espresso pods for a week & here's the verdict", C, "label_start")
cap(L, "US", "Thanks Alpaca Coffee for sponsoring this video! 🦙 ok so the pumpkin spice one…", C, "sponsored_by",
    why="'Thanks ... for sponsoring this video' at the start names the brand and states sponsorship, which the FTC treats as clear, unlike a bare 'thanks'.")
cap(L, "IE", "Ad - paid post for @drinkalpaca 🦙 rating their new oat latte while stuck in traffic on the M50", C, "label_start")
cap(L, "US", "wait for it 😳 #ad w/ @drinkalpaca — the cold brew ice cube hack", C, "label_near_start")
cap(L, "GB", "#ad 🎥 @drinkalpaca wanted a 'real life' vibe so here's my messy kitchen lol. the salted caramel is actually nice", C, "label_start")
# --- needs review
cap(L, "GB", "Sponsored by Alpaca Coffee ☕ ranking their pods from worst to best", R, "borderline_label",
    why="The ASA/CMA guide recommends 'Ad'/'Advert' and warns that 'sponsored' may not make commercial intent clear enough, yet it names the brand up front, so a careful reviewer could go either way.")
cap(L, "US", "☕🦙 #AlpacaPartner day 1 of my 30 day coffee swap", R, "borderline_label",
    why="FTC guidance accepts brand-specific terms like '#AcmePartner' in some contexts but not a bare '#partner', and it is unclear whether this hashtag conveys payment to ordinary viewers.")
# --- non-compliant: denial
cap(L, "US", "not sponsored lol i just genuinely drink way too much alpaca coffee 😭☕", N, "denial")
cap(L, "GB", "before anyone asks — no this isn't an ad, i just rate @drinkalpaca fr 🦙", N, "denial")
cap(L, "IE", "is this sponsored? nope 🙅‍♀️ just obsessed w the alpaca hazelnut latte", N, "denial")
cap(L, "GB", "#notanad just vibes ☕ alpaca café oat latte review", N, "denial")
cap(L, "US", "ppl keep asking if alpaca pays me... i wish 😂😂 anyway new flavour review", N, "denial")
# --- label in another sense
cap(L, "US", "saw a job ad for barista at Alpaca Coffee today lmao so im taste testing for 'research' ☕", N, "label_other_sense")
cap(L, "GB", "saw your ad on the tube and had to try it 🚇 @drinkalpaca cold brew review", N, "label_other_sense")
cap(L, "US", "me, a literal advertising major, judging @drinkalpaca's new can design 🎨☕", N, "label_other_sense")
cap(L, "GB", "my ad agency coworkers are obsessed w @drinkalpaca so here's my honest take ☕", N, "label_other_sense")
cap(L, "IE", "ad hoc coffee run ☕🦙 alpaca café caramel latte thoughts", N, "label_other_sense")
# --- other sponsor
cap(L, "US", "#ad for @brewbuddy grinders ☕ (using Alpaca Coffee beans bc they're just my fave)", N, "other_sponsor")
cap(L, "IE", "sponsored by my local gym 💪 post-workout drink = alpaca cold brew (my choice, not theirs)", N, "other_sponsor")
# --- disclosure elsewhere
cap(L, "US", "disclosure in comments 👇 alpaca coffee 3 ways", N, "disclosure_elsewhere")
cap(L, "GB", "partnership info in bio ✨ @drinkalpaca oat latte review", N, "disclosure_elsewhere")
cap(L, "IE", "(see pinned comment) alpaca coffee taste test ☕", N, "disclosure_elsewhere")
# --- buried
cap(L, "US", "okay story time: i've been trying to cut down on my 4 energy drinks a day habit (i know, i know) and my roommate kept leaving alpaca cold brews in the fridge so i finally tried the vanilla one and honestly?? smooth, not bitter, no 2pm crash. been having one before every shift this week. let me know your go-to morning drink below 👇 #coffeetok #morningroutine #coldbrew #fyp #alpacacoffee #ad", N, "buried_label")
cap(L, "GB", "right so I've been testing coffee for my commute for literally ages and nothing survives the Northern line but this Alpaca one stays cold for like 2 hours?? The oat latte is creamy, the mocha a bit sweet for me, the caramel is the winner. Full ranking in the vid, tell me if I'm wrong xx #commute #london #coffee #alpacacoffee #fyp #foryou #ad", N, "buried_label")
cap(L, "IE", "Grand so here's the thing, I never drink cold coffee because it's Ireland and it's raining 300 days a year BUT the Alpaca Café hazelnut latte changed my mind a bit, it's handy for the bus, not too sweet, and the can is recyclable which I love. Anyway what should I try next?? #irishtiktok #coffee #dublin #alpacacafe #ad", N, "buried_label")
# --- foreign label
cap(L, "US", "Werbung 🦙 ok guys this alpaca cold brew is unreal, drinking it every morning now", N, "foreign_label")
cap(L, "GB", "#publi my new fave oat latte from @drinkalpaca ☕", N, "foreign_label")
# --- ambiguous
cap(L, "US", "#sp alpaca coffee taste test ☕", N, "ambiguous_label")
cap(L, "GB", "#spon ☕🦙 morning routine w @drinkalpaca", N, "ambiguous_label")
cap(L, "IE", "collab w @drinkalpaca 🤝 trying every flavour", N, "ambiguous_label")
cap(L, "US", "#partner ☕ my 5 min iced latte w Alpaca Coffee", N, "ambiguous_label")
cap(L, "GB", "thanks @drinkalpaca 💛 loving the new caramel cold brew", N, "ambiguous_label")
cap(L, "IE", "in association with Alpaca Café ☕ my weekend brunch vlog", N, "ambiguous_label")
# --- gifted when paid
cap(L, "GB", "#gifted ☕ alpaca coffee sent me their new range and wow", N, "gifted_when_paid")
cap(L, "US", "PR package from @drinkalpaca 📦 unboxing the new cold brew", N, "gifted_when_paid")
# --- label inside word
cap(L, "US", "#adidas fit + alpaca cold brew = monday sorted 👟☕", N, "label_inside_word")
cap(L, "GB", "#badday fixed by @drinkalpaca ☕🦙", N, "label_inside_word")
# --- contest undisclosed
cap(L, "US", "GIVEAWAY 🎉 win a month of Alpaca Coffee! follow @drinkalpaca + tag 2 friends. ends sunday!", N, "contest_undisclosed", contest="yes")
cap(L, "GB", "COMPETITION TIME 🦙 comment your fave alpaca flavour to win a bundle! UK only, T&Cs in bio", N, "contest_undisclosed", contest="yes")
# --- contradicted
cap(L, "US", "ad (not really, they didn't pay me lol) alpaca coffee is just that good", N, "contradicted_label")
cap(L, "GB", "#ad jk 😂 nobody pays me, i just love @drinkalpaca", N, "contradicted_label")

# ===========================================================================
# GERMAN captions (DE, AT)
# ===========================================================================
L = "de"
cap(L, "DE", "Werbung | Mein Morgen-Ritual mit dem neuen Karamell Cold Brew von @drinkalpaca ☕🦙", C, "label_start")
cap(L, "DE", "#Werbung ok Leute, Alpaca Coffee Hafer-Latte im Test… ehrlich gesagt besser als gedacht 😅", C, "label_start")
cap(L, "DE", "Anzeige ☕ 3 Iced-Coffee-Rezepte mit Alpaca Coffee, die ihr in 5 Min macht", C, "label_start")
cap(L, "AT", "Werbung – Kaffeepause im Büro mit Alpaca Café 🦙 wer kennt's, 15 Uhr Tief 😴", C, "label_start")
cap(L, "AT", "Entgeltliche Einschaltung | Alpaca Coffee hat mich gebeten, ihre Espresso-Kapseln zu testen ☕", C, "label_start",
    why="'Entgeltliche Einschaltung' is one of the three terms MedienG §26 names for paid content, placed at the start of the paid post.")
cap(L, "DE", "WERBUNG | ranking aller Alpaca Coffee Sorten 🦙 von meh bis mega", C, "label_start")
cap(L, "DE", "*Werbung* für @drinkalpaca – Kaffee-Date mit mir selbst ☕✨", C, "label_start")
cap(L, "DE", "Bezahlte Werbung: Alpaca Coffee Cold Brew nach dem Training 💪", C, "label_start")
cap(L, "DE", "#anzeige #alpacacoffee Sonntagsfrühstück mit Vanille Latte 🥐☕", C, "label_start")
cap(L, "AT", "Anzeige 🦙 Alpaca Café x Wiener Kaffeehaus-Vibes zuhause, geht das? 👀", C, "label_start")
cap(L, "DE", "Montags-Rettung ☕🦙 #Werbung", C, "label_end_short")
cap(L, "AT", "Kaltgetränk des Sommers 🧊 Werbung", C, "label_end_short")
cap(L, "DE", "Hafer oder Kuhmilch? 🐄🌾 @drinkalpaca #Anzeige", C, "label_end_short")
cap(L, "DE", "Werbung | GEWINNSPIEL 🎉 Zusammen mit @drinkalpaca verlose ich 3 Kaffee-Pakete! Kommentiere deine Lieblingssorte ✍️ ab 18, nur DE, bis 30.06., Teilnahmebedingungen im Link", C, "contest_disclosed", contest="yes")
cap(L, "AT", "Anzeige – Gewinnspiel 🦙 Gewinnt ein Jahr Alpaca Coffee! Folgt @drinkalpaca & markiert eine Person. Nur AT, endet Sonntag", C, "contest_disclosed", contest="yes")
cap(L, "DE", "#Werbung 🎁 Verlosung mit Alpaca Café: 5x Cold Brew Boxen. Like + Kommentar, Bedingungen in der Bio", C, "contest_disclosed", contest="yes")
cap(L, "DE", "Werbung, weil bezahlt 💸 – trotzdem ehrliche Meinung: Mokka ist mir zu süß, Hafer-Latte top ☕", C, "label_start")
cap(L, "DE", "Werbung (bezahlt von Alpaca Coffee) 🦙 Büro-Edition: Kaffee ohne Kaffeemaschine?", C, "label_start")
cap(L, "AT", "#werbung Studentenbudget-Check: lohnt sich Alpaca Coffee für 2,99 €? 🤔", C, "label_start")
cap(L, "DE", "Anzeige | In Zusammenarbeit mit @drinkalpaca 🤝 Lasst uns über Koffein reden ☕", C, "label_start")
cap(L, "DE", "werbung 🦙☕ pov: du hast endlich nen Kaffee gefunden der nicht nach Pappe schmeckt", C, "label_start")
cap(L, "AT", "WERBUNG ☕ Alpaca Coffee Karamell vs. Haselnuss – Blindtest mit meiner Oma 👵", C, "label_start")
cap(L, "DE", "Leute 😳 Werbung: Late-Night-Lernsession mit Alpaca Cold Brew 📚", C, "label_near_start")
cap(L, "DE", "Anzeige: meine ehrliche Alpaca Coffee Review nach 2 Wochen ☕", C, "label_start")
# needs review
cap(L, "DE", "Reklame 🦙 Alpaca Coffee Cold Brew im Test", R, "borderline_label",
    why="'Reklame' is a German word for advertising placed at the start, but the Leitfaden only names 'Werbung' and 'Anzeige', so whether it is clear enough for today's audience is a judgement call.")
cap(L, "AT", "Bezahlte Partnerschaft mit Alpaca Coffee 🦙 mein Frühstück heute", R, "borderline_label",
    why="German wording that states payment is arguably clear under öUWG, but MedienG §26 names only 'Anzeige', 'entgeltliche Einschaltung' or 'Werbung', and whether §26 applies to this post is debatable.")
# denial
cap(L, "DE", "keine Werbung, ich feier den Alpaca Cold Brew einfach 🤷‍♀️", N, "denial")
cap(L, "DE", "Unbezahlt & aus Liebe ❤️ Alpaca Coffee Hafer-Latte", N, "denial")
cap(L, "AT", "Ist das Werbung? Nö 😂 hab's selbst gekauft. Alpaca Café Karamell", N, "denial")
cap(L, "DE", "#keinewerbung #selbstgekauft ☕🦙 mein Morgenkaffee", N, "denial")
cap(L, "DE", "bevor wer fragt: nicht gesponsert!! einfach nur lecker @drinkalpaca", N, "denial")
cap(L, "AT", "kriag ka Geld dafür, schmeckt einfach 🦙☕ Alpaca Cold Brew", N, "denial")
# other sense
cap(L, "DE", "Anzeige bei der Polizei erstattet (Fahrrad weg 😤), jetzt erstmal nen Alpaca Cold Brew ☕", N, "label_other_sense",
    why="'Anzeige' here means a police report, not an advertising label, so the paid Alpaca post is undisclosed.")
cap(L, "DE", "Werbung für meine Band: Samstag Konzert in Köln 🎸 backstage gibt's Alpaca Coffee ☕", N, "label_other_sense",
    why="'Werbung' refers to promoting the creator's band, not to the paid Alpaca Coffee content, which stays unlabelled.")
cap(L, "AT", "Stellenanzeige gesehen: Alpaca Café sucht Baristas 👀 also hab ich's mal probiert", N, "label_other_sense")
cap(L, "DE", "Ich studier Werbung & Marketing im 3. Semester 🎓 heute bewerte ich das Alpaca Coffee Design", N, "label_other_sense")
cap(L, "DE", "Die Werbung in der U-Bahn hat mich neugierig gemacht 🚇 Alpaca Coffee Test", N, "label_other_sense")
cap(L, "DE", "Arbeite in ner Werbeagentur und brauch Koffein 😮‍💨 @drinkalpaca rettet mich", N, "label_other_sense")
# other sponsor
cap(L, "DE", "Werbung für @kaffeemuehlen_pro 🦙 – die Bohnen sind von Alpaca Coffee, einfach weil ich sie mag", N, "other_sponsor")
cap(L, "AT", "Anzeige | Danke an @sportstudio_wien für die Unterstützung! Mein Pre-Workout: Alpaca Cold Brew (selbst ausgesucht)", N, "other_sponsor")
# elsewhere
cap(L, "DE", "Kennzeichnung in den Kommentaren 👇 Alpaca Coffee Haul", N, "disclosure_elsewhere")
cap(L, "DE", "Infos zur Kooperation in meiner Bio ✨ Alpaca Latte", N, "disclosure_elsewhere")
cap(L, "AT", "mehr dazu im angepinnten Kommentar 📌 Alpaca Café Eiskaffee", N, "disclosure_elsewhere")
# buried
cap(L, "DE", "Also ich hab ja lange gedacht, Kaffee aus der Dose ist nix für mich, aber dieser Hafer-Latte von Alpaca ist echt cremig, nicht zu süß und perfekt für die Bahn morgens. Den Karamell fand ich etwas künstlich, Haselnuss dagegen 10/10. Schreibt mir eure Lieblingssorte in die Kommentare, ich probier alles durch! #kaffee #morgenroutine #studentenleben #fyp #alpacacoffee #werbung", N, "buried_label")
cap(L, "AT", "Servus! Heute ein kleiner Vlog aus Graz: Uni, Bibliothek, dann Sport und zwischendurch natürlich Kaffee. Ich hab die ganze Woche Alpaca Café Cold Brew getrunken und ehrlich, für die Vorlesung um 8 ist das Gold wert. Was trinkt ihr so zum Lernen? Sagt's ma! #graz #unilife #kaffee #vlog #alpacacafe #anzeige", N, "buried_label")
cap(L, "DE", "Sonntag, Regen, Sofa 🛋️ perfekter Tag für ein Kaffee-Tasting: Mokka, Vanille, Karamell und der neue Lebkuchen-Latte von Alpaca Coffee. Mein Ranking steht im Video, der Lebkuchen hat mich überrascht, der Mokka eher nicht so. Stimmt ihr zu oder hab ich keinen Geschmack? 😂 #kaffeeliebe #tasting #sonntag #herbst #alpacacoffee #Werbung", N, "buried_label")
# foreign
cap(L, "DE", "#ad Mein neuer Lieblingskaffee von @drinkalpaca ☕", N, "foreign_label",
    why="The Leitfaden der Medienanstalten treats English 'ad' as not understood by all German viewers; 'Werbung' or 'Anzeige' is required.")
cap(L, "AT", "Sponsored by Alpaca Coffee 🦙 heute teste ich den Karamell Latte", N, "foreign_label")
# ambiguous
cap(L, "DE", "In Kooperation mit @drinkalpaca 🤝 Cold Brew Test", N, "ambiguous_label",
    why="The Leitfaden states that 'Kooperation' does not make the commercial nature clear; 'Werbung' or 'Anzeige' is needed.")
cap(L, "AT", "Danke @drinkalpaca für die Unterstützung 💛 neuer Haselnuss Latte", N, "ambiguous_label")
cap(L, "DE", "#kooperation #alpacacoffee Sommerdrink 🧊", N, "ambiguous_label")
# gifted
cap(L, "DE", "PR-Sample 📦 Alpaca Coffee Unboxing, mal schauen was drin ist", N, "gifted_when_paid")
cap(L, "DE", "Geschenk von @drinkalpaca 🎁 danke ihr Lieben!!", N, "gifted_when_paid")
# inside word
cap(L, "DE", "#Werbungsfrei durch den Tag ☕ mein Alpaca Coffee Morgen", N, "label_inside_word")
cap(L, "DE", "Die Anzeigetafel sagt 40 min Verspätung 🙄 zum Glück hab ich Alpaca Cold Brew dabei", N, "label_inside_word")
cap(L, "AT", "#adventskalender Türchen 3: Alpaca Coffee Lebkuchen Latte 🎄", N, "label_inside_word")
# contest
cap(L, "DE", "GEWINNSPIEL 🎉 3x Alpaca Coffee Pakete zu gewinnen! Folgen + kommentieren, endet Sonntag", N, "contest_undisclosed", contest="yes")
cap(L, "AT", "Verlosung 🦙 Alpaca Café Jahresvorrat – markiert eure Kaffee-Buddys!", N, "contest_undisclosed", contest="yes")
# contradicted
cap(L, "DE", "unbezahlte Werbung ☕ Alpaca Coffee Karamell", N, "contradicted_label",
    why="'Unbezahlte Werbung' is false for a post Alpaca Coffee paid for and misstates the nature of the relationship.")
cap(L, "AT", "Werbung (aber freiwillig, keiner zahlt mich 😅) Alpaca Hafer-Latte", N, "contradicted_label")

# ===========================================================================
# SPANISH captions (ES)
# ===========================================================================
L = "es"
E = "ES"
cap(L, E, "Publicidad | Probando el nuevo cold brew de caramelo de @drinkalpaca ☕🦙", C, "label_start")
cap(L, E, "#publi os enseño mi rutina de mañana con Alpaca Coffee ☀️", C, "label_start")
cap(L, E, "Publi 🦙 el café con leche de avena de Alpaca Café, ¿merece la pena? 👀", C, "label_start")
cap(L, E, "Patrocinado por Alpaca Coffee ☕ 3 recetas de café helado en 5 minutos", C, "sponsored_by")
cap(L, E, "En colaboración con @drinkalpaca 🤝 ranking de todos sus sabores", C, "collab_named")
cap(L, E, "Embajadora de Alpaca Coffee 🦙 y sí, hoy os enseño cómo lo preparo antes de clase", C, "ambassador_named")
cap(L, E, "#publicidad Desayuno de domingo con café de vainilla de Alpaca ☕🥐", C, "label_start")
cap(L, E, "PUBLI ☕ pov: encuentras un descafeinado que no sabe a agua sucia", C, "label_start")
cap(L, E, "Publicidad de Alpaca Coffee: mi opinión sincera, el moka demasiado dulce pa mí pero el de avellana top", C, "label_start")
cap(L, E, "#Publi con @drinkalpaca ✨ café y apuntes, temporada de exámenes 📚", C, "label_start")
cap(L, E, "Colaboración pagada con Alpaca Café 💸 probando sus cápsulas durante una semana", C, "collab_named",
    why="'Colaboración pagada con' naming the brand at the start goes beyond the annex wording 'en colaboración con [marca]' by stating payment outright.")
cap(L, E, "publi!! 🦙 alpaca cold brew después del gym 💪", C, "label_start")
cap(L, E, "Lunes sobrevivido ☕🦙 #publi", C, "label_end_short")
cap(L, E, "Café frío, calor de agosto 🧊 #publicidad", C, "label_end_short")
cap(L, E, "mi combo favorito 🥐☕ @drinkalpaca #publi", C, "label_end_short")
cap(L, E, "#publi SORTEO 🎉 Con @drinkalpaca sorteo 3 packs de café. Sigue la cuenta y comenta tu sabor favorito. +18, solo España, hasta el domingo. Bases en el enlace", C, "contest_disclosed", contest="yes")
cap(L, E, "Publicidad | ¡CONCURSO! 🦙 Gana un año de Alpaca Coffee: menciona a 2 amigos. Bases legales en la bio", C, "contest_disclosed", contest="yes")
cap(L, E, "Sorteo patrocinado por Alpaca Coffee 🎁 3 ganadores, comenta con qué lo acompañas", C, "contest_disclosed", contest="yes",
    why="'Patrocinado por' naming the brand in the opening words is an accepted annex wording and makes the giveaway identifiable as paid.")
cap(L, E, "Publicidad ☕ tomando café con mi abuela, que es más crítica que cualquier barista 👵", C, "label_start")
cap(L, E, "Patrocinado por @drinkalpaca | vlog de oficina, mi café de las 11 🕚", C, "sponsored_by")
cap(L, E, "#publi #alpacacoffee receta: affogato casero con helado 🍨", C, "label_start")
cap(L, E, "Publi (pagada por Alpaca Coffee) 🦙 mi review sincera tras probarlo 2 semanas", C, "label_start")
cap(L, E, "Embajador de Alpaca Café ☕ os cuento por qué llevo el termo a todas partes", C, "ambassador_named")
cap(L, E, "Ojo 👀 #publi: Alpaca Coffee saca sabor turrón y lo pruebo en directo 🎄", C, "label_near_start")
# needs review
cap(L, E, "Gracias a Alpaca Coffee por hacer posible este vídeo ☕ mi rutina de mañana", R, "borderline_label",
    why="'Gracias a' is not a listed wording and thanks are generally ambiguous, but 'por hacer posible este vídeo' names the brand and implies funding, so it is a close call.")
cap(L, E, "#patrocinado ☕ Alpaca cold brew en la playa 🏖️", R, "borderline_label",
    why="The annex lists 'patrocinado por [marca]'; a bare '#patrocinado' is a full Spanish word, not an abbreviation like #sp, so its sufficiency is unclear.")
# denial
cap(L, E, "no es publi eh, es que me encanta el café de Alpaca 🤷‍♀️", N, "denial")
cap(L, E, "¿Me pagan? Ojalá 😂 Alpaca Coffee de caramelo review", N, "denial")
cap(L, E, "#nopubli #sinpatrocinio mi cafecito de la mañana ☕🦙", N, "denial")
cap(L, E, "Lo he pagado yo, nadie me patrocina 🧾 Alpaca Café avellana", N, "denial")
cap(L, E, "ni publi ni na, es que está buenísimo el cold brew de @drinkalpaca", N, "denial")
# other sense
cap(L, E, "Vi la publicidad en el metro y tuve que probarlo 🚇 Alpaca Coffee review", N, "label_other_sense")
cap(L, E, "Estudio Publicidad y RRPP en la uni 🎓 hoy analizo el packaging de Alpaca Coffee", N, "label_other_sense")
cap(L, E, "Trabajo en una agencia de publicidad y sin café no vivo ☕ @drinkalpaca", N, "label_other_sense")
cap(L, E, "El anuncio de la tele me convenció 📺 café de vainilla de Alpaca", N, "label_other_sense")
cap(L, E, "Anuncio de trabajo: Alpaca Café busca baristas en Madrid 👀 mientras tanto, lo pruebo", N, "label_other_sense")
cap(L, E, "Publicidad para mi grupo: concierto el sábado en Valencia 🎸 y en el backstage, café de Alpaca", N, "label_other_sense",
    why="'Publicidad' here promotes the creator's band, not the paid Alpaca Coffee content, which stays unlabelled.")
# other sponsor
cap(L, E, "#publi de @molinillospro ☕ los granos son de Alpaca Coffee porque me flipan", N, "other_sponsor")
cap(L, E, "Patrocinado por mi gimnasio 💪 y mi bebida post-entreno: Alpaca cold brew (elección mía)", N, "other_sponsor")
# elsewhere
cap(L, E, "info de la colaboración en los comentarios 👇 Alpaca Coffee", N, "disclosure_elsewhere")
cap(L, E, "todo en el link de mi bio 🔗 nuevo sabor de Alpaca", N, "disclosure_elsewhere")
cap(L, E, "ver comentario fijado 📌 cata de cafés Alpaca", N, "disclosure_elsewhere")
# buried
cap(L, E, "Bueno chicos, llevo toda la semana probando cafés fríos para el verano porque en Sevilla no hay quien tome nada caliente. El de Alpaca Coffee de avena me ha sorprendido, suave y nada amargo, el de caramelo un poco empalagoso. Decidme en comentarios cuál probar la próxima semana!! #verano #café #sevilla #fyp #alpacacoffee #publi", N, "buried_label")
cap(L, E, "Rutina de estudio real, sin filtros: me levanto a las 7, repaso apuntes, gym a las 12, comida y biblioteca hasta las 8. Lo que me salva es el cold brew de Alpaca Café a media tarde, que además cabe en la mochila. ¿Vosotros cómo os organizáis en época de exámenes? #estudiar #rutina #universidad #parati #alpacacafe #publicidad", N, "buried_label")
cap(L, E, "Hoy os traigo la comparativa que me pedisteis: cápsulas de Alpaca Coffee contra mi cafetera de siempre. Precio, sabor, facilidad y limpieza, lo tenéis todo en el vídeo. Spoiler: en sabor gana la cafetera por poco, en comodidad las cápsulas sin duda. ¿Team cápsula o team cafetera? #café #comparativa #cocina #alpacacoffee #ad #publi", N, "buried_label")
# foreign
cap(L, E, "#ad mi café favorito de @drinkalpaca ☕", N, "foreign_label")
cap(L, E, "Sponsored | Alpaca Coffee y mi rutina de mañana", N, "foreign_label")
# ambiguous
cap(L, E, "#sp cafecito con Alpaca ☕", N, "ambiguous_label",
    why="The Autocontrol annex does not accept generic abbreviations such as '#sp' as identification of advertising.")
cap(L, E, "#spon rutina de mañana con @drinkalpaca", N, "ambiguous_label",
    why="The Autocontrol annex does not accept generic abbreviations such as '#spon' as identification of advertising.")
cap(L, E, "#colab con Alpaca Coffee 🦙 probando el nuevo sabor", N, "ambiguous_label",
    why="The Autocontrol annex does not accept the generic '#colab' as identification of advertising.")
cap(L, E, "#partner ☕ Alpaca café helado", N, "ambiguous_label")
# gifted
cap(L, E, "Regalito de @drinkalpaca 🎁 unboxing del nuevo pack", N, "gifted_when_paid")
cap(L, E, "#gifted me ha llegado el pack de Alpaca Coffee 📦", N, "gifted_when_paid")
# inside word
cap(L, E, "#publicación número 100 🎉 y lo celebro con un Alpaca cold brew", N, "label_inside_word")
cap(L, E, "Publiqué ayer la receta y hoy toca probar el café de Alpaca 🦙", N, "label_inside_word")
cap(L, E, "#Republicado por petición popular: mi café con Alpaca ☕", N, "label_inside_word")
# contest
cap(L, E, "SORTEO 🎉 Gana un pack de Alpaca Coffee: sigue a @drinkalpaca y menciona a 2 amigos", N, "contest_undisclosed", contest="yes")
cap(L, E, "¡Concurso! ☕ el comentario más original gana un año de café Alpaca 🦙", N, "contest_undisclosed", contest="yes")
# contradicted
cap(L, E, "publi no pagada 😇 Alpaca Coffee avena", N, "contradicted_label")
cap(L, E, "#publi pero de corazón, que no me pagan nada 😂 @drinkalpaca", N, "contradicted_label")

# ===========================================================================
# CHINESE captions (CN)
# ===========================================================================
L = "zh-hans"
Z = "CN"
cap(L, Z, "广告｜羊驼咖啡新出的焦糖冷萃，一口入魂☕🦙 左下角小黄车直达🛒", C, "label_start")
cap(L, Z, "#广告 早八人续命神器 @drinkalpaca 燕麦拿铁 实测一周", C, "label_start")
cap(L, Z, "【广告】羊驼咖啡全系列口味排名！从一般到封神 🦙", C, "label_start")
cap(L, Z, "广告 本视频由羊驼咖啡付费合作💰 说点真话：摩卡有点甜，榛果yyds 🛒链接在下面", C, "label_start")
cap(L, Z, "广告：打工人下午三点的救命咖啡 ☕ 羊驼咖啡挂耳 点购物车可买", C, "label_start")
cap(L, Z, "#广告 #羊驼咖啡 周末早午餐vlog 🥐", C, "label_start")
cap(L, Z, "【广告】和 @drinkalpaca 合作的第一条视频！冷萃测评 🧊", C, "label_start")
cap(L, Z, "广告 | 学生党预算测评：羊驼咖啡9.9一杯值不值？🤔 🛒", C, "label_start")
cap(L, Z, "本条为广告📢 羊驼咖啡新品 生椰拿铁 试喝", C, "label_start")
cap(L, Z, "这是一条广告！🦙 但说的都是真心话，羊驼冷萃真的不苦 🛒小黄车", C, "label_start")
cap(L, Z, "广告🦙 pov：你终于找到一杯不踩雷的速溶", C, "label_start")
cap(L, Z, "〔广告〕办公室咖啡自由攻略 ☕ 羊驼咖啡胶囊", C, "label_start")
cap(L, Z, "周一续命 ☕🦙 #广告", C, "label_end_short")
cap(L, Z, "夏天就要冰的 🧊 羊驼咖啡 #广告", C, "label_end_short")
cap(L, Z, "早八必备☕ 广告", C, "label_end_short")
cap(L, Z, "#广告 🎁抽奖｜羊驼咖啡送出3份咖啡礼盒！关注@drinkalpaca并评论你最爱的口味，周日开奖", C, "contest_disclosed", contest="yes")
cap(L, Z, "广告｜评论区抽一位宝子送羊驼咖啡一年份🦙 转发+关注即可参与，活动规则见置顶", C, "contest_disclosed", contest="yes")
cap(L, Z, "【广告】羊驼咖啡×我 粉丝福利抽奖🎉 点赞+评论，抽5人送冷萃", C, "contest_disclosed", contest="yes")
cap(L, Z, "广告 羊驼咖啡请我来测评的，先说缺点：包装有点难撕😂 🛒", C, "label_start")
cap(L, Z, "#广告 和奶奶一起盲测羊驼咖啡 👵☕", C, "label_start")
cap(L, Z, "广告丨熬夜复习搭子：羊驼冷萃 📚", C, "label_start")
cap(L, Z, "救命！！#广告 羊驼咖啡桂花拿铁也太香了吧🌼 购物车有券", C, "label_near_start")
cap(L, Z, "AD/广告｜@drinkalpaca 冷萃 真实测评", C, "label_start")
cap(L, Z, "【付费广告】羊驼咖啡请我拍的，榛果拿铁测评 ☕🛒", C, "label_start")
# needs review
cap(L, Z, "本视频由羊驼咖啡赞助☕ 聊聊我的早晨仪式感", R, "borderline_label",
    why="Without a shopping link art. 9 does not expressly demand the word '广告', and whether '由羊驼咖啡赞助' meets the general identifiability duty of 广告法 art. 14 is a judgement call.")
# denial
cap(L, Z, "无广！纯自费！羊驼咖啡冷萃真的好喝到哭😭 🛒", N, "denial")
cap(L, Z, "不打广告，就是单纯分享我的早八咖啡 ☕🦙", N, "denial")
cap(L, Z, "自费购入🧾 羊驼咖啡焦糖拿铁 真实测评", N, "denial")
cap(L, Z, "有人问我是不是恰饭？没有哈😂 就是爱喝羊驼", N, "denial")
cap(L, Z, "#非广 #真心推荐 羊驼咖啡燕麦拿铁", N, "denial")
cap(L, Z, "纯分享 无任何合作🦙 小黄车是我自己挂的", N, "denial")
# other sense
cap(L, Z, "地铁上看到羊驼咖啡的广告，忍不住下单了🚇☕", N, "label_other_sense")
cap(L, Z, "广告学专业大三，今天从专业角度分析羊驼咖啡的包装🎓", N, "label_other_sense")
cap(L, Z, "在广告公司上班，没有咖啡活不下去☕ @drinkalpaca", N, "label_other_sense")
cap(L, Z, "广告位招租😂开玩笑的，今天喝羊驼冷萃", N, "label_other_sense")
cap(L, Z, "招聘广告：羊驼咖啡在招咖啡师👀 我先替大家尝尝 🛒", N, "label_other_sense")
# other sponsor
cap(L, Z, "广告｜感谢@磨豆机工坊 赞助！咖啡豆用的是我自己最爱的羊驼咖啡☕", N, "other_sponsor")
cap(L, Z, "本视频由某健身房赞助💪 练完喝羊驼冷萃（自己选的）", N, "other_sponsor")
# elsewhere
cap(L, Z, "合作信息见评论区👇 羊驼咖啡测评 🛒", N, "disclosure_elsewhere")
cap(L, Z, "详情看主页简介✨ 羊驼咖啡新品", N, "disclosure_elsewhere")
cap(L, Z, "品牌信息见置顶评论📌 羊驼咖啡冷萃", N, "disclosure_elsewhere")
# buried
cap(L, Z, "姐妹们我真的喝过太多速溶了，要么酸要么苦，这次试了羊驼咖啡的燕麦拿铁，奶味很足但不腻，冰的热的都可以，上班路上一罐刚好。焦糖味偏甜，怕甜的慎入，榛果的我愿称之为本命。你们最喜欢哪个口味？评论区告诉我～ #咖啡 #打工人 #早八 #好物分享 #羊驼咖啡 #广告", N, "buried_label")
cap(L, Z, "周末在家做了个小实验：用羊驼咖啡的冷萃液分别兑牛奶、椰子水、气泡水和橙汁，结果橙汁那杯意外地好喝！做法都在视频里了，材料很简单，小黄车里有冷萃液，喜欢的可以自己试试，记得加冰🧊 #咖啡创意喝法 #夏日饮品 #居家 #羊驼咖啡 #广告", N, "buried_label")
cap(L, Z, "考研倒计时100天，每天早上6点起床背单词，中午午休20分钟，下午刷题到晚上10点。支撑我的就是一罐羊驼冷萃，不会太苦也不会心慌。分享一下我的时间表给同样在上岸路上的宝子们，一起加油！！ #考研 #学习vlog #自律 #羊驼咖啡 #广告", N, "buried_label")
# foreign
cap(L, Z, "#ad 羊驼咖啡冷萃 测评🛒", N, "foreign_label",
    why="With a shopping link art. 9 requires the Chinese word '广告'; the English '#ad' is not understood by all Chinese viewers.")
cap(L, Z, "Sponsored｜羊驼咖啡 早餐搭配", N, "foreign_label")
# cooperation with link / ambiguous
cap(L, Z, "商业合作｜羊驼咖啡焦糖冷萃测评 🛒小黄车", N, "cooperation_with_link")
cap(L, Z, "合作 @drinkalpaca🤝 新品试喝 链接在购物车", N, "cooperation_with_link")
cap(L, Z, "#品牌合作 羊驼咖啡 燕麦拿铁🛒 点左下角", N, "cooperation_with_link")
cap(L, Z, "恰饭视频🍚 羊驼咖啡 小黄车有券", N, "cooperation_with_link",
    why="'恰饭' is slang that hints at sponsorship but is not the '广告' label art. 9 requires for a post with a shopping link.")
cap(L, Z, "感谢@drinkalpaca💛 新品好好喝 🛒", N, "ambiguous_label")
# gifted
cap(L, Z, "品牌寄来的礼物🎁 羊驼咖啡开箱", N, "gifted_when_paid")
cap(L, Z, "PR礼盒开箱📦 羊驼咖啡新品 🛒", N, "gifted_when_paid")
# inside word
cap(L, Z, "#广告牌 下面偶遇羊驼咖啡快闪店🦙", N, "label_inside_word")
cap(L, Z, "被羊驼咖啡的广告歌洗脑了🎵 买来试试 🛒", N, "label_inside_word",
    why="'广告歌' refers to the brand's jingle; it does not label this paid post with a shopping link as an advertisement.")
cap(L, Z, "#adidas 穿搭 + 羊驼冷萃☕👟", N, "label_inside_word")
# contest
cap(L, Z, "🎁抽奖！关注@drinkalpaca+评论，抽3位送羊驼咖啡礼盒", N, "contest_undisclosed", contest="yes")
cap(L, Z, "粉丝福利🎉 转发这条抽一人送一年羊驼咖啡", N, "contest_undisclosed", contest="yes")
# contradicted
cap(L, Z, "广告（不收钱的那种）☕ 羊驼咖啡", N, "contradicted_label")
cap(L, Z, "#广告 开玩笑的，没人给我钱😂 羊驼咖啡yyds", N, "contradicted_label")


# ---------------------------------------------------------------------------
# Rules (brand instructions)
# ---------------------------------------------------------------------------
RULE_KIND = {
    # block
    "hide_payment": ("false_relationship", "Telling the creator to conceal or deny the paid relationship is an instruction to publish covert, misleading advertising."),
    "drop_disclosure": ("disclosure", "A paid post must carry a clear label; asking to omit it requires undisclosed advertising."),
    "move_disclosure": ("disclosure", "The label must be prominent at the start of the post; moving it to the end or out of the caption defeats the disclosure."),
    "weaken_disclosure": ("disclosure", "Replacing the required label with an ambiguous, foreign or barely visible one makes the disclosure inadequate."),
    "false_label": ("false_relationship", "Labelling a paid post as unpaid, gifted or 'no ad' misstates the commercial relationship."),
    "disable_branded_toggle": ("platform", "TikTok requires paid content to be posted with the branded content setting on, so telling the creator to switch it off breaches platform rules and hides the ad."),
    "false_testimony": ("honest_opinion", "An endorsement must reflect the creator's real experience; scripting invented use or a fake discovery story makes it false."),
    "suppress_negatives": ("honest_opinion", "Banning any criticism forces the endorsement to misrepresent the creator's honest opinion."),
    "require_persuasion": ("honest_opinion", "Requiring a buying outcome whatever the creator thinks conditions the endorsement on sentiment instead of honest opinion."),
    "top_rating_condition": ("honest_opinion", "Making payment depend on a top rating buys a particular sentiment, an unlawful incentivised review or endorsement."),
    "scripted_superlative": ("superlative", "Scripting an absolute 'best' claim as the creator's own view is not an honest opinion and is an unsubstantiated objective claim."),
    "health_claim": ("health", "Scripting disease or health-benefit claims for coffee is an unauthorised, unsubstantiated health claim."),
    "fake_engagement": ("engagement", "Buying views or likes or using click farms creates fake social-media indicators and breaches the platform's fake-engagement rules."),
    "multiple_accounts": ("engagement", "Posting or commenting from several accounts fakes independent engagement, which platform rules and consumer law prohibit."),
    "fake_reviews": ("honest_opinion", "Writing reviews under other identities is commissioning fake consumer reviews, which is banned outright."),
    # allow
    "show_product": ("platform", "Requiring the product to be shown is an ordinary creative requirement that does not affect disclosure or honesty."),
    "tag_brand": ("disclosure", "Tagging the brand is a lawful brief requirement and helps make the commercial relationship visible."),
    "post_timing": ("platform", "A posting deadline is a normal contractual term with no bearing on disclosure or honesty."),
    "keep_public": ("platform", "Keeping the video public for a set period is a normal contractual term."),
    "require_disclosure": ("disclosure", "Requiring a clear label at the start (and the branded content setting) is exactly what the rules demand."),
    "honest_opinion": ("honest_opinion", "Inviting the creator's honest view is consistent with the requirement that endorsements reflect real opinions."),
    "negatives_ok": ("honest_opinion", "Allowing criticism protects the honesty of the endorsement."),
    "mention_flavour": ("platform", "Asking the creator to name a product variant is a truthful, lawful content point."),
    "mention_price": ("platform", "Stating the real price is factual information and lawful."),
    "video_format": ("platform", "Length and format requirements are ordinary production terms."),
    "no_health_claims": ("health", "Prohibiting health claims keeps the content within food-claim rules."),
    "truthful_usage": ("honest_opinion", "Limiting the creator to their actual experience keeps the endorsement truthful."),
    "tone_style": ("platform", "Tone and style guidance is a lawful creative brief."),
    "production_quality": ("platform", "Lighting and production quality requirements are ordinary creative terms."),
    "language": ("disclosure", "Choosing the video language is a lawful brief term and helps the label be in the audience's language."),
    "paid_regardless": ("honest_opinion", "Paying the fee regardless of the verdict removes any sentiment condition on the endorsement."),
    "competitor_exclusion": ("platform", "Keeping competitors' products out of a paid video is a lawful exclusivity term that does not mislead viewers."),
    "lookalike_no_bought_views": ("engagement", "This forbids fake engagement rather than requiring it, so it supports the rules."),
    "lookalike_no_top_rating": ("honest_opinion", "This expressly frees the creator from any rating condition, which the rules favour."),
    "lookalike_disclosure_reminder": ("disclosure", "A reminder to put the label at the start supports compliance."),
    "lookalike_no_superlative": ("superlative", "This releases the creator from scripted superlatives, so it supports honest endorsement."),
}

RULES = []  # (text, country, language, expect, kind, why_override)


def rule(lang, country, text, expect, kind, why=None):
    RULES.append((text, country, lang, expect, kind, why))


A, B = "allow", "block"

# ---------------- English rules
L = "en"
rule(L, "US", "Don't mention that we paid you — we want it to feel organic.", B, "hide_payment")
rule(L, "GB", "If anyone asks in the comments whether this is sponsored, just say no.", B, "hide_payment")
rule(L, "IE", "Please skip the #ad, it kills engagement on our posts.", B, "drop_disclosure")
rule(L, "US", "Put #ad at the very end after all the other hashtags.", B, "move_disclosure")
rule(L, "GB", "The disclosure can go in a pinned comment rather than the caption.", B, "move_disclosure")
rule(L, "US", "Use #sp instead of #ad, it looks less salesy.", B, "weaken_disclosure")
rule(L, "GB", "Write 'gifted' rather than 'ad' even though this is a paid post.", B, "false_label")
rule(L, "IE", "Leave TikTok's branded content toggle off for this one.", B, "disable_branded_toggle")
rule(L, "US", "Say you've been drinking Alpaca Coffee every day for months.", B, "false_testimony")
rule(L, "GB", "Act like you stumbled on us by accident in a café, not through this deal.", B, "false_testimony")
rule(L, "US", "No downsides. Only talk about what you love.", B, "suppress_negatives")
rule(L, "IE", "Nothing negative about the taste or the price, please.", B, "suppress_negatives")
rule(L, "US", "Your review has to convince viewers to buy, whatever you actually think of it.", B, "require_persuasion")
rule(L, "GB", "Viewers must come away wanting to buy — that's the deliverable.", B, "require_persuasion")
rule(L, "US", "We release payment only if you rate us 5/5 on camera.", B, "top_rating_condition")
rule(L, "IE", "A 10/10 score in the video is a condition of this contract.", B, "top_rating_condition")
rule(L, "US", "Say it's the best coffee in the world.", B, "scripted_superlative")
rule(L, "GB", "Tell viewers it sorted out your afternoon headaches and boosts metabolism.", B, "health_claim")
rule(L, "US", "Buy 50k views in the first hour so it hits the For You page.", B, "fake_engagement")
rule(L, "GB", "Post it from your main plus your two backup accounts and comment from those too.", B, "multiple_accounts")
rule(L, "IE", "Run the first day through an engagement service or click farm to get the likes up.", B, "fake_engagement")
rule(L, "US", "We'll give you logins to leave five-star reviews on our store page.", B, "fake_reviews")
rule(L, "US", "Show the can clearly on screen for at least 3 seconds.", A, "show_product")
rule(L, "GB", "Tag @drinkalpaca in the caption.", A, "tag_brand")
rule(L, "IE", "Post within 48 hours of us approving the draft.", A, "post_timing")
rule(L, "US", "Keep the video public for at least 30 days.", A, "keep_public")
rule(L, "GB", "Start the caption with #ad and switch on the branded content toggle.", A, "require_disclosure")
rule(L, "US", "Give us your honest opinion — we're paying for your time, not your verdict.", A, "paid_regardless")
rule(L, "IE", "If there's something you don't like, feel free to say so.", A, "negatives_ok")
rule(L, "US", "Mention the new salted caramel cold brew by name.", A, "mention_flavour")
rule(L, "GB", "Mention the £2.49 price per can.", A, "mention_price")
rule(L, "US", "Keep it between 20 and 45 seconds, vertical 9:16.", A, "video_format")
rule(L, "IE", "Don't make any health or weight-loss claims.", A, "no_health_claims")
rule(L, "GB", "Only describe how you actually used the coffee.", A, "truthful_usage")
rule(L, "US", "Keep it playful and in your usual style.", A, "tone_style")
rule(L, "IE", "Natural light please, and no beauty filter over the product shot.", A, "production_quality")
rule(L, "US", "Don't buy views or followers for this campaign.", A, "lookalike_no_bought_views")
rule(L, "GB", "You don't need to give 5 stars — rate it however you honestly feel.", A, "lookalike_no_top_rating")
rule(L, "IE", "Don't forget #ad at the start of the caption!", A, "lookalike_disclosure_reminder")
rule(L, "US", "No scripted lines: you don't have to say it's the best coffee in the world.", A, "lookalike_no_superlative")

# ---------------- German rules
L = "de"
rule(L, "DE", "Bitte nicht erwähnen, dass wir dich bezahlen.", B, "hide_payment")
rule(L, "AT", "Falls jemand fragt, ob das gesponsert ist: einfach verneinen.", B, "hide_payment")
rule(L, "DE", "Schreib 'Werbung' bitte nicht an den Anfang, sondern ganz ans Ende zu den Hashtags.", B, "move_disclosure")
rule(L, "DE", "Statt 'Werbung' reicht ein '#ad' – das klingt weniger nach Verkauf.", B, "weaken_disclosure")
rule(L, "DE", "Kennzeichne das Video als 'unbezahlte Werbung'.", B, "false_label")
rule(L, "DE", "Die Kennzeichnung bitte nur in die Kommentare.", B, "move_disclosure")
rule(L, "DE", "Kein 'Anzeige' bitte, schreib einfach 'in Kooperation mit @drinkalpaca'.", B, "weaken_disclosure")
rule(L, "AT", "Bitte keine Kennzeichnung wie 'Werbung' oder 'Entgeltliche Einschaltung', das wirkt so förmlich.", B, "drop_disclosure")
rule(L, "DE", "Die Werbekennzeichnung bitte nur ganz klein für eine Sekunde am Ende einblenden.", B, "weaken_disclosure")
rule(L, "AT", "Den Branded-Content-Schalter bei TikTok bitte ausgeschaltet lassen.", B, "disable_branded_toggle")
rule(L, "DE", "Erzähl, dass du Alpaca Coffee schon seit Monaten jeden Tag trinkst.", B, "false_testimony")
rule(L, "DE", "Sag, dass du zufällig im Supermarkt auf uns gestoßen bist.", B, "false_testimony")
rule(L, "AT", "Keine negativen Punkte, bitte ausschließlich Positives.", B, "suppress_negatives")
rule(L, "DE", "Über Preis oder Zuckergehalt bitte nichts Kritisches sagen.", B, "suppress_negatives")
rule(L, "DE", "Die Zuschauer müssen danach unbedingt kaufen wollen – egal was du selbst denkst.", B, "require_persuasion")
rule(L, "AT", "Das Honorar gibt's nur bei 5 von 5 Sternen.", B, "top_rating_condition")
rule(L, "DE", "Sag wörtlich: 'Der beste Kaffee der Welt'.", B, "scripted_superlative")
rule(L, "DE", "Nenn ihn 'den gesündesten Kaffee Deutschlands', der das Immunsystem stärkt.", B, "health_claim")
rule(L, "DE", "Kauf 20.000 Views dazu, damit das Video viral geht.", B, "fake_engagement")
rule(L, "AT", "Poste das Video zusätzlich über deinen Zweitaccount und kommentier von dort.", B, "multiple_accounts")
rule(L, "DE", "Wir schicken dir Accounts, mit denen du Fünf-Sterne-Bewertungen im Shop schreibst.", B, "fake_reviews",
     why="Submitting or commissioning fake reviews is a per-se unfair practice under UWG Anhang Nr. 23c.")
rule(L, "DE", "Für die ersten 24 Stunden bitte Like-Bots laufen lassen.", B, "fake_engagement")
rule(L, "DE", "Zeig die Dose mindestens 3 Sekunden gut sichtbar.", A, "show_product")
rule(L, "AT", "Markiere @drinkalpaca in der Caption.", A, "tag_brand")
rule(L, "DE", "Bitte innerhalb von 72 Stunden nach Freigabe posten.", A, "post_timing")
rule(L, "DE", "Das Video muss mindestens 60 Tage öffentlich bleiben.", A, "keep_public")
rule(L, "DE", "Beginne die Caption mit 'Werbung' und aktiviere den Branded-Content-Schalter.", A, "require_disclosure")
rule(L, "AT", "Deine ehrliche Meinung ist ausdrücklich erwünscht.", A, "honest_opinion")
rule(L, "DE", "Kritik ist okay – wenn dir was nicht schmeckt, sag es ruhig.", A, "negatives_ok")
rule(L, "DE", "Erwähne bitte die neue Sorte Haselnuss.", A, "mention_flavour")
rule(L, "AT", "Nenn den Preis von 2,99 € pro Dose.", A, "mention_price")
rule(L, "DE", "Videolänge 15–30 Sekunden, Hochformat.", A, "video_format")
rule(L, "DE", "Bitte keine Gesundheitsversprechen wie 'macht schlank' oder 'gut fürs Herz'.", A, "no_health_claims")
rule(L, "AT", "Locker und humorvoll, gern im Dialekt, so wie du sonst auch bist.", A, "tone_style")
rule(L, "DE", "Bitte bei Tageslicht filmen, Produkt scharf im Bild.", A, "production_quality")
rule(L, "DE", "Kauf bitte keine Views oder Follower für diese Kampagne.", A, "lookalike_no_bought_views")
rule(L, "AT", "Du musst keine 5 Sterne vergeben.", A, "lookalike_no_top_rating")
rule(L, "DE", "Vergiss nicht, 'Anzeige' an den Anfang zu setzen!", A, "lookalike_disclosure_reminder")
rule(L, "DE", "Das Honorar ist unabhängig von deiner Bewertung.", A, "paid_regardless")
rule(L, "DE", "Bitte keine Konkurrenzmarken im Bild.", A, "competitor_exclusion")

# ---------------- Spanish rules
L = "es"
rule(L, E, "No digas que te pagamos, que parezca natural.", B, "hide_payment")
rule(L, E, "Si te preguntan si es publi, di que no.", B, "hide_payment")
rule(L, E, "Quita el #publi, que baja el alcance.", B, "drop_disclosure")
rule(L, E, "Pon el #publi al final, entre los hashtags.", B, "move_disclosure")
rule(L, E, "Menciona la colaboración solo en un comentario.", B, "move_disclosure")
rule(L, E, "Usa #colab en vez de #publi.", B, "weaken_disclosure")
rule(L, E, "Pon #sp, queda más discreto.", B, "weaken_disclosure")
rule(L, E, "Pon 'publi no pagada', queda más auténtico.", B, "false_label")
rule(L, E, "Desactiva la etiqueta de contenido de marca de TikTok.", B, "disable_branded_toggle")
rule(L, E, "Di que llevas meses tomando Alpaca Coffee cada mañana.", B, "false_testimony")
rule(L, E, "Cuenta que lo descubriste por casualidad en una cafetería.", B, "false_testimony")
rule(L, E, "Nada negativo, solo lo bueno.", B, "suppress_negatives")
rule(L, E, "No menciones que es caro ni que lleva azúcar.", B, "suppress_negatives")
rule(L, E, "Tienes que conseguir que la gente lo compre sí o sí, pienses lo que pienses.", B, "require_persuasion")
rule(L, E, "Solo pagamos si le das 5 estrellas.", B, "top_rating_condition")
rule(L, E, "Pon un 10/10 en pantalla, es condición del contrato.", B, "top_rating_condition")
rule(L, E, "Di que es el mejor café del mundo.", B, "scripted_superlative")
rule(L, E, "Di que es 'el café más sano del mercado' y que baja el colesterol.", B, "health_claim")
rule(L, E, "Compra visualizaciones para que salga en Para ti.", B, "fake_engagement")
rule(L, E, "Publica también desde tus cuentas secundarias y comenta desde ellas.", B, "multiple_accounts")
rule(L, E, "Escribe reseñas de 5 estrellas en la tienda con otras cuentas.", B, "fake_reviews")
rule(L, E, "Usa granjas de clics las primeras horas.", B, "fake_engagement")
rule(L, E, "Que se vea bien la lata al menos 3 segundos.", A, "show_product")
rule(L, E, "Etiqueta a @drinkalpaca.", A, "tag_brand")
rule(L, E, "Publica en las 24 horas siguientes a la aprobación.", A, "post_timing")
rule(L, E, "Mantén el vídeo público al menos 30 días.", A, "keep_public")
rule(L, E, "Empieza el texto con 'Publicidad' o '#publi' y activa la etiqueta de contenido de marca.", A, "require_disclosure")
rule(L, E, "Tu opinión sincera es bienvenida.", A, "honest_opinion")
rule(L, E, "Si algo no te gusta, puedes decirlo sin problema.", A, "negatives_ok")
rule(L, E, "Menciona el nuevo sabor turrón.", A, "mention_flavour")
rule(L, E, "Puedes decir el precio: 2,50 € la lata.", A, "mention_price")
rule(L, E, "Duración entre 15 y 45 segundos, formato vertical.", A, "video_format")
rule(L, E, "Nada de alegaciones de salud.", A, "no_health_claims")
rule(L, E, "Habla solo de cómo lo has usado de verdad.", A, "truthful_usage")
rule(L, E, "Buena luz y sin filtros sobre el producto.", A, "production_quality")
rule(L, E, "Grábalo en castellano, con subtítulos.", A, "language")
rule(L, E, "No compres visualizaciones ni seguidores.", A, "lookalike_no_bought_views")
rule(L, E, "No tienes que darle 5 estrellas.", A, "lookalike_no_top_rating")
rule(L, E, "¡No olvides el #publi al principio!", A, "lookalike_disclosure_reminder")
rule(L, E, "Cobrarás lo mismo digas lo que digas.", A, "paid_regardless")

# ---------------- Chinese rules
L = "zh-hans"
rule(L, Z, "不要提我们给了钱，做成自来水的感觉。", B, "hide_payment")
rule(L, Z, "评论区有人问是不是广告，就说是自费买的。", B, "hide_payment")
rule(L, Z, "文案里别写'广告'，影响流量。", B, "drop_disclosure")
rule(L, Z, "'广告'两个字放到最后一堆话题标签后面。", B, "move_disclosure")
rule(L, Z, "用'合作'代替'广告'就行，挂小黄车没关系。", B, "weaken_disclosure")
rule(L, Z, "广告标识用很小的字，放在视频最后一秒。", B, "weaken_disclosure")
rule(L, Z, "标注'无广'会更可信。", B, "false_label")
rule(L, Z, "不要开启品牌合作内容的开关。", B, "disable_branded_toggle")
rule(L, Z, "说你已经喝了半年羊驼咖啡了。", B, "false_testimony",
     why="广告法第三十八条 requires an endorser to speak from fact and not recommend a product they have not actually used as claimed; scripting six months' use is false.")
rule(L, Z, "就说是朋友推荐、自己偶然发现的。", B, "false_testimony")
rule(L, Z, "不要说任何缺点。", B, "suppress_negatives")
rule(L, Z, "价格贵、偏甜这些都别提。", B, "suppress_negatives")
rule(L, Z, "必须让观众看完就想下单，不管你自己觉得怎么样。", B, "require_persuasion")
rule(L, Z, "打满分才结算尾款。", B, "top_rating_condition")
rule(L, Z, "视频里必须说'全网第一好喝'。", B, "scripted_superlative",
     why="广告法第九条第（三）项 bans '最佳'/'第一'-type absolute terms in advertising, and a scripted claim is not the endorser's factual experience.")
rule(L, Z, "就说这是'国家级品质，最好的咖啡'。", B, "scripted_superlative",
     why="广告法第九条第（三）项 expressly bans '国家级' and '最好'-type terms in advertising.")
rule(L, Z, "说喝了能降血脂、提高免疫力。", B, "health_claim")
rule(L, Z, "发布后买点播放量，冲一下热门。", B, "fake_engagement")
rule(L, Z, "用你的三个小号一起发，再互相评论。", B, "multiple_accounts")
rule(L, Z, "找刷单团队在店铺刷好评。", B, "fake_reviews",
     why="Organising fake transactions and reviews is false commercial promotion prohibited by 反不正当竞争法第八条.")
rule(L, Z, "刷点赞刷评论，越多越好。", B, "fake_engagement")
rule(L, Z, "一定要说'这是我喝过最好的咖啡，没有之一'。", B, "scripted_superlative")
rule(L, Z, "产品要在镜头里出现至少3秒。", A, "show_product")
rule(L, Z, "文案里@drinkalpaca。", A, "tag_brand")
rule(L, Z, "审核通过后48小时内发布。", A, "post_timing")
rule(L, Z, "视频至少保持公开30天。", A, "keep_public")
rule(L, Z, "文案开头标注'广告'，并开启品牌合作标识。", A, "require_disclosure")
rule(L, Z, "欢迎说真实感受。", A, "honest_opinion")
rule(L, Z, "有不喜欢的地方可以直接说。", A, "negatives_ok")
rule(L, Z, "提一下新口味桂花拿铁。", A, "mention_flavour")
rule(L, Z, "可以说一下到手价19.9元。", A, "mention_price")
rule(L, Z, "视频时长15到60秒，竖屏。", A, "video_format")
rule(L, Z, "不要做任何保健或治疗功效的宣传。", A, "no_health_claims")
rule(L, Z, "只讲你真实的饮用体验。", A, "truthful_usage")
rule(L, Z, "风格轻松幽默就好。", A, "tone_style")
rule(L, Z, "用普通话讲解，加中文字幕。", A, "language")
rule(L, Z, "不要买播放量或粉丝。", A, "lookalike_no_bought_views")
rule(L, Z, "不用非得打满分。", A, "lookalike_no_top_rating")
rule(L, Z, "别忘了在开头写'#广告'！", A, "lookalike_disclosure_reminder")
rule(L, Z, "无论评价好坏，费用都照付。", A, "paid_regardless")


# ---------------------------------------------------------------------------
# Build + validate
# ---------------------------------------------------------------------------
CAP_HEADER = ["countries", "language", "platform", "contest", "caption", "expect", "kind", "why", "source"]
RULE_HEADER = ["text", "countries", "language", "expect", "kind", "why", "source"]
LANG_COUNTRIES = {"en": {"US", "GB", "IE"}, "de": {"DE", "AT"}, "es": {"ES"}, "zh-hans": {"CN"}}
CAP_EXPECT = {"compliant", "non_compliant", "needs_review"}
RULE_EXPECT = {"allow", "block"}

errors = []


def caption_rows():
    rows = []
    for country, lang, contest, text, expect, kind, why in CAPTIONS:
        topic, default_why = CAP_KIND[kind]
        if why is None:
            if default_why == "borderline":
                errors.append("needs_review without why: " + text)
            why = default_why.format(lab=LAB[country])
        rows.append({
            "countries": country, "language": lang, "platform": "tiktok", "contest": contest,
            "caption": text, "expect": expect, "kind": kind, "why": why,
            "source": SRC[topic][country],
        })
    return rows


def rule_rows():
    rows = []
    for text, country, lang, expect, kind, why in RULES:
        topic, default_why = RULE_KIND[kind]
        rows.append({
            "text": text, "countries": country, "language": lang, "expect": expect,
            "kind": kind, "why": why or default_why, "source": SRC[topic][country],
        })
    return rows


def validate(rows, header, expect_set, text_key, contest=False):
    seen = set()
    for i, r in enumerate(rows):
        for k in header:
            if k == "contest":
                continue
            if not str(r.get(k, "")).strip():
                errors.append(f"{text_key} row {i}: empty {k}")
        if r["expect"] not in expect_set:
            errors.append(f"row {i}: bad expect {r['expect']}")
        if r["countries"] not in LANG_COUNTRIES[r["language"]]:
            errors.append(f"row {i}: country {r['countries']} not valid for {r['language']}")
        key = r[text_key].strip().lower()
        if key in seen:
            errors.append(f"duplicate: {r[text_key]}")
        seen.add(key)
        if contest:
            if r["contest"] not in ("", "yes"):
                errors.append(f"row {i}: bad contest value")
            if ("contest" in r["kind"]) != (r["contest"] == "yes"):
                errors.append(f"row {i}: contest flag/kind mismatch: {r['caption']}")
            if r["platform"] != "tiktok":
                errors.append(f"row {i}: platform")
        if r["expect"] == "needs_review" and r["kind"] != "borderline_label":
            errors.append(f"row {i}: needs_review kind")


def write_csv(path, header, rows):
    with open(path, "w", encoding="utf-8", newline="") as f:
        w = csv.DictWriter(f, fieldnames=header, quoting=csv.QUOTE_MINIMAL)
        w.writeheader()
        w.writerows(rows)
    # re-read check
    with open(path, encoding="utf-8", newline="") as f:
        rd = csv.DictReader(f)
        if rd.fieldnames != header:
            errors.append(f"{path}: header mismatch {rd.fieldnames}")
        back = list(rd)
    if len(back) != len(rows):
        errors.append(f"{path}: row count mismatch on re-read")
    for a, b in zip(rows, back):
        if any(str(a[k]) != b[k] for k in header):
            errors.append(f"{path}: round-trip mismatch")
            break


def table(counter_rows, cols, row_key):
    """Markdown table: rows = values of row_key, columns = cols (expect values)."""
    keys = sorted({r[row_key] for r in counter_rows})
    out = ["| " + row_key + " | " + " | ".join(cols) + " | total |",
           "|" + "---|" * (len(cols) + 2)]
    for k in keys:
        sub = [r for r in counter_rows if r[row_key] == k]
        c = Counter(r["expect"] for r in sub)
        out.append(f"| {k} | " + " | ".join(str(c.get(x, 0)) for x in cols) + f" | {len(sub)} |")
    c = Counter(r["expect"] for r in counter_rows)
    out.append("| **all** | " + " | ".join(str(c.get(x, 0)) for x in cols) + f" | {len(counter_rows)} |")
    return "\n".join(out)


def main():
    caps = caption_rows()
    rules = rule_rows()
    validate(caps, CAP_HEADER, CAP_EXPECT, "caption", contest=True)
    validate(rules, RULE_HEADER, RULE_EXPECT, "text")
    # counts sanity
    n_c, n_r = len(caps), len(rules)
    if not (220 <= n_c <= 260):
        errors.append(f"caption count {n_c} outside 220-260")
    if not (145 <= n_r <= 175):
        errors.append(f"rule count {n_r} outside 145-175")
    comp = sum(r["expect"] == "compliant" for r in caps) / n_c
    rev = sum(r["expect"] == "needs_review" for r in caps) / n_c
    allow = sum(r["expect"] == "allow" for r in rules) / n_r
    if not (0.35 <= comp <= 0.45):
        errors.append(f"compliant share {comp:.2f}")
    if rev > 0.05:
        errors.append(f"needs_review share {rev:.2f}")
    if not (0.40 <= allow <= 0.50):
        errors.append(f"allow share {allow:.2f}")
    for lang in LANG_COUNTRIES:
        nl = sum(r["language"] == lang for r in caps)
        rl = sum(r["language"] == lang for r in rules)
        if not (55 <= nl <= 65):
            errors.append(f"{lang}: {nl} captions")
        if not (36 <= rl <= 44):
            errors.append(f"{lang}: {rl} rules")
    if errors:
        print("VALIDATION FAILED:")
        for e in errors:
            print("  -", e)
        sys.exit(1)
    write_csv(os.path.join(HERE, "captions.csv"), CAP_HEADER, caps)
    write_csv(os.path.join(HERE, "rules.csv"), RULE_HEADER, rules)
    if errors:
        print("WRITE CHECK FAILED:", errors)
        sys.exit(1)
    write_readme(caps, rules)
    print(f"captions: {n_c}  compliant {comp:.1%}  needs_review {rev:.1%}")
    print(table(caps, ["compliant", "non_compliant", "needs_review"], "language"))
    print(f"rules: {n_r}  allow {allow:.1%}")
    print(table(rules, ["allow", "block"], "language"))


README_HEAD = """# Blind evaluation set: TikTok captions and brand instructions (Alpaca Coffee)

## How this set was written

A compliance reviewer wrote every row by hand, working only from the policy texts
listed below and a list of trap kinds to cover. The reviewer never saw the checker
under test: not its source code, word lists, tests or earlier evaluation data.
The captions and brand instructions are invented; wordings were deliberately varied
(casual tone, slang, emojis, hashtags, typos, mixed case, dialect) so that a checker
built from fixed word lists would not anticipate them. Rows are authored as Python
lists in `build.py`; running `python3 build.py` validates them (headers, legal
`expect` values, country/language pairing, no duplicates, contest flag, counts and
shares) and writes `captions.csv`, `rules.csv` and this README.

## Scenario

The brand is Alpaca Coffee (also "Alpaca Café", handle `@drinkalpaca`, Chinese name
羊驼咖啡). Every caption is a TikTok video the brand paid for, so the relationship is
always paid: a caption that denies payment, calls the post a gift/PR sample, or
names another sponsor is wrong even if it contains a label word.

## Labelling conventions

Captions (`expect`):
- `compliant`: a clear label in the audience's language at or near the start
  (within the first few words, visible without expanding the caption), tied to
  Alpaca Coffee or unattributed, with nothing contradicting it. For a very short
  one-line caption a label at the end also counts.
- `non_compliant`: no label, a label that is ambiguous, foreign, buried, hidden
  inside another word, used in another sense, pointed elsewhere (comments, bio,
  link), attributed to another sponsor, contradicted, or replaced by a denial.
- `needs_review`: used sparingly (about 3%), only where a careful human could not
  decide from the policies; each such row's `why` says what is unclear.

Language-specific labels applied:
- en: US accepts "#ad", "Ad", "Advertisement", "Sponsored (by)", "paid partnership
  with @brand" (FTC Disclosures 101). GB/IE follow the ASA/CMA and ASAI guidance:
  "#ad", "Ad", "Advert", "Advertisement" up front; "sponsored" alone in GB is treated
  as borderline. "#sp", "#spon", "collab", "#partner", "thanks", "in association
  with", "gifted"/"PR" (when paid) are not adequate.
- de: "Werbung" or "Anzeige" at the start (Leitfaden der Medienanstalten); English
  "ad"/"sponsored" and "Kooperation" are not enough; "unbezahlte Werbung" is false
  for a paid post. For AT, MedienG §26 terms "Anzeige", "entgeltliche Einschaltung",
  "Werbung" are accepted.
- es: "publicidad", "publi", "patrocinado por [marca]", "en colaboración con
  [marca]", "embajador/a de [marca]" (Autocontrol annex); "#sp", "#spon", "#colab",
  "#ad", "sponsored" not accepted; "publi no pagada" is contradicted.
- zh-hans: "广告" (art. 9 of 《互联网广告管理办法》 requires it when a shopping link
  is attached); "商业合作", "合作", "品牌合作", "恰饭", "感谢" are not the required
  label; "无广", "不打广告", "自费" deny a paid relationship.

Contests: `contest` is `yes` for giveaway/competition posts, else empty. A
brand-funded giveaway is an ad and needs the same label; "giveaway"/"抽奖"/"sorteo"
is not a disclosure.

Brand instructions (`expect`):
- `block`: hides the payment or drops, moves, weakens or falsifies the disclosure;
  switches off the branded content setting; scripts false testimony or invented
  usage; suppresses negatives; requires persuasion regardless of opinion; makes a
  top rating a condition; scripts superlatives or health claims; buys views, uses
  click farms or bots, several accounts, or fake reviews.
- `allow`: legitimate briefs (show the product, tag the brand, deadlines, keep
  public, disclose clearly, honest opinion and negatives welcome, mention a flavour
  or the price, format/length, no health claims, truthful usage, tone, production
  quality, language, paid regardless of opinion, no competitor products), plus
  look-alikes that use blocked words in a lawful sense ("Don't buy views", "You
  don't need to give 5 stars", "Don't forget #ad", "不用非得打满分").

Countries: one code per row: `US`, `GB`, `IE` for en; `DE`, `AT` for de; `ES` for
es; `CN` for zh-hans. Platform is always `tiktok`. `why` is one sentence of legal
reasoning; `source` cites the policy provisions relied on.

## Sources

- US: FTC Guides Concerning the Use of Endorsements and Testimonials in Advertising,
  16 CFR Part 255 (esp. 255.1, 255.5); FTC "Disclosures 101 for Social Media
  Influencers"; FTC Rule on the Use of Consumer Reviews and Testimonials, 16 CFR
  Part 465 (2024) (465.2 fake reviews, 465.4 sentiment-conditioned incentives,
  465.8 fake social-media indicators); FTC Act §§5, 12.
- UK: CAP Code (2.1, 2.3, 2.4, 3.1, 3.7, 3.45, 3.47, 8.17, 15); ASA/CMA
  "Influencers' guide to making clear that ads are ads"; Digital Markets,
  Competition and Consumers Act 2024, Sch. 20.
- Ireland: ASAI Code and ASAI guidance on recognisability of influencer marketing.
- Germany: UWG §5, §5a(4), Anhang Nr. 23b/23c; Medienstaatsvertrag §22(1);
  Leitfaden der Medienanstalten zur Werbekennzeichnung bei Online-Medien.
- Austria: Mediengesetz §26; öUWG §2 and Anhang Z 11.
- Spain: Código de conducta sobre el uso de influencers en la publicidad
  (AEA/Autocontrol, 2021) and its annex; Ley 34/1988 General de Publicidad
  (art. 3, 9); Ley 3/1991 de Competencia Desleal (art. 5, 7, 26).
- China: 《互联网广告管理办法》(2023) 第九条; 《广告法》第四、九、十四、十七、
  二十八、三十八条; 《反不正当竞争法》第八条.
- Platform: TikTok Branded Content Policy; TikTok Community Guidelines (fake
  engagement).
- Health claims (EU/UK): Regulation (EC) 1924/2006.

## Counts
"""


def write_readme(caps, rules):
    parts = [README_HEAD]
    parts.append(f"\n### Captions ({len(caps)})\n\nBy language and expect:\n\n")
    parts.append(table(caps, ["compliant", "non_compliant", "needs_review"], "language"))
    parts.append("\n\nBy country:\n\n")
    parts.append(table(caps, ["compliant", "non_compliant", "needs_review"], "countries"))
    parts.append("\n\nBy kind:\n\n")
    parts.append(table(caps, ["compliant", "non_compliant", "needs_review"], "kind"))
    parts.append(f"\n\nContest posts: {sum(r['contest'] == 'yes' for r in caps)}.\n")
    parts.append(f"\n### Brand instructions ({len(rules)})\n\nBy language and expect:\n\n")
    parts.append(table(rules, ["allow", "block"], "language"))
    parts.append("\n\nBy kind:\n\n")
    parts.append(table(rules, ["allow", "block"], "kind"))
    parts.append("\n")
    with open(os.path.join(HERE, "README.md"), "w", encoding="utf-8") as f:
        f.write("".join(parts))


if __name__ == "__main__":
    main()
