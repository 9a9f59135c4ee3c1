"""Teams and roles: who sees and changes which objects (scoping.py is the
one place that decides it)."""
