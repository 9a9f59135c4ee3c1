from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from django.utils import timezone

from tests.support.rdap_server import RdapServer


@pytest.fixture
def now() -> datetime:
    """The runs' clock: a little after the wall clock, so that the rows a
    save makes (due at its own now) are due."""
    return timezone.now().replace(microsecond=0) + timedelta(minutes=1)


@pytest.fixture
def rdap(settings):
    """An RDAP service on 127.0.0.1 that the lookups use: its bootstrap
    file names it for every TLD it knows. Loopback is let through the
    blocked-networks guard, which still checks every connection."""
    settings.POLL_BLOCKED_NETWORKS = ["169.254.0.0/16"]
    with RdapServer() as server:
        settings.RDAP_BOOTSTRAP_URL = server.bootstrap_url
        yield server
