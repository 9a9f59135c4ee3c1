"""The one place a team-owned query is narrowed to a team.

Pages, the admin and the API never filter by team themselves: they ask
`for_team(queryset, team)` for the objects of the request's current team
(`current_team(request)`), and `role_of(user, team)` for what the user may
do there. A model owned through another (an incident through its project)
is listed in TEAM_PATHS; a model missing there raises, so a new team-owned
model cannot be listed unscoped by mistake.

A user with no membership has no current team and sees nothing; a
superuser may open every team, and sees one at a time like everyone else.
"""

from __future__ import annotations

from django.db.models import Model, QuerySet
from django.http import HttpRequest

from projects.models import (
    ApiKey,
    AuditEntry,
    DeliveryAttempt,
    FlowStep,
    HourlyRollup,
    Incident,
    Invitation,
    MaintenanceWindow,
    Membership,
    Notification,
    NotificationChannel,
    ObjectiveAlert,
    PollResultRow,
    Project,
    Role,
    ServiceLevelObjective,
    StatusPage,
    StatusPageSection,
    StatusUpdate,
    Subscriber,
    Tag,
    Team,
    TeamSecret,
)
from projects.models.teams import ROLE_RANK

SESSION_KEY = "current_team_id"

# How each team-owned model reaches its team.
TEAM_PATHS: dict[type[Model], str] = {
    Team: "pk",
    Membership: "team",
    Invitation: "team",
    Project: "team",
    Tag: "team",
    NotificationChannel: "team",
    MaintenanceWindow: "team",
    Incident: "project__team",
    FlowStep: "project__team",
    TeamSecret: "team",
    PollResultRow: "project__team",
    HourlyRollup: "project__team",
    Notification: "channel__team",
    DeliveryAttempt: "notification__channel__team",
    StatusPage: "team",
    AuditEntry: "team",
    StatusPageSection: "page__team",
    StatusUpdate: "incident__project__team",
    Subscriber: "page__team",
    ServiceLevelObjective: "team",
    ObjectiveAlert: "objective__team",
}


def register(model: type[Model], path: str) -> None:
    """For a team-owned model outside this module's imports (status pages,
    API keys): how it reaches its team."""
    TEAM_PATHS[model] = path


def for_team(queryset: QuerySet, team: Team | None) -> QuerySet:
    """The queryset's rows that belong to `team`; none for no team."""
    if team is None:
        return queryset.none()
    return queryset.filter(**{TEAM_PATHS[queryset.model]: team.pk})


def teams_of(user) -> QuerySet[Team]:
    """The teams `user` may open: every team for a superuser."""
    if not user.is_authenticated or not user.is_active:
        return Team.objects.none()
    if user.is_superuser:
        return Team.objects.all()
    return Team.objects.filter(memberships__user=user)


def role_of(user, team: Team | None) -> str | None:
    """The user's role in `team`: manager for a superuser, None for a
    stranger."""
    if team is None or not user.is_authenticated or not user.is_active:
        return None
    if user.is_superuser:
        return Role.MANAGER
    return (
        Membership.objects.filter(user=user, team=team)
        .values_list("role", flat=True)
        .first()
    )


def may(request: HttpRequest, role: str) -> bool:
    """Whether the request's user has at least `role` in the current team."""
    held = current_role(request)
    return held is not None and ROLE_RANK[held] >= ROLE_RANK[role]


def current_team(request: HttpRequest) -> Team | None:
    """The team the request works in: the one chosen in the session when
    the user may still open it, else the user's first team. Asked once per
    request."""
    if not hasattr(request, "_current_team"):
        request._current_team = _choose_team(request)
    return request._current_team


def current_role(request: HttpRequest) -> str | None:
    if not hasattr(request, "_current_role"):
        request._current_role = role_of(request.user, current_team(request))
    return request._current_role


def switch_team(request: HttpRequest, team_id: int) -> Team | None:
    """Make `team_id` the session's team, if the user may open it."""
    team = teams_of(request.user).filter(pk=team_id).first()
    if team is not None:
        request.session[SESSION_KEY] = team.pk
        request._current_team = team
        request.__dict__.pop("_current_role", None)
    return team


def _choose_team(request: HttpRequest) -> Team | None:
    teams = teams_of(request.user)
    chosen = request.session.get(SESSION_KEY) if hasattr(request, "session") else None
    if chosen is not None:
        team = teams.filter(pk=chosen).first()
        if team is not None:
            return team
    return teams.order_by("pk").first()


register(ApiKey, "team")  # a key sees only its team's objects (projects/api/)
