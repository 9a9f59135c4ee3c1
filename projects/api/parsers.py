"""JSON bodies: anything that is not plain JSON is a 400 with a message.

DRF reads a JSON body through Django's request.body, which enforces
DATA_UPLOAD_MAX_MEMORY_SIZE when the length is declared (errors.py turns
that into a 400); the check here also bounds a body sent without one.
NaN and Infinity are refused (they are not JSON), and so is nesting deep
enough to exhaust Python's recursion limit."""

from __future__ import annotations

import json

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

from django.conf import settings


class BoundedJSONParser(JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        body = stream.read(limit + 1) if limit is not None else stream.read()
        if limit is not None and len(body) > limit:
            raise ParseError(f"The request body is larger than {limit:,} bytes.")
        try:
            return json.loads(body.decode(), parse_constant=_refuse_constant)
        except UnicodeDecodeError:
            raise ParseError("The request body is not UTF-8.") from None
        except ValueError as error:
            raise ParseError(f"The request body is not valid JSON: {error}") from None
        except RecursionError:
            raise ParseError("The request body's JSON is nested too deeply.") from None


def _refuse_constant(name: str):
    raise ValueError(f"{name} is not a JSON number")
