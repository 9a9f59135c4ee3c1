"""Which agent is calling: its token, sent as `Authorization: Bearer`."""

from __future__ import annotations

from django.http import HttpRequest

from projects.models import Agent
from projects.models.api_keys import hash_key


class Refused(Exception):
    """The call has no valid agent token; the message says how to fix it."""


def calling_agent(request: HttpRequest) -> Agent:
    """The agent whose token the request carries. Raises Refused when
    there is none, it is unknown, or it was revoked."""
    header = request.headers.get("Authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Refused("Send the agent's token as 'Authorization: Bearer <token>'.")
    agent = (
        Agent.objects.select_related("region")
        .filter(token_hash=hash_key(token.strip()))
        .first()
    )
    if agent is None:
        raise Refused("Unknown agent token: make one with manage.py createagent.")
    if agent.is_revoked:
        raise Refused("This agent's token was revoked: the agent must stop.")
    return agent
