"""Agents: pollers that need no database (docs/agents.md).

An agent runs the poller's engine somewhere the database cannot be
reached (a customer's network, a branch office) and talks to the server
over HTTPS only, with a token of its own: it reads its region's projects
and sends back their results (polling/agents/). The token is shown once
when the agent is made and stored only as its SHA-256, as API keys are.
"""

from __future__ import annotations

import secrets
from datetime import datetime

from django.db import models
from django.utils import timezone

from projects.models.api_keys import hash_key
from projects.models.regions import Region
from projects.models.teams import Team

# Tells an agent's token from an API key in logs and secret scanners.
TOKEN_PREFIX = "uma_"
PREFIX_LENGTH = 9


class Agent(models.Model):
    """One agent: where it polls from (`region`) and whose projects
    (`team`, or every team's when blank: an install-wide agent)."""

    name = models.CharField(max_length=100, unique=True)
    region = models.ForeignKey(Region, on_delete=models.PROTECT, related_name="agents")
    team = models.ForeignKey(
        Team,
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="+",
        help_text="Polls only this team's projects; blank for every team's "
        "(an install-wide agent, which only a superuser may make).",
    )
    token_hash = models.CharField(max_length=64, unique=True, editable=False)
    prefix = models.CharField(max_length=PREFIX_LENGTH, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    revoked_at = models.DateTimeField(null=True, blank=True, editable=False)
    # What the agent said of itself at its latest sync.
    last_seen_at = models.DateTimeField(null=True, blank=True, editable=False)
    version = models.CharField(max_length=50, blank=True, editable=False)
    host = models.CharField(max_length=255, blank=True, editable=False)
    buffered_results = models.PositiveIntegerField(default=0, editable=False)
    buffered_oldest_at = models.DateTimeField(null=True, blank=True, editable=False)
    # Set while this agent polls its region's projects; the others of the
    # region stand by (polling/agents/assignments.py).
    active_since = models.DateTimeField(null=True, blank=True, editable=False)

    class Meta:
        ordering = ["region__name", "name"]

    def __str__(self) -> str:
        return f"{self.name} ({self.region.name})"

    @classmethod
    def issue(
        cls, name: str, region: Region, team: Team | None = None
    ) -> tuple[Agent, str]:
        """A new saved agent and its token in clear, which is never stored."""
        agent = cls(name=name, region=region, team=team)
        token = agent.set_new_token()
        agent.save()
        return agent, token

    def set_new_token(self) -> str:
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        self.token_hash = hash_key(token)
        self.prefix = token[:PREFIX_LENGTH]
        return token

    @property
    def is_revoked(self) -> bool:
        return self.revoked_at is not None

    def revoke(self, now: datetime | None = None) -> None:
        """Stop the agent at its next sync (within POLLER_RELOAD_INTERVAL of
        an agent, a second or two)."""
        self.revoked_at = now or timezone.now()
        self.active_since = None
        self.save(update_fields=["revoked_at", "active_since"])
