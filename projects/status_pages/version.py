"""A status page's version: one query whose answer changes whenever
anything the page shows changes, used as its cache key and ETag.

The poller's writer changes projects' states and opens and resolves
incidents with bulk SQL, which sends no signals, so the version reads the
rows themselves instead of waiting to be told: the page's and its
sections' updated_at, its projects (which, their names, which are down or
failing), its incidents (the newest, the newest resolution, how many),
their updates, and the maintenance windows. Uptime numbers drift with
every poll and are left to the cache's 30-second lifetime.
"""

from __future__ import annotations

import hashlib

from django.db.models import Count, F, IntegerField, Max, OuterRef, Q, Subquery, Sum
from django.db.models.functions import Coalesce

from projects.models import (
    Incident,
    MaintenanceWindow,
    Project,
    StatusPage,
    StatusPageSection,
    StatusUpdate,
)


def _scalar(queryset, **aggregate):
    """A one-value subquery: `aggregate` over `queryset`."""
    ((name, expression),) = aggregate.items()
    return Subquery(
        queryset.annotate(_one=Coalesce(F("pk") * 0, 0))
        .values("_one")
        .annotate(**{name: expression})
        .values(name)[:1]
    )


def page_version(page: StatusPage) -> str:
    sections = StatusPageSection.objects.filter(page=OuterRef("pk"))
    projects = Project.objects.filter(
        Q(status_sections__page=OuterRef("pk"))
        | Q(tags__status_sections__page=OuterRef("pk"))
    )
    project_ids = Project.objects.filter(
        Q(status_sections__page=page) | Q(tags__status_sections__page=page)
    ).values("id")
    incidents = Incident.objects.filter(project_id__in=project_ids)
    updates = StatusUpdate.objects.filter(incident__project_id__in=project_ids)
    down = Q(state=Project.State.DOWN)
    square = F("id") * F("id")
    values = (
        StatusPage.objects.filter(pk=page.pk)
        .annotate(
            v_sections=_scalar(sections, v=Max("updated_at")),
            v_section_count=_scalar(sections, v=Count("id")),
            v_projects=_scalar(projects, v=Sum(square)),
            v_project_count=_scalar(projects, v=Count("id")),
            v_renamed=_scalar(projects, v=Max("updated_at")),
            v_down=_scalar(projects, v=Sum(square, filter=down)),
            v_paused=_scalar(projects, v=Sum(square, filter=Q(enabled=False))),
            v_unpolled=_scalar(projects, v=Sum(square, filter=Q(state=""))),
            v_newest_incident=_scalar(incidents, v=Max("id")),
            v_incident_count=_scalar(incidents, v=Count("id")),
            v_resolved=_scalar(incidents, v=Max("resolved_at")),
            v_newest_update=_scalar(updates, v=Max("id")),
            v_update_count=_scalar(updates, v=Count("id")),
            v_windows=_scalar(MaintenanceWindow.objects.all(), v=Max("updated_at")),
            v_window_count=_scalar(
                MaintenanceWindow.objects.all(),
                v=Count("id", output_field=IntegerField()),
            ),
        )
        .values_list(
            "updated_at",
            "v_sections",
            "v_section_count",
            "v_projects",
            "v_project_count",
            "v_renamed",
            "v_down",
            "v_paused",
            "v_unpolled",
            "v_newest_incident",
            "v_incident_count",
            "v_resolved",
            "v_newest_update",
            "v_update_count",
            "v_windows",
            "v_window_count",
        )
        .first()
    )
    return hashlib.blake2b(repr(values).encode(), digest_size=12).hexdigest()
