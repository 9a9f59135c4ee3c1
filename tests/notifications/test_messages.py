"""Human-readable messages (e-mail, Apprise) from payloads."""

from __future__ import annotations

from projects.notifications.messages import (
    duration_text,
    incident_context,
    render,
    title,
)


def incident(**fields) -> dict:
    return {
        "id": 4,
        "started_at": "2026-11-22T10:00:00+00:00",
        "resolved_at": None,
        "duration_seconds": None,
        "first_error": "expected 200, got 503",
        "last_error": "timed out after 10 s",
        **fields,
    }


PROJECT = {"id": 1, "name": "shop", "url": "https://shop.example.com/health"}


def test_an_outage_message_names_the_project_and_its_errors():
    rendered = render(
        {
            "event": "incident.opened",
            "project": PROJECT,
            "incident": incident(),
            "links": {"acknowledge": "https://monitor.example.com/ack/xyz"},
        }
    )

    assert rendered.subject == "DOWN: shop"
    assert "URL: https://shop.example.com/health" in rendered.text
    assert "Down since: 2026-11-22 10:00:00 UTC" in rendered.text
    assert "First error: expected 200, got 503" in rendered.text
    assert "Last error: timed out after 10 s" in rendered.text
    assert "Acknowledge: https://monitor.example.com/ack/xyz" in rendered.text
    assert 'href="https://monitor.example.com/ack/xyz"' in rendered.html


def test_a_recovery_says_how_long_it_lasted():
    rendered = render(
        {
            "event": "incident.resolved",
            "project": PROJECT,
            "incident": incident(
                resolved_at="2026-11-22T10:12:30+00:00", duration_seconds=750
            ),
        }
    )

    assert rendered.subject == "UP again: shop"
    assert "Duration: 12 min" in rendered.text


def test_a_digest_lists_every_project():
    items = [
        {"project": {**PROJECT, "name": f"p{n}"}, "incident": incident()}
        for n in range(7)
    ]
    rendered = render(
        {
            "event": "digest",
            "digest": {"of": "incident.opened", "count": 7, "events": items},
        }
    )

    assert rendered.subject == "7 projects down"
    assert rendered.text.count("\n- p") == 7


def test_the_monitors_own_outage_shows_its_details():
    rendered = render(
        {
            "event": "monitor.unreachable",
            "outage": {
                "id": 2,
                "kind": "unreachable",
                "started_at": "2026-11-22T10:00:00+00:00",
                "ended_at": None,
                "duration_seconds": 90,
                "failing_projects": 40,
            },
        }
    )

    assert rendered.subject == "The monitor cannot reach most of its targets"
    assert "Duration: 1 min" in rendered.text
    assert "Failing projects: 40" in rendered.text


def test_user_text_is_escaped_in_html():
    rendered = render(
        {
            "event": "incident.opened",
            "project": {**PROJECT, "name": "<script>x</script>"},
            "incident": incident(),
        }
    )

    assert "<script>x</script>" not in rendered.html
    assert "&lt;script&gt;" in rendered.html


def test_durations_read_like_people_say_them():
    assert [
        duration_text(s) for s in (45, 600, 3 * 3600 + 300, 2 * 86400 + 4 * 3600)
    ] == [
        "45 s",
        "10 min",
        "3 h 5 min",
        "2 d 4 h",
    ]


def test_a_degraded_incident_is_titled_and_labelled_as_slow():
    payload = {
        "event": "incident.opened",
        "project": {"name": "shop"},
        "incident": {"kind": "degraded"},
    }

    assert title(payload) == "Degraded performance: shop"
    assert title({**payload, "event": "incident.resolved"}) == "Fast again: shop"
    assert incident_context({"kind": "degraded"})["since_label"] == "Slow since"
    assert incident_context({"kind": "downtime"})["since_label"] == "Down since"
