"""The jobs the `tasks` process (django-q2's qcluster) runs on a timetable,
and how they get into its Schedule table.

SCHEDULES is the one list of them. After every `migrate` (the `release`
process, `make run`, the test database) register_schedules() looks each
entry up by its name:

- a missing schedule is created, first due at the entry's `at` time;
- an existing one is left exactly as it is, so an operator's change in the
  admin (another time, another interval, repeats = 0 to pause it) survives
  every later deploy;
- registering again, from any number of processes, never makes a second
  schedule of one name.

To add a job, write it as a plain function in the package of its concern
(projects/housekeeping/, projects/notifications/ ...), so tests call it
directly, and append a ScheduledJob here with a unique name. Renaming an
entry creates a new schedule and leaves the old one to delete in the admin.
Moving a job's function is safe only with a shim at its old path, listed
in MOVED_FUNCS: existing installs keep the old path in their rows.
Times are UTC (Q_CLUSTER's time_zone).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta

from django_q.models import Schedule

from django.apps import apps as global_apps
from django.db import connections, transaction
from django.utils import timezone

_PERIODS = {
    Schedule.HOURLY: timedelta(hours=1),
    Schedule.DAILY: timedelta(days=1),
}
# Any constant will do; it only has to be the same in every process.
_REGISTRATION_LOCK = 0x5C4ED


@dataclass(frozen=True, slots=True)
class ScheduledJob:
    """One entry of the timetable, in django-q2's terms.

    `schedule_type` is one of django-q2's Schedule.HOURLY, Schedule.DAILY,
    Schedule.MONTHLY or Schedule.MINUTES (every `minutes` minutes).
    `at` picks the first run: for MONTHLY the next 1st of a month at
    `at`, for DAILY the next time of day at `at`, for HOURLY the next hour
    at `at`'s minute; None means at once.
    """

    name: str
    func: str
    schedule_type: str
    minutes: int | None = None
    at: time | None = None

    def first_run(self, now: datetime) -> datetime:
        if self.at is not None and self.schedule_type == Schedule.MONTHLY:
            return _next_first_of_month(now.astimezone(UTC), self.at)
        if self.at is None or self.schedule_type not in _PERIODS:
            return now
        now = now.astimezone(UTC)
        if self.schedule_type == Schedule.DAILY:
            start = now.replace(hour=self.at.hour, minute=self.at.minute)
        else:
            start = now.replace(minute=self.at.minute)
        start = start.replace(second=0, microsecond=0)
        return start if start > now else start + _PERIODS[self.schedule_type]


def _next_first_of_month(now: datetime, at: time) -> datetime:
    start = now.replace(day=1, hour=at.hour, minute=at.minute, second=0, microsecond=0)
    if start > now:
        return start
    if start.month == 12:
        return start.replace(year=start.year + 1, month=1)
    return start.replace(month=start.month + 1)


_HOUSEKEEPING = "projects.housekeeping.tasks"
SCHEDULES: list[ScheduledJob] = [
    # Tells the default channels when no poller has been seen for
    # POLLER_SILENT_SECONDS, and when one is back.
    ScheduledJob(
        name="watch pollers",
        func="projects.incidents.watcher.watch_pollers",
        schedule_type=Schedule.MINUTES,
        minutes=1,
    ),
    # The safety net under the runs asked for after each commit: delivers
    # whatever is due, rows whose run was lost included.
    ScheduledJob(
        name="deliver notifications",
        func="projects.notifications.tasks.deliver_notifications",
        schedule_type=Schedule.MINUTES,
        minutes=1,
    ),
    # The same for account e-mails (invitations, password resets), and
    # their retries.
    ScheduledJob(
        name="deliver account e-mails",
        func="projects.notifications.account_mail.deliver_account_mail",
        schedule_type=Schedule.MINUTES,
        minutes=1,
    ),
    ScheduledJob(
        name="queue reminders",
        func="projects.notifications.tasks.queue_reminders",
        schedule_type=Schedule.MINUTES,
        minutes=1,
    ),
    # Status pages' subscribers: incidents, updates and maintenance.
    ScheduledJob(
        name="announce on status pages",
        func="projects.announcements.announcer.announce",
        schedule_type=Schedule.MINUTES,
        minutes=1,
    ),
    # Subscriptions never confirmed are dropped after a day.
    ScheduledJob(
        name="prune unconfirmed subscribers",
        func="projects.announcements.subscriptions.prune_unconfirmed",
        schedule_type=Schedule.HOURLY,
        at=time(0, 37),
    ),
    # Escalation steps are minutes apart; a minute's lateness is within
    # what a step promises.
    ScheduledJob(
        name="queue escalations",
        func="projects.notifications.escalation.queue_escalations",
        schedule_type=Schedule.MINUTES,
        minutes=1,
    ),
    # Burn-rate alerts: the shortest window is 5 minutes.
    ScheduledJob(
        name="evaluate objectives",
        func="projects.objectives.alerts.evaluate_objectives",
        schedule_type=Schedule.MINUTES,
        minutes=1,
    ),
    # Domain registrations (RDAP): hourly, so a new domain or a failed
    # lookup waits an hour at most; each domain is asked once a day.
    ScheduledJob(
        name="check domain registrations",
        func="projects.domains.tasks.check_domains",
        schedule_type=Schedule.HOURLY,
        at=time(0, 13),
    ),
    # The teams' monthly report e-mails, on the 1st (django-q2 moves a
    # MONTHLY schedule on by a month from there); sending twice is
    # harmless (one per team and month, projects/reports/mail.py).
    ScheduledJob(
        "send monthly reports",
        "projects.reports.mail.send_monthly_reports",
        Schedule.MONTHLY,
        at=time(6, 10),
    ),
    # Hourly, so each run deletes about an hour of polls.
    ScheduledJob(
        "prune_results",
        f"{_HOUSEKEEPING}.prune_results_task",
        Schedule.HOURLY,
        at=time(0, 7),
    ),
    # Once the UTC day is over and its last polls are written.
    ScheduledJob(
        "compact_rollups",
        f"{_HOUSEKEEPING}.compact_rollups_task",
        Schedule.DAILY,
        at=time(0, 20),
    ),
    ScheduledJob(
        "optimize_database",
        f"{_HOUSEKEEPING}.optimize_database_task",
        Schedule.DAILY,
        at=time(3, 40),
    ),
]


# Paths stored by earlier versions -> where the function lives now. Each
# old path stays importable (a shim module) for the rows that hold it.
MOVED_FUNCS = {
    "projects.status_announcements.announce": (
        "projects.announcements.announcer.announce"
    ),
}


def register_schedules(
    jobs: Iterable[ScheduledJob] | None = None,
    *,
    using: str = "default",
    apps=global_apps,
) -> list[str]:
    """Create the schedules of `jobs` (SCHEDULES when None) that do not
    exist yet, by name. Returns the names created."""
    schedule_model = apps.get_model("django_q", "Schedule")
    jobs = SCHEDULES if jobs is None else list(jobs)
    now = timezone.now()
    created = []
    with transaction.atomic(using=using):
        _lock_registration(using)
        existing = set(
            schedule_model.objects.using(using)
            .filter(name__in=[job.name for job in jobs])
            .values_list("name", flat=True)
        )
        for job in jobs:
            if job.name in existing:
                continue
            schedule_model.objects.using(using).create(
                name=job.name,
                func=job.func,
                schedule_type=job.schedule_type,
                minutes=job.minutes,
                repeats=-1,
                next_run=job.first_run(now),
            )
            created.append(job.name)
    return created


def _lock_registration(using: str) -> None:
    """Serialise registrations. SQLite transactions here are IMMEDIATE and
    already hold the write lock; PostgreSQL needs an explicit lock, held
    until the transaction ends."""
    connection = connections[using]
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [_REGISTRATION_LOCK])


def register_after_migrate(sender, *, using: str, apps=global_apps, **kwargs) -> None:
    """post_migrate receiver: registers SCHEDULES once django-q2's tables
    exist in this database. `apps` is the migrated state (flush, which
    also sends post_migrate, leaves it out)."""
    try:
        apps.get_model("django_q", "Schedule")
    except LookupError:
        return  # django_q is not migrated yet (e.g. `migrate projects 0001`)
    register_schedules(using=using, apps=apps)
