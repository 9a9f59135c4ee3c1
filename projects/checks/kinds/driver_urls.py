"""What the kinds checked through a driver (postgres.py, mysql.py,
redis.py) ask of their URLs: a host, no fragment, and only the query
parameters the kind knows, each given once."""

from __future__ import annotations

from urllib.parse import SplitResult, parse_qs, parse_qsl, urlsplit

from django.core.exceptions import ValidationError


def check_parameters(parts: SplitResult, label: str, known: tuple[str, ...]) -> dict:
    """The URL's query parameters; raises ValidationError naming the first
    one `label` checks do not know, or one given twice."""
    if parts.fragment:
        raise ValidationError(
            "A %(label)s check's URL has no #fragment.", params={"label": label}
        )
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    seen: dict[str, str] = {}
    for name, value in pairs:
        if name not in known:
            raise ValidationError(
                "A %(label)s check does not know “%(name)s”: use %(known)s.",
                params={"label": label, "name": name, "known": _listed(known)},
            )
        if name in seen:
            raise ValidationError("“%(name)s” is given twice.", params={"name": name})
        seen[name] = value
    return seen


def check_expectation(params: dict) -> None:
    """`expect` compares what the query answers: it needs a query."""
    if "expect" in params and not params.get("query"):
        raise ValidationError(
            "“expect” compares the first value the query answers: add ?query=."
        )


def check_database_path(parts: SplitResult, example: str) -> None:
    """A SQL server's URL names at most one database, as its path."""
    if "/" in parts.path.strip("/"):
        raise ValidationError(
            "The path is the database's name: %(example)s.",
            params={"example": example},
        )


def sql_up_rules(project) -> list[str]:
    """What counts as up for a SQL server's check, in words."""
    params = parse_qs(urlsplit(project.url).query)
    rules = ["the server accepts the login"]
    if params.get("query"):
        rules.append(f"“{params['query'][0]}” runs")
    if params.get("expect"):
        rules.append(f"its first value is “{params['expect'][0]}”")
    return rules


def _listed(names: tuple[str, ...]) -> str:
    spelled = [f"?{name}=" for name in names]
    if len(spelled) == 1:
        return spelled[0]
    return ", ".join(spelled[:-1]) + " or " + spelled[-1]
