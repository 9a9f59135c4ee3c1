"""DNS: dns://[resolver[:port]]/name?type=TYPE (RFC 4501's form; no
resolver: the poller's name server). Up when the response code is the
expected one and the answers hold what is expected; the query time is the
poll's time (polling/engine/probes/dns.py)."""

from __future__ import annotations

from urllib.parse import SplitResult, parse_qs, unquote

from django.core.exceptions import ValidationError

from projects.checks.kinds.kind import CheckKind

EXAMPLE = "dns://1.1.1.1/example.com?type=MX"
TYPES = ("A", "AAAA", "CNAME", "MX", "NS", "TXT", "SOA", "SRV", "CAA", "PTR")


def check_url(parts: SplitResult) -> None:
    if parts.username or parts.password:
        raise ValidationError("A DNS check cannot log in: remove the user name.")
    if not unquote(parts.path.lstrip("/")).rstrip("."):
        raise ValidationError(
            "A DNS check needs the name to look up: %(example)s, or "
            "dns:///example.com?type=A for the poller's own resolver.",
            params={"example": EXAMPLE},
        )
    if parts.fragment:
        raise ValidationError("A DNS URL has no #fragment.")
    query = parse_qs(parts.query, keep_blank_values=True)
    unknown = sorted(set(query) - {"type", "class"})
    if unknown:
        raise ValidationError(
            "A DNS URL takes only ?type= (and class=IN), not %(names)s.",
            params={"names": ", ".join(unknown)},
        )
    if any(value.upper() != "IN" for value in query.get("class", [])):
        raise ValidationError("A DNS check asks for class IN only.")
    record_type(parts)


def record_type(parts: SplitResult) -> str:
    """The type the URL asks for (A when it names none); raises
    ValidationError for another."""
    values = parse_qs(parts.query, keep_blank_values=True).get("type", ["A"])
    rdtype = values[-1].upper()
    if rdtype not in TYPES:
        raise ValidationError(
            "“%(type)s” is not a record type a DNS check asks for: %(types)s.",
            params={"type": values[-1], "types": ", ".join(TYPES)},
        )
    return rdtype


def normalized_answers(rdtype: str, text: str) -> tuple[str, ...]:
    """The expected answers, one a line, as the record's text in the form
    answers are read in (names absolute); raises ValueError naming the
    line that is not a record of the type."""
    # Here, not at the top: the models import this module, and every
    # process (the web's, the tasks') would hold dnspython for nothing.
    import dns.exception
    import dns.name
    import dns.rdata

    answers = []
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if not line:
            continue
        if rdtype == "TXT" and not line.startswith('"'):
            line = '"' + line.replace("\\", "\\\\").replace('"', '\\"') + '"'
        try:
            rdata = dns.rdata.from_text(
                "IN", rdtype, line, origin=dns.name.root, relativize=False
            )
        except (dns.exception.DNSException, ValueError) as error:
            raise ValueError(
                f"line {number}, “{line}”, is not {rdtype} record data ({error})."
            ) from None
        answers.append(rdata.to_text())
    return tuple(answers)


def up_rules(project) -> list[str]:
    rules = [f"the response code is {project.dns_expected_rcode}"]
    answers = [line.strip() for line in project.dns_expected_answers.splitlines()]
    if answers := [answer for answer in answers if answer]:
        how = {"any": "one of", "all": "all of", "exactly": "exactly"}
        rules.append(
            f"the answers hold {how.get(project.dns_answer_match, 'one of')} "
            + ", ".join(answers)
        )
    if project.dns_require_dnssec:
        rules.append("the resolver authenticated the answer (DNSSEC)")
    return rules


KIND = CheckKind(
    name="dns",
    label="DNS",
    schemes=("dns",),
    example=EXAMPLE,
    sends_http=False,
    check_url=check_url,
    up_rules=up_rules,
    unused_reason="A DNS check sends a query, not an HTTP request: {what}.",
    measures="query time",
    options=(
        "dns_expected_rcode",
        "dns_expected_answers",
        "dns_answer_match",
        "dns_require_dnssec",
    ),
    default_port=53,
    host_optional=True,
)
