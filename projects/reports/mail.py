"""The monthly report e-mail, for the teams that turned it on
(Team.monthly_report): on the 1st of each month the tasks process
queues each such team the last calendar month's report (summary.py),
plain text and HTML, to its listed addresses or else to its members.

Once per team and month: the MonthlyReport row and the message are
written in one transaction, and the row is unique per team and month,
so a rerun, a restarted tasks process or two of them running the
schedule at once queue one message. The message goes through the
account e-mails' outbox (projects/teams/account_mail.py), which sends it
with Django's mail backend, retries a refusal and sends each row once.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from django.conf import settings
from django.core.mail import EmailMultiAlternatives
from django.db import IntegrityError, transaction
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from django.utils.http import urlencode

from projects.models import Membership, MonthlyReport, Project, Team
from projects.models.teams import addresses
from projects.reports.summary import Report, build_report, last_calendar_month
from projects.teams.account_mail import queue_email


def send_monthly_reports(clock: Callable[[], datetime] = timezone.now) -> int:
    """Queue last calendar month's report for every team that asked for
    it and has not had it yet; returns how many were queued."""
    now = clock()
    start, end = last_calendar_month(now)
    return sum(
        queue_report(team, start, end, now)
        for team in Team.objects.filter(monthly_report=True).order_by("pk")
    )


def queue_report(team: Team, start: datetime, end: datetime, now: datetime) -> bool:
    """Queue `team`'s report of the month starting at `start`, unless it
    was queued already (or the team has nobody to send it to)."""
    month = start.date()
    if MonthlyReport.objects.filter(team=team, month=month).exists():
        return False  # the cheap check; the constraint is the guarantee
    to = recipients(team)
    if not to:
        return False
    ids = list(Project.objects.filter(team=team).values_list("pk", flat=True))
    message = render_message(team, build_report(ids, start, end), to)
    try:
        with transaction.atomic():
            MonthlyReport.objects.create(
                team=team, month=month, recipients=", ".join(to), queued_at=now
            )
            queue_email(message)
    except IntegrityError:
        return False  # another run queued it between the check and here
    return True


def recipients(team: Team) -> list[str]:
    """The team's listed addresses, or else its members' (those with one)."""
    listed = addresses(team.monthly_report_recipients)
    if listed:
        return listed
    members = Membership.objects.filter(team=team).exclude(user__email="")
    return sorted(set(members.values_list("user__email", flat=True)))


def render_message(team: Team, report: Report, to: list[str]) -> EmailMultiAlternatives:
    query = urlencode(
        {"start": f"{report.start:%Y-%m-%d}", "end": f"{report.end:%Y-%m-%d}"}
    )
    link = f"{settings.SITE_URL.rstrip('/')}{reverse('dashboard:report')}?{query}"
    context = {"team": team, "report": report, "link": link}
    message = EmailMultiAlternatives(
        f"{team.name}: uptime report for {report.start:%B %Y}",
        render_to_string("reports/monthly_email.txt", context),
        settings.DEFAULT_FROM_EMAIL,
        to,
    )
    message.attach_alternative(
        render_to_string("reports/monthly_email.html", context), "text/html"
    )
    return message
