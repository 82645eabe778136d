"""One mailbox, one form: the e-mail address duplicate detection keys on.

People write the same mailbox many ways: upper case, a +tag (sub-addressing: Gmail, Outlook,
iCloud, Fastmail, Proton and most others deliver `pat+anything@` to `pat@`), dots in a Gmail
address (Gmail ignores them), googlemail.com for gmail.com, a trailing dot after the domain (the
DNS root), or a domain in Unicode instead of its IDNA form. Each counts as a new person unless they
are folded together. The form is for matching only, never for sending mail.

The +tag is cut for every domain: a provider that does not sub-address does not hand out addresses
with a "+" in them either, and a false match sends a claim to review, never refuses it."""

GMAIL_DOMAINS = {"gmail.com", "googlemail.com"}


def _domain_ascii(domain: str) -> str:
    domain = domain.strip().rstrip(".").lower()
    try:
        return domain.encode("idna").decode("ascii").lower()
    except UnicodeError:
        return domain  # not a name IDNA can say: matched as written


def email_canonical(email: str) -> str:
    """pat.doe+win@GoogleMail.com. -> patdoe@gmail.com; anything without an @ lower-cased."""
    text = email.strip().lower()
    local, at, domain = text.rpartition("@")
    if not at:
        return text
    domain = _domain_ascii(domain)
    local = local.split("+", 1)[0] or local
    if domain in GMAIL_DOMAINS:
        local, domain = local.replace(".", ""), "gmail.com"
    return f"{local}@{domain}"
