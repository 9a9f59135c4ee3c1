"""The lookup run: keeps one DomainRegistration row per watched domain
and asks each domain's registry when it expires, when its row is due.

- A domain is asked about at most once a day for the whole install: an
  answer (a date, or "no such domain", "no date published") sets its next
  check a day later.
- A registry that is down, slow or answers garbage is asked again at the
  next run (the schedule is hourly), with the reason kept in `last_error`
  and the last date known kept as it was.
- Each row is claimed before its request (compare-and-set on
  next_check_at), so two runs never ask about one domain together; no
  transaction is open while a request is out.
- Within one run, a registry server that could not be reached is not tried
  again for its other domains: they fail with its reason at once, instead
  of each waiting out a timeout.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from urllib.parse import urlsplit

import httpx

from django.conf import settings

from projects.domains.answers import Registration, parse_domain
from projects.domains.bootstrap import Bootstrap, parse_bootstrap
from projects.domains.client import get_json, rdap_client
from projects.domains.errors import LookupFailed
from projects.models import DomainRegistration

logger = logging.getLogger(__name__)

RECHECK_AFTER = timedelta(days=1)
# Shorter than the schedule's hour, so the next run asks again.
RETRY_AFTER = timedelta(minutes=30)
# Longer than a run lasts (projects/domains/tasks.py): a row claimed by a
# run that died is asked about again after this.
CLAIM_FOR = timedelta(minutes=15)


@dataclass
class LookupRun:
    answered: int = 0
    failed: int = 0
    finished: bool = True  # False: stopped at the deadline with rows due

    def __str__(self) -> str:
        left = "" if self.finished else ", more due"
        return f"domains: {self.answered} looked up, {self.failed} failed{left}"


def keep_rows_for(domains: Iterable[str], now: datetime) -> None:
    """One row for each watched domain (a new one due at once), and none
    for a domain no project watches any more."""
    wanted = set(domains)
    existing = dict(DomainRegistration.objects.values_list("domain", "pk"))
    DomainRegistration.objects.bulk_create(
        [
            DomainRegistration(domain=domain, next_check_at=now)
            for domain in sorted(wanted - set(existing))
        ],
        ignore_conflicts=True,  # another run made it first
        batch_size=500,
    )
    unwatched = [pk for domain, pk in existing.items() if domain not in wanted]
    for start in range(0, len(unwatched), 500):
        DomainRegistration.objects.filter(
            pk__in=unwatched[start : start + 500]
        ).delete()


def look_up_due(
    *,
    now: datetime,
    deadline: float | None = None,
    client_factory: Callable[[], httpx.Client] = rdap_client,
) -> LookupRun:
    """Ask about every row due at `now`, soonest first, until `deadline`
    (a time.monotonic() value)."""
    run = LookupRun()
    due = list(
        DomainRegistration.objects.filter(next_check_at__lte=now)
        .order_by("next_check_at", "pk")
        .values_list("pk", "domain", "next_check_at")
    )
    if not due:
        return run
    with client_factory() as client:
        registry = Registry(client, settings.RDAP_BOOTSTRAP_URL)
        for pk, domain, due_at in due:
            if deadline is not None and time.monotonic() > deadline:
                run.finished = False
                break
            if claim(pk, due_at, now):
                _look_up(registry, pk, domain, now, run)
    return run


def claim(pk: int, due_at: datetime, now: datetime) -> bool:
    """Whether this run may ask about the row due at `due_at`: it moves the
    row's next check on by CLAIM_FOR, unless another run already did."""
    claimed = DomainRegistration.objects.filter(pk=pk, next_check_at=due_at)
    # 0 rows: another run got there first.
    return claimed.update(next_check_at=now + CLAIM_FOR) == 1


def _look_up(
    registry: Registry, pk: int, domain: str, now: datetime, run: LookupRun
) -> None:
    try:
        url, registration = registry.look_up(domain)
    except LookupFailed as failed:
        run.failed += 1
        logger.warning("RDAP lookup of %s failed: %s", domain, failed.reason)
        _store_failure(pk, failed, now)
    except Exception as error:
        # A bug must cost one domain, not the run.
        run.failed += 1
        logger.exception("RDAP lookup of %s failed", domain)
        _store_failure(pk, LookupFailed(f"unexpected error: {error!r}"), now)
    else:
        run.answered += 1
        _store(pk, url, registration, now)


def _store(pk: int, url: str, registration: Registration, now: datetime) -> None:
    DomainRegistration.objects.filter(pk=pk).update(
        expires_at=registration.expires_at,
        registrar=registration.registrar,
        status=registration.status,
        rdap_url=url,
        checked_at=now,
        attempted_at=now,
        last_error="",
        next_check_at=now + RECHECK_AFTER,
    )


def _store_failure(pk: int, failed: LookupFailed, now: datetime) -> None:
    """The reason, and when to ask again; the last date known stays."""
    DomainRegistration.objects.filter(pk=pk).update(
        attempted_at=now,
        last_error=failed.reason[:1000],
        next_check_at=now + (RECHECK_AFTER if failed.permanent else RETRY_AFTER),
    )


@dataclass
class Registry:
    """The registries as one run sees them: the bootstrap file read once,
    and the servers (host and port) that could not be reached."""

    client: httpx.Client
    bootstrap_url: str
    _bootstrap: Bootstrap | LookupFailed | None = None
    _unreachable: dict[str, LookupFailed] = field(default_factory=dict)

    def look_up(self, domain: str) -> tuple[str, Registration]:
        """(the URL asked, what it said); raises LookupFailed."""
        url = self.bootstrap().base_url(domain) + "domain/" + domain
        server = urlsplit(url).netloc
        if server in self._unreachable:
            raise self._unreachable[server]
        not_found = f"does not know {domain}: is it registered?"
        try:
            answer = get_json(self.client, url, not_found=not_found)
        except LookupFailed as failed:
            if failed.unreachable:
                self._unreachable[server] = failed
            raise
        return url, parse_domain(answer, domain)

    def bootstrap(self) -> Bootstrap:
        if self._bootstrap is None:
            self._bootstrap = self._read_bootstrap()
        if isinstance(self._bootstrap, LookupFailed):
            raise self._bootstrap
        return self._bootstrap

    def _read_bootstrap(self) -> Bootstrap | LookupFailed:
        try:
            document = get_json(
                self.client, self.bootstrap_url, not_found="has no such file"
            )
            return parse_bootstrap(document)
        except LookupFailed as failed:
            return LookupFailed(f"the RDAP bootstrap file: {failed.reason}")
