"""The poller's log lines name projects by id: a project's URL may carry
credentials and tokens, and logs are read and kept by more people than
the project's settings are."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LOG_METHODS = {"debug", "info", "warning", "error", "exception", "critical", "log"}
# Names that hold a URL, or where a redirect pointed.
URL_WORDS = ("url", "location")


def log_arguments(path: Path):
    """(line, source) of every argument but a constant passed to
    logger.<method>(...)."""
    for node in ast.walk(ast.parse(path.read_text())):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in LOG_METHODS
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "logger"
        ):
            for argument in [*node.args, *(k.value for k in node.keywords)]:
                if not isinstance(argument, ast.Constant):
                    yield node.lineno, ast.unparse(argument)


def test_no_log_line_in_the_poller_is_given_a_url():
    offending = [
        f"{path.relative_to(ROOT)}:{line}: {source}"
        for path in sorted((ROOT / "polling").rglob("*.py"))
        for line, source in log_arguments(path)
        if any(word in source.lower() for word in URL_WORDS)
    ]

    assert offending == []
