"""Delivery settings, read at run time."""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings


@dataclass(frozen=True, slots=True)
class DeliveryConfig:
    digest_threshold: int = 5
    digest_seconds: int = 30
    timeout_seconds: float = 10
    concurrency: int = 8
    batch_size: int = 100

    @classmethod
    def from_settings(cls) -> DeliveryConfig:
        return cls(
            digest_threshold=settings.ALERT_DIGEST_THRESHOLD,
            digest_seconds=settings.ALERT_DIGEST_SECONDS,
            timeout_seconds=settings.ALERT_DELIVERY_TIMEOUT,
            concurrency=max(1, settings.ALERT_DELIVERY_CONCURRENCY),
        )

    @property
    def claim_seconds(self) -> float:
        """How long a claimed row stays out of others' reach: one send with
        room to spare (rows are claimed just before they are sent), after
        which a crashed run's rows are taken again."""
        return self.timeout_seconds * 2 + 30
