"""Provider token formats: a maintained pattern set, vendored, plus the formats it lacks.

A token whose prefix alone names its issuer (`ghp_`, `AKIA`, `glpat-`, `hvs.` ...) is a
credential wherever it appears, so it needs no label. Rather than grow a hand-written list, the
formats come first from detect-secrets' regex plugins, vendored here (no runtime dependency):

    detect-secrets 1.5.0, Yelp, Inc. (https://github.com/Yelp/detect-secrets)
    Licence: Apache License 2.0 (from the package's metadata and its LICENSE file).

Each pattern says where it came from: `detect-secrets <plugin>` for a vendored one, or `own`
for one this project wrote (formats detect-secrets lacks, or newer ones). Vendored regexes are
adapted to the linear form every pattern here has: it starts with its literal prefix and a token
boundary right after it (`token_start`), repetitions are bounded and possessive, and a token
boundary closes it, so hostile input stays linear (patterns.py). Where this project's earlier
rule accepted more, that is kept: GitHub tokens longer than 36 characters, Stripe test keys,
Slack tokens of any segment shape, GitLab's fixed-length prefixes as one bounded range. Plugins that find tokens
without a prefix of their own (Discord, Telegram, Mailchimp, IBM, Artifactory passwords) and
the keyword/entropy plugins are not vendored: without a prefix they would scan every position
and fire on ordinary identifiers; labelled values are the label rules' job (labelled.py).
Private keys (detect-secrets `private_key`) live in keys.py, which covers more formats.
"""

from __future__ import annotations

from dataclasses import dataclass

from rag_pipeline.cleaning.safety.patterns import token_start

DETECT_SECRETS = "detect-secrets 1.5.0 (Apache-2.0)"
OWN = "own"

_ALNUM = "A-Za-z0-9"
_B64URL = r"A-Za-z0-9_\-"


@dataclass(frozen=True)
class SecretPattern:
    """One provider format: the kind it is counted as, its regex, and where the regex came from."""

    kind: str
    regex: str
    source: str  # "own" or "detect-secrets 1.5.0 (Apache-2.0)"
    plugin: str = ""  # the detect-secrets plugin module a vendored pattern came from


def _end(chars: str) -> str:
    """The token ends here: no further token character follows."""
    return f"(?![{chars}])"


# Order matters where prefixes overlap: sk-ant- before the OpenAI sk- forms; a JWT first, so
# `Bearer eyJ...` counts as jwt. A JWT split over lines is jwt_lines.py's.
SECRET_PATTERNS: tuple[SecretPattern, ...] = (
    SecretPattern(
        "jwt",
        token_start("eyJ", 3, _B64URL + ".")
        + f"[{_B64URL}]{{5,8192}}+\\.[{_B64URL}]{{5,8192}}+\\.[{_B64URL}]{{8,8192}}+" + _end(_B64URL),
        OWN,
    ),
    # ---- cloud access keys -----------------------------------------------------------------
    SecretPattern(
        "aws_access_key",
        token_start("(?:A3T[A-Z0-9]|ABIA|ACCA|AKIA|ASIA)", 4, _ALNUM) + "[0-9A-Z]{16}" + _end(_ALNUM),
        DETECT_SECRETS, "aws",
    ),
    SecretPattern(
        "azure_storage_key",
        r"AccountKey=(?P<v>[a-zA-Z0-9+/=]{88})" + _end("a-zA-Z0-9+/="),
        DETECT_SECRETS, "azure_storage_key",
    ),
    # Service Bus / Event Hubs / IoT Hub connection strings: a 44-character base64 key.
    SecretPattern(
        "azure_storage_key",
        token_start("SharedAccessKey=", 16, _ALNUM) + r"(?P<v>[A-Za-z0-9+/]{42,86}+={0,2})" + _end("A-Za-z0-9+/="),
        OWN,
    ),
    # SAS tokens: the signature is the secret (`...&sig=<base64, URL-encoded>`).
    SecretPattern(
        "azure_sas_signature",
        r"sig=(?<=[?&;\"' ]sig=)(?P<v>[A-Za-z0-9%+/=]{20,256}+)" + _end("A-Za-z0-9%+/="),
        OWN,
    ),
    SecretPattern("google_api_key", token_start("AIza", 4, _B64URL) + f"[{_B64URL}]{{35}}" + _end(_B64URL), OWN),
    # A service-account JSON's key id (its private_key block is keys.py's).
    SecretPattern(
        "gcp_private_key_id",
        r"\"private_key_id\"[ \t]{0,8}+:[ \t]{0,8}+\"(?P<v>[0-9a-f]{40})\"",
        OWN,
    ),
    # ---- LLM API keys ----------------------------------------------------------------------
    SecretPattern(
        "anthropic_api_key",
        token_start("sk-ant-", 7, _B64URL) + r"(?:api|admin|sid)[0-9]{2}-" + f"[{_B64URL}]{{32,400}}+" + _end(_B64URL),
        OWN,
    ),
    SecretPattern(
        "openai_api_key",
        token_start("sk-", 3, _B64URL) + f"[{_B64URL}]{{0,200}}?T3BlbkFJ[{_B64URL}]{{20,200}}+" + _end(_B64URL),
        DETECT_SECRETS, "openai",
    ),
    SecretPattern(
        "openai_api_key",
        token_start("sk-", 3, _B64URL) + f"(?:proj|svcacct|admin)-[{_B64URL}]{{40,400}}+" + _end(_B64URL),
        OWN,
    ),
    SecretPattern("openai_api_key", token_start("sk-", 3, _B64URL) + "[A-Za-z0-9]{32,200}+" + _end(_B64URL), OWN),
    # ---- source forges ---------------------------------------------------------------------
    SecretPattern(
        "github_token",
        token_start("gh[pousr]_", 4, "A-Za-z0-9_") + "[A-Za-z0-9]{36,251}+" + _end("A-Za-z0-9_"),
        DETECT_SECRETS, "github_token",
    ),
    SecretPattern(
        "github_token",
        token_start("github_pat_", 11, "A-Za-z0-9_") + "[A-Za-z0-9_]{22,251}+" + _end("A-Za-z0-9_"),
        OWN,
    ),
    SecretPattern(
        "gitlab_token",
        token_start("gl(?:pat|dt|ft|soat|rt|cbt)-", 7, _B64URL) + f"[{_B64URL}]{{20,50}}+" + _end(_B64URL),
        DETECT_SECRETS, "gitlab_token",
    ),
    SecretPattern(
        "gitlab_token",
        token_start("GR1348941", 9, _B64URL) + f"[{_B64URL}]{{20,50}}+" + _end(_B64URL),
        DETECT_SECRETS, "gitlab_token",
    ),
    SecretPattern(
        "gitlab_token",
        token_start("gl(?:imt|ptt|agent|oas)-", 6, _B64URL) + f"[{_B64URL}]{{25,1024}}+" + _end(_B64URL),
        DETECT_SECRETS, "gitlab_token",
    ),
    # ---- chat, payments, mail --------------------------------------------------------------
    SecretPattern(
        "slack_token",
        token_start("xox[abposr]-", 5, "A-Za-z0-9-") + "[A-Za-z0-9-]{10,251}+",
        DETECT_SECRETS, "slack",
    ),
    SecretPattern(
        "slack_webhook",
        r"https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9/_-]{20,200}+",
        DETECT_SECRETS, "slack",
    ),
    SecretPattern(
        "stripe_key",
        token_start("[sr]k_(?:live|test)_", 8, "A-Za-z0-9_") + "[A-Za-z0-9]{16,247}+" + _end("A-Za-z0-9_"),
        DETECT_SECRETS, "stripe",
    ),
    SecretPattern(
        "sendgrid_key",
        token_start("SG\\.", 3, _B64URL + ".") + f"[{_B64URL}]{{22}}\\.[{_B64URL}]{{43}}" + _end(_B64URL),
        DETECT_SECRETS, "sendgrid",
    ),
    SecretPattern(
        "square_secret",
        token_start("sq0csp-", 7, _B64URL) + f"[{_B64URL}]{{43}}" + _end(_B64URL),
        DETECT_SECRETS, "square_oauth",
    ),
    SecretPattern(
        "twilio_key",
        token_start("(?:AC|SK)", 2, _ALNUM) + "[a-f0-9]{32}" + _end(_ALNUM),
        DETECT_SECRETS, "twilio",
    ),
    # ---- package registries ----------------------------------------------------------------
    SecretPattern("npm_token", token_start("npm_", 4, _ALNUM + "_") + "[A-Za-z0-9]{36}" + _end(_ALNUM), OWN),
    SecretPattern(
        "npm_token",
        r":_authToken=[ \t]{0,8}+(?P<v>[A-Fa-f0-9-]{36}|npm_[A-Za-z0-9]{36})" + _end(_ALNUM + "-"),
        DETECT_SECRETS, "npm",
    ),
    SecretPattern(
        "pypi_token",
        token_start("pypi-", 5, _B64URL) + f"(?:AgEIcHlwaS5vcmc|AgENdGVzdC5weXBpLm9yZw)[{_B64URL}]{{70,4096}}+",
        DETECT_SECRETS, "pypi_token",
    ),
    # ---- vaults ----------------------------------------------------------------------------
    SecretPattern("vault_token", token_start("hv[sbr]\\.", 4, _B64URL + ".") + f"[{_B64URL}]{{24,1024}}+" + _end(_B64URL), OWN),
)
