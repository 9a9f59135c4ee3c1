"""The invitation pages: a manager's form, and the invitee's link."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth import get_user_model, login, password_validation
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST

from projects.models import Role
from projects.teams.invitations import (
    Refused,
    invitation_from_token,
    join,
    link_days,
    may_join,
    new_member,
    pending,
    revoke,
    send_invitation,
)
from projects.teams.scoping import current_team, may

MODEL_BACKEND = "django.contrib.auth.backends.ModelBackend"


class InviteForm(forms.Form):
    email = forms.EmailField()
    role = forms.ChoiceField(choices=Role.choices, initial=Role.VIEWER)


class NewAccountForm(forms.Form):
    username = forms.CharField(max_length=150)
    password = forms.CharField(widget=forms.PasswordInput)

    def clean_username(self) -> str:
        username = self.cleaned_data["username"]
        if get_user_model().objects.filter(username__iexact=username).exists():
            raise ValidationError("That name is taken; choose another or sign in.")
        return username

    def clean_password(self) -> str:
        password = self.cleaned_data["password"]
        password_validation.validate_password(password)
        return password


@login_required
@require_http_methods(["GET", "POST"])
def invite(request: HttpRequest) -> HttpResponse:
    team = current_team(request)
    if not may(request, Role.MANAGER):
        raise PermissionDenied
    form = InviteForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        email, role = form.cleaned_data["email"], form.cleaned_data["role"]
        send_invitation(team, role, email, by=request.user)
        messages.success(request, f"Invited {email} to {team} as {role}.")
        return HttpResponseRedirect(reverse("teams:invite"))
    context = {
        "form": form,
        "team": team,
        "days": link_days(),
        "invitations": pending(team.pk),
    }
    return render(request, "teams/invite.html", context)


@login_required
@require_POST
def revoke_invitation(request: HttpRequest, pk: int) -> HttpResponse:
    """A manager of the invitation's team withdraws it."""
    team = current_team(request)
    if not may(request, Role.MANAGER):
        raise PermissionDenied
    invitation = get_object_or_404(pending(team.pk), pk=pk)
    revoke(invitation, by=request.user)
    messages.success(request, f"Revoked the invitation of {invitation.email}.")
    return HttpResponseRedirect(reverse("teams:invite"))


@require_http_methods(["GET", "POST"])
def join_team(request: HttpRequest, token: str) -> HttpResponse:
    """No login needed: the link is the permission, once. Someone signed
    in joins with their account if it has verified the invited address;
    anyone else makes an account for that address."""
    try:
        invitation = invitation_from_token(token)
    except Refused as refused:
        return _refused(request, refused)
    signed_in = request.user.is_authenticated
    if signed_in and not may_join(invitation, request.user):
        context = {"outcome": "wrong_address", "invitation": invitation}
        return render(request, "teams/join.html", context, status=403)
    form = None if signed_in else NewAccountForm(request.POST or None)
    if request.method == "POST":
        try:
            if form is None:
                join(invitation, request.user)
                return _joined(request, invitation)
            if form.is_valid():
                user = new_member(invitation, **form.cleaned_data)
                login(
                    request, user, backend="django.contrib.auth.backends.ModelBackend"
                )
                return _joined(request, invitation)
        except Refused as refused:
            return _refused(request, refused)
    context = {"outcome": "ask", "invitation": invitation, "form": form}
    return render(request, "teams/join.html", context)


def _refused(request: HttpRequest, refused: Refused) -> HttpResponse:
    context = {"outcome": refused.outcome}
    return render(request, "teams/join.html", context, status=refused.status)


def _joined(request: HttpRequest, invitation) -> HttpResponse:
    messages.success(request, f"You joined {invitation.team}.")
    return HttpResponseRedirect(reverse("dashboard:overview"))
