"""Domain registration expiry: RDAP lookups and their warnings.

A project with `domain_expiry_warning_days` watches the registration of
the domain its host name is under (projects/checks/domain_names.py). The
tasks process, once an hour (projects/schedules.py, tasks.py):

1. asks each domain's registry when it expires, at most once a day per
   domain for the whole install, and keeps the answer in one
   DomainRegistration row per domain (lookups.py): the registry is found
   through the IANA bootstrap file at RDAP_BOOTSTRAP_URL (bootstrap.py),
   asked over HTTPS through the blocked-networks guard (client.py), and
   its answer read as RFC 9083 says (answers.py);
2. opens a domain incident for each project whose domain expires within
   its warning days, and resolves it when the registry shows a later date
   (warnings.py), with notifications through the outbox.

Nothing here runs inside a poll or a web request: a registry that is slow
or down costs the tasks process a timeout, never a poller or a page.
"""
