"""What counts as a ping, and how many a minute: link previews and HEAD
requests are not pings; the rate limit is counted in the database, the
same for every web worker, and unknown keys cannot touch it."""

from __future__ import annotations

import uuid
from collections import Counter

import pytest

from django.core.cache import cache
from django.urls import reverse
from django.utils import timezone

from polling.pings.limits import count_pings
from projects.models import PingCount, PollResult, Project

pytestmark = pytest.mark.django_db(transaction=True)

PREVIEW_AGENTS = [
    "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)",
    "Twitterbot/1.0",
    "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)",
    "Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)",
    "TelegramBot (like TwitterBot)",
    "WhatsApp/2.23.20.0",
    "LinkedInBot/1.0 (compatible; Mozilla/5.0; Apache-HttpClient +http://www.linkedin.com)",
    "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
    "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)",
    "Mozilla/5.0 (Macintosh) AppleWebKit/605.1.15 (KHTML, like Gecko) Applebot/0.1",
    "Mozilla/5.0 (Windows NT 10.0) SkypeUriPreview Preview/0.5",
]


@pytest.fixture
def heartbeat(make_project):
    return make_project(
        kind="heartbeat", url="", interval=1, interval_unit="hours", grace_seconds=300
    )


def ping_url(project: Project) -> str:
    return reverse("pings:ping", args=[project.ping_key])


@pytest.mark.parametrize("agent", PREVIEW_AGENTS)
def test_a_link_preview_is_answered_but_not_recorded(client, heartbeat, agent):
    response = client.get(ping_url(heartbeat), headers={"User-Agent": agent})

    assert response.status_code == 200
    assert PollResult.objects.count() == 0
    assert PingCount.objects.count() == 0


def test_a_head_request_is_answered_but_not_recorded(client, heartbeat):
    response = client.head(ping_url(heartbeat))

    assert response.status_code == 200
    assert PollResult.objects.count() == 0


def test_a_post_is_a_ping_whoever_sends_it(client, heartbeat):
    client.post(ping_url(heartbeat), headers={"User-Agent": "Slackbot 1.0"})

    assert PollResult.objects.filter(project=heartbeat).count() == 1


def test_curl_and_scripts_still_ping(client, heartbeat):
    for agent in ["curl/8.5.0", "Wget/1.21", "python-httpx/0.27.0", ""]:
        client.get(ping_url(heartbeat), headers={"User-Agent": agent})

    assert PollResult.objects.filter(project=heartbeat).count() == 4


def test_the_count_holds_for_a_worker_with_an_empty_cache(
    client, heartbeat, settings, one_minute
):
    settings.PING_RATE_LIMIT = 2
    answers = [client.get(ping_url(heartbeat)).status_code for _ in range(2)]
    cache.clear()  # what another web worker's own cache holds

    answers.append(client.get(ping_url(heartbeat)).status_code)

    assert answers == [200, 200, 429]


def test_unknown_keys_cannot_reset_a_projects_count(
    client, heartbeat, settings, one_minute
):
    settings.PING_RATE_LIMIT = 2
    for _ in range(2):
        client.get(ping_url(heartbeat))

    for _ in range(400):
        unknown = reverse("pings:ping", args=[uuid.uuid4()])
        assert client.get(unknown).status_code == 404

    assert client.get(ping_url(heartbeat)).status_code == 429
    assert PingCount.objects.count() == 1


def test_a_new_minute_starts_a_new_count_and_clears_the_old(heartbeat):
    minute = 29_000_000
    window, next_window = (heartbeat.pk, minute), (heartbeat.pk, minute + 1)

    first = [count_pings(Counter({window: n}))[window] for n in (1, 2)]
    second = count_pings(Counter({next_window: 3}))[next_window]

    assert (first, second) == ([1, 3], 3)
    assert list(PingCount.objects.values_list("minute", "count")) == [(minute + 1, 3)]


def test_one_batch_counts_a_projects_pings_in_order(heartbeat, settings):
    from polling.pings.batch import PingStore
    from polling.pings.rules import Ping

    settings.PING_RATE_LIMIT = 2
    now = timezone.now()  # one moment: three calls could straddle a minute
    pings = [Ping(heartbeat.ping_key, False, str(n), now) for n in range(3)]

    verdicts = PingStore().save(pings)

    assert [v.status for v in verdicts] == [200, 200, 429]
    assert sorted(PollResult.objects.values_list("error_message", flat=True)) == [
        "0",
        "1",
    ]


def test_no_limit_counts_nothing(client, heartbeat, settings):
    settings.PING_RATE_LIMIT = 0

    for _ in range(3):
        assert client.get(ping_url(heartbeat)).status_code == 200
    assert PingCount.objects.count() == 0
