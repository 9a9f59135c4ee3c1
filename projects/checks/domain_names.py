"""Which registered domain a project's target lives under.

A domain expiry warning (projects/domains/) watches the registration of
the domain its target's host name belongs to: a.b.example.co.uk is
registered as example.co.uk, which is what a registry's RDAP service
answers for. The public suffix list says where the registrable part
starts; publicsuffixlist ships a snapshot of it in its package, so this
never fetches anything (a release of the library is a newer list).

Only the list's ICANN section counts: a private suffix such as github.io
is a registered domain of its own at the .io registry, and that is the
registration that can lapse.

It lives here, beside the kinds, and not in projects/domains/, because
Project.clean() refuses a warning on a target that has no such domain,
and the models may import this package but not that one.
"""

from __future__ import annotations

import functools
from urllib.parse import unquote, urlsplit

from publicsuffixlist import PublicSuffixList

from projects.checks.blocked_targets import literal_address
from projects.checks.kinds import kind_of

# Reverse-lookup names (PTR checks) are delegated, never registered.
UNREGISTERED_SUFFIXES = ("arpa",)


@functools.cache
def _suffix_list() -> PublicSuffixList:
    # Parsing the bundled list takes tens of milliseconds: once a process.
    return PublicSuffixList(only_icann=True, accept_unknown=False)


def target_host(url: str) -> str:
    """The host name a URL's check is about, lower case, without the
    trailing dot; "" when it has none. A DNS check is about the name it
    asks for, not about its resolver."""
    kind = kind_of(url)
    if kind is None:
        return ""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
    except ValueError:
        return ""  # the URL validators say what is wrong
    if kind.name == "dns":
        host = unquote(parts.path.lstrip("/"))
    return host.strip().rstrip(".").lower()


def registrable_domain(host: str) -> str | None:
    """The domain a registry holds for `host` (a.b.example.co.uk ->
    example.co.uk), in its ASCII form; None for an address, a public
    suffix itself, or a name under no public suffix (corp.internal)."""
    ascii_host = _ascii(host)
    if not ascii_host or literal_address(host) is not None:
        return None
    if ascii_host.rpartition(".")[2] in UNREGISTERED_SUFFIXES:
        return None
    return _suffix_list().privatesuffix(ascii_host)


def domain_problem(host: str) -> str:
    """Why `host` has no registration to watch, in words; "" when it has."""
    if not host:
        return "this check has no host name"
    if literal_address(host) is not None:
        return f"{host} is an address, not a host name"
    ascii_host = _ascii(host)
    if registrable_domain(host) is not None:
        return ""
    if ascii_host.rpartition(".")[2] in UNREGISTERED_SUFFIXES:
        return f"{host} is a reverse-lookup name, which nobody registers"
    if ascii_host and _suffix_list().is_public(ascii_host):
        return f"{host} is a public suffix, which nobody registers"
    return f"{host} is under no public suffix, so no registry holds it"


def _ascii(host: str) -> str:
    """The name as registries spell it (IDNA, xn--), or "" when it cannot
    be spelled so."""
    try:
        return host.encode("idna").decode("ascii").lower()
    except UnicodeError:
        return ""
