"""A date drill-down for the PollResult admin that stays cheap at any size.

Django's own date_hierarchy lists the distinct days or months that hold
rows, which scans every row of the month. This one asks the database only
for the first and last poll of each project (two primary key lookups a
project) and fills in the calendar between them.
"""

from __future__ import annotations

import calendar
import datetime

from django import template
from django.contrib.admin.views.main import ChangeList
from django.db.models import Max, Min, OuterRef, Subquery
from django.utils import formats, timezone
from django.utils.text import capfirst

from projects.models import PollResult, Project

register = template.Library()


@register.inclusion_tag("admin/date_hierarchy.html")
def calendar_date_hierarchy(cl: ChangeList) -> dict:
    field = cl.date_hierarchy
    names = (f"{field}__year", f"{field}__month", f"{field}__day")
    year, month, day = (int(cl.params[n]) if cl.params.get(n) else None for n in names)

    def link(*parts: int) -> str:
        return cl.get_query_string(
            dict(zip(names, parts, strict=False)), [f"{field}__"]
        )

    first = last = None
    if not year:
        first, last = _date_range(cl, field)
        if first is None:
            return {"show": False}
        # Like Django's own: start at the narrowest level that has data.
        if first.year == last.year:
            year = first.year
            if first.month == last.month:
                month = first.month

    if year and month and day:
        chosen = datetime.date(year, month, day)
        return _context(
            (link(year, month), _format(chosen, "YEAR_MONTH_FORMAT")),
            [(None, _format(chosen, "MONTH_DAY_FORMAT"))],
        )
    if year and month:
        days = range(1, calendar.monthrange(year, month)[1] + 1)
        return _context(
            (link(year), str(year)),
            [
                (link(year, month, d), _format(datetime.date(year, month, d)))
                for d in days
            ],
        )
    if year:
        return _context(
            (link(), "All dates"),
            [
                (link(year, m), _format(datetime.date(year, m, 1), "YEAR_MONTH_FORMAT"))
                for m in range(1, 13)
            ],
        )
    return _context(None, [(link(y), str(y)) for y in range(first.year, last.year + 1)])


def _date_range(
    cl: ChangeList, field: str
) -> tuple[datetime.datetime | None, datetime.datetime | None]:
    # All projects' polls by time would be read from the whole table where
    # the time index is BRIN (PostgreSQL); each project's come in order
    # from the primary key.
    polls = PollResult.objects.filter(project=OuterRef("pk")).values(field)
    ends = Project.objects.aggregate(
        first=Min(Subquery(polls.order_by(field)[:1])),
        last=Max(Subquery(polls.order_by(f"-{field}")[:1])),
    )
    if ends["first"] is None:
        return None, None
    return timezone.localtime(ends["first"]), timezone.localtime(ends["last"])


def _format(date: datetime.date, format_name: str = "MONTH_DAY_FORMAT") -> str:
    return capfirst(formats.date_format(date, format_name))


def _context(back: tuple[str, str] | None, choices: list[tuple]) -> dict:
    return {
        "show": True,
        "back": {"link": back[0], "title": back[1]} if back else None,
        "choices": [{"link": url, "title": title} for url, title in choices],
    }
