"""Error-budget arithmetic: each formula of docs/objectives.md."""

from __future__ import annotations

from datetime import timedelta

import pytest

from projects.objectives import budget
from projects.objectives.budget import Counts


def test_attainment_is_the_share_of_good_polls():
    assert budget.attainment_percent(Counts(good=999, total=1000)) == 99.9
    assert budget.attainment_percent(Counts()) is None


def test_the_budget_left_is_what_the_bad_polls_have_not_spent():
    # 99 % of 1,000 polls: 10 may be bad; 4 were.
    assert budget.budget_remaining_percent(Counts(996, 1000), 99) == pytest.approx(60)
    assert budget.budget_remaining_percent(Counts(980, 1000), 99) == pytest.approx(-100)
    assert budget.budget_remaining_percent(Counts(), 99) == 100


def test_a_burn_rate_of_one_spends_the_budget_over_the_window():
    assert budget.burn_rate(Counts(99, 100), 99) == pytest.approx(1)
    assert budget.burn_rate(Counts(0, 100), 99.9) == pytest.approx(1000)
    assert budget.burn_rate(Counts(), 99.9) is None


def test_the_budget_in_minutes_of_full_outage():
    assert budget.budget_minutes(99.9, timedelta(days=30)) == pytest.approx(43.2)


def test_the_forecast_divides_what_is_left_by_the_rate():
    window = timedelta(days=30)
    assert budget.time_left(50, 2, window) == timedelta(days=7.5)
    assert budget.time_left(50, 0, window) is None
    assert budget.time_left(-5, 2, window) == timedelta(0)
