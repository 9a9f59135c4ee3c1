"""Subscribing to a status page: the form, the confirmation link and the
unsubscribe link. Links only ask on GET (mail scanners follow links);
the button POSTs, with a CSRF token like the form. A webhook's receiver
confirms by a bare POST to its link: the link's token is the secret, so
the confirmation needs no CSRF token (whoever could forge the request
knows the token already). A private page's form and confirm link are for
its team only (projects.status_pages.access), so its subscribers confirm
signed in, as a member."""

from __future__ import annotations

from django import forms
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.utils import timezone
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods

from projects.announcements import subscriptions
from projects.announcements.announcer import welcome
from projects.announcements.subscriptions import validate_webhook_url
from projects.models import StatusPage, Subscriber
from projects.status_pages.access import refusal


class SubscribeForm(forms.Form):
    email = forms.EmailField(label="E-mail address", required=False)
    webhook_url = forms.URLField(
        label="or a webhook URL",
        required=False,
        max_length=2000,
        validators=[validate_webhook_url],
        assume_scheme="https",
    )

    def clean(self):
        data = super().clean()
        if self.errors:
            return data
        if bool(data.get("email")) == bool(data.get("webhook_url")):
            raise forms.ValidationError("Give an e-mail address or a webhook URL.")
        return data


@require_http_methods(["GET", "POST"])
def subscribe(request: HttpRequest, slug: str) -> HttpResponse:
    page = get_object_or_404(StatusPage, slug=slug)
    if (refused := refusal(request, page)) is not None:
        return refused
    form = SubscribeForm(request.POST if request.method == "POST" else None)
    context = {"page": page, "form": form, "done": False}
    if request.method == "GET" or not form.is_valid():
        return render(request, "status_pages/subscribe.html", context)
    now = timezone.now()
    address = request.META.get("REMOTE_ADDR")
    if subscriptions.rate_limited(address, now):
        context["limited"] = True
        return render(request, "status_pages/subscribe.html", context, status=429)
    subscriber = subscriptions.subscribe(
        page,
        email=form.cleaned_data["email"],
        webhook_url=form.cleaned_data["webhook_url"],
        address=address,
        now=now,
        user=None if page.is_public else request.user,
    )
    context["done"] = True
    context["by_email"] = bool(form.cleaned_data["email"])
    if subscriber is not None and subscriber.webhook_url:
        # Shown on this answer only; stored on the subscriber's channel.
        context["secret"] = subscriber.channel.secret
    return render(request, "status_pages/subscribe.html", context)


@csrf_exempt
@require_http_methods(["GET", "POST"])
def confirm(request: HttpRequest, slug: str, token: str) -> HttpResponse:
    subscriber = _subscriber(slug, token)
    if (refused := refusal(request, subscriber.page)) is not None:
        return refused
    outcome = "ask-confirm"
    if subscriber.is_confirmed:
        outcome = "confirmed"
    elif request.method == "POST":
        now = timezone.now()
        with transaction.atomic():
            if subscriptions.confirm(subscriber, now):
                welcome(subscriber, now)
        outcome = "confirmed"
    return _answer(request, subscriber, outcome)


@csrf_exempt  # RFC 8058's one-click POST has no cookie; the token is the secret
@require_http_methods(["GET", "POST"])
def unsubscribe(request: HttpRequest, slug: str, token: str) -> HttpResponse:
    subscriber = _subscriber(slug, token)
    if request.method == "POST":
        subscriptions.unsubscribe(subscriber)
        return _answer(request, subscriber, "unsubscribed")
    return _answer(request, subscriber, "ask-unsubscribe")


def _subscriber(slug: str, token: str) -> Subscriber:
    return get_object_or_404(
        Subscriber.objects.select_related("page"), page__slug=slug, token=token
    )


def _answer(request: HttpRequest, subscriber: Subscriber, outcome: str):
    context = {"page": subscriber.page, "subscriber": subscriber, "outcome": outcome}
    return render(request, "status_pages/subscription.html", context)
