"""The agent's calls to the server (polling/agents/views.py), over HTTPS
with its token. Every failure is one of two errors: the server cannot be
reached or refused for now (try again later), or it refused the token
(the agent must stop)."""

from __future__ import annotations

import httpx

# The server answers a sync or a batch in well under a second; a minute's
# backlog of results is sent in batches, each in its own call.
TIMEOUT_SECONDS = 30.0


class ServerUnavailable(Exception):
    """The server did not answer, or answered that it cannot now."""


class AgentRevoked(Exception):
    """The server refused the token: unknown or revoked."""


class Rejected(Exception):
    """The server refused what was sent (400): sending it again will not
    help. The message is the server's, naming the field."""


class AgentClient:
    def __init__(
        self, server_url: str, token: str, *, timeout: float = TIMEOUT_SECONDS
    ):
        if not token:
            raise AgentRevoked("No AGENT_TOKEN: make one with manage.py createagent.")
        self._http = httpx.Client(
            base_url=server_url.rstrip("/") + "/api/v1/agent/",
            headers={"Authorization": f"Bearer {token}"},
            timeout=timeout,
            follow_redirects=False,
        )

    def sync(self, since: str | None, report: dict, *, ids: bool = True) -> dict:
        return self._post("sync/", {"since": since, "ids": ids, **report})

    def targets(self, ids: list[int]) -> dict:
        return self._post("targets/", {"ids": ids})

    def results(self, outcomes: list[str]) -> dict:
        """Send outcomes, each already JSON text (as the buffer holds it)."""
        body = '{"outcomes":[' + ",".join(outcomes) + "]}"
        return self._post("results/", content=body.encode())

    def close(self) -> None:
        self._http.close()

    def _post(
        self, path: str, body: dict | None = None, *, content: bytes | None = None
    ) -> dict:
        try:
            if content is None:
                response = self._http.post(path, json=body)
            else:
                response = self._http.post(
                    path, content=content, headers={"Content-Type": "application/json"}
                )
        except httpx.HTTPError as error:
            raise ServerUnavailable(f"{type(error).__name__}: {error}") from error
        if response.status_code == 401:
            raise AgentRevoked(_detail(response))
        if response.status_code == 400:
            raise Rejected(_detail(response))
        if response.status_code != 200:
            raise ServerUnavailable(f"HTTP {response.status_code}: {_detail(response)}")
        try:
            return response.json()
        except ValueError:
            raise ServerUnavailable("the answer was not JSON") from None


def _detail(response: httpx.Response) -> str:
    try:
        return str(response.json().get("detail", ""))[:300]
    except (ValueError, AttributeError):
        return response.text[:300]
