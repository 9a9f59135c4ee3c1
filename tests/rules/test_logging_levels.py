from __future__ import annotations

import subprocess
import sys

import pytest

from tests.support.processes import ROOT, process_env

# What a process started with the product's settings logs at: the tasks
# process imports django_q's cluster, whose module may set its own level.
LEVELS = """
import logging
import django
django.setup()
import django_q.cluster
print(
    logging.getLevelName(logging.getLogger().level),
    logging.getLevelName(logging.getLogger("django-q").getEffectiveLevel()),
)
"""


def levels(**env: str) -> str:
    environment = process_env(**env)
    environment.pop("LOG_LEVEL", None)
    environment.update(env)
    ended = subprocess.run(
        [sys.executable, "-c", LEVELS],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert ended.returncode == 0, ended.stderr
    return ended.stdout.strip()


def test_routine_task_logs_stay_at_warning_by_default():
    assert levels() == "INFO WARNING"


@pytest.mark.parametrize("level", ["DEBUG", "INFO", "ERROR"])
def test_an_explicit_log_level_applies_to_the_task_logs_too(level):
    assert levels(LOG_LEVEL=level) == f"{level} {level}"
