"""What `runpoller` runs: one poller until SIGTERM or SIGINT, or several
as children of this process.

- `options.py`: the command's options and the error it reports in one line;
- `stop_signals.py`: SIGTERM/SIGINT set a flag, installed before anything
  else so a signal at any point of start-up is a clean stop (manage.py
  notes them even before Django is set up: catch_early());
- `parts.py`: builds and starts the pieces (lock, coordinator, control
  endpoint, check-in), each failure one clear line;
- `poller.py`: the order of start, status loop and stop, and the summary;
- `interpreter_lock.py`: the switch interval runpoller and runagent set;
- `parent.py`: `--processes N`.

The management command only parses arguments and calls `run_poller` or
`run_parent`. This file imports nothing, so that importing one module
(stop_signals needs no Django) does not import them all.
"""
