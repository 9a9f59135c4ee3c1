"""A small OpenID Connect provider on 127.0.0.1, for the sign-in tests.

    with OidcProvider(client_id="monitor", client_secret="s3cret") as provider:
        provider.user = {"sub": "42", "email": "ada@example.test", ...}
        provider.url  # the issuer: discovery at /.well-known/openid-configuration

It does what a real provider does for the authorization code flow: a
discovery document, /authorize that approves at once (as `user`) and
redirects back with a code, /token that checks the client's secret and the
code and returns an access token and an ID token signed RS256 (PyJWT and
cryptography), /jwks with the public key, and /userinfo for the token.
"""

from __future__ import annotations

import base64
import json
import secrets
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlencode, urlsplit

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm

KEY_ID = "test-key"


class OidcProvider:
    def __init__(self, *, client_id: str, client_secret: str) -> None:
        self.client_id = client_id
        self.client_secret = client_secret
        self.user: dict = {}
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.codes: dict[str, tuple[dict, str | None, str]] = {}
        self.tokens: dict[str, dict] = {}
        self.token_requests = 0
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> OidcProvider:
        self._thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def discovery(self) -> dict:
        return {
            "issuer": self.url,
            "authorization_endpoint": f"{self.url}/authorize",
            "token_endpoint": f"{self.url}/token",
            "userinfo_endpoint": f"{self.url}/userinfo",
            "jwks_uri": f"{self.url}/jwks",
            "response_types_supported": ["code"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["RS256"],
            "token_endpoint_auth_methods_supported": [
                "client_secret_basic",
                "client_secret_post",
            ],
        }

    def jwks(self) -> dict:
        key = json.loads(RSAAlgorithm.to_jwk(self.key.public_key()))
        return {"keys": [{**key, "kid": KEY_ID, "use": "sig", "alg": "RS256"}]}

    def id_token(self, user: dict, nonce: str | None) -> str:
        now = int(time.time())
        claims = {
            **user,
            "iss": self.url,
            "aud": self.client_id,
            "iat": now,
            "exp": now + 300,
        }
        if nonce:
            claims["nonce"] = nonce
        return jwt.encode(claims, self.key, algorithm="RS256", headers={"kid": KEY_ID})


def _handler(provider: OidcProvider):
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            parts = urlsplit(self.path)
            query = {k: v[0] for k, v in parse_qs(parts.query).items()}
            if parts.path == "/.well-known/openid-configuration":
                self._json(200, provider.discovery())
            elif parts.path == "/jwks":
                self._json(200, provider.jwks())
            elif parts.path == "/authorize":
                self._authorize(query)
            elif parts.path == "/userinfo":
                token = self.headers.get("Authorization", "").removeprefix("Bearer ")
                user = provider.tokens.get(token)
                self._json(200, user) if user else self._json(401, {})
            else:
                self._json(404, {})

        def do_POST(self) -> None:
            if urlsplit(self.path).path != "/token":
                return self._json(404, {})
            length = int(self.headers.get("Content-Length", 0))
            form = {
                k: v[0] for k, v in parse_qs(self.rfile.read(length).decode()).items()
            }
            client_id, secret = self._client(form)
            if (client_id, secret) != (provider.client_id, provider.client_secret):
                return self._json(401, {"error": "invalid_client"})
            provider.token_requests += 1
            found = provider.codes.pop(form.get("code", ""), None)
            if found is None or found[2] != form.get("redirect_uri"):
                return self._json(400, {"error": "invalid_grant"})
            user, nonce, _ = found
            access = secrets.token_urlsafe(16)
            provider.tokens[access] = user
            self._json(
                200,
                {
                    "access_token": access,
                    "token_type": "Bearer",
                    "expires_in": 300,
                    "id_token": provider.id_token(user, nonce),
                },
            )

        def _authorize(self, query: dict) -> None:
            if query.get("client_id") != provider.client_id:
                return self._json(400, {"error": "unauthorized_client"})
            code = secrets.token_urlsafe(16)
            redirect_uri = query["redirect_uri"]
            provider.codes[code] = (
                dict(provider.user),
                query.get("nonce"),
                redirect_uri,
            )
            back = {"code": code, "state": query.get("state", "")}
            self.send_response(302)
            self.send_header("Location", f"{redirect_uri}?{urlencode(back)}")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def _client(self, form: dict) -> tuple[str, str]:
            basic = self.headers.get("Authorization", "")
            if basic.startswith("Basic "):
                pair = base64.b64decode(basic[6:]).decode()
                client_id, _, secret = pair.partition(":")
                return client_id, secret
            return form.get("client_id", ""), form.get("client_secret", "")

        def _json(self, status: int, body: dict) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format, *args) -> None:
            pass

    return Handler
