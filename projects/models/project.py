from __future__ import annotations

import secrets
import uuid
from datetime import datetime, timedelta

from django.apps import apps
from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models, transaction
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone

from projects.checks.blocked_targets import blocked_url_problem
from projects.checks.combinations import (
    coerce_field_values,
    combination_errors,
    normalized_status_codes,
)
from projects.checks.credentials import masked_url
from projects.checks.kinds import kind_of
from projects.checks.kinds.flow import KIND as FLOW
from projects.checks.kinds.flow import secret_names
from projects.checks.kinds.kind import CheckKind
from projects.checks.units import SECONDS_PER_UNIT
from projects.checks.validators import (
    validate_header_assertions,
    validate_headers,
    validate_http_url,
    validate_json_query,
    validate_status_codes,
)
from projects.models.deletion import LockedDelete, ProjectQuerySet
from projects.models.teams import NamedInTeam, Team, team_field

DEFAULT_INTERVAL = 5
DEFAULT_TIMEOUT_SECONDS = 10
MAX_INTERVAL_SECONDS = 24 * 60 * 60
MAX_TIMEOUT_SECONDS = 120
MAX_ERROR_MESSAGE_LENGTH = 1000
DEFAULT_FAILURE_THRESHOLD = 3
DEFAULT_RECOVERY_THRESHOLD = 1
MAX_THRESHOLD = 10
MAX_KEYWORD_LENGTH = 500
DEFAULT_GRACE_SECONDS = 60
DEFAULT_TLS_EXPIRY_WARNING_DAYS = 14
MAX_TLS_EXPIRY_WARNING_DAYS = 365
MAX_DOMAIN_EXPIRY_WARNING_DAYS = 365
DEFAULT_PING_COUNT = 3
MAX_PING_COUNT = 10
DEFAULT_PING_MAX_LOSS_PERCENT = 66


def new_badge_key() -> str:
    """The secret part of a project's badge URLs: 128 random bits."""
    return secrets.token_urlsafe(16)


class Status(models.TextChoices):
    UP = "up", "Up"
    DOWN = "down", "Down"


class Project(LockedDelete, NamedInTeam):
    class Kind(models.TextChoices):
        POLL = "poll", "Polled: the monitor checks a URL"
        HEARTBEAT = "heartbeat", "Heartbeat: a job pings the monitor"
        FLOW = "flow", "Flow: several requests in order, values passed along"

    class State(models.TextChoices):
        """Whether the project is down, as its thresholds decide; blank
        until its first poll."""

        UP = "up", "Up"
        PENDING = "pending", "Pending"  # failing, not yet confirmed
        DOWN = "down", "Down"  # confirmed: an incident is open

    class Method(models.TextChoices):
        GET = "GET", "GET"
        HEAD = "HEAD", "HEAD"
        POST = "POST", "POST"
        PUT = "PUT", "PUT"
        PATCH = "PATCH", "PATCH"
        DELETE = "DELETE", "DELETE"
        OPTIONS = "OPTIONS", "OPTIONS"

    class KeywordMode(models.TextChoices):
        CONTAINS = "contains", "must contain"
        NOT_CONTAINS = "not_contains", "must not contain"

    class JsonOperator(models.TextChoices):
        EQUALS = "==", "=="
        NOT_EQUALS = "!=", "!="
        LESS = "<", "<"
        GREATER = ">", ">"
        CONTAINS = "contains", "contains"

    class ReplyMode(models.TextChoices):
        CONTAINS = "contains", "contains"
        REGEX = "regex", "matches the regular expression"

    class ResponseCode(models.TextChoices):
        NOERROR = "NOERROR", "NOERROR"
        NXDOMAIN = "NXDOMAIN", "NXDOMAIN (no such name)"
        SERVFAIL = "SERVFAIL", "SERVFAIL"
        REFUSED = "REFUSED", "REFUSED"

    class AnswerMatch(models.TextChoices):
        ANY = "any", "any of them"
        ALL = "all", "all of them"
        EXACTLY = "exactly", "exactly these"

    class IntervalUnit(models.TextChoices):
        SECONDS = "seconds", "seconds"
        MINUTES = "minutes", "minutes"
        HOURS = "hours", "hours"

    # Deletes lock the projects first: projects/models/deletion.py.
    objects = ProjectQuerySet.as_manager()

    team = team_field()
    name = models.CharField(max_length=200)
    kind = models.CharField(
        max_length=9,
        choices=Kind,
        default=Kind.POLL,
        help_text="A heartbeat project is not polled: a cron job or a backup "
        "calls its ping URL, and it is down when no ping comes within its "
        "interval plus the grace period, or when a ping reports a failure.",
    )
    url = models.CharField(
        "URL",
        max_length=2000,
        blank=True,
        validators=[validate_http_url],
        help_text="The http:// or https:// address to poll; or tcp://host:port "
        "(a TCP port), ssh://host[:port] (an SSH banner), udp://host:port (a "
        "UDP reply), dns://[resolver]/name?type=A (a DNS answer) or "
        "icmp://host (a ping).",
    )
    method = models.CharField(max_length=7, choices=Method, default=Method.GET)
    headers = models.JSONField(
        default=dict,
        blank=True,
        help_text='Request headers as a JSON object, e.g. {"Accept": "text/html"}.',
    )
    body = models.TextField(blank=True, help_text="Optional request body.")
    follow_redirects = models.BooleanField(
        default=True,
        help_text="Follow up to 5 redirects. Off: a 3xx answer is the final "
        "status, checked against the expected status codes.",
    )
    allow_insecure_redirects = models.BooleanField(
        default=False,
        help_text="Follow a redirect from https to plain http. Off: such a "
        "redirect fails the poll. A redirect to another site never carries "
        "the request's headers or body.",
    )
    verify_tls = models.BooleanField(
        "verify TLS certificate",
        default=True,
        help_text="Off accepts any certificate, self-signed, expired or for "
        "another name. Only for a server you trust on a network you control: "
        "anyone between the monitor and the server could answer in its place.",
    )
    expected_status = models.CharField(
        "expected status codes",
        max_length=200,
        default="200",
        validators=[validate_status_codes],
        help_text="A code, a range or a list: 200, 200-299 or 200-299, 301, 418. "
        "A poll is up when the final response's status is one of them.",
    )
    keyword = models.CharField(
        max_length=MAX_KEYWORD_LENGTH,
        blank=True,
        help_text="Text to look for in the first 1 MiB of the response body.",
    )
    keyword_mode = models.CharField(
        max_length=12,
        choices=KeywordMode,
        default=KeywordMode.CONTAINS,
        help_text="Whether the body must contain the keyword or must not "
        "(a forbidden word such as Error).",
    )
    keyword_case_sensitive = models.BooleanField(
        default=False, help_text="Off: Welcome also matches WELCOME."
    )
    json_query = models.CharField(
        "JSON query",
        max_length=500,
        blank=True,
        validators=[validate_json_query],
        help_text="A JMESPath query into the JSON body, e.g. status or "
        "checks.database.ok. A body that is not JSON, or a query that finds "
        "nothing, is down.",
    )
    json_operator = models.CharField(
        "JSON comparison",
        max_length=8,
        choices=JsonOperator,
        default=JsonOperator.EQUALS,
    )
    json_expected = models.CharField(
        "JSON expected value",
        max_length=500,
        blank=True,
        # HTML, as every help_text: the admin prints it unescaped.
        help_text='Compared with what the query finds: ok, "ok", 200, true or '
        "null. &lt; and &gt; compare numbers; contains looks in a text or a list.",
    )
    header_assertions = models.JSONField(
        default=list,
        blank=True,
        validators=[validate_header_assertions],
        help_text="Response headers the final response must have, as a JSON "
        'list: [{"name": "Cache-Control", "operator": "contains", "value": '
        '"no-store"}]. Operators: exists, absent, ==, contains, regex. Names '
        "compare without case; the first that fails is the poll's reason.",
    )
    # UDP and SSH checks (docs/checks.md).
    udp_payload = models.TextField(
        "UDP payload",
        blank=True,
        help_text="What a UDP check sends: text, or hex digits with “payload "
        "is hex” on (e.g. a DNS or NTP request).",
    )
    udp_payload_hex = models.BooleanField(
        "payload is hex",
        default=False,
        help_text="Read the payload as hex digits (spaces allowed): 1b 00 00 00.",
    )
    expected_reply = models.CharField(
        max_length=500,
        blank=True,
        help_text="UDP: text the reply must contain; SSH: text the server's "
        "banner must contain (e.g. OpenSSH_9). Empty: any reply is up.",
    )
    expected_reply_mode = models.CharField(
        max_length=8, choices=ReplyMode, default=ReplyMode.CONTAINS
    )
    # Ping checks (docs/checks.md).
    ping_count = models.PositiveSmallIntegerField(
        default=DEFAULT_PING_COUNT,
        validators=[MinValueValidator(1), MaxValueValidator(MAX_PING_COUNT)],
        help_text="Echo requests a poll sends, spread over at most half the "
        "timeout (one a second at most).",
    )
    ping_max_loss_percent = models.PositiveSmallIntegerField(
        "most loss that is up (%)",
        default=DEFAULT_PING_MAX_LOSS_PERCENT,
        validators=[MaxValueValidator(100)],
        help_text="A poll losing more of its pings is down; one that gets no "
        "reply at all always is.",
    )
    # DNS checks (docs/checks.md).
    dns_expected_rcode = models.CharField(
        "expected response code",
        max_length=8,
        choices=ResponseCode,
        default=ResponseCode.NOERROR,
    )
    dns_expected_answers = models.TextField(
        "expected answers",
        blank=True,
        help_text="One answer a line, as the record reads: 192.0.2.10, "
        "10 mail.example.com, v=spf1 -all. Empty: any answer of the type.",
    )
    dns_answer_match = models.CharField(
        "answers must hold",
        max_length=7,
        choices=AnswerMatch,
        default=AnswerMatch.ANY,
    )
    dns_require_dnssec = models.BooleanField(
        "require DNSSEC",
        default=False,
        help_text="Down unless the resolver says it validated the answer "
        "(its AD flag): use a validating resolver you trust.",
    )
    tls_expiry_warning_days = models.PositiveSmallIntegerField(
        "warn of certificate expiry (days)",
        default=DEFAULT_TLS_EXPIRY_WARNING_DAYS,
        validators=[MaxValueValidator(MAX_TLS_EXPIRY_WARNING_DAYS)],
        help_text="Open a certificate incident, once per certificate, when the "
        "server's certificate expires within this many days; it closes when a "
        "renewed certificate is seen. 0 turns the warning off.",
    )
    domain_expiry_warning_days = models.PositiveSmallIntegerField(
        "warn of domain expiry (days)",
        null=True,
        blank=True,
        validators=[
            MinValueValidator(1),
            MaxValueValidator(MAX_DOMAIN_EXPIRY_WARNING_DAYS),
        ],
        help_text="Open a domain incident when the registration of the domain "
        "its host name is under (example.co.uk for www.example.co.uk) expires "
        "within this many days, as its registry's RDAP service says (asked "
        "once a day); it closes when the registry shows a later date. Empty "
        "turns the warning off.",
    )
    max_response_time_ms = models.PositiveIntegerField(
        "slow after (ms)",
        null=True,
        blank=True,
        validators=[MinValueValidator(1)],
        help_text="A poll slower than this is down (slow: 2,350 ms > 1,000 ms). "
        "Empty: only the timeout counts.",
    )
    interval = models.PositiveIntegerField(
        default=DEFAULT_INTERVAL, validators=[MinValueValidator(1)]
    )
    interval_unit = models.CharField(
        max_length=7, choices=IntervalUnit, default=IntervalUnit.MINUTES
    )
    grace_seconds = models.PositiveIntegerField(
        "grace (seconds)",
        default=DEFAULT_GRACE_SECONDS,
        validators=[MaxValueValidator(MAX_INTERVAL_SECONDS)],
        help_text="Heartbeat projects: how late a ping may come before the "
        "project is down.",
    )
    timeout_seconds = models.PositiveSmallIntegerField(
        "timeout (seconds)",
        default=DEFAULT_TIMEOUT_SECONDS,
        validators=[MinValueValidator(1), MaxValueValidator(MAX_TIMEOUT_SECONDS)],
    )
    enabled = models.BooleanField(default=True)
    failure_threshold = models.PositiveSmallIntegerField(
        default=DEFAULT_FAILURE_THRESHOLD,
        validators=[MinValueValidator(1), MaxValueValidator(MAX_THRESHOLD)],
        help_text="Consecutive failed polls that confirm an outage.",
    )
    recovery_threshold = models.PositiveSmallIntegerField(
        default=DEFAULT_RECOVERY_THRESHOLD,
        validators=[MinValueValidator(1), MaxValueValidator(MAX_THRESHOLD)],
        help_text="Consecutive successful polls that end an outage.",
    )
    degraded_after_ms = models.PositiveIntegerField(
        "degraded after (ms)",
        null=True,
        blank=True,
        validators=[MinValueValidator(1)],
        help_text="Up but slow: degraded when each of its last polls (as many "
        "as the failure threshold) took longer than this; empty: never.",
    )
    channels = models.ManyToManyField(
        "projects.NotificationChannel",
        blank=True,
        related_name="projects",
        help_text="Where this project's incidents are sent.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    # Regions (docs/regions.md): which poll it (none: every region with
    # live pollers), and how many of them must confirm a failure (none: a
    # majority of those that count).
    regions = models.ManyToManyField(
        "projects.Region",
        blank=True,
        related_name="projects",
        help_text="Regions that poll it; none: every region with live pollers.",
    )
    quorum = models.PositiveSmallIntegerField(
        null=True,
        blank=True,
        validators=[MinValueValidator(1)],
        help_text="How many of its polling regions must confirm a failure "
        "before it is down; empty: a majority.",
    )

    # Current state, kept up to date by the poller's result writer so list
    # pages never aggregate PollResult rows per project.
    last_polled_at = models.DateTimeField(null=True, blank=True, editable=False)
    last_status = models.CharField(
        max_length=4, choices=Status, blank=True, editable=False
    )
    last_status_code = models.PositiveSmallIntegerField(
        null=True, blank=True, editable=False
    )
    last_response_time_ms = models.PositiveIntegerField(
        null=True, blank=True, editable=False
    )
    consecutive_failures = models.PositiveIntegerField(default=0, editable=False)
    # Heartbeat projects: the secret part of the ping URL, and when the next
    # ping is due at the latest (kept by the writer: a ping moves it to its
    # time + interval + grace, a missed one moves it on by an interval).
    tags = models.ManyToManyField("projects.Tag", blank=True, related_name="projects")
    # Badges (/badge/<key>/...) show the project without a login; a new
    # key, made in the admin, retires the old URLs.
    badge_key = models.CharField(
        max_length=32, unique=True, default=new_badge_key, editable=False
    )
    ping_key = models.UUIDField(unique=True, null=True, blank=True, editable=False)
    ping_deadline = models.DateTimeField(null=True, blank=True, editable=False)
    # The incident state machine's memory (projects/incidents/machine.py),
    # kept by the writer in the transaction that stores the polls.
    state = models.CharField(max_length=7, choices=State, blank=True, editable=False)
    consecutive_successes = models.PositiveIntegerField(default=0, editable=False)
    # The degraded rule's memory (projects/incidents/degradation.py), kept
    # by the writer: consecutive slow and fast polls, and since when the
    # project is degraded (null: it is not).
    slow_streak = models.PositiveIntegerField(default=0, editable=False)
    fast_streak = models.PositiveIntegerField(default=0, editable=False)
    degraded_since = models.DateTimeField(null=True, blank=True, editable=False)
    failing_since = models.DateTimeField(
        null=True,
        blank=True,
        editable=False,
        help_text="The first failed poll of the current failing streak.",
    )
    # The writer keeps the last one seen: a poll that fails before TLS
    # leaves it as it was.
    tls_expires_at = models.DateTimeField(
        "certificate expires",
        null=True,
        blank=True,
        editable=False,
        help_text="When the server's TLS certificate expires, as the latest "
        "https poll saw it.",
    )
    # Kept by the tasks process (projects/domains/), from the install's
    # cache of registrations: a copy here lets every page, the API and the
    # badges read it as they read tls_expires_at, with no lookup.
    domain_expires_at = models.DateTimeField(
        "domain registration expires",
        null=True,
        blank=True,
        editable=False,
        help_text="When the registration of the domain its host name is under "
        "expires, as its registry said at the last lookup (domain expiry "
        "warning on).",
    )

    class Meta:
        ordering = ["name"]
        indexes = [
            # The reachability check counts the failing projects in most
            # batches where one starts or stops failing: through this
            # index, the count reads those few rows, not every project.
            models.Index(
                fields=["id"],
                condition=Q(failing_since__isnull=False),
                name="project_failing",
            ),
            # An agent's sync, every second, reads the projects saved since
            # its last (polling/agents/assignments.py): through this index
            # a few rows, not every project (300,000: a quarter-second).
            models.Index(fields=["updated_at"], name="project_updated_at"),
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["team", "name"], name="project_name_per_team"
            )
        ]

    def __str__(self) -> str:
        return self.name

    # Not a field: True on a project ProjectForm is saving with the channels
    # chosen on it, to which the default channels are then not attached
    # (projects/notifications/receivers.py).
    channels_chosen = False
    # Not a field: the steps (as projects/checks/kinds/flow.py spells them)
    # a ProjectForm validated through the API or a YAML import, which
    # save() puts in place of the stored ones. None: the steps stay.
    steps_to_save: list[dict] | None = None

    def save(self, *args, **kwargs) -> None:
        if self.is_heartbeat:
            if self.ping_key is None:
                self.ping_key = uuid.uuid4()
            if self.ping_deadline is None:
                self.restart_heartbeat(timezone.now())
        if self.tls_expires_at and not self.reads_certificate:
            # A certificate this project's polls no longer meet. (Its open
            # certificate incident is resolved on post_save, by
            # projects.incidents.certificates.resolve_when_https_left.)
            self.tls_expires_at = None
        if self.domain_expiry_warning_days is None:
            # Watched no more. (Its open domain incident is resolved on
            # post_save, by projects.domains.receivers.)
            self.domain_expires_at = None
        super().save(*args, **kwargs)
        if self.steps_to_save is not None:
            self._replace_steps(self.steps_to_save)
            self.steps_to_save = None

    def _replace_steps(self, steps: list[dict]) -> None:
        step_model = self.flow_steps.model
        with transaction.atomic():
            self.flow_steps.all().delete()
            step_model.objects.bulk_create(
                step_model(project=self, position=number, **step)
                for number, step in enumerate(steps, start=1)
            )
        # A list read before (prefetched) is stale now.
        getattr(self, "_prefetched_objects_cache", {}).pop("flow_steps", None)

    @property
    def steps(self) -> list[dict]:
        """Its steps, as the API shows them (step_dicts)."""
        return self.step_dicts()

    def step_dicts(self) -> list[dict]:
        """Its steps as the API and the YAML file write them: those about
        to be saved, else the stored ones (prefetched, when they were)."""
        if self.steps_to_save is not None:
            return self.steps_to_save
        if self.pk is None or not self.is_flow:
            return []
        return [step.as_dict() for step in self.flow_steps.all()]

    def step_problems(self, steps: list[dict]) -> list[str]:
        """Problems of these steps that need the database: a URL in a
        blocked network, a secret the team does not have."""
        problems = [
            f"step {number} '{step['name']}': url: {problem}"
            for number, step in enumerate(steps, start=1)
            if (problem := self._blocked_url_problem(step["url"]))
        ]
        wanted = secret_names(steps)
        if wanted:
            # By name: projects/models/flows.py imports this module.
            TeamSecret = apps.get_model("projects", "TeamSecret")
            have = set(
                TeamSecret.objects.filter(
                    team_id=self.team_id, name__in=wanted
                ).values_list("name", flat=True)
            )
            problems += [
                f"No team secret is named {name}: add it under Team secrets first."
                for name in sorted(wanted - have)
            ]
        return problems

    def get_absolute_url(self) -> str:
        return reverse("dashboard:project", args=[self.pk])

    def _blocked_url_problem(self, url: str | None = None) -> str:
        """Only for a URL in a blocked network: a trusted team asks nothing."""
        url = self.url if url is None else url
        problem = blocked_url_problem(url) if url else ""
        if not problem:
            return ""
        trusted = Team.objects.filter(pk=self.team_id, trusted=True).exists()
        return "" if trusted else problem

    def clean(self) -> None:
        super().clean()
        if not coerce_field_values(self):
            return  # the failed field's own error says what is wrong
        self.expected_status = normalized_status_codes(self.expected_status)
        errors = {}
        try:
            # Not a field validator: those skip "empty" values such as [].
            validate_headers(self.headers)
        except ValidationError as error:
            errors["headers"] = error
        if self.interval and self.interval_unit in self.IntervalUnit.values:
            seconds = self.interval_seconds
            minimum = settings.MIN_POLL_INTERVAL
            if seconds < minimum:
                errors["interval"] = (
                    f"The interval must be at least {minimum} seconds "
                    f"(this is {seconds} s)."
                )
            elif seconds > MAX_INTERVAL_SECONDS:
                errors["interval"] = "The interval can be at most 24 hours."
            elif self.timeout_seconds and self.timeout_seconds > seconds:
                errors["timeout_seconds"] = (
                    f"The timeout cannot be longer than the interval ({seconds} s)."
                )
        for name, message in combination_errors(self).items():
            errors.setdefault(name, message)
        if "url" not in errors and (problem := self._blocked_url_problem()):
            errors["url"] = problem
        if problems := self.step_problems(self.steps_to_save or []):
            errors["steps"] = problems
        if errors:
            raise ValidationError(errors)

    @property
    def check_kind(self) -> CheckKind | None:
        """The kind of check its URL's scheme chooses; None for a heartbeat
        project, which has no URL."""
        if self.is_flow:
            return FLOW
        return None if self.is_heartbeat else kind_of(self.url)

    @property
    def reads_certificate(self) -> bool:
        """Whether its polls read the server's certificate (https://)."""
        kind = self.check_kind
        return kind is not None and kind.reads_certificate(self.url)

    @property
    def shown_url(self) -> str:
        """The URL to show: a service check's password masked."""
        return masked_url(self.url)

    @property
    def is_tcp(self) -> bool:
        kind = self.check_kind
        return kind is not None and kind.name == "tcp"

    @property
    def is_heartbeat(self) -> bool:
        return self.kind == self.Kind.HEARTBEAT

    @property
    def is_flow(self) -> bool:
        return self.kind == self.Kind.FLOW

    def restart_heartbeat(self, now: datetime) -> None:
        """Expect the next ping within interval + grace from `now`: on
        creation, and when the schedule changes or the project is resumed."""
        self.ping_deadline = now + timedelta(
            seconds=self.interval_seconds + self.grace_seconds
        )

    @property
    def interval_seconds(self) -> int:
        return self.interval * SECONDS_PER_UNIT[self.interval_unit]

    @property
    def interval_display(self) -> str:
        """The interval as people say it: "every 5 min", "every 30 s"."""
        short_unit = {"seconds": "s", "minutes": "min", "hours": "h"}
        return f"every {self.interval} {short_unit[self.interval_unit]}"
