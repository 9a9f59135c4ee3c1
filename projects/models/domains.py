from __future__ import annotations

from django.db import models

from projects.models.project import MAX_ERROR_MESSAGE_LENGTH


class DomainRegistration(models.Model):
    """What the registry said of one registered domain, for the whole
    install: every project under example.co.uk reads this one row, so a
    registry is asked about a domain at most once a day however many
    projects watch it (projects/domains/lookups.py).

    The tasks process writes it; nothing else asks a registry. A failed
    lookup keeps the last date known and says why in `last_error`.
    """

    domain = models.CharField(max_length=253, unique=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    registrar = models.CharField(max_length=200, blank=True)
    # The registry's status values ("client transfer prohibited", ...),
    # comma-separated: "pending delete" or "redemption period" explain a
    # date in the past.
    status = models.CharField(max_length=500, blank=True)
    # The RDAP URL asked last, so a wrong date can be checked by hand.
    rdap_url = models.URLField(max_length=500, blank=True)
    checked_at = models.DateTimeField(
        null=True, blank=True, help_text="The last lookup that got an answer."
    )
    attempted_at = models.DateTimeField(null=True, blank=True)
    last_error = models.CharField(max_length=MAX_ERROR_MESSAGE_LENGTH, blank=True)
    # When it is asked again: a day after an answer, at the next run after
    # a failure the registry may get over. The claim moves it on first, so
    # two runs never ask about one domain together.
    next_check_at = models.DateTimeField()

    class Meta:
        indexes = [
            # The lookup run: the rows due, soonest first.
            models.Index(fields=["next_check_at"], name="domain_registration_due"),
        ]

    def __str__(self) -> str:
        return self.domain
