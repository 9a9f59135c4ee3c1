"""The dashboard's template filters and tags."""

from __future__ import annotations

from datetime import timedelta

import pytest

from django.template import Context, Template
from django.test import RequestFactory

from projects.dashboard.queries.uptime import Uptime
from projects.dashboard.templatetags.dashboard import (
    chip_text_color,
    duration,
    percent,
    state_label,
    tag_chip,
    uptime_class,
)
from projects.models import Tag


@pytest.mark.parametrize(
    ("uptime", "shown"),
    [
        (Uptime(10, 0), "100%"),
        (Uptime(100_000, 1), "99.99%"),  # 99.999: never rounded up to 100
        (Uptime(4, 1), "75.00%"),
        (Uptime(3, 3), "0.00%"),
        (Uptime(0, 0), "\N{EN DASH}"),
    ],
)
def test_percent(uptime, shown):
    assert percent(uptime) == shown


@pytest.mark.parametrize(
    ("uptime", "css_class"),
    [
        (Uptime(1000, 1), "uptime-good"),
        (Uptime(1000, 5), "uptime-fair"),
        (Uptime(1000, 20), "uptime-poor"),
        (Uptime(0, 0), "uptime-none"),
    ],
)
def test_uptime_class(uptime, css_class):
    assert uptime_class(uptime) == css_class


@pytest.mark.parametrize(
    ("delta", "shown"),
    [
        (timedelta(0), "0 s"),
        (timedelta(seconds=45), "45 s"),
        (timedelta(minutes=3, seconds=5), "3 min 5 s"),
        (timedelta(hours=3, minutes=5, seconds=9), "3 h 5 min"),
        (timedelta(days=2, hours=4, minutes=1), "2 d 4 h"),
        (timedelta(days=1, minutes=1), "1 d 1 min"),
    ],
)
def test_duration(delta, shown):
    assert duration(delta) == shown


def test_state_label():
    assert state_label("waiting") == "Waiting"


def test_query_changes_one_parameter_and_keeps_the_rest():
    request = RequestFactory().get("/", {"q": "api", "page": "3", "state": "down"})
    template = Template("{% load dashboard %}{% query page=4 state='' %}")

    assert template.render(Context({"request": request})) == "?q=api&amp;page=4"


@pytest.mark.parametrize(
    ("background", "text"),
    [
        ("#ffffff", "#000"),
        ("#ffeb3b", "#000"),  # yellow
        ("#6b7280", "#fff"),  # the default grey
        ("#1f77b4", "#fff"),
        ("#000000", "#fff"),
        ("#00ff00", "#000"),  # bright green is light though saturated
    ],
)
def test_chip_text_is_black_or_white_by_luminance(background, text):
    assert chip_text_color(background) == text


@pytest.mark.django_db  # a new tag asks for the install's first team
def test_a_chip_never_puts_an_unchecked_colour_into_its_style():
    tag = Tag(name="web", color='red;background:url("x")')

    assert 'style="background:#6b7280;color:#fff"' in tag_chip(tag)
