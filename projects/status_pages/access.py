"""Who may see a status page: one rule for every URL of a page (the page,
its feed, its badge, its subscribe form, its confirm link), on the main
host and on the page's own domain.

| page    | visitor                                  | answer                   |
| ------- | ---------------------------------------- | ------------------------ |
| public  | anyone                                   | shown                    |
| private | not signed in                            | sent to sign in          |
| private | a member of the page's team (superusers) | shown                    |
| private | anyone else (another team, no team)      | 404, as if it were not   |

The unsubscribe link is not asked: its token is the permission, so a
person who left the team can still stop the mail.
"""

from __future__ import annotations

import enum

from django.contrib.auth.views import redirect_to_login
from django.http import Http404, HttpRequest, HttpResponse

from projects.models import StatusPage
from projects.teams.scoping import role_of


class Access(enum.Enum):
    SHOWN = "shown"
    SIGN_IN = "sign in"
    HIDDEN = "hidden"


def access(request: HttpRequest, page: StatusPage) -> Access:
    """The decision of the table above for this request's user."""
    if page.is_public:
        return Access.SHOWN
    if not request.user.is_authenticated:
        return Access.SIGN_IN
    if role_of(request.user, page.team) is None:
        return Access.HIDDEN
    return Access.SHOWN


def refusal(request: HttpRequest, page: StatusPage) -> HttpResponse | None:
    """None when the request may see `page`; else the redirect to sign in,
    or raises Http404 for someone outside the page's team."""
    decided = access(request, page)
    if decided is Access.SIGN_IN:
        return redirect_to_login(request.get_full_path())
    if decided is Access.HIDDEN:
        raise Http404("No such page.")
    return None


def cache_scope(page: StatusPage) -> dict[str, bool]:
    """Cache-Control for what a page shows: a private page's answers are
    for one signed-in browser, never a shared cache."""
    return {"public": True} if page.is_public else {"private": True}
