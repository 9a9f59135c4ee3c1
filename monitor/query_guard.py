"""Query values no page can use are a 400 before any view sees them.

Django's admin passes filter values straight to the database: on SQLite a
20-digit id in `?tags__exact=` overflows and raises, a huge year in the
date drill-down (`?polled_at__year=`) overflows `datetime`, and a day of
-1 fails in the template. On PostgreSQL a NUL byte in any text value
(`?q=%00`) raises in the driver. A moment that exists in no year from 1 to
9999 in UTC (`?at__gte=0001-01-01T00:00:00%2B14:00`) overflows when it is
converted for the database. Each was a 500; this middleware answers them
with a 400 instead, for every page at once.

In the admin a bare field name is a filter too (`?project=<20 digits>`),
so there every name but the admin's own is checked as a lookup is.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, time

from django.contrib.admin.options import IS_FACETS_VAR, IS_POPUP_VAR, TO_FIELD_VAR
from django.contrib.admin.views.main import (
    ALL_VAR,
    ERROR_FLAG,
    ORDER_VAR,
    PAGE_VAR,
    SEARCH_VAR,
)
from django.http import (
    HttpRequest,
    HttpResponse,
    HttpResponseBadRequest,
    JsonResponse,
)
from django.utils.dateparse import parse_date, parse_datetime
from django.utils.timezone import get_current_timezone, is_naive, make_aware

API_PREFIX = "/api/"
ADMIN_PREFIX = "/admin/"
# Its parameters name a model and search it; none is a filter.
ADMIN_AUTOCOMPLETE = "/admin/autocomplete/"
# The admin's own parameters: its changelist's and its forms'. Every other
# name on an admin page is a filter (a status page's subscribers are
# filtered by `page`).
ADMIN_PARAMETERS = {
    ALL_VAR,
    ERROR_FLAG,
    IS_FACETS_VAR,
    IS_POPUP_VAR,
    ORDER_VAR,
    PAGE_VAR,
    SEARCH_VAR,
    TO_FIELD_VAR,
    "_changelist_filters",
}
MAX_INTEGER = 2**63 - 1
DATE_PARTS = {"__year": (1, 9999), "__month": (1, 12), "__day": (1, 31)}
# Lookups whose value is a comma-separated list (the admin splits it).
LIST_LOOKUPS = ("__in", "__range")


class QueryGuardMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        admin = request.path.startswith(ADMIN_PREFIX)
        admin = admin and not request.path.startswith(ADMIN_AUTOCOMPLETE)
        problem = query_problem(request.GET.lists(), admin=admin)
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


def query_problem(items, *, admin: bool = False) -> QueryProblem | None:
    """Why these (name, values) pairs cannot be used; None when they can.
    `admin`: on an admin page, where a bare name is a filter."""
    for name, values in items:
        for value in [name, *values]:
            if "\x00" in value:
                return QueryProblem(
                    name.replace("\x00", ""), "a query value contains a NUL character"
                )
        if not ("__" in name or (admin and name not in ADMIN_PARAMETERS)):
            # Not a lookup: a search for a long number stays a search.
            continue
        for value in values:
            problem = _lookup_problem(name, value)
            if problem:
                return QueryProblem(name, problem)
    return None


def _lookup_problem(name: str, value: str) -> str | None:
    """Why a lookup's value cannot reach the database; None when it can."""
    for suffix, (low, high) in DATE_PARTS.items():
        if name.endswith(suffix):
            if not (
                _is_digits(value) and len(value) <= 4 and low <= int(value) <= high
            ):
                return f"{name} must be a number from {low} to {high}"
            return None
    parts = value.split(",") if name.endswith(LIST_LOOKUPS) else [value]
    for part in parts:
        digits = part.strip().removeprefix("-")
        # The length first: int() of a 5,000-digit string is slow work.
        if _is_digits(digits) and (len(digits) > 19 or int(digits) > MAX_INTEGER):
            return f"{name} is out of range"
        if not _exists_in_utc(part.strip()):
            return f"{name} must be a moment from year 1 to 9999 in UTC"
    return None


def _exists_in_utc(value: str) -> bool:
    """False for a date or moment that has no UTC time in years 1 to 9999
    (the database is sent UTC); True for one that has, and for any other
    text."""
    try:
        moment = parse_datetime(value)
        if moment is None:
            day = parse_date(value)
            if day is None:
                return True
            # A date for a date-and-time field: its midnight, here.
            moment = datetime.combine(day, time())
        if is_naive(moment):
            moment = make_aware(moment, get_current_timezone())
        moment.astimezone(UTC)
    except ValueError:
        # A well-formed but impossible date (2026-02-30): the field's own
        # validation refuses it.
        return True
    except OverflowError:
        return False
    return True


def _is_digits(value: str) -> bool:
    return value.isascii() and value.isdigit()
