"""The DNS checks' own reading of replies (engine/dns_wire.py) against
dnspython's, the reference: the same response codes, flags and answers,
and the same refusals of replies that are not to our query."""

from __future__ import annotations

import dns.flags
import dns.message
import dns.rcode
import dns.rdatatype
import dns.rrset
import pytest

from polling.engine.dns_wire import BadReply, Question, read_reply

QUERY_ID = 4242


def reply_to(question: Question, *records: str, rcode=dns.rcode.NOERROR, **kw):
    query = dns.message.from_wire(question.query(QUERY_ID))
    response = dns.message.make_response(query)
    response.set_rcode(rcode)
    for text in records:
        name, rdtype, value = text.split(" ", 2)
        response.answer.append(dns.rrset.from_text(name, 60, "IN", rdtype, value))
    return response.to_wire(**kw)


@pytest.mark.parametrize(
    ("rdtype", "records"),
    [
        ("A", ["www.test.lan. A 192.0.2.10", "www.test.lan. A 192.0.2.11"]),
        (
            "AAAA",
            ["www.test.lan. AAAA 2001:db8::10", "www.test.lan. AAAA ::ffff:1.2.3.4"],
        ),
        ("A", ["www.test.lan. CNAME web.test.lan.", "web.test.lan. A 192.0.2.12"]),
        ("MX", ["www.test.lan. MX 10 mail.test.lan."]),
        ("TXT", ['www.test.lan. TXT "v=spf1 -all" "two"']),
    ],
)
def test_answers_read_as_dnspython_reads_them(rdtype, records):
    question = Question("www.test.lan.", dns.rdatatype.from_text(rdtype))
    data = reply_to(question, *records)
    reply = read_reply(data, QUERY_ID, question)
    message = dns.message.from_wire(data)
    expected = [
        record.to_text()
        for rrset in message.answer
        if rrset.rdtype == question.rdtype
        for record in rrset
    ]
    assert reply.answers(question.rdtype) == expected
    assert (reply.rcode(), reply.flags) == (message.rcode(), message.flags)


def test_a_reply_to_another_id_or_question_is_not_ours():
    question = Question("www.test.lan.", dns.rdatatype.A)
    data = reply_to(question, "www.test.lan. A 192.0.2.10")
    assert read_reply(data, QUERY_ID + 1, question) is None
    other = Question("api.test.lan.", dns.rdatatype.A)
    assert read_reply(data, QUERY_ID, other) is None
    assert read_reply(data, QUERY_ID, Question("WWW.Test.LAN.", 1)) is not None


def test_a_servfail_without_its_question_is_still_ours():
    question = Question("www.test.lan.", dns.rdatatype.A)
    response = dns.message.from_wire(reply_to(question, rcode=dns.rcode.SERVFAIL))
    response.question = []
    reply = read_reply(response.to_wire(), QUERY_ID, question)
    assert reply.rcode() == dns.rcode.SERVFAIL


def test_the_ad_flag_and_truncation_are_read():
    question = Question("www.test.lan.", dns.rdatatype.A, dnssec=True)
    query = dns.message.from_wire(question.query(QUERY_ID))
    response = dns.message.make_response(query)
    response.flags |= dns.flags.AD | dns.flags.TC
    reply = read_reply(response.to_wire(), QUERY_ID, question)
    assert reply.flags & dns.flags.AD
    assert reply.flags & dns.flags.TC


@pytest.mark.parametrize("cut", [5, 20, -1])
def test_bytes_that_are_no_dns_message_are_refused(cut):
    question = Question("www.test.lan.", dns.rdatatype.A)
    data = reply_to(question, "www.test.lan. A 192.0.2.10")
    with pytest.raises(BadReply):
        read_reply(data[:cut], QUERY_ID, question)
