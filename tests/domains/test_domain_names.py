"""Which registered domain a project's target is under: the public
suffix list's ICANN section, from the snapshot the library ships."""

from __future__ import annotations

import pytest

from projects.checks.domain_names import (
    domain_problem,
    registrable_domain,
    target_host,
)


@pytest.mark.parametrize(
    ("host", "domain"),
    [
        ("a.b.example.co.uk", "example.co.uk"),
        ("example.co.uk", "example.co.uk"),
        ("WWW.Example.COM", "example.com"),
        ("shop.example.com.", "example.com"),
        # A private suffix is a registration of its own at the registry.
        ("someone.github.io", "github.io"),
        ("a.b.c.d.kawasaki.jp", "c.d.kawasaki.jp"),
        # Registries answer for the ASCII (IDNA) form.
        ("www.bücher.de", "xn--bcher-kva.de"),
    ],
)
def test_the_registered_domain_of_a_host(host, domain):
    assert registrable_domain(target_host(f"https://{host}/")) == domain


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("https://192.0.2.10/", "192.0.2.10 is an address, not a host name"),
        ("icmp://[2001:db8::1]", "2001:db8::1 is an address, not a host name"),
        ("https://co.uk/", "co.uk is a public suffix, which nobody registers"),
        (
            "tcp://db.corp.internal:5432",
            "db.corp.internal is under no public suffix, so no registry holds it",
        ),
        (
            "dns:///10.2.0.192.in-addr.arpa?type=PTR",
            "10.2.0.192.in-addr.arpa is a reverse-lookup name, which nobody registers",
        ),
    ],
)
def test_a_target_without_a_registered_domain_says_why(url, problem):
    host = target_host(url)

    assert registrable_domain(host) is None
    assert domain_problem(host) == problem


@pytest.mark.parametrize(
    ("url", "host"),
    [
        ("https://user:pw@www.example.com:8443/x?y=1", "www.example.com"),
        ("tcp://mail.example.org:25", "mail.example.org"),
        ("icmp://router.example.net", "router.example.net"),
        ("smtp://mail.example.org:587", "mail.example.org"),
        ("postgres://u:p@db.example.org/app", "db.example.org"),
        # A DNS check is about the name it asks for, not its resolver.
        ("dns://1.1.1.1/www.example.com?type=A", "www.example.com"),
        ("dns:///example.com.?type=MX", "example.com"),
        ("gopher://example.com/", ""),
    ],
)
def test_the_host_a_check_is_about(url, host):
    assert target_host(url) == host
