"""The web process's application (gunicorn monitor.asgi with uvicorn's
worker, as the Procfile): pings on the event loop (polling/pings/asgi.py),
every other request to Django's WSGI application on WEB_THREADS threads
(monitor/wsgi_bridge.py). docs/installation.md#the-web-process says why.
"""

import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "monitor.settings")

from django.conf import settings

from monitor.access_log import quiet_static_files
from monitor.wsgi import application as wsgi_application
from monitor.wsgi_bridge import BodyFirst
from polling.pings.asgi import PingFastPath, quiet_stored_pings

quiet_stored_pings()
quiet_static_files()
application = PingFastPath(BodyFirst(wsgi_application, threads=settings.WEB_THREADS))
