"""The log-bucket histogram: buckets, merging and percentiles within 4 %
of the exact nearest-rank values."""

from __future__ import annotations

import random

import pytest

from projects.latency import histogram
from projects.models.fields import decode_buckets, encode_buckets


def test_a_response_time_falls_in_the_bucket_that_holds_it():
    for ms in [1, 2, 3, 10, 99, 100, 101, 999, 1000, 60_000, 3_600_000]:
        key = int(histogram.bucket(ms))
        assert histogram.RATIO ** (key - 1) <= ms * (1 + 1e-12)
        assert ms < histogram.RATIO**key * (1 + 1e-12)


def test_zero_ms_has_a_bucket_of_its_own():
    assert histogram.bucket(0) == "0"
    assert histogram.percentile({"0": 3}, 50) == 0


def test_an_empty_histogram_has_no_percentiles():
    assert histogram.percentiles({}) == {
        "p50_ms": None,
        "p90_ms": None,
        "p95_ms": None,
        "p99_ms": None,
    }


@pytest.mark.parametrize("seed", range(20))
def test_percentiles_are_within_4_percent_of_the_exact_ones(seed):
    rng = random.Random(seed)
    times = [int(rng.lognormvariate(5, 1.2)) for _ in range(rng.randint(1, 3000))]

    counts = histogram.of(times)

    for p in histogram.SHOWN:
        exact = histogram.exact_percentile(times, p)
        assert histogram.percentile(counts, p) == pytest.approx(exact, rel=0.04)


def test_small_times_come_back_exactly():
    times = list(range(25))
    counts = histogram.of(times)
    for p in (4, 50, 90, 100):
        assert histogram.percentile(counts, p) == histogram.exact_percentile(times, p)


def test_merging_adds_the_counts_of_every_histogram():
    first, second = histogram.of([10, 10, 500]), histogram.of([10, 2000, None])

    total = histogram.merged([first, None, second])

    assert total == histogram.of([10, 10, 500, 10, 2000])
    assert sum(total.values()) == 5


def test_an_hours_codes_read_back_as_its_histogram():
    # Both sides of the look-up table's end (10 s), an hour, and 0 ms.
    times = [0, 1, 37, 150, 150, 9_999, 10_000, 10_001, 3_600_000]
    codes = "".join(histogram.code(ms) for ms in times)

    assert len(codes) == 2 * len(times)
    assert decode_buckets(codes) == histogram.of(times)
    assert decode_buckets(encode_buckets(histogram.of(times))) == histogram.of(times)
    assert decode_buckets("") == {}
