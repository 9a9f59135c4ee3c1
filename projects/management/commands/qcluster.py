"""`manage.py qcluster`: django-q2's tasks, stopped cleanly by a signal.

This replaces django-q2's own command (projects comes before django_q in
INSTALLED_APPS). With one worker (`Q_WORKERS=1`, the default) the tasks
run in this process itself (projects/task_runner/one_process.py: half
the memory of django-q2's five processes); with more, in django-q2's
cluster of processes. That cluster stops from inside a signal handler,
and its sentinel process dies at once on SIGTERM; when SIGTERM reaches every
process of the group (honcho and `make run`, systemd's default KillMode,
Heroku) the parent then waits forever on an event the dead sentinel held
(django-q2 issue #346 is the same deadlock). Here SIGTERM and SIGINT are
blocked before the cluster forks, so only this process reacts to them,
without a handler: it waits for one with sigwait() and then stops the
cluster, which lets its workers finish the tasks in hand.

Workers unblock SIGTERM again (django-q2 kills a worker past Q_TIMEOUT
with it), so a SIGTERM sent to every process also ends tasks that are
running; the database queue hands those out again after Q_RETRY.
"""

from __future__ import annotations

import signal

from django_q.cluster import Cluster
from django_q.signals import post_spawn

from django.conf import settings
from django.core.checks import Tags
from django.core.management.base import BaseCommand, CommandError

from monitor.log_format import as_log_line
from projects.system_checks import TASKS_CHECKS
from projects.task_runner.one_process import OneProcessCluster

STOP_SIGNALS = {signal.SIGTERM, signal.SIGINT}
# How often to check that the cluster is still alive while waiting.
CHECK_SECONDS = 5


class Command(BaseCommand):
    help = "Runs the background tasks (django-q2) until SIGTERM or SIGINT."
    # Not every check: the URLs' would import every page into the tasks
    # process and, before it forks, into each of its workers.
    requires_system_checks = [Tags.models, TASKS_CHECKS]

    def handle(self, *args, **options) -> str:
        settings.SECRET_KEY  # noqa: B018 - tasks are signed with it: fail early
        blocked_before = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
        try:
            if settings.Q_WORKERS == 1:
                OneProcessCluster(
                    STOP_SIGNALS,
                    on_start=lambda: self.say_started("in this process"),
                    on_stop=self.say_stopping,
                ).run()
            else:
                self.run_cluster()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked_before)
        return as_log_line("tasks", "Stopped.")

    def run_cluster(self) -> None:
        """django-q2's cluster of processes, SIGTERM and SIGINT blocked."""
        post_spawn.connect(let_worker_be_terminated, dispatch_uid="projects.qcluster")
        cluster = Cluster()
        cluster.start()
        self.say_started(f"in django-q2's cluster, {settings.Q_WORKERS} workers")
        self.say_stopping(wait_for_stop_signal(cluster))
        cluster.stop()

    def say_started(self, how: str) -> None:
        self.stdout.write(as_log_line("tasks", f"Started: running tasks {how}."))

    def say_stopping(self, signum: int) -> None:
        self.stdout.write(
            as_log_line(
                "tasks", f"{signal.strsignal(signum)}: finishing tasks in hand."
            )
        )


def wait_for_stop_signal(cluster: Cluster) -> int:
    """Block until SIGTERM or SIGINT arrives; raise if the cluster dies
    first, so the process exits non-zero and gets restarted."""
    while True:
        info = signal.sigtimedwait(STOP_SIGNALS, CHECK_SECONDS)
        if info is not None:
            return info.si_signo
        if not cluster.sentinel.is_alive():
            raise CommandError("The task cluster stopped unexpectedly.")


def let_worker_be_terminated(**kwargs) -> None:
    """post_spawn receiver, run in each new worker process."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
