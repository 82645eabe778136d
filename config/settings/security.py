"""Secrets and keys, hosts and proxies, signing in, sessions, cookies and the browser's rules."""

import base64
import hashlib

from csp.constants import NONCE, NONE, SELF

from config.settings.base import IS_PRODUCTION, JOYBACK_ENV, env

# Outside production a fixed key (joyback.safety refuses it, and what is derived from it, in production).
SECRET_KEY = env.get("SECRET_KEY") or f"insecure-{JOYBACK_ENV}-key-never-use-in-production"

ALLOWED_HOSTS = env.get("ALLOWED_HOSTS")
CSRF_TRUSTED_ORIGINS = env.get("CSRF_TRUSTED_ORIGINS")

# Payee details are encrypted with these Fernet keys, newest first.
PAYEE_ENCRYPTION_KEYS = env.get("PAYEE_ENCRYPTION_KEYS")
if not PAYEE_ENCRYPTION_KEYS and not IS_PRODUCTION:
    _digest = hashlib.sha256(f"payee-data:{SECRET_KEY}".encode()).digest()
    PAYEE_ENCRYPTION_KEYS = [base64.urlsafe_b64encode(_digest).decode()]
# The key of the duplicate-detection fingerprints (same bank account, email or phone), apart from
# the encryption keys so that those rotate without changing a fingerprint. An installation from
# before this setting keeps its fingerprints by setting it to its oldest PAYEE_ENCRYPTION_KEYS key;
# a new key needs `manage.py payee_fingerprints_recompute` once.
PAYEE_FINGERPRINT_KEY = env.get("PAYEE_FINGERPRINT_KEY")
if not PAYEE_FINGERPRINT_KEY and not IS_PRODUCTION:
    PAYEE_FINGERPRINT_KEY = hashlib.sha256(f"payee-fingerprints:{SECRET_KEY}".encode()).hexdigest()

# The proxies in front of the app (load balancer, ingress): the client's address is read from the
# X-Forwarded-For they append, and only from them. Either their networks (safest: a request that
# did not come through them is judged by its own address) or how many of them a request passes.
TRUSTED_PROXIES = env.get("TRUSTED_PROXIES")
TRUSTED_PROXY_HOPS = env.get("TRUSTED_PROXY_HOPS")

# The largest request body taken (a bank statement upload is the largest there is): refused by its
# Content-Length before anything is read or stored. Bodies that are not files stay within Django's
# DATA_UPLOAD_MAX_MEMORY_SIZE (2.5 MB).
STATEMENT_UPLOAD_MAX_BYTES = env.get("STATEMENT_UPLOAD_MAX_BYTES")
REQUEST_MAX_BYTES = env.get("REQUEST_MAX_BYTES", default=STATEMENT_UPLOAD_MAX_BYTES + 64 * 1024)

# Four eyes are two people: for this many days after one person made another's account, gave them
# a membership, role, permission or group (or confirmed one), neither may be the second approver of
# what the other proposed (joyback.users.four_eyes).
FOUR_EYES_COOLING_DAYS = env.get("FOUR_EYES_COOLING_DAYS")

AUTH_USER_MODEL = "users.User"
AUTHENTICATION_BACKENDS = [
    "django.contrib.auth.backends.ModelBackend",
    "allauth.account.auth_backends.AuthenticationBackend",
]
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {
        "NAME": "django.contrib.auth.password_validation.MinimumLengthValidator",
        "OPTIONS": {"min_length": 10},
    },
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LOGIN_URL = "account_login"
LOGIN_REDIRECT_URL = "brand_home"
ACCOUNT_LOGIN_METHODS = {"email"}
ACCOUNT_SIGNUP_FIELDS = ["email*", "password1*", "password2*"]
ACCOUNT_USER_MODEL_USERNAME_FIELD = None
ACCOUNT_EMAIL_VERIFICATION = env.get("ACCOUNT_EMAIL_VERIFICATION")
ACCOUNT_LOGIN_ON_EMAIL_CONFIRMATION = True
ACCOUNT_LOGOUT_ON_PASSWORD_CHANGE = False  # this session stays; Django ends the user's other ones
ACCOUNT_ADAPTER = "joyback.users.adapter.AccountAdapter"
ACCOUNT_FORMS = {"login": "joyback.users.adapter.LoginForm"}
# In the shared cache (see CACHES), so every web process counts the same failures.
ACCOUNT_RATE_LIMITS = {"login_failed": "10/m/ip,5/5m/key"}
# API keys, webhooks and approvals ask for the password or second factor again after this long.
ACCOUNT_REAUTHENTICATION_TIMEOUT = env.get("REAUTHENTICATION_SECONDS")
MFA_SUPPORTED_TYPES = ["totp", "webauthn", "recovery_codes"]
MFA_TOTP_ISSUER = "JoyBack"
# A code typed in the last seconds of its 30 and sent in the next is still taken (RFC 6238 5.2's one
# step back and forth); allauth then refuses the code again for the whole window, so it is not replayed.
MFA_TOTP_TOLERANCE = 1
# Passkeys need https, but for the development server on localhost.
MFA_WEBAUTHN_ALLOW_INSECURE_ORIGIN = not IS_PRODUCTION
# Staff can change everything: their sessions end sooner than brand users' (two weeks).
STAFF_SESSION_SECONDS = env.get("STAFF_SESSION_SECONDS")

# Webhooks to loopback, private and link-local addresses: for local receivers in development; in
# production a brand could otherwise make our servers call internal services (SSRF).
WEBHOOK_PRIVATE_ADDRESSES = env.get("WEBHOOK_PRIVATE_ADDRESSES")

SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_HTTPONLY = False  # htmx reads it for hx-headers
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
if IS_PRODUCTION:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_SSL_REDIRECT = env.get("SECURE_SSL_REDIRECT")
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = env.get("SECURE_HSTS_SECONDS")
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True  # for the browsers' preload list: never plain http, not even the first time

# Content-Security-Policy: scripts and styles only from our own files, or inline with the nonce of
# this response (request.csp_nonce); no onclick= or javascript: (static/js/actions.js does that).
# Style attributes stay allowed: they draw the budget meters and charts, and run no script.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF, NONCE],
        "style-src": [SELF, NONCE],
        "style-src-attr": ["'unsafe-inline'"],
        # data: the authenticator app's QR code; TikTok's CDN: the creator's picture on the posting screen.
        "img-src": [SELF, "data:", "https://*.tiktokcdn.com", "https://*.tiktokcdn-us.com"],
        "media-src": [SELF, "blob:"],  # the preview of the video chosen for posting, before it is sent
        "connect-src": [SELF],
        "object-src": [NONE],
        "base-uri": [SELF],
        "frame-ancestors": [NONE],
    }
}
