"""What an error page or error e-mail may show of settings and variables.

Django's filter hides settings and request.META entries whose names match
API|AUTH|TOKEN|KEY|SECRET|PASS|SIGNATURE. A DATABASE_URL, REDIS_URL or
EMAIL_URL matches none of them, yet carries a password; so do Q_CLUSTER's
"redis" entry and CACHES' LOCATION. This filter also hides those names and
removes the credentials of every URL-looking string it is shown, in
settings, in the environment (request.META under runserver) and in the
local variables of a traceback.
"""

from __future__ import annotations

import re

from django.views.debug import SafeExceptionReporterFilter

from projects.notifications.redaction import redact_url

# userinfo in a URL anywhere in a text: scheme://user:password@
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)[^/?#@\s]*@")
_WHOLE_URL = re.compile(r"(?i)^[a-z][a-z0-9+.\-]*://\S*$")


class SecretHidingExceptionReporterFilter(SafeExceptionReporterFilter):
    hidden_settings = re.compile(
        "API|AUTH|TOKEN|KEY|SECRET|PASS|SIGNATURE|HTTP_COOKIE"
        "|DATABASE_URL|REDIS_URL|EMAIL_URL|_DSN|CREDENTIAL",
        flags=re.IGNORECASE,
    )

    def cleanse_setting(self, key, value):
        if isinstance(value, str):
            value = without_credentials(value)
        return super().cleanse_setting(key, value)

    def get_traceback_frame_variables(self, request, tb_frame):
        return [
            (name, without_credentials(value) if isinstance(value, str) else value)
            for name, value in super().get_traceback_frame_variables(request, tb_frame)
        ]


def without_credentials(text: str) -> str:
    """A URL without its userinfo and secret query values; in other text,
    every URL's userinfo removed."""
    if _WHOLE_URL.match(text):
        return redact_url(text)
    return _USERINFO.sub(r"\1", text)
