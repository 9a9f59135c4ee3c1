"""DNS messages in wire form, for the DNS checks and the lookups, at the
least CPU a poll allows (issue #41: under 50 µs a DNS check).

A question's query is built once by dnspython and kept (query_wire());
each poll sends it with a fresh random id. A reply is read only as far
as a check needs: the header (id, flags, rcode), whether it answers our
question, and for A and AAAA questions the addresses, walked here
(names skipped, compression pointers followed by length only). Any other
type, a truncated reply and an EDNS one go to dnspython's full reader, as
before. A reply that is not to our query is None: ignored, as a spoofing
guard; one that cannot be read raises BadReply.

dnspython building every query and reading every reply cost about a
third of a DNS poll's CPU (py-spy, bench/netchecks_cost.py).
"""

from __future__ import annotations

import functools
import secrets
import struct
from dataclasses import dataclass

import dns.exception
import dns.flags
import dns.ipv4
import dns.ipv6
import dns.message
import dns.opcode
import dns.rcode
import dns.rdataclass
import dns.rdatatype

_HEADER = struct.Struct("!HHHHHH")
_ID = struct.Struct("!H")
_RECORD = struct.Struct("!HHIH")  # type, class, TTL, data length
HEADER_SIZE = _HEADER.size
# The questions whose query is kept: one per distinct name and type a
# poller checks; more are built again when needed.
MAX_KEPT_QUERIES = 4096
_ADDRESSES = {dns.rdatatype.A: 4, dns.rdatatype.AAAA: 16}
_OPT = dns.rdatatype.OPT
_IN = dns.rdataclass.IN
# Replies that may leave out the question (dnspython's is_response()).
_QUESTIONLESS = {
    dns.rcode.FORMERR,
    dns.rcode.SERVFAIL,
    dns.rcode.NOTIMP,
    dns.rcode.REFUSED,
}


class BadReply(ValueError):
    """Bytes that are not a DNS message."""


@dataclass(frozen=True, slots=True)
class Question:
    name: str  # absolute, with its final dot
    rdtype: int
    dnssec: bool = False  # ask for DNSSEC records, and the AD flag

    def query(self, query_id: int) -> bytes:
        """The query in wire form, with that id."""
        return _ID.pack(query_id) + query_wire(self)[2:]


def new_id() -> int:
    """A query id no off-path attacker can guess."""
    return secrets.randbits(16)


@functools.lru_cache(maxsize=MAX_KEPT_QUERIES)
def query_wire(question: Question) -> bytes:
    """The query for `question` in wire form, its id 0 (dnspython's)."""
    query = dns.message.make_query(
        question.name, question.rdtype, want_dnssec=question.dnssec
    )
    if question.dnssec:
        query.flags |= dns.flags.AD
    query.id = 0
    return query.to_wire()


@dataclass(slots=True)
class Reply:
    """What a check reads of a reply: its flags (dns.flags bits), its
    response code and its answers of a type, as text."""

    flags: int
    rcode_value: int
    # (type, class, start, end) of each answer's data, when read here.
    records: list[tuple[int, int, int, int]] | None
    data: bytes
    message: dns.message.Message | None = None

    def rcode(self) -> int:
        return self.rcode_value

    def answers(self, rdtype: int) -> list[str]:
        """The answers of type `rdtype`, as text (names absolute), in order."""
        if self.message is not None:
            return [
                record.to_text()
                for rrset in self.message.answer
                if rrset.rdtype == rdtype
                for record in rrset
            ]
        text = dns.ipv4.inet_ntoa if rdtype == dns.rdatatype.A else dns.ipv6.inet_ntoa
        return [
            text(self.data[start:end])
            for kind, rdclass, start, end in self.records
            if kind == rdtype and rdclass == _IN
        ]


def read_reply(data: bytes, query_id: int, question: Question) -> Reply | None:
    """The reply in `data` to our query, None when it is not one; raises
    BadReply when `data` is not a DNS message."""
    if len(data) < HEADER_SIZE:
        raise BadReply("shorter than a DNS header")
    reply_id, flags, questions, answers, authority, additional = _HEADER.unpack_from(
        data
    )
    if (
        reply_id != query_id
        or not flags & dns.flags.QR
        or dns.opcode.from_flags(flags) != dns.opcode.QUERY
    ):
        return None
    offset = HEADER_SIZE
    if questions or (flags & 0xF) not in _QUESTIONLESS:
        offset = _question_end(data, HEADER_SIZE, questions)
        if not _same_question(data[HEADER_SIZE:offset], question):
            return None
    simple = question.rdtype in _ADDRESSES and not question.dnssec
    if not simple or flags & dns.flags.TC:
        return _fully_read(data, flags)
    records: list[tuple[int, int, int, int]] = []
    offset = _read_records(data, offset, answers, records)
    others: list[tuple[int, int, int, int]] = []
    _read_records(data, offset, authority + additional, others)
    if any(kind == _OPT for kind, *_ in others):
        return _fully_read(data, flags)  # an extended response code
    for kind, _, start, end in records:
        if _ADDRESSES.get(kind, end - start) != end - start:
            raise BadReply("an address of the wrong length")
    return Reply(flags, flags & 0xF, records, data)


def _fully_read(data: bytes, flags: int) -> Reply:
    try:
        # A truncated answer is read as far as it goes; its TC flag says
        # to ask again over TCP.
        message = dns.message.from_wire(data, ignore_trailing=True)
    except (dns.exception.DNSException, ValueError) as error:
        raise BadReply(str(error)) from error
    return Reply(message.flags, message.rcode(), None, data, message)


@functools.lru_cache(maxsize=MAX_KEPT_QUERIES)
def _question_section(question: Question) -> bytes:
    """Our query's question section (an EDNS record may follow it)."""
    wire = query_wire(question)
    return wire[HEADER_SIZE : _question_end(wire, HEADER_SIZE, 1)]


def _same_question(section: bytes, question: Question) -> bool:
    ours = _question_section(question)
    return (
        len(section) == len(ours)
        and section[:-4].lower() == ours[:-4].lower()
        and section[-4:] == ours[-4:]
    )


def _question_end(data: bytes, offset: int, count: int) -> int:
    for _ in range(count):
        offset = _name_end(data, offset) + 4
    if offset > len(data):
        raise BadReply("cut short in the question")
    return offset


def _read_records(data: bytes, offset: int, count: int, into: list) -> int:
    size = len(data)
    for _ in range(count):
        offset = _name_end(data, offset)
        if offset + _RECORD.size > size:
            raise BadReply("cut short in a record")
        kind, rdclass, _ttl, length = _RECORD.unpack_from(data, offset)
        start = offset + _RECORD.size
        offset = start + length
        if offset > size:
            raise BadReply("cut short in a record's data")
        into.append((kind, rdclass, start, offset))
    return offset


def _name_end(data: bytes, offset: int) -> int:
    """Where the name at `offset` ends (a pointer ends it)."""
    size = len(data)
    while offset < size:
        length = data[offset]
        if length == 0:
            return offset + 1
        if length & 0xC0 == 0xC0:
            return offset + 2
        if length & 0xC0:
            raise BadReply("a label of an unknown kind")
        offset += length + 1
    raise BadReply("cut short in a name")
