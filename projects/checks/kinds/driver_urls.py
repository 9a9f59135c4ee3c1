"""What the kinds checked through a driver (postgres.py, mysql.py,
redis.py) ask of their URLs: a host, no fragment, and only the query
parameters the kind knows, each given once."""

from __future__ import annotations

from urllib.parse import SplitResult, parse_qsl

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


def _listed(names: tuple[str, ...]) -> str:
    spelled = [f"?{name}=" for name in names]
    if len(spelled) == 1:
        return spelled[0]
    return ", ".join(spelled[:-1]) + " or " + spelled[-1]
