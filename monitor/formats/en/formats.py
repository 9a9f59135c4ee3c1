"""How dates read everywhere, the admin included: 2026-11-29 14:05:07 UTC,
in the site's zone (TIME_ZONE) with its name. Code and templates print them with
monitor/dates.py's when() (the `when` filter), which uses DATETIME_FORMAT;
settings.FORMAT_MODULE_PATH points Django's English formats here."""

DATETIME_FORMAT = "Y-m-d H:i:s T"
SHORT_DATETIME_FORMAT = DATETIME_FORMAT
DATE_FORMAT = "Y-m-d"
SHORT_DATE_FORMAT = DATE_FORMAT
TIME_FORMAT = "H:i:s"
