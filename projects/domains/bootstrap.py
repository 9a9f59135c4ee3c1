"""Which RDAP service answers for a domain: the IANA bootstrap file.

RFC 9224 (https://www.rfc-editor.org/rfc/rfc9224): the file lists
services, each a list of DNS labels (TLDs, mostly) and the base URLs of
the service for them; the longest label that ends the domain wins, and
an https URL is preferred. IANA publishes it at
https://data.iana.org/rdap/dns.json; RDAP_BOOTSTRAP_URL may point
elsewhere (a mirror, or a test's server).
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from projects.domains.errors import LookupFailed


@dataclass(frozen=True, slots=True)
class Bootstrap:
    """{label: the service's base URL, ending in "/"}."""

    services: dict[str, str]

    def base_url(self, domain: str) -> str:
        """The base URL of the service for `domain`; raises LookupFailed
        when the file names none."""
        labels = domain.split(".")
        for start in range(1, len(labels)):
            suffix = ".".join(labels[start:])
            if suffix in self.services:
                return self.services[suffix]
        raise LookupFailed(
            f"no RDAP service for .{labels[-1]} in the IANA bootstrap file "
            "(its registry offers none)",
            permanent=True,
        )


def parse_bootstrap(document: object) -> Bootstrap:
    """The services of a bootstrap file already decoded from JSON; raises
    LookupFailed when it is not one."""
    services = document.get("services") if isinstance(document, dict) else None
    if not isinstance(services, list):
        raise LookupFailed(
            'the RDAP bootstrap file is not one: expected {"services": [...]}'
        )
    found: dict[str, str] = {}
    for entry in services:
        if not (isinstance(entry, list) and len(entry) >= 2):
            continue
        labels, urls = entry[0], entry[1]
        url = _preferred_url(urls if isinstance(urls, list) else [])
        if url is None or not isinstance(labels, list):
            continue
        for label in labels:
            if isinstance(label, str):
                found[label.lower().rstrip(".")] = url
    return Bootstrap(found)


def _preferred_url(urls: list) -> str | None:
    """The https URL if there is one (RFC 9224 section 3), as a base URL."""
    urls = [url for url in urls if isinstance(url, str) and "://" in url]
    if not urls:
        return None
    url = next((u for u in urls if urlsplit(u).scheme.lower() == "https"), urls[0])
    return url if url.endswith("/") else url + "/"
