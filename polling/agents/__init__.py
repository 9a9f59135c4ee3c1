"""Agents: the poller's engine with HTTPS instead of a database
(docs/agents.md).

Both ends of one small protocol live here, so that a change to it is
one change:

- the server's side, in the web process: `auth.py` (the agent's token),
  `assignments.py` (which projects an agent polls, and which agent of a
  region is the active one), `views.py` and `urls.py` (`/api/v1/agent/`);
- the agent's side, in `manage.py runagent`, which has no database:
  `client.py` (the calls), `source.py` (the projects, as the engine's
  TargetSource), `buffer.py` (results kept on disk until the server has
  them), `sender.py` (the thread that sends them), `run.py` (start to
  stop).

Targets and outcomes travel as JSON (polling/engine/wire.py).
"""
