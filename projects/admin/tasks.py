"""django-q2's admin, narrowed: only superusers may schedule or re-run tasks.

A schedule names any dotted path (`os.system` included) with arguments,
and the tasks process runs it: adding, changing or deleting one is running
code on the server. So is re-submitting a finished task. Staff users with
the model permissions still see them; only superusers change them.
"""

from __future__ import annotations

# django_q's admin is imported here, so its registrations exist before they
# are replaced, whichever order the admin discovers the apps in.
from django_q import admin as q_admin
from django_q.models import Failure, Schedule, Success

from django.contrib import admin
from django.http import HttpRequest


class SuperuserScheduleAdmin(q_admin.ScheduleAdmin):
    def has_add_permission(self, request: HttpRequest) -> bool:
        return request.user.is_superuser and super().has_add_permission(request)

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return request.user.is_superuser and super().has_change_permission(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return request.user.is_superuser and super().has_delete_permission(request, obj)


class SuperuserResubmitMixin:
    """The "Resubmit selected tasks" action for superusers only."""

    def get_actions(self, request: HttpRequest) -> dict:
        actions = super().get_actions(request)
        if not request.user.is_superuser:
            actions.pop("resubmit_task", None)
        return actions


class SuperuserSuccessAdmin(SuperuserResubmitMixin, q_admin.TaskAdmin):
    pass


class SuperuserFailureAdmin(SuperuserResubmitMixin, q_admin.FailAdmin):
    pass


for model, model_admin in [
    (Schedule, SuperuserScheduleAdmin),
    (Success, SuperuserSuccessAdmin),
    (Failure, SuperuserFailureAdmin),
]:
    if admin.site.is_registered(model):
        admin.site.unregister(model)
    admin.site.register(model, model_admin)
