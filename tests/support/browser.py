"""Debian's headless Chromium (/usr/bin/chromium, which .ci/run installs)
through Playwright, launched one way for the browser tests and
bench/screenshots.py: never a browser Playwright downloads, and no
network of its own (no updates, no sync, no QUIC).

Playwright's event loop makes Django refuse ORM calls in its thread:
make the rows before opening a browser.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

CHROMIUM = Path("/usr/bin/chromium")
LAUNCH_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
MISSING = "needs Debian's chromium"


@contextmanager
def chromium_context(profile: Path | str, **options) -> Iterator:
    """A persistent browser context (its own profile folder, so nothing
    leaks between runs); `options` go to Playwright's
    launch_persistent_context (viewport, color_scheme ...)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            profile, executable_path=str(CHROMIUM), args=LAUNCH_ARGS, **options
        )
        try:
            yield context
        finally:
            context.close()


@contextmanager
def chromium_browser() -> Iterator:
    """A browser for tests that open several fresh contexts."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=LAUNCH_ARGS
        )
        try:
            yield browser
        finally:
            browser.close()
