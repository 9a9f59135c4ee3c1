"""The kinds of check a project's URL chooses by its scheme: one registry.

Every kind is a module of this package with the same shape (http.py,
tcp.py): a CheckKind named KIND, which says

- the URL schemes it serves, its label and an example URL;
- `check_url(parts)`: raises ValidationError when the URL does not fit the
  kind (the messages the admin, the API and the YAML import all show);
- whether it sends an HTTP request (`sends_http`): a kind that does not
  refuses the request and response fields (method, headers, body, status,
  keyword, JSON) with `unused_reason`;
- `up_rules(project)`: what "up" means for it, in words.

Its probe is the module of the same name in polling/engine/probes/, served
for the same schemes. To add a kind, write both modules and list this one
in KIND_MODULES. Heartbeat projects are a Project.Kind of their own: they
have no URL, so no scheme chooses them. Flows are one too (flow.py, with
the same shape, outside KIND_MODULES): each of their steps has an http(s)
URL, the project none; their probe is chosen by the steps a target carries.
"""

from __future__ import annotations

from projects.checks.kinds import (
    dns,
    grpc,
    http,
    icmp,
    mail,
    mysql,
    postgres,
    redis,
    ssh,
    tcp,
    udp,
    websocket,
)
from projects.checks.kinds.kind import CheckKind

KIND_MODULES = (
    http,
    tcp,
    ssh,
    udp,
    dns,
    icmp,
    postgres,
    mysql,
    redis,
    grpc,
    mail,
    websocket,
)
KINDS: tuple[CheckKind, ...] = tuple(module.KIND for module in KIND_MODULES)
BY_SCHEME: dict[str, CheckKind] = {
    scheme: kind for kind in KINDS for scheme in kind.schemes
}


# Every field some kind uses as its own (CheckKind.options).
KIND_OPTIONS: tuple[str, ...] = tuple(
    dict.fromkeys(name for kind in KINDS for name in kind.options)
)


def kinds_using(name: str) -> list[CheckKind]:
    return [kind for kind in KINDS if name in kind.options]


def kind_of(url: str) -> CheckKind | None:
    """The kind the URL's scheme chooses; None when no kind serves it."""
    scheme, sep, _ = url.partition("://")
    return BY_SCHEME.get(scheme.lower()) if sep else None


def scheme_list() -> str:
    """The schemes a URL may start with, for messages: "http://, https://
    and tcp://"."""
    spelled = [f"{scheme}://" for scheme in BY_SCHEME]
    return ", ".join(spelled[:-1]) + " and " + spelled[-1]
