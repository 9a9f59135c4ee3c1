"""Housekeeping: the jobs that keep the database small and fast.

- retention.prune_results: delete polls older than RESULT_RETENTION_DAYS;
- compaction.compact_rollups: sum finished days of hourly rollups into
  DailyRollup, then drop hourly and daily rollups past their retention;
- maintenance.optimize_database: PRAGMA optimize on SQLite.

Each is a plain function that returns what it did, and a management command
of the same name. projects/schedules.py runs them on the tasks process
through projects.housekeeping.tasks, which records every run
(HousekeepingRun) for the poller page.
"""
