"""Dotted paths the tasks process imports by name still import.

django-q2 stores a task's function as a string: in each Schedule row, and
in each queued task. A row made by an earlier version keeps its path
(register_schedules never rewrites one), so a module that moves must leave
a shim at its old path (projects/schedules.py MOVED_FUNCS). A path that no
longer imports fails at run time in the tasks process, every minute, and
nowhere else.
"""

from __future__ import annotations

import pytest

from django.utils.module_loading import import_string

from projects.notifications import trigger
from projects.schedules import MOVED_FUNCS, SCHEDULES
from projects.teams import account_mail

QUEUED_PATHS = [trigger.DELIVER_TASK, account_mail.DELIVER_TASK]
HOUSEKEEPING_RERUNS = [
    "projects.housekeeping.tasks.prune_results_task",
    "projects.housekeeping.tasks.compact_rollups_task",
]
STORED_PATHS = sorted(
    {job.func for job in SCHEDULES}
    | set(MOVED_FUNCS)
    | set(MOVED_FUNCS.values())
    | set(QUEUED_PATHS)
    | set(HOUSEKEEPING_RERUNS)
)


@pytest.mark.parametrize("path", STORED_PATHS)
def test_every_stored_task_path_imports_a_function(path):
    assert callable(import_string(path))


@pytest.mark.parametrize(("old", "new"), sorted(MOVED_FUNCS.items()))
def test_a_moved_task_runs_the_same_function_at_its_old_path(old, new):
    assert import_string(old) is import_string(new)


def test_the_announcer_is_scheduled_at_its_new_home():
    funcs = {job.name: job.func for job in SCHEDULES}
    assert funcs["announce on status pages"] == (
        "projects.announcements.announcer.announce"
    )
