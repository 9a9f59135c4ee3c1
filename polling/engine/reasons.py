"""Why a libcurl transfer failed, in a few words a person can read."""

from __future__ import annotations

import errno
import re
from urllib.parse import urlsplit

import pycurl

from polling.engine.transport import TransferError

E_HTTP2_STREAM = 92  # not among pycurl's names

_ERRNO_REASONS = {
    errno.ECONNREFUSED: "connection refused",
    errno.ECONNRESET: "connection reset by peer",
    errno.ECONNABORTED: "connection aborted",
    errno.EPIPE: "the server closed the connection while the request was sent",
    errno.ENETUNREACH: "network unreachable",
    errno.EHOSTUNREACH: "host unreachable",
}
_INVALID_RESPONSE = "invalid HTTP response"
_VERIFY_CODE = re.compile(r" \(\d+\)$")  # OpenSSL's number for the error
# Fixed wordings, for errors whose libcurl message adds nothing a user needs.
_REASONS = {
    pycurl.E_GOT_NOTHING: "server closed the connection without a response",
    pycurl.E_PARTIAL_FILE: "server closed the connection before the body was complete",
    # HTTP/0.9 (a response without a status line) is refused as unsupported.
    pycurl.E_UNSUPPORTED_PROTOCOL: _INVALID_RESPONSE,
    pycurl.E_FTP_WEIRD_SERVER_REPLY: _INVALID_RESPONSE,
}
_TLS_ERRORS = frozenset(
    {
        pycurl.E_SSL_CONNECT_ERROR,
        pycurl.E_SSL_CIPHER,
        pycurl.E_SSL_CERTPROBLEM,
        pycurl.E_SSL_ISSUER_ERROR,
        pycurl.E_USE_SSL_FAILED,
    }
)
_NETWORK_ERRORS = frozenset(
    {pycurl.E_COULDNT_CONNECT, pycurl.E_RECV_ERROR, pycurl.E_SEND_ERROR}
)


def timed_out(timeout_seconds: float) -> str:
    return f"timed out after {timeout_seconds:g} s"


def transfer_reason(error: TransferError, url: str, timeout_seconds: float) -> str:
    """The reason for a failed exchange with `url`, or "" when libcurl
    failed in a way not foreseen here."""
    code = error.code
    if error.blocked:
        return f"{error.blocked} is in a blocked network (POLL_BLOCKED_NETWORKS)"
    if code == pycurl.E_OPERATION_TIMEDOUT:
        return timed_out(timeout_seconds)
    if code in _REASONS:
        return _REASONS[code]
    if code == pycurl.E_COULDNT_RESOLVE_HOST:
        return f"DNS lookup failed for {urlsplit(url).hostname}"
    if code == pycurl.E_PEER_FAILED_VERIFICATION:
        return f"TLS certificate verify failed: {_verify_detail(error.message)}"
    if code in _TLS_ERRORS:
        return f"TLS error: {_tls_detail(error.message)}"
    if code in _NETWORK_ERRORS:
        return _ERRNO_REASONS.get(error.os_errno, "")
    if code in (pycurl.E_HTTP2, E_HTTP2_STREAM):
        return f"HTTP/2 error: {error.message}"
    if code == pycurl.E_URL_MALFORMAT:
        return f"invalid URL: {url}"
    return ""


def _verify_detail(message: str) -> str:
    # "SSL certificate problem: unable to get local issuer certificate",
    # "SSL: no alternative certificate subject name matches ...",
    # "SSL certificate OpenSSL verify result: self-signed certificate (18)"
    for prefix in (
        "SSL certificate problem: ",
        "SSL certificate OpenSSL verify result: ",
        "SSL: ",
    ):
        if message.startswith(prefix):
            return _VERIFY_CODE.sub("", message.removeprefix(prefix))
    return message


def _tls_detail(message: str) -> str:
    # "TLS connect error: error:0A00010B:SSL routines::wrong version number"
    if "::" in message:
        return message.rpartition("::")[2]
    return message.rpartition(": ")[2] or message
