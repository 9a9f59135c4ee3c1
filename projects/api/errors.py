"""Every error is JSON: DRF's own, a body over DATA_UPLOAD_MAX_MEMORY_SIZE,
and a database that does not answer."""

from __future__ import annotations

import logging

from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.db import InterfaceError, OperationalError

logger = logging.getLogger(__name__)


def exception_handler(error: Exception, context: dict) -> Response | None:
    response = drf_exception_handler(error, context)
    if response is not None:
        return response
    if isinstance(error, RequestDataTooBig):
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        return Response(
            {"detail": f"The request body is larger than {limit:,} bytes."},
            status=400,
        )
    if isinstance(error, OperationalError | InterfaceError):
        logger.exception("API request failed on the database")
        return Response(
            {"detail": "The database did not answer; try again shortly."},
            status=503,
            headers={"Retry-After": "5"},
        )
    return None  # a bug: Django's 500 handling and logging
