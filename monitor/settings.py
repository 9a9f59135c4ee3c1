"""Settings for the uptime monitor.

Everything comes from the environment, or from a `.env` file beside
manage.py when there is one. docs/configuration.md lists every variable and its default.
"""

from __future__ import annotations

import sys
from pathlib import Path

import environ

from django.core.exceptions import ImproperlyConfigured

from monitor.csp import DEFAULT_POLICY
from monitor.log_format import FORMAT as LOG_FORMAT

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()
# Values already in the environment win over the file.
ENV_FILE = Path(env.str("ENV_FILE", default=str(BASE_DIR / ".env")))
if ENV_FILE.is_file():
    env.read_env(ENV_FILE)

DEBUG = env.bool("DEBUG", default=False)

# No fallback key, not even with DEBUG on: a key anyone can read lets
# anyone forge acknowledge links and sessions. `make run` writes one to .env.
SECRET_KEY = env.str("SECRET_KEY", default="")
if not SECRET_KEY:
    raise ImproperlyConfigured(
        "SECRET_KEY must be set (with DEBUG on or off). Generate one with: "
        'python -c "import secrets; print(secrets.token_urlsafe(50))"'
    )

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
# Preloading is hard to undo (browsers ship the list): the operator opts in.
SECURE_HSTS_PRELOAD = env.bool("SECURE_HSTS_PRELOAD", default=False)
# The deploy check warns when preload is off; off is the chosen default.
SILENCED_SYSTEM_CHECKS = ["security.W021"]
# Content-Security-Policy of every page (monitor/csp.py); empty sends none.
CONTENT_SECURITY_POLICY = env.str("CONTENT_SECURITY_POLICY", default=DEFAULT_POLICY)
if env.bool("BEHIND_PROXY", default=False):
    # Only safe when a proxy in front strips this header from clients.
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

INSTALLED_APPS = [
    "monitor.apps.AdminConfig",  # the admin, discovered by monitor/urls.py
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "projects",
    "projects.dashboard",
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
    # Query values no page can use (NUL, overflowing ids) are a 400.
    "monitor.query_guard.QueryGuardMiddleware",
    "monitor.csp.ContentSecurityPolicyMiddleware",
    # A status page's custom_domain serves that page at /.
    "projects.status_pages.domains.CustomDomainMiddleware",
]

ROOT_URLCONF = "monitor.urls"
# Error pages and error e-mails hide DATABASE_URL, REDIS_URL and URL passwords.
DEFAULT_EXCEPTION_REPORTER_FILTER = (
    "monitor.error_reports.SecretHidingExceptionReporterFilter"
)
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
                "projects.teams.context_processors.teams",
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
    # DRF imports django.contrib.postgres's fields whenever psycopg is
    # installed (it always is: the same install serves PostgreSQL), and
    # with them psycopg and libpq: 9 MiB in each web worker of an install
    # that never connects to PostgreSQL (docs/benchmarks.md, make run
    # footprint). Marked absent, DRF takes it as psycopg missing; no model
    # here uses a PostgreSQL-only field.
    sys.modules.setdefault("django.contrib.postgres.fields", None)
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
# One way to write a date and time, with its zone, on every page and in the
# admin: 2026-11-29 14:05:07 UTC (monitor/formats/en/formats.py).
FORMAT_MODULE_PATH = ["monitor.formats"]

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
        # The one format of every process's lines (gunicorn's too).
        "plain": {"format": LOG_FORMAT},
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
        # django-q logs a dozen routine INFO lines every 30 s in the tasks
        # process: WARNING, unless LOG_LEVEL is set explicitly.
        # Its own handler otherwise, in a format of its own.
        "django-q": {
            "level": env.str("LOG_LEVEL", default="WARNING"),
            "handlers": ["console"],
            "propagate": False,
        },
    },
}

# Poller
MAX_CONCURRENT_HTTP = env.int("MAX_CONCURRENT_HTTP", default=1000)
# Checks that need a blocking driver (databases) run at most this many at
# once, on a pool of their own (polling/engine/side_pool.py).
SERVICE_CHECK_CONCURRENCY = env.int("SERVICE_CHECK_CONCURRENCY", default=20)
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
# A change the pollers did not all hear of is sent again after 1, 2, 4...
# s, this many times (polling/sync_sender.py); then their periodic reload.
POLLER_SYNC_RETRIES = env.int("POLLER_SYNC_RETRIES", default=5)
# Several pollers on PostgreSQL share the projects in shards (project id
# mod POLLER_SHARDS; the same on every poller), each leased for
# POLLER_LEASE_TTL seconds and renewed every POLLER_LEASE_TICK.
POLLER_SHARDS = env.int("POLLER_SHARDS", default=256)
POLLER_LEASE_TTL = env.float("POLLER_LEASE_TTL", default=15.0)
POLLER_LEASE_TICK = env.float("POLLER_LEASE_TICK", default=5.0)
# Pings a heartbeat project may send a minute (0: no limit).
PING_RATE_LIMIT = env.int("PING_RATE_LIMIT", default=60)
# Pings a web worker holds for its writer at most; past that it answers 503
# with Retry-After (docs/checks.md#heartbeats). A batch takes up to 500.
PING_QUEUE_SIZE = env.int("PING_QUEUE_SIZE", default=2000)
# A ping not taken into a batch within this many seconds is answered 503.
PING_QUEUE_SECONDS = env.float("PING_QUEUE_SECONDS", default=10.0)
# Threads per web worker for every page but the pings (Procfile).
WEB_THREADS = env.int("WEB_THREADS", default=16)

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
Q_WORKERS = env.int("Q_WORKERS", default=1)
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
# With REDIS_URL every web worker (and machine) shares one cache. Ping rate
# limits no longer need it: they are counted in the database (PingCount).
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
# Other names the monitor itself answers to; no status page may claim one
# (nor SITE_URL's host) as its custom_domain.
SITE_HOSTS = env.list("SITE_HOSTS", default=[])
# How long the acknowledge link in a notification works.
ACKNOWLEDGE_LINK_DAYS = env.int("ACKNOWLEDGE_LINK_DAYS", default=7)
# How long a team invitation's link works (it works once).
INVITATION_LINK_DAYS = env.int("INVITATION_LINK_DAYS", default=7)
# A failing project not yet confirmed down is polled again after
# min(interval, this), instead of a whole interval later.
POLLER_RECHECK_SECONDS = env.int("POLLER_RECHECK_SECONDS", default=20)
# The default channels hear of it when no poller has been seen this long.
POLLER_SILENT_SECONDS = env.int("POLLER_SILENT_SECONDS", default=120)

# Status pages
# Subscriptions a visitor's IP address may make per hour.
STATUS_SUBSCRIBE_RATE_LIMIT = env.int("STATUS_SUBSCRIBE_RATE_LIMIT", default=5)
# Let subscribers' webhooks point at loopback and private addresses (off:
# a public form must not make this server call into its own network).
STATUS_WEBHOOK_ALLOW_PRIVATE = env.bool("STATUS_WEBHOOK_ALLOW_PRIVATE", default=False)

# Domain expiry warnings (docs/checks.md#domain-registration-expiry): the
# RDAP bootstrap file (RFC 9224) that names each TLD's registry service.
# The tasks process reads it on each hourly run that has a domain to look
# up; point it at a mirror where the monitor cannot reach IANA.
RDAP_BOOTSTRAP_URL = env.str(
    "RDAP_BOOTSTRAP_URL", default="https://data.iana.org/rdap/dns.json"
)

# Teams
# Where the checks and the webhook and Apprise channels of a team not
# marked trusted may never connect, at save time and at every connection
# (redirects included): loopback, "this network", RFC 1918, CGNAT,
# link-local (cloud metadata answers at 169.254.169.254), unique-local IPv6
# and the metadata addresses outside those (AWS's IPv6 one). The install's
# first team is trusted, so a one-team install watches its own network.
# See docs/teams.md and docs/security.md.
POLL_BLOCKED_NETWORKS = [
    network
    for network in env.list(
        "POLL_BLOCKED_NETWORKS",
        default=[
            "127.0.0.0/8",
            "::1/128",
            "0.0.0.0/8",
            "10.0.0.0/8",
            "172.16.0.0/12",
            "192.168.0.0/16",
            "100.64.0.0/10",
            "169.254.0.0/16",
            "fe80::/10",
            "fc00::/7",
            "fd00:ec2::254/128",
            "100.100.100.200/32",
        ],
    )
    if network.strip()
]

# Sign-in: django-allauth for passwords, single sign-on (OpenID Connect)
# and second factors (TOTP, WebAuthn, recovery codes); the admin's login
# goes through it too (monitor/urls.py). See docs/teams.md.
INSTALLED_APPS += [
    "allauth",
    "allauth.account",
    "allauth.socialaccount",
    "allauth.socialaccount.providers.openid_connect",
    "allauth.mfa",
]
MIDDLEWARE += [
    "allauth.account.middleware.AccountMiddleware",
    "projects.teams.second_factor.RequireSecondFactorMiddleware",
]
AUTHENTICATION_BACKENDS = [
    "django.contrib.auth.backends.ModelBackend",
    "allauth.account.auth_backends.AuthenticationBackend",
]
LOGIN_URL = "account_login"
LOGIN_REDIRECT_URL = "/"
ACCOUNT_LOGOUT_REDIRECT_URL = "/"
ACCOUNT_LOGIN_METHODS = {"username", "email"}
ACCOUNT_SIGNUP_FIELDS = ["email*", "username*", "password1*", "password2*"]
ACCOUNT_EMAIL_VERIFICATION = "none"  # an invitation's link proved the address
ACCOUNT_ADAPTER = "projects.teams.signin.AccountAdapter"
ACCOUNT_FORMS = {"login": "projects.teams.signin.SignInForm"}
SOCIALACCOUNT_ADAPTER = "projects.teams.signin.SocialAccountAdapter"
# Failed sign-ins: 5 per 5 minutes per account, 20 a minute per address.
ACCOUNT_RATE_LIMITS = {"login_failed": "20/m/ip,5/5m/key"}
# A provider's address never takes over an existing account by itself.
SOCIALACCOUNT_EMAIL_AUTHENTICATION = False
SOCIALACCOUNT_AUTO_SIGNUP = True
MFA_SUPPORTED_TYPES = ["totp", "recovery_codes", "webauthn"]
MFA_TOTP_TOLERANCE = 1  # a code from the previous or next 30 s: clock drift
MFA_WEBAUTHN_ALLOW_INSECURE_ORIGIN = DEBUG
REQUIRE_2FA = env.bool("REQUIRE_2FA", default=False)
OIDC_PROVIDER_URL = env.str("OIDC_PROVIDER_URL", default="")
OIDC_CLIENT_ID = env.str("OIDC_CLIENT_ID", default="")
OIDC_CLIENT_SECRET = env.str("OIDC_CLIENT_SECRET", default="")
OIDC_ALLOWED_DOMAINS = [
    domain.strip().lower()
    for domain in env.list("OIDC_ALLOWED_DOMAINS", default=[])
    if domain.strip()
]
OIDC_DEFAULT_TEAM = env.str("OIDC_DEFAULT_TEAM", default="")
SOCIALACCOUNT_PROVIDERS = {
    "openid_connect": {
        "APPS": [
            {
                "provider_id": "oidc",
                "name": "Single sign-on",
                "client_id": OIDC_CLIENT_ID,
                "secret": OIDC_CLIENT_SECRET,
                "settings": {"server_url": OIDC_PROVIDER_URL},
            }
        ]
        if OIDC_PROVIDER_URL
        else []
    }
}

# REST API (projects/api/, docs/api.md)
INSTALLED_APPS += [
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "projects.api",
]
# Requests one API key may make, as DRF spells a rate: 600/min, 20/s,
# 10000/hour. Counted in the cache, so per web process unless REDIS_URL is
# set, like PING_RATE_LIMIT.
API_THROTTLE = env.str("API_THROTTLE", default="600/min")
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "projects.api.authentication.ApiKeyAuthentication"
    ],
    "DEFAULT_PERMISSION_CLASSES": ["projects.api.permissions.ApiKeyScope"],
    "DEFAULT_THROTTLE_CLASSES": ["projects.api.throttling.ApiKeyThrottle"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["projects.api.parsers.BoundedJSONParser"],
    "DEFAULT_PAGINATION_CLASS": "projects.api.pagination.PagePagination",
    "DEFAULT_SCHEMA_CLASS": "projects.api.schema.ApiSchema",
    "EXCEPTION_HANDLER": "projects.api.errors.exception_handler",
    "UNAUTHENTICATED_USER": None,
    "TEST_REQUEST_DEFAULT_FORMAT": "json",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Uptime monitor API",
    "DESCRIPTION": "Projects, their polls and uptime, incidents, channels, "
    "maintenance windows and tags. Send `Authorization: Bearer <key>`; "
    "make a key with `manage.py createapikey NAME --scope read|write "
    "--team SLUG`. A key sees and changes only its team's objects.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SCHEMA_PATH_PREFIX": "/api/v1",
    "COMPONENT_SPLIT_REQUEST": True,
    # The docs page's scripts and styles come from this site, never a CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "ENUM_NAME_OVERRIDES": {"PollStatusEnum": "projects.models.project.Status"},
}

# Regions (docs/regions.md): the place this runpoller checks from. Pollers
# of one region share its shards; a project is down when enough regions
# agree (Project.quorum).
POLLER_REGION = env.str("POLLER_REGION", default="default")
# The local address this runpoller's requests leave from (libcurl's
# interface option, e.g. "host!127.0.0.2"); empty: the system chooses.
POLLER_SOURCE_ADDRESS = env.str("POLLER_SOURCE_ADDRESS", default="")

# Agents (docs/agents.md): pollers that reach the server over HTTPS, with
# no database. On the server: an agent silent this long hands its region's
# projects to another agent of the region. Longer than the dark-region
# threshold (POLLER_SILENT_SECONDS) plus the watcher's minute and the task
# scheduler's 30 s of slack, so that a region whose agent died is told dark
# once before a standby takes over (issue #46). Set it below
# POLLER_SILENT_SECONDS for a faster takeover that nobody is told of.
AGENT_SILENT_SECONDS = env.int(
    "AGENT_SILENT_SECONDS", default=POLLER_SILENT_SECONDS + 60 + 30
)
# In `manage.py runagent`: its token (from `manage.py createagent`), how
# often it asks the server for changes (a change saved on the server
# reaches it within about this long), and where it keeps results until the
# server has them: at most AGENT_BUFFER_MAX_RESULTS, the oldest given up
# first (about 600 bytes each on disk).
AGENT_TOKEN = env.str("AGENT_TOKEN", default="")
AGENT_SYNC_SECONDS = env.float("AGENT_SYNC_SECONDS", default=1.0)
AGENT_BUFFER_PATH = env.str("AGENT_BUFFER_PATH", default="agent-buffer.sqlite3")
AGENT_BUFFER_MAX_RESULTS = env.int("AGENT_BUFFER_MAX_RESULTS", default=1_000_000)
