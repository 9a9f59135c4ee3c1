"""Who may get an account, through django-allauth's adapters.

- Nobody signs up with a password on their own: people join by
  invitation (projects/teams/invitations.py).
- A first single sign-on from an OIDC_ALLOWED_DOMAINS address the provider
  has verified makes the account; it joins OIDC_DEFAULT_TEAM as a viewer
  when that is set, else it waits for an invitation (and sees nothing).
- allauth's own e-mails (password reset, address confirmation, "your
  password changed") are queued like ours (account_mail.py), not sent
  inside the request.
- Their links and the site's name in them come from SITE_URL, never from
  the request's Host: any ALLOWED_HOSTS name is a valid Host, a team's own
  status-page domain among them, and a reset link on a name a team's DNS
  answers for would hand that team the key.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

from allauth.account.adapter import DefaultAccountAdapter
from allauth.account.forms import LoginForm
from allauth.core import context as allauth_context
from allauth.socialaccount.adapter import DefaultSocialAccountAdapter

from django.conf import settings

from projects.models import Membership, Role, Team
from projects.teams.account_mail import queue_email


class AccountAdapter(DefaultAccountAdapter):
    def is_open_for_signup(self, request) -> bool:
        return False

    def send_mail(self, template_prefix: str, email: str, context: dict) -> None:
        # DefaultAccountAdapter.send_mail, with the last step queued rather
        # than sent, and every link allauth built from the request's Host
        # moved to SITE_URL.
        request = allauth_context.request
        origin = request.build_absolute_uri("/") if request is not None else None
        context = {
            "request": request,
            "email": email,
            "current_site": this_site(),
            **{name: _on_site(value, origin) for name, value in context.items()},
        }
        queue_email(self.render_mail(template_prefix, email, context))

    def format_email_subject(self, subject: str) -> str:
        return f"[{this_site().name}] {subject}"


@dataclass(frozen=True, slots=True)
class Site:
    """What allauth's templates read of a django.contrib.sites Site."""

    domain: str
    name: str


def this_site() -> Site:
    host = urlsplit(settings.SITE_URL).netloc
    return Site(domain=host, name=host)


def site_link(url: str) -> str:
    """`url` with its scheme and host replaced by SITE_URL's."""
    parts = urlsplit(url)
    rest = urlunsplit(("", "", parts.path, parts.query, parts.fragment))
    return settings.SITE_URL.rstrip("/") + rest


def _on_site(value, origin: str | None):
    if origin and isinstance(value, str) and value.startswith(origin):
        return site_link(value)
    return value


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


class SignInForm(LoginForm):
    """allauth's sign-in form, its labels in the app's words ("Login",
    "Remember Me" were allauth's)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["login"].label = "Username or e-mail"
        if "remember" in self.fields:
            self.fields["remember"].label = "Remember me"
