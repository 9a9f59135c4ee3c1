"""Service level objectives: what their polls add up to (status.py, from
the rollups), the arithmetic of error budgets (budget.py) and the
multi-window, multi-burn-rate alerts (alerts.py). docs/objectives.md
states every formula."""
