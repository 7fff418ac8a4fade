"""A real OIDC client-credentials token endpoint and its JWKS on localhost, for the OAUTHBEARER tests: it signs RS256
JWTs (iss, sub, aud, iat, exp, scope) that Kafka's OAuthBearerValidatorCallbackHandler verifies against /jwks. Not
part of the cdcsync package: operators bring their own identity provider.

    python -m devtools.oidc [--port 0] [--client ID:SECRET]   (prints the URLs; Ctrl-C stops)
"""

from __future__ import annotations

import argparse
import base64
import json
import threading
import time
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote_plus


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _int_bytes(n: int) -> bytes:
    return n.to_bytes((n.bit_length() + 7) // 8, "big")


@dataclass
class OidcServer:
    """Clients (id → secret) get tokens for `audience`; `issued` counts the tokens handed out."""
    clients: dict[str, str]
    audience: str = "kafka"
    lifetime_s: int = 3600
    port: int = 0
    issued: int = 0
    kid: str = field(default_factory=lambda: uuid.uuid4().hex[:12])

    def __post_init__(self):
        from cryptography.hazmat.primitives.asymmetric import rsa

        self._key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self._httpd: ThreadingHTTPServer | None = None

    @property
    def issuer(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def token_url(self) -> str:
        return f"{self.issuer}/token"

    @property
    def jwks_url(self) -> str:
        return f"{self.issuer}/jwks"

    def start(self) -> OidcServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 (http.server's name)
                if self.path != "/jwks":
                    return self._send(404, {"error": "not_found"})
                self._send(200, server.jwks())

            def do_POST(self):  # noqa: N802
                if self.path != "/token":
                    return self._send(404, {"error": "not_found"})
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode()
                code, answer = server.answer(parse_qs(body), self.headers.get("Authorization"))
                self._send(code, answer)

            def _send(self, code: int, payload: dict):
                data = json.dumps(payload).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                if code == 401:
                    self.send_header("WWW-Authenticate", 'Basic realm="token"')
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):  # quiet: pytest captures nothing useful from it
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.port = self._httpd.server_address[1]
        threading.Thread(target=self._httpd.serve_forever, name="oidc", daemon=True).start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()

    def answer(self, form: dict[str, list[str]], authorization: str | None) -> tuple[int, dict]:
        """RFC 6749 4.4: client credentials by HTTP Basic (Kafka's login handler) or in the form body."""
        grant = (form.get("grant_type") or [""])[0]
        if grant != "client_credentials":
            return 400, {"error": "unsupported_grant_type", "error_description": f"grant_type {grant!r}"}
        client_id, secret = _basic(authorization) if authorization else (
            (form.get("client_id") or [""])[0], (form.get("client_secret") or [""])[0])
        if not client_id or self.clients.get(client_id) != secret:
            return 401, {"error": "invalid_client", "error_description": "client authentication failed"}
        scope = (form.get("scope") or [""])[0]
        self.issued += 1
        return 200, {"access_token": self.token(client_id, scope), "token_type": "Bearer",
                     "expires_in": self.lifetime_s, **({"scope": scope} if scope else {})}

    def token(self, subject: str, scope: str = "") -> str:
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import padding

        now = int(time.time())
        claims = {"iss": self.issuer, "sub": subject, "aud": self.audience, "iat": now, "nbf": now,
                  "exp": now + self.lifetime_s, "jti": uuid.uuid4().hex,
                  **({"scope": scope} if scope else {})}  # Kafka's validator refuses an empty scope claim
        head = {"alg": "RS256", "typ": "JWT", "kid": self.kid}
        signing_input = f"{b64url(json.dumps(head).encode())}.{b64url(json.dumps(claims).encode())}"
        signature = self._key.sign(signing_input.encode(), padding.PKCS1v15(), hashes.SHA256())
        return f"{signing_input}.{b64url(signature)}"

    def jwks(self) -> dict:
        pub = self._key.public_key().public_numbers()
        return {"keys": [{"kty": "RSA", "use": "sig", "alg": "RS256", "kid": self.kid,
                          "n": b64url(_int_bytes(pub.n)), "e": b64url(_int_bytes(pub.e))}]}


def _basic(header: str) -> tuple[str, str]:
    scheme, _, value = header.partition(" ")
    if scheme.lower() != "basic":
        return "", ""
    try:
        user, _, password = base64.b64decode(value).decode().partition(":")
    except ValueError:
        return "", ""
    return unquote_plus(user), unquote_plus(password)  # RFC 6749 2.3.1 form-encodes both; plain ones pass unchanged


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="oidc")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--client", default="cdcsync:cdcsync-secret", help="ID:SECRET of the one client")
    a = ap.parse_args(argv)
    cid, _, secret = a.client.partition(":")
    server = OidcServer({cid: secret}, port=a.port).start()
    print(f"token endpoint {server.token_url}\njwks {server.jwks_url}\nissuer {server.issuer}", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
