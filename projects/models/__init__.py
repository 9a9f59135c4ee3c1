"""The domain: projects, their polls and rollups, incidents and the
notifications about them."""

from projects.models.escalation import Escalation, EscalationStep
from projects.models.housekeeping import HousekeepingRun
from projects.models.incidents import Incident
from projects.models.maintenance import MaintenanceWindow
from projects.models.monitor import MonitorOutage, PollerNode, ShardLease
from projects.models.notifications import (
    DeliveryAttempt,
    Notification,
    NotificationChannel,
)
from projects.models.project import (
    DEFAULT_INTERVAL,
    DEFAULT_TIMEOUT_SECONDS,
    MAX_ERROR_MESSAGE_LENGTH,
    MAX_INTERVAL_SECONDS,
    MAX_TIMEOUT_SECONDS,
    Project,
    Status,
)
from projects.models.results import (
    MAX_MESSAGE_LENGTH,
    MAX_PHASE_MS,
    DailyRollup,
    HourlyRollup,
    PollResult,
    PollResultRow,
)

__all__ = [
    "DEFAULT_INTERVAL",
    "DEFAULT_TIMEOUT_SECONDS",
    "MAX_ERROR_MESSAGE_LENGTH",
    "MAX_INTERVAL_SECONDS",
    "MAX_MESSAGE_LENGTH",
    "MAX_PHASE_MS",
    "MAX_TIMEOUT_SECONDS",
    "DailyRollup",
    "DeliveryAttempt",
    "Escalation",
    "EscalationStep",
    "HourlyRollup",
    "HousekeepingRun",
    "Incident",
    "MaintenanceWindow",
    "MonitorOutage",
    "Notification",
    "NotificationChannel",
    "PollResult",
    "PollResultRow",
    "PollerNode",
    "Project",
    "ShardLease",
    "Status",
]
