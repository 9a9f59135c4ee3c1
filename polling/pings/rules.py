"""What a request to a ping URL means, before anything is looked up: a
ping (up, or failed when it came to /fail, with the body as its message),
or a link preview that must not count as the job having run.

A link unfurler (Slack, Teams, a chat app's preview) fetches a URL pasted
in a message. HEAD requests and GETs from known preview agents are
answered but not recorded.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime

from polling.engine.heartbeats import MAX_MESSAGE_BYTES

# Lower-case parts of the User-Agent of link unfurlers and crawlers.
PREVIEW_AGENTS = (
    "slackbot",
    "slack-imgproxy",
    "twitterbot",
    "facebookexternalhit",
    "facebot",
    "discordbot",
    "telegrambot",
    "whatsapp",
    "linkedinbot",
    "googlebot",
    "bingbot",
    "applebot",
    "skypeuripreview",
    "microsoftpreview",
    "mattermost",
    "redditbot",
    "embedly",
    "iframely",
    "pinterestbot",
    "vkshare",
    "mastodon",
)
PING_METHODS = ("GET", "HEAD", "POST")


@dataclass(frozen=True, slots=True)
class Ping:
    """One ping as received: the key of its URL, not yet looked up."""

    key: uuid.UUID
    failed: bool
    message: str
    at: datetime


def is_preview(method: str, user_agent: str) -> bool:
    if method == "HEAD":
        return True
    agent = user_agent.lower()
    return method == "GET" and any(bot in agent for bot in PREVIEW_AGENTS)


def message_of(body: bytes) -> str:
    """The first 10 KB of the body as text. NUL becomes U+FFFD:
    PostgreSQL text cannot hold it."""
    text = body[:MAX_MESSAGE_BYTES].decode("utf-8", errors="replace")
    return text.replace("\x00", "\ufffd").strip()
