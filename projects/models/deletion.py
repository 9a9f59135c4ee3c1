"""Deleting projects without racing the result writer.

The writer locks the rows of the projects it saves for (FOR NO KEY UPDATE,
`projects/incidents/states.py` `lock_projects`) and then inserts polls and
incidents that refer to them. Django's delete first collects the related
rows with plain reads and deletes the project last, so an incident the
writer inserts in between is not collected: on PostgreSQL the deferred
foreign key check then fails the delete at commit ("still referenced from
projects_incident"). Locking the projects first (FOR UPDATE, in id order
as the writer does) makes the delete wait for a writer that holds them and
then collect what it wrote, or makes the writer wait and then find the
projects gone (it drops their outcomes quietly).
"""

from __future__ import annotations

from django.db import connections, models, router, transaction


def lock_for_delete(queryset: models.QuerySet) -> None:
    """Lock the projects of `queryset` until the transaction ends (a no-op
    on SQLite, whose writes hold the whole database)."""
    if not connections[queryset.db].features.has_select_for_update:
        return  # the SELECT would lock nothing: skip the round trip
    model = queryset.model
    ids = queryset.order_by().values("pk")
    list(
        model._base_manager.using(queryset.db)
        .filter(pk__in=ids)
        .order_by("pk")
        .select_for_update(of=("self",))
        .values_list("pk", flat=True)
    )


class ProjectQuerySet(models.QuerySet):
    def delete(self):
        with transaction.atomic(using=self.db):
            lock_for_delete(self)
            return super().delete()

    delete.alters_data = True
    delete.queryset_only = True


class LockedDelete(models.Model):
    """`delete()` of one instance takes the same lock as the queryset's."""

    class Meta:
        abstract = True

    def delete(self, using=None, keep_parents=False):
        using = using or router.db_for_write(type(self), instance=self)
        with transaction.atomic(using=using):
            lock_for_delete(type(self)._base_manager.using(using).filter(pk=self.pk))
            return super().delete(using=using, keep_parents=keep_parents)
