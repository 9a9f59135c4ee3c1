"""ControlClient: how the web process talks to a running poller.

Every call has a short timeout and never raises: a poller that is down or
slow must not break an admin save. Failures are logged and reported as None
or False; the poller's periodic reload repairs anything missed.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

from django.conf import settings

from polling.auth import control_token
from polling.engine.status import PollerStatus

if TYPE_CHECKING:
    import httpx

logger = logging.getLogger(__name__)

TIMEOUT_SECONDS = 1.0
# 500 ids of up to 19 digits stay well under the control endpoint's 16 KiB.
MAX_IDS_PER_CALL = 500


class ControlClient:
    def __init__(self, *, base_url: str | None = None, token: str | None = None):
        self._base_url = (base_url or settings.POLLER_CONTROL_URL).rstrip("/")
        self._token = token or control_token()

    def status(self) -> PollerStatus | None:
        """The poller's status, or None when it cannot be reached."""
        data = self._call("GET", "/status")
        return None if data is None else PollerStatus.from_json(data)

    def sync_project(self, project_id: int) -> bool:
        return self._call("POST", f"/projects/{project_id}/sync") is not None

    def sync_projects(self, project_ids: Sequence[int]) -> bool:
        """Follow each of these projects as the database has them, in one
        call (the poller's body limit takes MAX_IDS_PER_CALL)."""
        body = {"ids": list(project_ids)}
        return self._call("POST", "/projects/sync", json=body) is not None

    def remove_project(self, project_id: int) -> bool:
        return self._call("DELETE", f"/projects/{project_id}") is not None

    def reload(self) -> bool:
        return self._call("POST", "/reload") is not None

    def scale(self, max_concurrent_http: int) -> bool:
        body = {"max_concurrent_http": max_concurrent_http}
        return self._call("POST", "/scale", json=body) is not None

    def _call(self, method: str, path: str, **kwargs) -> dict | None:
        # Here, not at the top: every process imports this module (the
        # app's receivers), only the web process calls a poller.
        import httpx

        try:
            response = _http().request(
                method,
                self._base_url + path,
                headers={"Authorization": f"Bearer {self._token}"},
                **kwargs,
            )
            response.raise_for_status()
            return response.json()
        except (httpx.HTTPError, ValueError) as error:
            logger.warning(
                "Poller control %s %s failed: %s", method, path, _describe(error)
            )
            return None


@functools.cache
def _http() -> httpx.Client:
    # One client for the process: building one costs ~60 ms of CPU. No
    # proxies, .netrc or certificates from the environment: the bearer
    # token goes to the poller and nowhere else.
    import httpx

    return httpx.Client(timeout=TIMEOUT_SECONDS, trust_env=False)


def _describe(error: Exception) -> str:
    import httpx

    if isinstance(error, httpx.HTTPStatusError):
        return f"HTTP {error.response.status_code} {error.response.text[:200]}"
    if isinstance(error, httpx.ConnectError):
        return "the poller is not running or not reachable"
    if isinstance(error, httpx.TimeoutException):
        return f"no answer within {TIMEOUT_SECONDS:g} s"
    return str(error) or type(error).__name__
