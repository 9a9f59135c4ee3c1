"""The one way a lookup fails: a reason people can read."""

from __future__ import annotations


class LookupFailed(Exception):
    """A lookup that got no expiry date. `reason` is shown on the project
    page and in the admin as it is; `permanent` says that asking again
    soon would get the same answer (the registry answered: no such domain,
    no date), so it is asked again tomorrow, not at the next run;
    `unreachable` that the server never answered (a timeout, a refused
    connection), so its other domains need not wait for it this run."""

    def __init__(
        self, reason: str, *, permanent: bool = False, unreachable: bool = False
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.permanent = permanent
        self.unreachable = unreachable
