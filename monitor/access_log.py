"""The web process's access log without the static files it served: in a
trial they were 604 of its 920 lines (an admin page pulls a dozen), and
each says nothing a page view's own line does not. A static file that
fails (404) is still logged."""

from __future__ import annotations

import logging

from django.conf import settings


def quiet_static_files() -> None:
    logging.getLogger("uvicorn.access").addFilter(not_a_static_file)


def not_a_static_file(record: logging.LogRecord) -> bool:
    # uvicorn's arguments: client, method, path, HTTP version, status.
    args = record.args
    if not isinstance(args, tuple) or len(args) != 5:
        return True
    path, status = str(args[2]), int(args[4])
    static = path.startswith(settings.STATIC_URL) or path == "/favicon.ico"
    return not (static and status < 400)
