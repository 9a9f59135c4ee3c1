"""Who may get an account, through django-allauth's adapters.

- Nobody signs up with a password on their own: people join by
  invitation (projects/teams/invitations.py).
- A first single sign-on from an OIDC_ALLOWED_DOMAINS address the provider
  has verified makes the account; it joins OIDC_DEFAULT_TEAM as a viewer
  when that is set, else it waits for an invitation (and sees nothing).
- allauth's own e-mails (password reset, address confirmation, "your
  password changed") are queued like ours (account_mail.py), not sent
  inside the request.
"""

from __future__ import annotations

from allauth.account.adapter import DefaultAccountAdapter
from allauth.core import context as allauth_context
from allauth.socialaccount.adapter import DefaultSocialAccountAdapter

from django.conf import settings
from django.contrib.sites.shortcuts import get_current_site

from projects.models import Membership, Role, Team
from projects.teams.account_mail import queue_email


class AccountAdapter(DefaultAccountAdapter):
    def is_open_for_signup(self, request) -> bool:
        return False

    def send_mail(self, template_prefix: str, email: str, context: dict) -> None:
        # DefaultAccountAdapter.send_mail, with the last step queued rather
        # than sent.
        request = allauth_context.request
        context = {
            "request": request,
            "email": email,
            "current_site": get_current_site(request),
            **context,
        }
        queue_email(self.render_mail(template_prefix, email, context))


class SocialAccountAdapter(DefaultSocialAccountAdapter):
    def is_open_for_signup(self, request, sociallogin) -> bool:
        return any(
            address.verified and domain_allowed(address.email)
            for address in sociallogin.email_addresses
        )

    def save_user(self, request, sociallogin, form=None):
        user = super().save_user(request, sociallogin, form)
        team = Team.objects.filter(slug=settings.OIDC_DEFAULT_TEAM).first()
        if settings.OIDC_DEFAULT_TEAM and team is not None:
            Membership.objects.get_or_create(
                user=user, team=team, defaults={"role": Role.VIEWER}
            )
            user.is_staff = True  # the admin lets members in
            user.save(update_fields=["is_staff"])
        return user


def domain_allowed(email: str) -> bool:
    domain = email.rpartition("@")[2].lower()
    return bool(domain) and domain in settings.OIDC_ALLOWED_DOMAINS
