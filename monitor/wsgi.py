"""The web process's application (gunicorn monitor.wsgi, as the Procfile).

Once it is loaded, everything alive (Django, the apps, their modules and
models) moves to the garbage collector's permanent generation, as the
poller does with its projects (polling/engine/collector.py). A full
collection otherwise walks all of it with the interpreter lock held: on a
cold status page of 500 projects, one build in fifteen or so ran into one
of 35-80 ms (by gc.callbacks, in-process), most of the difference between
that page's median and its p95; after the freeze they took 2-4 ms. Frozen
objects are still freed when nothing refers to them any more.
"""

import gc
import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "monitor.settings")

application = get_wsgi_application()

gc.collect()  # what loading left behind is garbage, not to be kept frozen
gc.freeze()
