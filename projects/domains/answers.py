"""What a registry's RDAP answer about a domain says: its expiry date,
its registrar and its status values.

RFC 9083 (https://www.rfc-editor.org/rfc/rfc9083): a domain object has
`events`, each an `eventAction` and an `eventDate` (RFC 3339); the
registration's end is the "expiration" event. The registrar is the entity
whose `roles` hold "registrar", named by its vCard's `fn`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from projects.domains.errors import LookupFailed


@dataclass(frozen=True, slots=True)
class Registration:
    expires_at: datetime
    registrar: str = ""
    status: str = ""


def parse_domain(document: object, domain: str) -> Registration:
    """The registration an answer describes; raises LookupFailed when it
    is not a domain object or holds no expiry date."""
    if not isinstance(document, dict):
        raise LookupFailed(
            f"the registry's answer for {domain} is not an RDAP domain object"
        )
    return Registration(
        expires_at=_expiration(document, domain),
        registrar=_registrar(document)[:200],
        status=", ".join(
            value for value in document.get("status") or [] if isinstance(value, str)
        )[:500],
    )


def _expiration(document: dict, domain: str) -> datetime:
    events = document.get("events")
    for event in events if isinstance(events, list) else []:
        if isinstance(event, dict) and event.get("eventAction") == "expiration":
            return _date(event.get("eventDate"), domain)
    # Some registries (.de, .eu ...) publish no expiry at all: asking again
    # soon would not change that.
    raise LookupFailed(
        f"the registry publishes no expiration date for {domain}", permanent=True
    )


def _date(value: object, domain: str) -> datetime:
    try:
        when = datetime.fromisoformat(str(value).strip())
    except ValueError:
        raise LookupFailed(
            f"the registry's expiration date for {domain}, “{value}”, is not "
            "an RFC 3339 date",
            permanent=True,
        ) from None
    # RFC 3339 requires an offset; a date without one is read as UTC.
    return when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)


def _registrar(document: dict) -> str:
    entities = document.get("entities")
    for entity in entities if isinstance(entities, list) else []:
        if isinstance(entity, dict) and "registrar" in (entity.get("roles") or []):
            return _vcard_name(entity.get("vcardArray")) or str(
                entity.get("handle") or ""
            )
    return ""


def _vcard_name(vcard: object) -> str:
    """The `fn` of a jCard (RFC 7095): ["vcard", [[name, params, type,
    value], ...]]."""
    if not (isinstance(vcard, list) and len(vcard) == 2):
        return ""
    properties = vcard[1] if isinstance(vcard[1], list) else []
    for item in properties:
        if isinstance(item, list) and len(item) >= 4 and item[0] == "fn":
            return str(item[3])
    return ""
