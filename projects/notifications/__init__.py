"""Notifications: the outbox that incidents and the monitor's own alarms
write to (outbox.py, payloads.py), and its delivery: channels' transports,
retries, digests, reminders, escalation and the tasks that run them on
the tasks process (django-q2)."""
