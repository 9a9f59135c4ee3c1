"""The status pages' Markdown renderer lives in projects.markdown, where
the e-mails to subscribers (which may not import a page) use it too."""

from __future__ import annotations

from projects.markdown import render_markdown

__all__ = ["render_markdown"]
