"""Fields stored differently from how Python sees them: StatusField (a
poll's `up`/`down` in one byte) and BucketCodesField (an hourly
rollup's histogram as appendable text)."""

from __future__ import annotations

from collections import Counter

from django.db import models

UP, DOWN = "up", "down"


class StatusField(models.CharField):
    """`up` or `down` in Python (Status's values), a boolean in the table.

    A poll's row is written millions of times a day; stored as text the
    status takes 3 to 5 bytes and pushes the row past a PostgreSQL
    alignment step (docs/benchmarks/2026-11-24-storage-bytes-per-poll.md).
    The boolean takes one. Everything read through Django (filters,
    values(), the admin) sees `up` and `down`; raw SQL sees the boolean
    (true: up), and a writer that bypasses Django stores True or False.
    """

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("max_length", 4)
        super().__init__(*args, **kwargs)

    def db_type(self, connection) -> str:
        return "boolean" if connection.vendor == "postgresql" else "bool"

    def get_prep_value(self, value):
        value = super().get_prep_value(value)
        return None if value is None else value == UP

    def from_db_value(self, value, expression, connection):
        return None if value is None else (UP if value else DOWN)


# Two characters per bucket number, 64 to a character: buckets 0 to 4095
# (projects/latency/histogram.py numbers them; 1 hour is bucket 390).
_DIGITS = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-_"
BUCKET_CODES = tuple(a + b for a in _DIGITS for b in _DIGITS)
_BUCKET_OF_CODE = {code: str(k) for k, code in enumerate(BUCKET_CODES)}


class BucketCodesField(models.TextField):
    """A response-time histogram {"bucket": count} in Python, stored as
    text with two characters per response (BUCKET_CODES), in any order.

    The writer adds a batch to an hourly rollup by appending its codes
    (`stored || offered`): a text concatenation costs both databases a
    fraction of merging JSON objects, and the writer no more than a table
    look-up per poll (bench/bench_rollup_histograms.py). An hour holds at
    most 3600 / MIN_POLL_INTERVAL responses: 720 characters at 10 s, 120
    at 60 s. Everything read through Django (values(), bulk_update) sees
    and gives the dict, as the daily rollups' JSON histogram does."""

    def from_db_value(self, value, expression, connection):
        return decode_buckets(value)

    def to_python(self, value):
        return value if isinstance(value, dict) else decode_buckets(value)

    def get_prep_value(self, value):
        # Text is taken as codes already (the column's default, "").
        if value is None or isinstance(value, str):
            return value
        return encode_buckets(value)

    def value_to_string(self, obj) -> str:
        return encode_buckets(self.value_from_object(obj))


def encode_buckets(histogram: dict[str, int]) -> str:
    """A histogram's codes: each bucket's code once per count."""
    return "".join(BUCKET_CODES[int(k)] * count for k, count in histogram.items())


def decode_buckets(codes: str | None) -> dict[str, int]:
    """The histogram of some codes (None: empty)."""
    codes = codes or ""
    pairs = Counter(codes[start : start + 2] for start in range(0, len(codes), 2))
    return {_BUCKET_OF_CODE[code]: count for code, count in pairs.items()}
