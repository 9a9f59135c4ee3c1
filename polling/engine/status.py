"""Turn the coordinator's status into words."""

from __future__ import annotations


def status_line(status: dict) -> str:
    lag = (
        "-"
        if status["lag_p99_ms"] is None
        else f"{status['lag_p50_ms']:.0f}/{status['lag_p99_ms']:.0f} ms"
    )
    return (
        f"{status['active_projects']} projects, "
        f"{status['polls_total']} polls ({status['polls_up']} up, "
        f"{status['polls_down']} down), "
        f"{status['polls_in_flight']}/{status['max_concurrent_http']} in flight, "
        f"queues {status['task_queue_depth']}/{status['result_queue_depth']}, "
        f"{status['results_written']} written, "
        f"{status['results_pending_write']} waiting, "
        f"{status['skipped_ticks']} skipped, lag p50/p99 {lag}"
    )
