"""Seconds in each unit a project's interval is given in. Plain Python, so
code outside Django (the benchmarks' naive reference) can use it too."""

SECONDS_PER_UNIT = {"seconds": 1, "minutes": 60, "hours": 3600}
