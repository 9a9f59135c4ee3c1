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
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
