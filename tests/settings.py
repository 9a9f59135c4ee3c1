"""Settings for the test suite: the real settings, plus what tests need.

The suite runs on SQLite by default and on PostgreSQL when DATABASE_URL
points there, exactly as the product does.
"""

import os

os.environ.setdefault("SECRET_KEY", "tests-only-secret-key-not-for-deployment")
os.environ.setdefault("HTTPS", "false")

from monitor.settings import *  # noqa: F403

# The manifest storage needs collectstatic; tests render templates without it.
STORAGES = {
    **STORAGES,  # noqa: F405
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
# Parallel runs (several checkouts, or helpers) each need their own test
# database; TEST_DB_SUFFIX tells them apart.
_suffix = os.environ.get("TEST_DB_SUFFIX", "")
if _suffix:
    _test = DATABASES["default"].setdefault("TEST", {})  # noqa: F405
    _default = DATABASES["default"]["NAME"]  # noqa: F405
    if DATABASES["default"]["ENGINE"].endswith("sqlite3"):  # noqa: F405
        _test["NAME"] = f"{_test.get('NAME', _default)}-{_suffix}"
    else:
        _test["NAME"] = f"test_{_default}_{_suffix}"

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

# Never reach a developer's running poller: tests start their own on port 0
# and point POLLER_CONTROL_URL at it; port 9 (discard) is closed.
POLLER_CONTROL_BIND = "127.0.0.1:0"
POLLER_CONTROL_URL = "http://127.0.0.1:9"
POLLER_CONTROL_TOKEN = "tests-only-control-token"
# Most tests save projects with no poller to hear of it: a call made again
# seconds later would reach the next test's poller. The sender's retries
# are tested with their own sender and settings (test_sync_retries.py).
POLLER_SYNC_RETRIES = 0
