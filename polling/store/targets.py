"""Loading targets: the enabled projects a poller polls, read from the
database as frozen Targets (all of them in chunks, the changed ones, or a
few by id)."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator
from datetime import datetime
from urllib.parse import urlsplit

from django.core.exceptions import ValidationError
from django.db.models import Exists, OuterRef, Q, QuerySet, Subquery

from polling.engine.pacing import no_pause
from polling.engine.types import (
    OK_STATUS,
    HeaderAssertion,
    JsonAssertion,
    Keyword,
    Step,
    Target,
)
from polling.store.connections import close_connection
from projects.checks.expectations import parse_expected_value, parse_status_codes
from projects.checks.kinds.dns import normalized_answers, record_type
from projects.checks.kinds.flow import placeholders
from projects.models import (
    DEFAULT_REGION_ID,
    FlowStep,
    PollResult,
    Project,
    ProjectRegionState,
    TeamSecret,
)

# Projects read per round trip when loading them all, and between pauses.
LOAD_CHUNK = 2000
TARGET_FIELDS = [
    "id",
    "url",
    "method",
    "headers",
    "body",
    "expected_status",
    "interval",
    "interval_unit",
    "timeout_seconds",
    "follow_redirects",
    "verify_tls",
    "allow_insecure_redirects",
    "max_response_time_ms",
    "keyword",
    "keyword_mode",
    "keyword_case_sensitive",
    "json_query",
    "json_operator",
    "json_expected",
    "header_assertions",
    "udp_payload",
    "udp_payload_hex",
    "expected_reply",
    "expected_reply_mode",
    "dns_expected_rcode",
    "dns_expected_answers",
    "dns_answer_match",
    "dns_require_dnssec",
    "ping_count",
    "ping_max_loss_percent",
    "kind",
    "grace_seconds",
    "ping_deadline",
    "failure_threshold",
    "recovery_threshold",
    "last_polled_at",
    # Whether the project's team may reach POLL_BLOCKED_NETWORKS. Changing
    # it reaches a running poller at its next full reload.
    "team__trusted",
    # Flows: whose secrets their steps read.
    "team_id",
]
NO_STEPS = "a flow needs at least one step: add one"


class Flows:
    """The steps (as engine Steps) and team secrets of some flows, read in
    two queries for a chunk of targets."""

    def __init__(self, projects: Collection[Project | _ProjectRow]) -> None:
        flows = [p for p in projects if p.kind == Project.Kind.FLOW]
        self.steps: dict[int, list[FlowStep]] = {p.pk: [] for p in flows}
        self.secrets: dict[tuple[int, str], str] = {}
        if not flows:
            return
        for step in FlowStep.objects.filter(project_id__in=list(self.steps)):
            self.steps[step.project_id].append(step)
        for steps in self.steps.values():
            steps.sort(key=lambda step: (step.position, step.pk))
        teams = {p.team_id for p in flows}
        rows = TeamSecret.objects.filter(team_id__in=teams)
        for team_id, name, value in rows.values_list("team_id", "name", "value"):
            self.secrets[team_id, name] = value

    def fields(self, project: Project | _ProjectRow) -> dict:
        """A flow's Target fields: steps and secrets, or why it cannot run."""
        rows = self.steps.get(project.pk, [])
        if not rows:
            return {"problem": NO_STEPS}
        try:
            steps = tuple(_step(row) for row in rows)
        except (ValueError, TypeError, KeyError, AttributeError) as error:
            # Saved around the rules: every poll says why.
            return {"problem": f"invalid step: {error}"}
        names = {
            name
            for row in rows
            for text in (row.url, row.body, *row.headers.values())
            for is_secret, name in placeholders(text)
            if is_secret
        }
        secrets = tuple(
            (name, self.secrets[project.team_id, name])
            for name in sorted(names)
            if (project.team_id, name) in self.secrets
        )
        return {"steps": steps, "secrets": secrets}


def _step(row: FlowStep) -> Step:
    expect = row.expect
    keyword = None
    if expect.get("keyword"):
        keyword = Keyword(
            expect["keyword"],
            present=expect.get("keyword_mode", "contains") == "contains",
            case_sensitive=bool(expect.get("keyword_case_sensitive", False)),
        )
    return Step(
        name=row.name,
        url=row.url,
        method=row.method,
        headers=tuple(sorted(row.headers.items())),
        body=row.body,
        expected_status=parse_status_codes(str(expect.get("status", "200"))),
        keyword=keyword,
        json_assertions=tuple(
            JsonAssertion(r["query"], r.get("operator", "=="), r.get("expected"))
            for r in expect.get("json", [])
        ),
        header_rules=tuple(sorted(expect.get("headers", {}).items())),
        max_response_time_ms=expect.get("max_response_time_ms"),
        captures=tuple(row.capture.items()),
    )


def target_from_project(
    project: Project | _ProjectRow, flows: Flows | None = None
) -> Target:
    """The project's Target; `flows` holds its steps when it is a flow
    (read now when not given)."""
    try:
        expected_status, problem = parse_status_codes(project.expected_status), ""
    except ValueError as error:
        # Saved around the admin's validation: every poll says why.
        expected_status, problem = OK_STATUS, f"invalid expected status: {error}"
    try:
        assertions = _header_assertions(project)
    except (AttributeError, KeyError, TypeError):
        assertions, problem = (), problem or "invalid header assertions"
    try:
        payload = _payload(project)
    except ValueError:
        payload, problem = b"", problem or "invalid UDP payload: not hex digits"
    try:
        dns_answers = _dns_answers(project)
    except ValueError as error:
        dns_answers, problem = (), problem or f"invalid expected answers: {error}"
    flow_fields = _flow_fields(project, flows, problem)
    problem = flow_fields.pop("problem", problem)
    return Target(
        project_id=project.pk,
        url=project.url,
        method=project.method,
        headers=tuple(sorted(project.headers.items())),
        body=project.body,
        expected_status=expected_status,
        interval_seconds=project.interval_seconds,
        timeout_seconds=project.timeout_seconds,
        follow_redirects=project.follow_redirects,
        allow_insecure_redirects=project.allow_insecure_redirects,
        verify_tls=project.verify_tls,
        max_response_time_ms=project.max_response_time_ms,
        keyword=_keyword(project),
        json_assertion=_json_assertion(project),
        header_assertions=assertions,
        payload=payload,
        expected_reply=project.expected_reply,
        expected_reply_regex=project.expected_reply_mode == Project.ReplyMode.REGEX,
        dns_rcode=project.dns_expected_rcode,
        dns_answers=dns_answers,
        dns_match=project.dns_answer_match,
        dns_dnssec=project.dns_require_dnssec,
        ping_count=project.ping_count,
        ping_max_loss_percent=project.ping_max_loss_percent,
        problem=problem,
        failure_threshold=project.failure_threshold,
        recovery_threshold=project.recovery_threshold,
        last_window=project.last_polled_at,
        trusted=_trusted(project),
        **_heartbeat_fields(project),
        **flow_fields,
    )


def _flow_fields(
    project: Project | _ProjectRow, flows: Flows | None, problem: str
) -> dict:
    if project.kind != Project.Kind.FLOW:
        return {}
    fields = (flows or Flows([project])).fields(project)
    if problem:  # the project's own problem comes first
        fields["problem"] = problem
    return fields


def _trusted(project: Project | _ProjectRow) -> bool:
    if isinstance(project, Project):
        return project.team.trusted
    return project.team__trusted


def _heartbeat_fields(project: Project) -> dict:
    if not project.is_heartbeat:
        return {}
    return {
        "heartbeat": True,
        "grace_seconds": project.grace_seconds,
        "ping_deadline": project.ping_deadline,
    }


def _keyword(project: Project) -> Keyword | None:
    if not project.keyword:
        return None
    return Keyword(
        project.keyword,
        present=project.keyword_mode == Project.KeywordMode.CONTAINS,
        case_sensitive=project.keyword_case_sensitive,
    )


def _json_assertion(project: Project) -> JsonAssertion | None:
    if not project.json_query:
        return None
    return JsonAssertion(
        project.json_query,
        project.json_operator,
        parse_expected_value(project.json_expected),
    )


def _dns_answers(project: Project) -> tuple[str, ...]:
    """The expected answers as the probe compares them; raises ValueError."""
    if not project.dns_expected_answers:
        return ()
    try:
        rdtype = record_type(urlsplit(project.url))
    except ValidationError as error:
        raise ValueError(error.messages[0]) from None
    return normalized_answers(rdtype, project.dns_expected_answers)


def _payload(project: Project) -> bytes:
    if project.udp_payload_hex:
        return bytes.fromhex(project.udp_payload)
    return project.udp_payload.encode()


def _header_assertions(project: Project) -> tuple[HeaderAssertion, ...]:
    return tuple(
        HeaderAssertion(item["name"], item["operator"], item.get("value", ""))
        for item in project.header_assertions or ()
    )


class _ProjectRow:
    """One project's TARGET_FIELDS as attributes, and the Project methods
    target_from_project() reads: building model instances was half the
    time of loading 300,000 projects, on every reload."""

    __slots__ = TARGET_FIELDS
    Kind = Project.Kind
    ReplyMode = Project.ReplyMode
    interval_seconds = Project.interval_seconds
    is_heartbeat = Project.is_heartbeat

    def __init__(self, row: tuple) -> None:
        for name, value in zip(TARGET_FIELDS, row, strict=True):
            setattr(self, name, value)

    @property
    def pk(self) -> int:
        return self.id


def polled_in(region_id: int | None) -> Q:
    """The projects a region polls: those given no regions, and those given
    it (docs/regions.md). Any region, for None."""
    if region_id is None:
        return Q()
    given = Project.regions.through.objects.filter(project=OuterRef("pk"))
    return ~Exists(given) | Exists(given.filter(region=region_id))


def _region_last_window(region_id: int) -> Subquery:
    """The region's latest poll of the project: at or after its view's
    last_polled_at, which a settled view writes only now and then
    (projects/incidents/region_rows.py)."""
    written = ProjectRegionState.objects.filter(
        project=OuterRef(OuterRef("pk")), region_id=region_id
    ).values("last_polled_at")[:1]
    return Subquery(
        PollResult.objects.filter(
            project=OuterRef("pk"),
            region_id=region_id,
            polled_at__gte=Subquery(written),
        )
        .order_by("-polled_at")
        .values("polled_at")[:1]
    )


def iter_targets(
    pause: Callable[[], None] = no_pause,
    *,
    where: Q | None = None,
    region_id: int | None = None,
) -> Iterator[Target]:
    """Every enabled project (matching `where`, if given; polled in
    `region_id`, if given), as targets, made as they are read: a caller
    that keeps only some lets the others go young (engine/collector.py).
    `pause` is called after every LOAD_CHUNK."""
    rows = _target_rows(where, region_id)
    chunk = []
    for row in rows.iterator(chunk_size=LOAD_CHUNK):
        chunk.append(_ProjectRow(row))
        if len(chunk) == LOAD_CHUNK:
            yield from _targets(chunk)
            chunk = []
            pause()
    yield from _targets(chunk)


def _targets(rows: list[_ProjectRow]) -> Iterator[Target]:
    """The rows' targets, the flows' steps read for all of them at once."""
    flows = Flows(rows)
    for row in rows:
        yield target_from_project(row, flows)


def _target_rows(where: Q | None, region_id: int | None) -> QuerySet:
    projects = Project.objects.filter(polled_in(region_id), enabled=True)
    if where is not None:
        projects = projects.filter(where)
    fields = TARGET_FIELDS
    if region_id not in (None, DEFAULT_REGION_ID):
        # A region continues from its own last window, not another
        # region's: its polls keep their phase (docs/regions.md).
        projects = projects.annotate(region_last_window=_region_last_window(region_id))
        fields = [
            "region_last_window" if f == "last_polled_at" else f for f in TARGET_FIELDS
        ]
    return projects.values_list(*fields)


def load_changes(
    since: datetime,
    known: Callable[[int], bool],
    pause: Callable[[], None] = no_pause,
    region_id: int | None = None,
) -> tuple[list[int], list[Target]]:
    """The ids of every enabled project, and the targets of those saved
    since `since`, of those `known` does not know, and of every heartbeat
    project (its ping deadline moves without a save). Reading ids costs a
    fiftieth of reading targets: at 300,000 projects, 0.1 s of CPU against
    6 s."""
    ids = list(
        Project.objects.filter(polled_in(region_id), enabled=True)
        .values_list("pk", flat=True)
        .iterator(chunk_size=LOAD_CHUNK * 10)
    )
    changed = Q(updated_at__gte=since) | Q(kind=Project.Kind.HEARTBEAT)
    targets = list(iter_targets(pause, where=changed, region_id=region_id))
    loaded = {target.project_id for target in targets}
    unknown = [pid for pid in ids if pid not in loaded and not known(pid)]
    for first in range(0, len(unknown), LOAD_CHUNK):
        chunk = unknown[first : first + LOAD_CHUNK]
        targets += iter_targets(pause, where=Q(pk__in=chunk), region_id=region_id)
    return ids, targets


def load_targets(
    project_ids: Collection[int], region_id: int | None = None
) -> list[Target]:
    """Those of these projects that are enabled (and polled in
    `region_id`), as targets, in one plain query: iter_targets' server-side
    cursor (for reading every project in chunks) costs PostgreSQL three
    round trips, which a few projects saved do not need."""
    rows = _target_rows(Q(pk__in=list(project_ids)), region_id)
    return list(_targets([_ProjectRow(row) for row in rows]))


class DatabaseTargetSource:
    """The enabled projects, read from the database for the Coordinator:
    those polled in `region_id`, when given."""

    _region_id: int | None = None  # any region

    def __init__(self, *, region_id: int | None = None) -> None:
        self._region_id = region_id

    def load_all(self, pause: Callable[[], None] = no_pause) -> Iterator[Target]:
        return iter_targets(pause, region_id=self._region_id)

    def load_changes(
        self,
        since: datetime,
        known: Callable[[int], bool],
        pause: Callable[[], None] = no_pause,
    ) -> tuple[list[int], list[Target]]:
        return load_changes(since, known, pause, self._region_id)

    def load_some(self, project_ids: Collection[int]) -> list[Target]:
        return load_targets(project_ids, self._region_id)

    def close(self) -> None:
        close_connection()
