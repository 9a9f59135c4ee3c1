"""A compact response-time histogram: fixed logarithmic buckets, each 4 %
wider than the one before, counted per bucket.

Every hourly and daily rollup keeps one (`RollupSums.histogram`), so the
percentiles of any range are read from rollups and never from raw polls.

- Bucket 0 holds 0 ms; bucket k >= 1 holds [RATIO**(k-1), RATIO**k) ms.
  A poll of 1 ms is in bucket 1, of 60 s in bucket 282.
- A bucket stands for its geometric middle, RATIO**(k-1) * sqrt(RATIO),
  which is within sqrt(1.04) - 1 = 1.98 % of anything in it; rounded to a
  whole millisecond that is within 4 % of the exact percentile (rounding
  adds at most 0.5 ms, which is 2 % from 25 ms up, and below 25 ms the
  middle is within 0.5 ms so rounding gives the exact value).
- A daily rollup stores it as a JSON object {"bucket": count}, keys as
  text: only the buckets that occurred, typically 5 to 40 a day for one
  project. An hourly rollup stores two characters per response
  (projects.models.fields.BucketCodesField), so the writer adds a batch
  to it by appending text (code()); Django reads both as the dict.

Merging two histograms adds their counts key by key (compaction sums an
hour's into its day).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

from projects.models.fields import BUCKET_CODES

RATIO = 1.04
_LOG_RATIO = math.log(RATIO)
# The percentiles the pages and the API show.
SHOWN = (50, 90, 95, 99)


def bucket(ms: int) -> str:
    """The key of the bucket holding a response time of `ms`."""
    if ms < 1:
        return "0"
    return str(1 + int(math.log(ms) / _LOG_RATIO))


# The codes of 0 to 10 s (most responses), looked up: the writer's cost
# per poll. Made in 5 ms at import.
_CODES = tuple(BUCKET_CODES[int(bucket(ms))] for ms in range(10_001))


def code(ms: int) -> str:
    """The stored code (BucketCodesField) of the bucket holding `ms`."""
    if ms < len(_CODES):
        return _CODES[ms]
    return BUCKET_CODES[min(int(bucket(ms)), len(BUCKET_CODES) - 1)]


def bucket_value(key: str) -> float:
    """The value a bucket stands for: its geometric middle (0 for 0 ms)."""
    k = int(key)
    return 0.0 if k == 0 else RATIO ** (k - 1) * math.sqrt(RATIO)


def of(times: Iterable[int | None]) -> dict[str, int]:
    """The histogram of some response times; None (no response) is left
    out."""
    counts: dict[str, int] = {}
    for ms in times:
        if ms is not None:
            key = bucket(ms)
            counts[key] = counts.get(key, 0) + 1
    return counts


def add(histogram: dict[str, int], other: Mapping[str, int] | None) -> None:
    """Add `other`'s counts to `histogram`, in place."""
    for key, count in (other or {}).items():
        histogram[key] = histogram.get(key, 0) + count


def merged(histograms: Iterable[Mapping[str, int] | None]) -> dict[str, int]:
    """One histogram with the counts of all of them."""
    total: dict[str, int] = {}
    for histogram in histograms:
        add(total, histogram)
    return total


def percentile(histogram: Mapping[str, int], p: float) -> int | None:
    """The p-th percentile (nearest rank: the value at rank ceil(p/100 n)
    of the n response times in order), in whole ms; None when empty."""
    n = sum(histogram.values())
    if n == 0:
        return None
    rank = max(1, math.ceil(p / 100 * n))
    seen = 0
    for key in sorted(histogram, key=int):
        seen += histogram[key]
        if seen >= rank:
            return round(bucket_value(key))
    raise AssertionError("unreachable: the ranks add up to n")


def percentiles(histogram: Mapping[str, int]) -> dict[str, int | None]:
    """{"p50_ms": …, "p90_ms": …, "p95_ms": …, "p99_ms": …}."""
    return {f"p{p}_ms": percentile(histogram, p) for p in SHOWN}


def exact_percentile(times: Iterable[int], p: float) -> int | None:
    """The nearest-rank percentile of raw response times, for tests and
    for the degraded rule's short windows."""
    ordered = sorted(times)
    if not ordered:
        return None
    return ordered[max(1, math.ceil(p / 100 * len(ordered))) - 1]
