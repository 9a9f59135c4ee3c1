"""The invitation pages: a manager's form, and the invitee's link."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth import get_user_model, login, password_validation
from django.contrib.auth.decorators import login_required
from django.core import signing
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from projects.models import Role
from projects.teams.invitations import (
    invitation_from_token,
    join,
    new_member,
    send_invitation,
)
from projects.teams.scoping import current_team, may


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
    return render(request, "teams/invite.html", {"form": form, "team": team})


@require_http_methods(["GET", "POST"])
def join_team(request: HttpRequest, token: str) -> HttpResponse:
    """No login needed: the signature is the permission. Someone signed in
    joins with their account; anyone else makes one."""
    try:
        invitation = invitation_from_token(token)
    except signing.SignatureExpired:
        return render(request, "teams/join.html", {"outcome": "expired"}, status=410)
    except signing.BadSignature:
        return render(request, "teams/join.html", {"outcome": "invalid"}, status=404)
    form = (
        None if request.user.is_authenticated else NewAccountForm(request.POST or None)
    )
    if request.method == "POST":
        if form is None:
            join(invitation, request.user)
            return _joined(request, invitation)
        if form.is_valid():
            user = new_member(invitation, **form.cleaned_data)
            login(request, user, backend="django.contrib.auth.backends.ModelBackend")
            return _joined(request, invitation)
    context = {"outcome": "ask", "invitation": invitation, "form": form}
    return render(request, "teams/join.html", context)


def _joined(request: HttpRequest, invitation) -> HttpResponse:
    messages.success(request, f"You joined {invitation.team}.")
    return HttpResponseRedirect(reverse("dashboard:overview"))
