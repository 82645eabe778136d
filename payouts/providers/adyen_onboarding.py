"""Each brand onboarded at Adyen for Platforms: its own legal entity, account holder and balance
account, so its money is held in its name by the provider and never by the platform.

Built from Adyen's published OpenAPI specifications (LegalEntityService-v4,
BalancePlatformService-v2, BalancePlatformConfigurationNotification-v2); tests/payouts/adyen/ keeps
the parts the contract tests validate against.

- POST /legalEntities (Legal Entity Management API v4): type organization, its legal name,
  registration number and registered country from the brand's legal details.
- POST /accountHolders (Balance Platform API v2): the account holder of that legal entity, with the
  capabilities JoyBack needs requested: receiving bank transfers from third parties on its virtual
  IBAN (receiveFromThirdParty), paying third parties (sendToThirdParty), and sending to a balance
  account (sendToBalanceAccount: the platform's fee, an internal transfer).
- POST /legalEntities/{id}/onboardingLinks: Adyen's hosted onboarding page, where the brand gives
  the documents Adyen asks for; the link is short-lived, so it is made when the brand clicks.
- balancePlatform.accountHolder.updated webhooks (HMAC-signed as the transfer webhooks): each
  capability's `allowed` and `verificationStatus`, and its `problems` with Adyen's remediating
  actions, which the dashboard shows in words.

Every POST carries an Idempotency-Key derived from our own row, so a retry is a replay at Adyen.
"""

from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.utils.dateparse import parse_datetime

from payouts.providers.adyen import refusal
from payouts.psp import PspError, adyen_balance_platform_api_base, adyen_legal_entity_api_base, http_request

# What JoyBack asks Adyen to allow each brand's account holder: money in on its virtual IBAN,
# payouts to people, and the platform's fee to the platform's balance account.
CAPABILITIES = ("receiveFromThirdParty", "sendToThirdParty", "sendToBalanceAccount")
ACCOUNT_HOLDER_UPDATED = "balancePlatform.accountHolder.updated"
ACCOUNT_HOLDER_WEBHOOKS = frozenset({"balancePlatform.accountHolder.created", ACCOUNT_HOLDER_UPDATED})
# The hosted onboarding page's languages (Adyen's locale: language-COUNTRY), by the site's.
LOCALES = {"en": "en-US", "de": "de-DE", "es": "es-ES", "zh-hans": "zh-CN"}


@dataclass(frozen=True)
class Problem:
    """One thing Adyen asks for: its remediating action's code and words (or its error's)."""

    code: str
    message: str
    capability: str = ""


@dataclass(frozen=True)
class AccountHolderState:
    """What Adyen says of an account holder: per capability (allowed, verificationStatus), and
    what it still needs."""

    account_holder_id: str
    legal_entity_id: str
    status: str  # Adyen's: active, inactive, suspended, closed
    capabilities: dict
    problems: tuple[Problem, ...]
    at: datetime | None = None

    @property
    def allowed(self) -> bool:
        """Every capability JoyBack needs is allowed, and the account holder is active: anything
        else, a capability missing from the answer included, is a no."""
        return self.status == "active" and all(
            (self.capabilities.get(name) or {}).get("allowed") is True
            and (self.capabilities.get(name) or {}).get("enabled", True) is not False
            for name in CAPABILITIES
        )

    @property
    def refused(self) -> bool:
        return self.status in ("closed", "suspended") or any(
            (self.capabilities.get(name) or {}).get("verificationStatus") == "rejected"
            for name in CAPABILITIES
        )


def _post(url: str, body: dict, key: str, what: str) -> dict:
    response = http_request(
        "POST",
        url,
        json=body,
        headers={"X-API-Key": _api_key(), "Idempotency-Key": key},
    )
    if response.status_code not in (200, 201, 202):
        raise refusal(response, what)
    return response.json()


def _api_key() -> str:
    return settings.ADYEN_API_KEY


def legal_entity_request(*, legal_name: str, registration_number: str, country: str, reference: str) -> dict:
    """The brand as an organization: what staff verified of it (its legal details)."""
    organization = {
        "legalName": legal_name[:200],
        "registeredAddress": {"country": country.upper()[:2]},
    }
    if registration_number:
        organization["registrationNumber"] = registration_number[:64]
    return {"type": "organization", "organization": organization, "reference": reference[:150]}


def account_holder_request(*, legal_entity_id: str, reference: str, description: str) -> dict:
    return {
        "legalEntityId": legal_entity_id,
        "reference": reference[:150],
        "description": description[:300],
        "capabilities": {name: {"requested": True} for name in CAPABILITIES},
    }


def onboarding_link_request(*, redirect_url: str, language: str, theme_id: str = "") -> dict:
    body = {"redirectUrl": redirect_url, "locale": LOCALES.get(language, "en-US")}
    if theme_id:
        body["themeId"] = theme_id
    return body


def legal_entity_create(*, key: str, **details) -> str:
    """POST /legalEntities; the legal entity's id."""
    answer = _post(
        f"{adyen_legal_entity_api_base()}/legalEntities",
        legal_entity_request(**details),
        f"{key}-legal-entity",
        "legal entity",
    )
    return str(answer["id"])


def account_holder_create(*, key: str, legal_entity_id: str, reference: str, description: str):
    """POST /accountHolders; what Adyen answered of it (its id, capabilities as requested)."""
    answer = _post(
        f"{adyen_balance_platform_api_base()}/accountHolders",
        account_holder_request(legal_entity_id=legal_entity_id, reference=reference, description=description),
        f"{key}-account-holder",
        "account holder",
    )
    return account_holder_state(answer)


def onboarding_link_create(
    *, legal_entity_id: str, redirect_url: str, language: str, theme_id: str = ""
) -> str:
    """POST /legalEntities/{id}/onboardingLinks: a short-lived link to Adyen's hosted page. Not
    keyed: each click asks for a fresh link, and asking twice makes nothing twice."""
    response = http_request(
        "POST",
        f"{adyen_legal_entity_api_base()}/legalEntities/{legal_entity_id}/onboardingLinks",
        json=onboarding_link_request(redirect_url=redirect_url, language=language, theme_id=theme_id),
        headers={"X-API-Key": _api_key()},
    )
    if response.status_code != 200:
        raise refusal(response, "onboarding link")
    url = str(response.json().get("url") or "")
    if not url.startswith(("https://", settings.SITE_URL + "/")):
        # A brand is sent only to Adyen's page (https), or to the sandbox's on our own site.
        raise PspError("the onboarding link is not a secure web address")
    return url


def _problems(capabilities: dict) -> tuple[Problem, ...]:
    """Adyen's problems of each capability, as the remediating actions it asks for (or, when an
    error names none, the error itself), each once."""
    found: dict[str, Problem] = {}
    for name, capability in sorted(capabilities.items()):
        for problem in (capability or {}).get("problems") or []:
            stack = list(problem.get("verificationErrors") or [])
            while stack:
                error = stack.pop(0)
                stack.extend(error.get("subErrors") or [])
                actions = error.get("remediatingActions") or []
                for action in actions:
                    code = str(action.get("code") or "")
                    found.setdefault(code, Problem(code, str(action.get("message") or "")[:300], name))
                if not actions and not error.get("subErrors"):
                    code = str(error.get("code") or "")
                    found.setdefault(code, Problem(code, str(error.get("message") or "")[:300], name))
    return tuple(found.values())


def account_holder_state(account_holder: dict, *, at: datetime | None = None) -> AccountHolderState:
    capabilities = {
        str(name): {
            "allowed": (value or {}).get("allowed") is True,
            "enabled": (value or {}).get("enabled", True) is not False,
            "verificationStatus": str((value or {}).get("verificationStatus") or "pending"),
        }
        for name, value in (account_holder.get("capabilities") or {}).items()
    }
    return AccountHolderState(
        account_holder_id=str(account_holder.get("id") or ""),
        legal_entity_id=str(account_holder.get("legalEntityId") or ""),
        status=str(account_holder.get("status") or "active"),
        capabilities=capabilities,
        problems=_problems(account_holder.get("capabilities") or {}),
        at=at,
    )


def webhook_account_holder(payload: dict) -> AccountHolderState | None:
    """An account holder webhook's news, or None when the payload is not one."""
    if payload.get("type") not in ACCOUNT_HOLDER_WEBHOOKS:
        return None
    holder = (payload.get("data") or {}).get("accountHolder") or {}
    if not holder.get("id"):
        return None
    return account_holder_state(holder, at=parse_datetime(str(payload.get("timestamp") or "")))
