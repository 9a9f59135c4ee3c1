"""Mail servers (SMTP, IMAP, POP3, each with TLS from the start or by
STARTTLS): up when the server greets, answers, completes TLS when asked
and accepts the login when one is given; polling/engine/probes/mail.py."""

from __future__ import annotations

from urllib.parse import SplitResult, parse_qs, urlsplit

from django.core.exceptions import ValidationError

from projects.checks.kinds.driver_urls import check_parameters
from projects.checks.kinds.kind import CheckKind

SCHEMES = ("smtp", "smtps", "imap", "imaps", "pop3", "pop3s")
EXAMPLE = "smtp://mail.example.com:587?starttls=required"
MODES = ("required", "optional", "off")


def check_url(parts: SplitResult) -> None:
    if parts.scheme.lower().endswith("s") and parts.query:
        raise ValidationError(
            "With %(scheme)s:// TLS comes first: the URL takes no ?%(query)s.",
            params={"scheme": parts.scheme, "query": parts.query},
        )
    params = check_parameters(parts, "mail server", ("starttls",))
    if params.get("starttls", "required") not in MODES:
        raise ValidationError("starttls is required, optional or off.")
    if parts.path not in ("", "/"):
        raise ValidationError(
            "A mail server check is scheme://host:port, with no path: %(example)s.",
            params={"example": EXAMPLE},
        )


def up_rules(project) -> list[str]:
    parts = urlsplit(project.url)
    scheme = parts.scheme.lower()
    rules = ["the server greets and answers"]
    starttls = parse_qs(parts.query).get("starttls", [""])[0]
    if scheme.endswith("s"):
        rules.append("TLS from the start, with a certificate that verifies")
    elif starttls == "required" or (not starttls and parts.port == 587):
        rules.append("STARTTLS, with a certificate that verifies")
    if parts.username:
        rules.append(f"the login of “{parts.username}” is accepted")
    return rules


KIND = CheckKind(
    name="mail",
    label="Mail server",
    schemes=SCHEMES,
    example=EXAMPLE,
    sends_http=False,
    check_url=check_url,
    up_rules=up_rules,
    unused_reason="A mail server check talks SMTP, IMAP or POP3: {what}.",
    measures="conversation time",
    tls_schemes=SCHEMES,
    secret_credentials=True,
)
