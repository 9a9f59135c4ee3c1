"""What every kind of check declares (see projects/checks/kinds/)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import SplitResult

# What `up_rules` takes: a Project (this package must not import the models).
ProjectLike = object


@dataclass(frozen=True)
class CheckKind:
    name: str
    label: str
    schemes: tuple[str, ...]
    example: str
    sends_http: bool
    check_url: Callable[[SplitResult], None]
    up_rules: Callable[[ProjectLike], list[str]]
    # "A TCP check only opens a connection: {what}." (kinds without HTTP)
    unused_reason: str = ""
    # What its response time measures, for the project page and the docs.
    measures: str = "response time"
    # Schemes whose polls read the server's certificate, so its expiry is
    # watched (projects/incidents/certificates.py).
    tls_schemes: tuple[str, ...] = ()
    # The project's fields only this kind uses (beyond the request and
    # response fields of HTTP): set on a project of another kind, each
    # is a field error (combinations.py).
    options: tuple[str, ...] = ()
    # The port a URL without one means; None: the URL must name one.
    default_port: int | None = None
    # Whether its URL may leave the host out (dns:///name: the poller's
    # own resolver).
    host_optional: bool = False
    # Whether the password in its URL is write-only: shown masked, kept
    # when the mask comes back (projects/checks/credentials.py).
    secret_credentials: bool = False

    def reads_certificate(self, url: str) -> bool:
        return url.partition("://")[0].lower() in self.tls_schemes
