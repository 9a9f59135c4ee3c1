"""status/: is the monitor itself working? No key needed, so a load
balancer or another monitor can ask. 200 while the database answers (503
when it does not); `poller.alive` says whether a poller has reported within
POLLER_SILENT_SECONDS, the same test as the dashboard's banner."""

from __future__ import annotations

from datetime import timedelta

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.decorators import (
    api_view,
    authentication_classes,
    permission_classes,
    throttle_classes,
)
from rest_framework.request import Request
from rest_framework.response import Response

from django.conf import settings
from django.db import DatabaseError
from django.db.models import Max
from django.utils import timezone

from projects.models import PollerNode

STATUS = inline_serializer(
    "MonitorStatus",
    {
        "status": serializers.ChoiceField(choices=["ok", "degraded", "down"]),
        "database": serializers.BooleanField(),
        "poller_alive": serializers.BooleanField(),
        "poller_last_seen_at": serializers.DateTimeField(allow_null=True),
    },
)


@extend_schema(auth=[], responses={200: STATUS, 503: STATUS})
@api_view(["GET"])
@authentication_classes([])
@permission_classes([])
@throttle_classes([])
def monitor_status(request: Request) -> Response:
    """Whether the monitor itself works, with no key: 200 while its
    database answers (503 when it does not); `poller_alive` says whether a
    poller has reported lately."""
    try:
        last_seen = PollerNode.objects.filter(stopped_at=None).aggregate(
            last=Max("last_seen_at")
        )["last"]
    except DatabaseError:
        body = {
            "status": "down",
            "database": False,
            "poller_alive": False,
            "poller_last_seen_at": None,
        }
        return Response(body, status=503)
    silent_after = timedelta(seconds=settings.POLLER_SILENT_SECONDS)
    alive = last_seen is not None and timezone.now() - last_seen <= silent_after
    body = {
        "status": "ok" if alive else "degraded",
        "database": True,
        "poller_alive": alive,
        "poller_last_seen_at": last_seen,
    }
    return Response(body)
