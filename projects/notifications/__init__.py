"""Delivering the outbox: channels' transports, retries, digests,
reminders and the tasks that run them on the tasks process (django-q2)."""
