"""Secrets in every format (issue 22, item 5), through the redaction the sync runs (`redacted`
of sync/parse.py: elements joined with their boundaries, then every safety pass in order).

One positive (a real-looking secret: redacted, counted, gone) and one near miss (kept byte for
byte) per rule: each provider format of secret_patterns.py (a test checks every pattern there has
a case), JWTs split over lines and paragraphs, values on the line or paragraph below their label,
credential table rows and columns in any wording, labels with spaces, full-width and homoglyph
letters, connection strings of every scheme, command-line passwords. Tokens are generated at test
time (the repository holds no secret-shaped literal). Hostile input of 5 MB on one line must
finish with exactly the expected output; the patterns are linear by construction (bounded,
possessive, literal-first), and the alarm only turns a hang into a failure.
"""

from __future__ import annotations

import base64
import json
import random
import re
import signal
import string
import textwrap
import urllib.parse
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from rag_pipeline.cleaning.safety import neutralise_controls
from rag_pipeline.cleaning.safety.secret_patterns import DETECT_SECRETS, OWN, SECRET_PATTERNS
from rag_pipeline.parsing import parse_document
from rag_pipeline.parsing.types import Element, ParsedDocument
from rag_pipeline.sync.parse import redacted

RNG = random.Random(22)
ALNUM = string.ascii_letters + string.digits
UPPER_DIGITS = string.ascii_uppercase + string.digits
HEX = "0123456789abcdef"
B64URL = ALNUM + "-_"


def rand(n: int, alphabet: str = ALNUM) -> str:
    """Random characters; a run of letters and digits mixed, as real tokens are."""
    mixed = any(c.isdigit() for c in alphabet) and any(c.isalpha() for c in alphabet) and n >= 8
    while True:
        value = "".join(RNG.choice(alphabet) for _ in range(n))
        if not mixed or (any(c.isdigit() for c in value) and any(c.isalpha() for c in value)):
            return value


def b64(n_bytes: int) -> str:
    return base64.b64encode(RNG.randbytes(n_bytes)).decode()


def b64url_json(obj: dict) -> str:
    return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")


JWT = ".".join([b64url_json({"alg": "RS256", "typ": "JWT", "kid": rand(16)}),
                b64url_json({"sub": rand(12), "iss": "https://login.example.org", "exp": 1924992000}),
                rand(342, B64URL)])


@contextmanager
def time_limit(seconds: int = 60) -> Iterator[None]:
    """Fail rather than hang: catches super-linear behaviour only, asserts no speed."""

    def on_alarm(signum: int, frame: object) -> None:
        raise TimeoutError(f"redaction did not finish within {seconds} s")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def sync_redact(*texts: str) -> tuple[str, dict[str, int]]:
    """Redact as the sync's parse step does: one element per text; the kept elements' text
    joined by blank lines, and the counts per kind."""
    parsed = redacted(ParsedDocument(elements=[Element("paragraph", t) for t in texts], parser="test"))
    counts = {k.removeprefix("secret:"): n for k, n in parsed.safety.items() if k.startswith("secret:")}
    return "\n\n".join(e.text for e in parsed.document.elements), counts


def assert_redacted(secret: str, kind: str, *texts: str, count: int = 1) -> str:
    out, counts = sync_redact(*texts)
    assert secret not in out, out
    assert out.count(f"[REDACTED:{kind}]") == count, out
    assert counts == {kind: count}, counts
    return out


def assert_kept(*texts: str) -> None:
    out, counts = sync_redact(*texts)
    assert counts == {}, (counts, out)
    # nothing redacted: the text as the safety pass writes it (full-width letters as ASCII, safety5)
    assert out == "\n\n".join(neutralise_controls(t.strip())[0] for t in texts)


# ---------------------------------------------------------------------------------------------
# provider formats (secret_patterns.py): kind -> (a real-looking token, a near miss)
# ---------------------------------------------------------------------------------------------

SAS_SIG = urllib.parse.quote(b64(32), safe="")
PROVIDER_CASES: list[tuple[str, str, str]] = [
    ("aws_access_key", "AKIA" + rand(16, UPPER_DIGITS), "AKIA" + rand(15, UPPER_DIGITS)),
    ("aws_access_key", "ASIA" + rand(16, UPPER_DIGITS), "XASIA" + rand(16, UPPER_DIGITS)),
    ("azure_storage_key", f"AccountKey={b64(64)}", f"AccountKey={b64(30)}"),
    ("azure_storage_key", f"SharedAccessKey={b64(32)}", "SharedAccessKeyName=RootManageSharedAccessKey"),
    ("azure_sas_signature", f"?sv=2022-11-02&ss=b&sp=rl&se=2030-01-01&sig={SAS_SIG}", "the sig= parameter signs the URL"),
    ("google_api_key", "AIza" + rand(35, B64URL), "AIza" + rand(30, B64URL)),
    ("gcp_private_key_id", f'"private_key_id": "{rand(40, HEX)}"', f'"private_key_id": "{rand(39, HEX)}"'),
    ("anthropic_api_key", f"sk-ant-api03-{rand(93, B64URL)}AA", "sk-ant-api03-short"),
    ("openai_api_key", f"sk-{rand(20)}T3BlbkFJ{rand(20)}", "sk-learn and risk-free"),
    ("openai_api_key", f"sk-proj-{rand(120, B64URL)}", f"sk-proj-{rand(20)}"),
    ("openai_api_key", f"sk-{rand(48)}", f"sk-{rand(24)}"),
    ("github_token", "ghp_" + rand(36), "ghp_" + rand(35)),
    ("github_token", "ghr_" + rand(36), "ghx_" + rand(36)),
    ("github_token", "github_pat_11" + rand(20) + "_" + rand(59), "github_pat_short"),
    ("gitlab_token", "glpat-" + rand(20, B64URL), "glpat-" + rand(12)),
    ("gitlab_token", "GR1348941" + rand(20, B64URL), "GR1348941" + rand(10)),
    ("gitlab_token", "glptt-" + rand(40, HEX), "glptt-" + rand(10)),
    ("slack_token", "xoxb-" + rand(10, string.digits) + "-" + rand(24), "xoxb- tokens are bot tokens"),
    ("slack_webhook", f"https://hooks.slack.com/services/T{rand(8, UPPER_DIGITS)}/B{rand(8, UPPER_DIGITS)}/{rand(24)}",
     "https://hooks.slack.com/services/"),
    ("stripe_key", "sk_live_" + rand(24), "sk_live_" + rand(8)),
    ("stripe_key", "rk_live_" + rand(24), "rk_lives_" + rand(24)),
    ("sendgrid_key", f"SG.{rand(22, B64URL)}.{rand(43, B64URL)}", f"SG.{rand(10)}.{rand(10)}"),
    ("square_secret", "sq0csp-" + rand(43, B64URL), "sq0csp-" + rand(20)),
    ("twilio_key", "SK" + rand(32, HEX), "SK" + rand(31, HEX)),
    ("npm_token", "npm_" + rand(36), "npm_config_cache"),
    ("npm_token", f"//registry.npmjs.org/:_authToken={rand(8, HEX)}-{rand(4, HEX)}-{rand(4, HEX)}-{rand(4, HEX)}-{rand(12, HEX)}",
     "//registry.npmjs.org/:_authToken=${NPM_TOKEN}"),
    ("pypi_token", "pypi-AgEIcHlwaS5vcmc" + rand(120, B64URL), "pypi-AgEIcHlwaS5vcmc" + rand(20)),
    ("vault_token", "hvs." + rand(90, B64URL), "hvs.short"),
    ("vault_token", "hvb.AAAAAQ" + rand(120, B64URL), "hvb.example"),
    ("jwt", JWT, "eyJhbGciOiJIUzI1NiJ9 alone is a header"),
]


@pytest.mark.parametrize(("kind", "secret", "near_miss"), PROVIDER_CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(PROVIDER_CASES)])
def test_provider_format_redacted_and_near_miss_kept(kind: str, secret: str, near_miss: str) -> None:
    value = secret.split("=", 1)[1] if kind in ("azure_storage_key",) else secret
    out = assert_redacted(value, kind, f"Config for the build: {secret} (rotate yearly)")
    assert out.startswith("Config for the build: ") and out.endswith(" (rotate yearly)")
    assert_kept(f"Config for the build: {near_miss} (rotate yearly)")


def test_every_provider_pattern_has_a_case_and_says_where_it_came_from() -> None:
    for pattern in SECRET_PATTERNS:
        assert any(kind == pattern.kind and re.search(pattern.regex, secret) for kind, secret, _ in PROVIDER_CASES), pattern
        assert pattern.source in (OWN, DETECT_SECRETS)
        assert (pattern.source == DETECT_SECRETS) == bool(pattern.plugin), pattern


def test_readme_names_the_rule_families_and_the_vendored_pattern_set() -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    assert "detect-secrets 1.5.0" in readme and "Apache-2.0" in readme
    for family in ("provider token", "connection string", "command line", "next line", "homoglyph"):
        assert family in readme.lower(), family


def test_gcp_service_account_json_loses_key_and_key_id() -> None:
    key_body = "\\n".join(textwrap.wrap(b64(600), 64))
    account = json.dumps({"type": "service_account", "project_id": "acme-prod", "private_key_id": rand(40, HEX),
                          "private_key": "-----BEGIN PRIVATE KEY-----\\n" + key_body + "\\n-----END PRIVATE KEY-----\\n",
                          "client_email": "ci@acme-prod.iam.gserviceaccount.com"})
    account = account.replace("\\\\n", "\\n")
    out, counts = sync_redact(account)
    assert counts == {"private_key": 1, "gcp_private_key_id": 1}, out
    assert key_body[:40] not in out and "ci@acme-prod.iam.gserviceaccount.com" in out


# ---------------------------------------------------------------------------------------------
# JWTs split over lines and paragraphs
# ---------------------------------------------------------------------------------------------


def fixed_width(text: str, width: int) -> list[str]:
    return [text[i : i + width] for i in range(0, len(text), width)]


@pytest.mark.parametrize("width", [40, 64, 76])
@pytest.mark.parametrize("wrap", [fixed_width, textwrap.wrap])  # textwrap also breaks after hyphens
def test_jwt_wrapped_at_a_fixed_width_is_redacted_whole(width: int, wrap: Callable[[str, int], list[str]]) -> None:
    wrapped = "\n".join(wrap(JWT, width))
    out = assert_redacted(JWT[:30], "jwt", f"Session token:\n{wrapped}\nIt expires in an hour.")
    assert out == "Session token:\n[REDACTED:jwt]\nIt expires in an hour."


def test_jwt_split_at_its_dots_and_over_paragraphs() -> None:
    header, payload, signature = JWT.split(".")
    assert_redacted(payload, "jwt", f"{header}.\n{payload}.\n{signature}")
    pieces = fixed_width(JWT, 64)
    out = assert_redacted(pieces[1], "jwt", "Token:", *pieces, "Next paragraph.")
    assert out == "Token:\n\n[REDACTED:jwt]\n\nNext paragraph."


def test_wrapped_base64_that_is_no_jwt_is_kept() -> None:
    fake = "eyJ" + rand(200, B64URL) + "." + rand(60, B64URL) + "." + rand(60, B64URL)  # header is no JSON with "alg"
    assert_kept("\n".join(textwrap.wrap(fake, 64)))
    assert_kept("eyJhbGciOiJIUzI1NiJ9 starts a JWT header\nHello")


# ---------------------------------------------------------------------------------------------
# values on the next line or paragraph, credential tables in any wording
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("texts", "secret", "kind"),
    [
        (("Password:\nhunter2",), "hunter2", "password"),
        (("Password:", "Tr0ub4dor&3"), "Tr0ub4dor&3", "password"),  # the next paragraph
        (("- **Root password:**\n  S3cure!pass",), "S3cure!pass", "password"),
        (("Password", "Xy!9abcd"), "Xy!9abcd", "password"),  # heading-like, no colon: a chosen value
        (("API key:", "", "a8f5f167f44f4964e6c998dee827110c"), "a8f5f167f44f4964e6c998dee827110c", "api_key"),
        (("Client secret:\n\n`Zx9Yw8Vu7Ts6Rq5Po4Nm`",), "Zx9Yw8Vu7Ts6Rq5Po4Nm", "secret"),
    ],
)
def test_value_on_the_next_line_or_paragraph(texts: tuple[str, ...], secret: str, kind: str) -> None:
    out = assert_redacted(secret, kind, *texts)
    assert texts[0].split("\n")[0] in out  # the label stays


@pytest.mark.parametrize(
    "texts",
    [
        ("Password:", "Must be at least 12 characters long."),
        ("Password", "Reset"),
        ("Password:\nnone",),
        ("API key:", "See the team vault."),
        ("To change the password, open the portal:\nSettings",),
        ("Token:", "unit"),
    ],
)
def test_prose_below_a_label_is_kept(texts: tuple[str, ...]) -> None:
    assert_kept(*texts)


@pytest.mark.parametrize(
    ("table", "secret", "kind"),
    [
        ("| Host | Root password |\n|---|---|\n| db1 | Tr0ub4dor&3 |", "Tr0ub4dor&3", "password"),
        ("| Admin password: | Xy12ab |", "Xy12ab", "password"),
        ("| DB-Passwort (Produktion) | Sommer2024! |", "Sommer2024!", "password"),
        ("| Service | API token |\n|---|---|\n| billing | 5f4dcc3b5aa765d61d8327deb882cf99 |", "5f4dcc3b5aa765d61d8327deb882cf99", "token"),
        ("| OAuth client secret | Zx9Yw8Vu7Ts6Rq5Po4Nm |", "Zx9Yw8Vu7Ts6Rq5Po4Nm", "secret"),
        ("| ｐａｓｓｗｏｒｄ | hunter2 |", "hunter2", "password"),
        ("| Password | p@ss w0rd |", "p@ss w0rd", "password"),
    ],
)
def test_credential_cells_in_any_wording(table: str, secret: str, kind: str) -> None:
    assert_redacted(secret, kind, table)


@pytest.mark.parametrize(
    "table",
    [
        "| Password policy | 12 characters |",
        "| Token expiry | 30 days |",
        "| Token | Count |\n|---|---|\n| the | 1234 |\n| of | 987 |",
        "| string | password | A hint to UIs to obscure input. |",
        "| password | OAuth Flow Object | Configuration for the flow |",
        "| Secret name | Rotation |\n|---|---|\n| db-creds | 90 days |",
    ],
)
def test_tables_about_credentials_are_kept(table: str) -> None:
    assert_kept(table)


def test_credential_table_through_the_markdown_parser() -> None:
    md = "# Accounts\n\n| System | Login | Root password |\n|---|---|---|\n| Billing | admin | Xk29!aaQ |\n"
    document = parse_document(md.encode(), "accounts.md")
    parsed = redacted(document)
    text = "\n".join(e.text for e in parsed.document.elements)
    assert "Xk29!aaQ" not in text and "[REDACTED:password]" in text and "Billing" in text
    assert parsed.safety == {"secret:password": 1}


# ---------------------------------------------------------------------------------------------
# labels with spaces, full-width and homoglyph characters
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "secret", "kind"),
    [
        ("pass word: Hunter22", "Hunter22", "password"),
        ("P a s s w o r d: Hunter22", "Hunter22", "password"),
        ("ｐａｓｓｗｏｒｄ：Hunter22", "Hunter22", "password"),  # full-width letters and colon
        ("\U0001d429\U0001d41a\U0001d42c\U0001d42c\U0001d430\U0001d428\U0001d42b\U0001d41d: Hunter22", "Hunter22", "password"),
        ("р\u0430ssw\u043erd: Hunter22", "Hunter22", "password"),  # Cyrillic р, а, о
        ("Ρassword: Hunter22", "Hunter22", "password"),  # Greek capital rho
        ("пароль: Секрет123", "Секрет123", "password"),  # Russian, folded the same way
        ("client secret: Zx9Yw8Vu7Ts6Rq5Po4Nm", "Zx9Yw8Vu7Ts6Rq5Po4Nm", "secret"),
        ("ＡＰＩ＿ＫＥＹ＝a8f5f167f44f4964e6c998dee827110c", "a8f5f167f44f4964e6c998dee827110c", "api_key"),
        ("access token = ya29.a0AfH6SMBx3k9Lq", "ya29.a0AfH6SMBx3k9Lq", "token"),
    ],
)
def test_labels_with_spaces_full_width_and_homoglyphs(text: str, secret: str, kind: str) -> None:
    out = assert_redacted(secret, kind, text)
    # the label stays as written, full-width letters as the ASCII they are (cleaning safety5)
    assert out.startswith(neutralise_controls(text.split(secret)[0])[0])


@pytest.mark.parametrize(
    "text",
    [
        "р\u0430ssw\u043erd policy: must be 12 characters",
        "ｐａｓｓｗｏｒｄ is required",
        "Пароль должен быть длинным.",
        "The client secret is kept in the vault.",
        "Καλημέρα κόσμε, ορθογραφία.",
    ],
)
def test_folded_lookalike_prose_is_kept(text: str) -> None:
    assert_kept(text)


# ---------------------------------------------------------------------------------------------
# connection strings and command lines
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "secret", "kind"),
    [
        ("DATABASE_URL=postgresql://app:S3cr3t-pw@db.internal:5432/app", "S3cr3t-pw", "url_credentials"),
        ("mongodb+srv://app:p@ss:w0rd@cluster0.example.net/db", "p@ss:w0rd", "url_credentials"),
        ("redis://:R3disPass@cache:6379/0", "R3disPass", "url_credentials"),
        ("amqps://guest:Gu3st!x@mq.internal/vhost", "Gu3st!x", "url_credentials"),
        ("jdbc:mysql://root:Pa55w0rd@db:3306/shop", "Pa55w0rd", "url_credentials"),
        ("Server=tcp:db,1433;Database=app;User ID=sa;Password=S3cr3t!;Encrypt=True;", "S3cr3t!", "password"),
        ("Driver={ODBC Driver 18};Server=db;Uid=app;Pwd={my pass;word};", "my pass;word", "password"),
    ],
)
def test_connection_strings_of_every_scheme(text: str, secret: str, kind: str) -> None:
    out = assert_redacted(secret, kind, text)
    assert out == text.replace(secret, f"[REDACTED:{kind}]")  # user, host and the rest stay


@pytest.mark.parametrize(
    "text",
    [
        "see https://example.com:8443/path and mailto:user@example.com",
        "ssh://deploy@host:22/srv",
        "Password=;",
        "password = getpass();",
        "this.password = newPassword;",
        "Server=db;Database=app;Integrated Security=true;",
    ],
)
def test_connection_string_lookalikes_kept(text: str) -> None:
    assert_kept(text)


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("mysql -u root -pS3cret appdb", "S3cret"),
        ("mysql -u root -p 'S3cret pw' appdb", "S3cret pw"),
        ("mysqldump -h db -u backup -p S3cret! shop > shop.sql", "S3cret!"),
        ("mysql --password=S3cret -u root", "S3cret"),
        ("mysqladmin --password Secr3t status", "Secr3t"),
        ("sshpass -p 'hunter2' ssh deploy@host", "hunter2"),
        ("PGPASSWORD=s3cr3t psql -h db -U app", "s3cr3t"),
        ("MYSQL_PWD=abc123 mysql -u root", "abc123"),
        ("redis-cli -h cache -a R3dis!Pass ping", "R3dis!Pass"),
        ("sqlcmd -S db -U sa -P 'P@ss w0rd' -Q 'select 1'", "P@ss w0rd"),
        ("curl -u admin:S3cret https://api.internal/v1", "S3cret"),
        ("mysql -u root \\\n  -pS3cret appdb", "S3cret"),
    ],
)
def test_command_line_passwords(text: str, secret: str) -> None:
    assert_redacted(secret, "password", text)


@pytest.mark.parametrize(
    "text",
    [
        "mkdir -p /tmp/x && ssh -p 2222 deploy@host",
        "docker run -p 8080:80 nginx",
        "mysql -u root -p appdb",
        "use the --password flag to set it",
        "mysql -p",
        "curl -u \"$USER:$TOKEN\" https://api.internal",
    ],
)
def test_command_line_lookalikes_kept(text: str) -> None:
    assert_kept(text)


# ---------------------------------------------------------------------------------------------
# hostile input: 5 MB on one line, exact output
# ---------------------------------------------------------------------------------------------

# unit -> what redaction finds in 5 MB of it (most: nothing; a command repeated is a command
# whose option value is the next repetition, and that is what gets redacted, once per value).
HOSTILE_UNITS: dict[str, dict[str, int]] = {
    **{unit: {} for unit in (
        "sk-", "sk-ant-", "sig=", "?sig=", "SharedAccessKey=", "hvs.", "npm_", "glpat-", "pypi-", "://a:", "://a:b@",
        "@", ";Pwd=", "--password ", "Password:\n", "| password |", "|", "eyJ", "eyJa\n", "ｐａｓｓｗｏｒｄ",
        "раssword ", "p a s s ", "a\u00a0")},
    "AccountKey=": {"azure_storage_key": 1},  # the last 88 characters are key-shaped
    "Password=x": {"password": 1},  # one bounded value; the next label is inside it
    "mysql -p": {"password": 128},  # only the first "mysql" starts a command: one window of values
    "sshpass -p ": {"password": 449709},
    "curl -u a:": {"password": 495145},
}


@pytest.mark.parametrize("unit", list(HOSTILE_UNITS))
def test_five_megabytes_of_one_unit_finish_with_exact_output(unit: str) -> None:
    text = unit * (5_000_000 // len(unit))
    with time_limit():
        out, counts = sync_redact(text)
    assert counts == HOSTILE_UNITS[unit]
    assert out.count("[REDACTED:") == sum(counts.values())
    if not counts:
        assert out == neutralise_controls(text.strip())[0]


def test_five_megabyte_line_with_secrets_at_both_ends() -> None:
    filler = "lorem ipsum dolor sit amet " * 185_000  # ~5 MB, one line
    secret = "ghp_" + rand(36)
    with time_limit():
        out, counts = sync_redact(f"password: Hunter22 {filler}{secret}")
    assert counts == {"password": 1, "github_token": 1}
    assert out == f"password: [REDACTED:password] {filler}[REDACTED:github_token]"
