"""Settings for the uptime monitor.

Everything comes from the environment, or from a `.env` file beside
manage.py when there is one. README.md lists every variable and its default.
"""

from __future__ import annotations

from pathlib import Path

import environ

from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()
# Values already in the environment win over the file.
ENV_FILE = Path(env.str("ENV_FILE", default=str(BASE_DIR / ".env")))
if ENV_FILE.is_file():
    env.read_env(ENV_FILE)

DEBUG = env.bool("DEBUG", default=False)

SECRET_KEY = env.str("SECRET_KEY", default="")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured(
            "SECRET_KEY must be set when DEBUG is off. Generate one with: "
            'python -c "import secrets; print(secrets.token_urlsafe(50))"'
        )
    SECRET_KEY = "django-insecure-development-only-key-do-not-deploy"

ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["127.0.0.1", "localhost"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

# HTTPS hardening is on whenever DEBUG is off; HTTPS=false turns it off for
# a plain-http local run (make run) without turning on DEBUG.
HTTPS = env.bool("HTTPS", default=not DEBUG)
SECURE_SSL_REDIRECT = HTTPS
SESSION_COOKIE_SECURE = HTTPS
CSRF_COOKIE_SECURE = HTTPS
SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=31_536_000 if HTTPS else 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool(
    "SECURE_HSTS_INCLUDE_SUBDOMAINS", default=True
)
SECURE_HSTS_PRELOAD = env.bool("SECURE_HSTS_PRELOAD", default=True)
if env.bool("BEHIND_PROXY", default=False):
    # Only safe when a proxy in front strips this header from clients.
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "projects",
    "polling",
    # After projects, whose qcluster command replaces django-q2's own.
    "django_q",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "monitor.urls"
WSGI_APPLICATION = "monitor.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASE_URL = env.str("DATABASE_URL", default="") or "sqlite:///db.sqlite3"
DATABASES = {"default": env.db_url_config(DATABASE_URL)}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # A relative SQLite path is relative to this project, not to the cwd.
    DATABASES["default"]["NAME"] = str(BASE_DIR / DATABASES["default"]["NAME"])
    # WAL lets the dashboard read while the poller writes; IMMEDIATE takes
    # the write lock at BEGIN, so a waiting writer honours busy_timeout
    # instead of failing with "database is locked" on lock upgrade.
    DATABASES["default"]["OPTIONS"] = {
        "init_command": (
            "PRAGMA journal_mode=WAL;"
            "PRAGMA synchronous=NORMAL;"
            "PRAGMA busy_timeout=10000;"
        ),
        "transaction_mode": "IMMEDIATE",
        "timeout": 10,
    }
    DATABASES["default"]["TEST"] = {"NAME": str(BASE_DIR / ".test-db.sqlite3")}
else:
    # No psycopg connection pool ("pool" in OPTIONS): qcluster forks its
    # workers, and pooled connections would be shared across the fork
    # (django-q2 issue #209). Persistent connections are fine: qcluster
    # closes every connection before it forks. Each web worker keeps its
    # own, as opening one costs more than a ping's whole transaction.
    DATABASES["default"]["CONN_MAX_AGE"] = env.int("CONN_MAX_AGE", default=60)
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

_PASSWORD_VALIDATION = "django.contrib.auth.password_validation"
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": f"{_PASSWORD_VALIDATION}.UserAttributeSimilarityValidator"},
    {"NAME": f"{_PASSWORD_VALIDATION}.MinimumLengthValidator"},
    {"NAME": f"{_PASSWORD_VALIDATION}.CommonPasswordValidator"},
    {"NAME": f"{_PASSWORD_VALIDATION}.NumericPasswordValidator"},
]
LOGIN_URL = "admin:login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = env.str("TIME_ZONE", default="UTC")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"
    },
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"},
    },
    "handlers": {
        "console": {"class": "logging.StreamHandler", "formatter": "plain"},
    },
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
    "loggers": {
        # httpx logs every request at INFO; the poller logs polls itself.
        "httpx": {"level": "WARNING"},
        "httpcore": {"level": "WARNING"},
        # Apprise's debug lines spell out service URLs, tokens included.
        "apprise": {"level": "WARNING"},
    },
}

# Poller
MAX_CONCURRENT_HTTP = env.int("MAX_CONCURRENT_HTTP", default=100)
MIN_POLL_INTERVAL = env.int("MIN_POLL_INTERVAL", default=10)
POLLER_RELOAD_INTERVAL = env.int("POLLER_RELOAD_INTERVAL", default=300)
POLLER_TASK_QUEUE_SIZE = env.int("POLLER_TASK_QUEUE_SIZE", default=1000)
POLLER_RESULT_QUEUE_SIZE = env.int("POLLER_RESULT_QUEUE_SIZE", default=2000)
POLLER_STOP_TIMEOUT = env.int("POLLER_STOP_TIMEOUT", default=60)
# The result writer saves through a child process with a GIL of its own.
POLLER_WRITER_PROCESS = env.bool("POLLER_WRITER_PROCESS", default=True)
POLLER_CONTROL_BIND = env.str("POLLER_CONTROL_BIND", default="127.0.0.1:8765")
POLLER_CONTROL_URL = env.str("POLLER_CONTROL_URL", default="http://127.0.0.1:8765")
POLLER_CONTROL_TOKEN = env.str("POLLER_CONTROL_TOKEN", default="")
# Several pollers on PostgreSQL share the projects in shards (project id
# mod POLLER_SHARDS; the same on every poller), each leased for
# POLLER_LEASE_TTL seconds and renewed every POLLER_LEASE_TICK.
POLLER_SHARDS = env.int("POLLER_SHARDS", default=256)
POLLER_LEASE_TTL = env.float("POLLER_LEASE_TTL", default=15.0)
POLLER_LEASE_TICK = env.float("POLLER_LEASE_TICK", default=5.0)
# Pings a heartbeat project may send a minute (0: no limit).
PING_RATE_LIMIT = env.int("PING_RATE_LIMIT", default=60)

# E-mail: EMAIL_URL as django-environ reads it, e.g.
# smtp://user:password@mail.example.com:587 (smtps:// for STARTTLS,
# smtp+ssl:// for implicit TLS); with none, e-mails are printed by the tasks
# process.
globals().update(env.email_url("EMAIL_URL", default="consolemail://"))
DEFAULT_FROM_EMAIL = env.str("DEFAULT_FROM_EMAIL", default="uptime-monitor@localhost")
SERVER_EMAIL = DEFAULT_FROM_EMAIL
EMAIL_TIMEOUT = env.int("EMAIL_TIMEOUT", default=10)

# Alerts: delivery of the outbox on the tasks process
ALERT_DIGEST_THRESHOLD = env.int("ALERT_DIGEST_THRESHOLD", default=5)
ALERT_DIGEST_SECONDS = env.int("ALERT_DIGEST_SECONDS", default=30)
ALERT_DELIVERY_TIMEOUT = env.float("ALERT_DELIVERY_TIMEOUT", default=10.0)
# Sends in flight at once per delivery run: a receiver that hangs holds one.
ALERT_DELIVERY_CONCURRENCY = env.int("ALERT_DELIVERY_CONCURRENCY", default=8)

# Housekeeping: how many days of each kind of data to keep; 0 keeps it forever
RESULT_RETENTION_DAYS = env.int("RESULT_RETENTION_DAYS", default=30)
HOURLY_RETENTION_DAYS = env.int("HOURLY_RETENTION_DAYS", default=90)
DAILY_RETENTION_DAYS = env.int("DAILY_RETENTION_DAYS", default=1825)

# Background tasks (django-q2, run by `manage.py qcluster`)
REDIS_URL = env.str("REDIS_URL", default="")
Q_NAME = env.str("Q_NAME", default="uptime-monitor")
Q_WORKERS = env.int("Q_WORKERS", default=2)
Q_TIMEOUT = env.int("Q_TIMEOUT", default=600)
Q_RETRY = env.int("Q_RETRY", default=Q_TIMEOUT + 60)
Q_RECYCLE = env.int("Q_RECYCLE", default=500)
Q_MAX_ATTEMPTS = env.int("Q_MAX_ATTEMPTS", default=3)
Q_SAVE_LIMIT = env.int("Q_SAVE_LIMIT", default=250)
Q_CLUSTER = {
    "name": Q_NAME,
    "workers": Q_WORKERS,
    "timeout": Q_TIMEOUT,
    # A task not acknowledged within this many seconds (its worker died, or
    # the process was killed mid-run) is handed out again.
    "retry": Q_RETRY,
    "recycle": Q_RECYCLE,
    "max_attempts": Q_MAX_ATTEMPTS,
    # Successful tasks kept for the admin; failed ones are always kept.
    "save_limit": Q_SAVE_LIMIT,
    # After downtime a schedule runs once, not once per missed period.
    "catch_up": False,
    "label": "Background tasks",
    "time_zone": "UTC",
    **(
        {"redis": REDIS_URL}
        if REDIS_URL
        # The project's own database is the queue: no other service to run.
        else {"orm": "default", "poll": 0.5}
    ),
}
# Ping rate limits live in the cache: per process unless REDIS_URL gives
# every web worker (and machine) the same counts.
if REDIS_URL:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": Q_NAME,
        }
    }
# Incidents and notifications
# Where people reach this site; links in notifications start with it.
SITE_URL = env.str("SITE_URL", default="http://127.0.0.1:8000")
# How long the acknowledge link in a notification works.
ACKNOWLEDGE_LINK_DAYS = env.int("ACKNOWLEDGE_LINK_DAYS", default=7)
# A failing project not yet confirmed down is polled again after
# min(interval, this), instead of a whole interval later.
POLLER_RECHECK_SECONDS = env.int("POLLER_RECHECK_SECONDS", default=20)
# The default channels hear of it when no poller has been seen this long.
POLLER_SILENT_SECONDS = env.int("POLLER_SILENT_SECONDS", default=120)
