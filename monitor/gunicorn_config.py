"""gunicorn's settings that the Procfiles' command lines cannot carry:
its log lines in the product's one format (monitor/log_format.py).

    gunicorn monitor.asgi --config python:monitor.gunicorn_config ...
"""

import os

from monitor.log_format import gunicorn_logging

logconfig_dict = gunicorn_logging(os.environ.get("LOG_LEVEL", "INFO"))
# No control socket: nothing here uses it, and every gunicorn of a user
# would share ~/.gunicorn/gunicorn.ctl.
control_socket_disable = True
