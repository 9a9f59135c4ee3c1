"""`manage.py runpoller` trusting the benchmark's throwaway certificate
authority (BENCH_CA_BUNDLE, a PEM file) instead of certifi's roots, so the
internet-like scenario's HTTPS targets on 127.0.0.1 verify as real ones do.

    BENCH_CA_BUNDLE=/tmp/ca.pem python bench/trusting_poller.py [runpoller options]

Not a way to run the product.
"""

from __future__ import annotations

import os
import sys

import harness  # noqa: F401  (puts the project on sys.path)


def main() -> None:
    import certifi

    bundle = os.environ["BENCH_CA_BUNDLE"]
    # probe.make_transfers() asks certifi.where() for the bundle at run time.
    certifi.where = lambda: bundle
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "monitor.settings")
    from django.core.management import execute_from_command_line

    execute_from_command_line(["manage.py", "runpoller", *sys.argv[1:]])


if __name__ == "__main__":
    main()
