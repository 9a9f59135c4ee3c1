"""Reports people can hand on: a range's uptime, downtime, incidents,
MTTR, MTBF, p95 and objectives' attainment for some projects
(summary.py). docs/objectives.md states every formula."""
