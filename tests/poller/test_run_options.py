from __future__ import annotations

from polling.run.options import RunOptions


def test_a_child_gets_the_options_that_were_given_as_flags():
    options = RunOptions(max_concurrent=30, status_interval=0.5, no_control=True)
    assert options.as_arguments() == [
        "--max-concurrent",
        "30",
        "--status-interval",
        "0.5",
        "--no-control",
    ]


def test_a_child_of_a_poller_without_options_gets_no_flags():
    assert RunOptions().as_arguments() == []
