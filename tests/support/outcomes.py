"""Builders for engine values, shared by tests."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from polling.engine.types import Outcome

T0 = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


def outcome(
    project_id: int,
    *,
    up: bool = True,
    at: float = 0,
    code: int | None = 200,
    ms: int | None = 20,
    error: str = "",
) -> Outcome:
    """An outcome that started `at` seconds after T0."""
    started = T0 + timedelta(seconds=at)
    if not up and not error:
        error = f"expected 200, got {code}" if code else "connection refused"
    return Outcome(
        project_id=project_id,
        up=up,
        started_at=started,
        due_at=started,
        status_code=code,
        response_time_ms=ms,
        error=error,
    )
