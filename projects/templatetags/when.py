"""{{ value|when }}: a date and time as every page writes them,
"2026-11-29 14:05:07 UTC" (monitor/dates.py).

    {% load when %}
    <time datetime="{{ poll.polled_at|date:'c' }}">{{ poll.polled_at|when }}</time>
"""

from django import template

from monitor.dates import when

register = template.Library()
register.filter("when", when, expects_localtime=True)
