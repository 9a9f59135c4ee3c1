from __future__ import annotations

from dataclasses import dataclass, fields


class CannotRun(Exception):
    """The poller cannot start, or stopped with results unsaved: one line
    for the operator (the command shows it as a CommandError)."""


@dataclass(frozen=True)
class RunOptions:
    """runpoller's options; None leaves the setting's value."""

    max_concurrent: int | None = None
    reload_interval: float | None = None
    status_interval: float | None = None
    log_level: str | None = None
    no_control: bool = False

    def as_arguments(self) -> list[str]:
        """These options as runpoller flags, for a child poller."""
        arguments = []
        for field in fields(self):
            value = getattr(self, field.name)
            flag = "--" + field.name.replace("_", "-")
            if value is True:
                arguments.append(flag)
            elif value not in (None, False):
                arguments += [flag, str(value)]
        return arguments
