"""Query values no page can use are a 400 before any view sees them.

Django's admin passes filter values straight to the database: on SQLite a
20-digit id in `?tags__exact=` overflows and raises, a huge year in the
date drill-down (`?polled_at__year=`) overflows `datetime`, and a day of
-1 fails in the template. On PostgreSQL a NUL byte in any text value
(`?q=%00`) raises in the driver. Each was a 500; this middleware answers
them with a 400 instead, for every page at once.
"""

from __future__ import annotations

from collections.abc import Callable

from django.http import (
    HttpRequest,
    HttpResponse,
    HttpResponseBadRequest,
    JsonResponse,
)

API_PREFIX = "/api/"
MAX_INTEGER = 2**63 - 1
DATE_PARTS = {"__year": (1, 9999), "__month": (1, 12), "__day": (1, 31)}


class QueryGuardMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        problem = query_problem(request.GET.lists())
        if problem:
            if request.path.startswith(API_PREFIX):
                # The API answers in JSON only, its errors by parameter.
                return JsonResponse({problem.name: [problem.message]}, status=400)
            return HttpResponseBadRequest(f"{problem}\n", content_type="text/plain")
        return self.get_response(request)


class QueryProblem(str):
    """Why a query cannot be used (the text), and which parameter."""

    name: str
    message: str

    def __new__(cls, name: str, message: str) -> QueryProblem:
        problem = super().__new__(cls, message)
        problem.name, problem.message = name, message
        return problem


def query_problem(items) -> QueryProblem | None:
    """Why these (name, values) pairs cannot be used; None when they can."""
    for name, values in items:
        for value in [name, *values]:
            if "\x00" in value:
                return QueryProblem(
                    name.replace("\x00", ""), "a query value contains a NUL character"
                )
        for value in values:
            problem = _value_problem(name, value)
            if problem:
                return QueryProblem(name, problem)
    return None


def _value_problem(name: str, value: str) -> str | None:
    """Only lookups (`field__exact`, `field__year`...) are checked: a search
    for a long number stays a search."""
    if "__" not in name:
        return None
    for suffix, (low, high) in DATE_PARTS.items():
        if name.endswith(suffix):
            if not (
                _is_digits(value) and len(value) <= 4 and low <= int(value) <= high
            ):
                return f"{name} must be a number from {low} to {high}"
            return None
    digits = value.removeprefix("-")
    # The length first: int() of a 5,000-digit string is slow work.
    if _is_digits(digits) and (len(digits) > 19 or int(digits) > MAX_INTEGER):
        return f"{name} is out of range"
    return None


def _is_digits(value: str) -> bool:
    return value.isascii() and value.isdigit()
