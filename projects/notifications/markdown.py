"""Markdown for status updates (on the page, in the feed and in e-mails to
subscribers), rendered safely: CommonMark with raw HTML off, so
`<script>` shows as text, and markdown-it's link check, so a javascript:
link is not a link."""

from __future__ import annotations

from markdown_it import MarkdownIt

from django.utils.safestring import SafeString, mark_safe

_renderer = MarkdownIt("commonmark", {"html": False}).disable("image")


def render_markdown(text: str) -> SafeString:
    # Images are off too: a picture from another site would make every
    # visitor's browser ask that site for it. Safe because raw HTML is off:
    # the renderer escapes every tag the text holds.
    return mark_safe(_renderer.render(text))
