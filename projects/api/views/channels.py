"""channels/: read for any key; create, change, delete and test for write
keys. The test goes through the outbox like every notification: the tasks
process sends it and records it in the delivery log, not this request."""

from __future__ import annotations

import uuid

from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from django.db import transaction
from django.utils import timezone

from projects.api.serializers.channels import ChannelSerializer
from projects.api.teams import Audited, scoped
from projects.models import Notification, NotificationChannel
from projects.notifications import outbox
from projects.notifications.testing import test_payload

QUEUED = inline_serializer(
    "TestQueued",
    {"notification": serializers.IntegerField(), "detail": serializers.CharField()},
)


class ChannelViewSet(Audited, viewsets.ModelViewSet):
    lookup_value_regex = "[0-9]+"
    serializer_class = ChannelSerializer
    _generated_secret = ""

    def get_queryset(self):
        channels = NotificationChannel.objects.select_related("subscriber")
        return scoped(self.request, channels.order_by("name"))

    def create(self, request: Request, *args, **kwargs) -> Response:
        response = super().create(request, *args, **kwargs)
        if secret := self._generated_secret:
            # Shown once, to whoever made the channel, as the admin does.
            response.data["generated_secret"] = secret
        return response

    def perform_create(self, serializer: ChannelSerializer) -> None:
        self.save_audited(None, serializer.save)
        self._generated_secret = serializer.generated_secret

    def perform_update(self, serializer: ChannelSerializer) -> None:
        self.save_audited(serializer.instance, serializer.save)

    @extend_schema(
        request=None,
        responses={
            202: QUEUED,
            409: OpenApiResponse(description="The channel is disabled."),
        },
    )
    @action(detail=True, methods=["post"])
    def test(self, request: Request, pk: str) -> Response:
        """Queue a test notification; the delivery log shows how it went."""
        channel = self.get_object()
        now = timezone.now()
        message = outbox.Message(
            event=Notification.Event.TEST,
            key=outbox.message_key(Notification.Event.TEST, channel.pk, uuid.uuid4()),
            payload=test_payload(channel, now),
        )
        with transaction.atomic():
            if not outbox.queue([(message, [channel.pk])]):
                return Response(
                    {"detail": "The channel is disabled: enable it first."},
                    status=status.HTTP_409_CONFLICT,
                )
        key = outbox.notification_key(message.key, channel.pk)
        queued = Notification.objects.get(key=key)
        return Response(
            {"notification": queued.pk, "detail": "Queued; see the delivery log."},
            status=status.HTTP_202_ACCEPTED,
        )
