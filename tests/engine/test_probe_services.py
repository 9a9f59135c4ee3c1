"""PostgreSQL, MySQL (MariaDB) and Redis checks against the real servers
of this machine, and against a server that accepts and never speaks:
each failure's reason as a person reads it."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from polling.engine.blocked import parse_networks
from polling.engine.probe import needs_side_pool, side_check
from polling.engine.types import Target, Task
from tests.support.silent_server import SilentServer
from tests.support.socket_servers import RecordingRedis

POSTGRES = "postgres://postgres@127.0.0.1:5432/postgres"
MARIADB = "mysql://root@127.0.0.1:3306/test"
REDIS = "redis://127.0.0.1:6379/0"


def check(url: str, *, timeout: float = 5, networks=(), trusted=False):
    target = Target(project_id=1, url=url, timeout_seconds=timeout, trusted=trusted)
    task = Task(target=target, due_at=datetime.now(UTC))
    return side_check(task, blocked_networks=parse_networks(networks))


@pytest.fixture
def silent():
    with SilentServer() as server:
        yield server


@pytest.mark.parametrize(
    "url",
    [
        POSTGRES,
        f"{POSTGRES}?query=SELECT%201&expect=1",
        MARIADB,
        f"{MARIADB}?query=SELECT%20'ok'&expect=ok",
        REDIS,
        f"{REDIS}?command=ECHO%20hello&expect=hello",
        "redis://127.0.0.1:6379",
    ],
)
def test_a_server_that_answers_is_up_with_connect_and_query_phases(url):
    outcome = check(url)

    assert outcome.error == ""
    assert outcome.up
    assert outcome.connect_ms is not None
    assert outcome.response_time_ms is not None
    assert (outcome.first_byte_ms is not None) is (
        "query" in url or "command" in url or url.startswith("redis")
    )


def test_the_server_says_who_it_is_in_the_polls_message():
    assert check(POSTGRES).message.startswith("PostgreSQL ")
    assert "MariaDB" in check(MARIADB).message
    assert check(REDIS).message == "PONG"


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        (
            f"{POSTGRES}?query=SELECT%202&expect=1",
            "expected “1”, got “2”",
        ),
        (f"{MARIADB}?query=SELECT%20NULL&expect=1", "expected “1”, got nothing"),
        (f"{REDIS}?command=ECHO%20hi&expect=ho", "expected “ho”, got “hi”"),
    ],
)
def test_an_answer_other_than_the_one_expected_is_down(url, reason):
    outcome = check(url)

    assert not outcome.up
    assert outcome.error == reason


def test_wrong_credentials_are_down_with_the_servers_reason():
    postgres = check("postgres://nobody:pw@127.0.0.1:5432/postgres")
    mariadb = check("mysql://root:wrong-pass@127.0.0.1:3306/test")
    redis = check("redis://nobody:wrong-pass@127.0.0.1:6379/0")

    assert postgres.error == 'PostgreSQL: role "nobody" does not exist'
    assert mariadb.error == (
        "MySQL: Access denied for user 'root'@'127.0.0.1' (using password: YES)"
    )
    assert redis.error == ("Redis: invalid username-password pair or user is disabled.")
    for outcome in (postgres, mariadb, redis):
        assert "wrong-pass" not in outcome.error
        assert not outcome.up


def test_a_query_the_server_refuses_is_down_with_its_reason():
    outcome = check(f"{POSTGRES}?query=SELECT%20nothing_here")

    assert outcome.error == (
        'PostgreSQL: column "nothing_here" does not exist LINE 1: SELECT nothing_here ^'
    )


@pytest.mark.parametrize("scheme", ["postgres", "mysql", "redis"])
def test_a_server_that_accepts_and_never_speaks_times_out(silent, scheme):
    outcome = check(f"{scheme}://user:pw@127.0.0.1:{silent.port}/0", timeout=1)

    assert not outcome.up
    assert outcome.error in ("timed out after 1 s",)


@pytest.mark.parametrize("scheme", ["postgres", "mysql", "redis"])
def test_a_closed_port_is_refused(scheme):
    outcome = check(f"{scheme}://127.0.0.1:1/0")

    assert outcome.error == "connection refused"


@pytest.mark.parametrize("scheme", ["postgres", "mysql", "redis"])
def test_an_untrusted_team_never_reaches_a_blocked_network(silent, scheme):
    url = f"{scheme}://127.0.0.1:{silent.port}/0"

    outcome = check(url, networks=["127.0.0.0/8"], timeout=1)

    assert outcome.error == "127.0.0.1 is in a blocked network (POLL_BLOCKED_NETWORKS)"
    assert silent.accepted == 0
    assert check(url, networks=["127.0.0.0/8"], timeout=1, trusted=True).error
    assert silent.accepted == 1


def test_a_name_that_does_not_resolve_says_so():
    outcome = check("redis://no-such-host.invalid:6379/0")

    assert outcome.error == "DNS lookup failed for no-such-host.invalid"


def test_only_the_driver_kinds_go_to_the_side_pool():
    def task(url: str) -> Task:
        return Task(target=Target(project_id=1, url=url), due_at=datetime.now(UTC))

    assert needs_side_pool(task(POSTGRES))
    assert needs_side_pool(task("rediss://cache.example.com/0"))
    assert not needs_side_pool(task("https://example.com/"))
    assert not needs_side_pool(task("tcp://127.0.0.1:5432"))


def test_a_redis_check_says_only_its_command():
    """No CLIENT SETINFO (redis-py's default on connect): two more round
    trips, and a failed call in the stats of a Redis before 7.2."""
    with RecordingRedis() as server:
        outcome = check(f"redis://127.0.0.1:{server.port}")

    assert (outcome.up, outcome.message) == (True, "PONG")
    assert bytes(server.received) == b"*1\r\n$4\r\nPING\r\n"
