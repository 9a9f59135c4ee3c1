"""Making an import's changes: everything in one transaction, through the
forms' and models' save(), so a running poller hears of each project as
it does after an admin save (polling/receivers.py, after the commit).
Projects disabled by --prune go the way of the admin's bulk action: one
update and one projects_bulk_changed, which reloads the poller once
rather than calling it per project.
"""

from __future__ import annotations

from django.db import transaction

from projects.as_code.plan import Plan, plan_import
from projects.as_code.schema import SECTIONS
from projects.as_code.validation import CheckedEntry
from projects.models import Project, Team
from projects.signals import projects_bulk_changed
from projects.teams.audit import Actor, record, snapshot

MODELS = {section.key: section.model for section in SECTIONS}


IMPORTER = Actor("importprojects", via="import")


def import_projects(
    text: str,
    *,
    prune: bool = False,
    team: Team | None = None,
    actor: Actor = IMPORTER,
) -> Plan:
    """Plan and apply `text` in one transaction, into `team` (the install's
    first team when None), recording each change in the audit log as
    `actor`'s; raises InvalidFile, having changed nothing, when any entry
    is invalid."""
    with transaction.atomic():
        plan = plan_import(text, prune=prune, team=team)
        apply_plan(plan, actor=actor)
    return plan


def apply_plan(plan: Plan, *, actor: Actor = IMPORTER) -> None:
    # Creations come first, so every name a change refers to exists; each
    # list is in section order (tags and channels before projects, projects
    # before the windows that name them).
    with transaction.atomic():
        for entry in plan.creates + plan.changes:
            _save(entry, actor)
        _disable(plan.disables, actor)


def _save(entry: CheckedEntry, actor: Actor) -> None:
    section, is_new = entry.section, entry.old is None
    before = snapshot(entry.form.instance)  # read before the form changes it
    instance = entry.form.save(commit=False)  # ProjectForm restarts heartbeats
    changed_fields = is_new or any(
        entry.old[name] != entry.new[name]
        for name in section.fields
        if name not in section.references
    )
    for name, target in section.named.items():
        # The stored row in place of a stand-in (validation.NameField):
        # what it names exists by now.
        wanted = entry.references[name]
        setattr(
            instance,
            name,
            None
            if wanted is None
            else MODELS[target].objects.get(team_id=instance.team_id, name=wanted),
        )
    if changed_fields:
        instance.save()
    for name, target in section.references.items():
        if is_new or entry.old[name] != entry.new[name]:
            related = MODELS[target].objects.filter(
                team_id=instance.team_id, name__in=entry.references[name]
            )
            getattr(instance, name).set(related)
    record(instance, before, actor=actor)


def _disable(projects: list[Project], actor: Actor) -> None:
    if not projects:
        return
    befores = {project.pk: snapshot(project) for project in projects}
    project_ids = list(befores)
    Project.objects.filter(pk__in=project_ids).update(enabled=False)
    for project in Project.objects.filter(pk__in=project_ids):
        record(project, befores[project.pk], actor=actor)
    projects_bulk_changed.send(sender=Project, project_ids=project_ids)
