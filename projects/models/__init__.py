"""The domain: projects, their polls and rollups, incidents and the
notifications about them."""

from projects.models.account_mail import AccountEmail
from projects.models.agents import Agent
from projects.models.api_keys import ApiKey
from projects.models.audit import AuditEntry
from projects.models.domains import DomainRegistration
from projects.models.escalation import Escalation, EscalationStep
from projects.models.flows import FlowStep, TeamSecret
from projects.models.housekeeping import HousekeepingRun
from projects.models.incidents import Incident
from projects.models.invitations import Invitation
from projects.models.maintenance import MaintenanceWindow
from projects.models.notifications import (
    DeliveryAttempt,
    Notification,
    NotificationChannel,
)
from projects.models.objectives import ObjectiveAlert, ServiceLevelObjective
from projects.models.ping_counts import PingCount
from projects.models.pollers import MonitorOutage, PollerNode, ShardLease
from projects.models.project import (
    DEFAULT_INTERVAL,
    DEFAULT_TIMEOUT_SECONDS,
    MAX_ERROR_MESSAGE_LENGTH,
    MAX_INTERVAL_SECONDS,
    MAX_TIMEOUT_SECONDS,
    Project,
    Status,
)
from projects.models.regions import (
    DEFAULT_REGION_ID,
    ProjectRegionState,
    Region,
)
from projects.models.reports import MonthlyReport
from projects.models.results import (
    MAX_MESSAGE_LENGTH,
    MAX_PHASE_MS,
    DailyRollup,
    HourlyRollup,
    PollResult,
    PollResultRow,
)
from projects.models.status_pages import (
    AnnouncementCursor,
    StatusPage,
    StatusPageSection,
    StatusUpdate,
    Subscriber,
)
from projects.models.tags import Tag
from projects.models.teams import Membership, Role, Team

__all__ = [
    "DEFAULT_INTERVAL",
    "DEFAULT_REGION_ID",
    "DEFAULT_TIMEOUT_SECONDS",
    "MAX_ERROR_MESSAGE_LENGTH",
    "MAX_INTERVAL_SECONDS",
    "MAX_MESSAGE_LENGTH",
    "MAX_PHASE_MS",
    "MAX_TIMEOUT_SECONDS",
    "AccountEmail",
    "Agent",
    "AnnouncementCursor",
    "ApiKey",
    "AuditEntry",
    "DailyRollup",
    "DeliveryAttempt",
    "DomainRegistration",
    "Escalation",
    "EscalationStep",
    "FlowStep",
    "HourlyRollup",
    "HousekeepingRun",
    "Incident",
    "Invitation",
    "MaintenanceWindow",
    "Membership",
    "MonitorOutage",
    "MonthlyReport",
    "Notification",
    "NotificationChannel",
    "ObjectiveAlert",
    "PingCount",
    "PollResult",
    "PollResultRow",
    "PollerNode",
    "Project",
    "ProjectRegionState",
    "Region",
    "Role",
    "ServiceLevelObjective",
    "ShardLease",
    "Status",
    "StatusPage",
    "StatusPageSection",
    "StatusUpdate",
    "Subscriber",
    "Tag",
    "Team",
    "TeamSecret",
]
