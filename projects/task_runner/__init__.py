"""How the `tasks` process runs django-q2: in one process for a small
install (one_process.py), as django-q2's own cluster of processes for
more workers."""
