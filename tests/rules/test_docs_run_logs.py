"""The bench scripts publish each run as a file of its own in
docs/benchmarks/ (bench/run_logs.py): named by date, benchmark and time,
never overwriting an earlier run, with the run's heading as the page title."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from bench.run_logs import RUN_LOGS, as_page, publish_run, run_log_path

WHEN = datetime(2026, 11, 25, 21, 10, 42, tzinfo=UTC)
CAPACITY_SECTION = """#### Capacity run 2026-11-25 21:10 UTC

- machine: x86_64, 2 cores

| scenario | polls/s |
| --- | --- |
| fast-30k | 500 |

```sh
# a shell comment, not a heading
```
"""


def test_the_run_logs_live_in_docs_benchmarks():
    assert RUN_LOGS.parts[-2:] == ("docs", "benchmarks")
    assert RUN_LOGS.is_dir()


def test_a_run_is_named_by_date_benchmark_and_utc_time(tmp_path):
    east = timezone(timedelta(hours=2))
    path = run_log_path("capacity", WHEN.astimezone(east), directory=tmp_path)
    assert path == tmp_path / "2026-11-25-capacity-2110.md"


def test_a_second_run_in_the_same_minute_gets_a_file_of_its_own(tmp_path):
    first = publish_run("fleet", "#### Fleet run\n", when=WHEN, directory=tmp_path)
    second = publish_run("fleet", "#### Again\n", when=WHEN, directory=tmp_path)
    third = publish_run("fleet", "#### Third\n", when=WHEN, directory=tmp_path)
    assert [p.name for p in (first, second, third)] == [
        "2026-11-25-fleet-2110.md",
        "2026-11-25-fleet-2110-2.md",
        "2026-11-25-fleet-2110-3.md",
    ]
    assert first.read_text() == "# Fleet run\n"
    assert second.read_text() == "# Again\n"


def test_the_runs_heading_becomes_the_page_title_and_code_is_left_alone():
    page = as_page(CAPACITY_SECTION)
    assert page.startswith("# Capacity run 2026-11-25 21:10 UTC\n")
    assert "# a shell comment, not a heading" in page
    assert "| fast-30k | 500 |" in page


def test_headings_below_the_first_keep_their_depth_under_it():
    page = as_page("### Ping endpoint\n\ntext\n\n#### Detail\n")
    assert page == "# Ping endpoint\n\ntext\n\n## Detail\n"


def test_a_benchmark_name_must_be_a_slug(tmp_path):
    with pytest.raises(ValueError, match="lowercase words and dashes"):
        run_log_path("../escape", WHEN, directory=tmp_path)
