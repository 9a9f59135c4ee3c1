"""Pings of heartbeat projects: /ping/<key> and /ping/<key>/fail.

No login: the key is the secret (a random UUID, 122 bits). A ping is a
result like any poll: stored through the poller's own store, in one
transaction with the project's state, rollups, incidents and
notifications, and counted against PING_RATE_LIMIT in that transaction.

- rules.py: what a request means (a ping, or a link preview);
- answers.py: the verdicts, their statuses and Retry-After;
- writer.py: the group commit: one thread per web process stores the
  pings that came while it stored the last batch, in one transaction;
- waiting.py: how a request hands its ping over and waits for the verdict;
- batch.py: one batch: keys looked up in one query, stored in one go;
- limits.py: the rate limit, counted in the batch's transaction;
- asgi.py: the fast path the web process serves pings through;
- view.py: the same endpoint as a Django view (the URL conf's).
"""

from polling.pings.view import ping

__all__ = ["ping"]
