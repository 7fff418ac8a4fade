"""OAUTHBEARER with OIDC client credentials, read from Kafka's own settings (`sasl.oauthbearer.token.endpoint.url`,
`OAuthBearerLoginModule required clientId=".." clientSecret=".." scope="..";`) for both clients: Spark's Java client
gets Kafka's OIDC login handler, kafka-python (planner, probe, infer-schema) a token provider that asks the endpoint
as that handler does and caches the token until it is due for refresh."""

from __future__ import annotations

import base64
import json
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from typing import Any

from kafka.errors import KafkaError
from kafka.sasl.oauth import AbstractTokenProvider

from cdcsync.errors import CdcsyncError, ConfigError
from cdcsync.exit_codes import ExitCode

# kafka-clients 3.4.1 has the handler at both names; the `secured` one is its deprecated alias
LOGIN_HANDLER = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler"
LOGIN_HANDLERS = (LOGIN_HANDLER, "org.apache.kafka.common.security.oauthbearer.secured.OAuthBearerLoginCallbackHandler")
URL_KEY = "sasl.oauthbearer.token.endpoint.url"
REFRESH_FACTOR = 0.8  # Kafka's sasl.login.refresh.window.factor default: a new token at 80% of its lifetime
MASK = "****"


@dataclass(frozen=True)
class OidcClient:
    """Where and as whom to ask for tokens; `repr` never shows the secret."""
    token_url: str
    client_id: str
    client_secret: str = field(repr=False)
    scope: str | None = None

    @property
    def endpoint(self) -> str:
        """The token URL without user info or query, safe to print."""
        u = urllib.parse.urlsplit(self.token_url)
        return urllib.parse.urlunsplit((u.scheme, u.netloc.rpartition("@")[2], u.path, "", ""))


def url_secret(url: str) -> str:
    """The secret part of a URL: its user info (user:password@), else nothing."""
    netloc = urllib.parse.urlsplit(url).netloc
    return netloc.rpartition("@")[0] if "@" in netloc else ""


class TokenError(KafkaError, CdcsyncError):
    """The token endpoint gave no token: `kind` is unreachable (no answer, or a server error), refused (it answered
    4xx: the credentials or the request) or bad_answer (200 without a usable token). The message names the endpoint's
    answer, never the secret. A KafkaError, so a KafkaView asks the probe like for a refused SASL login; a
    CdcsyncError (69 or 77), so any other command stops with it."""

    def __init__(self, kind: str, message: str):
        CdcsyncError.__init__(self, message, hint="check sasl.oauthbearer.token.endpoint.url and clientId/clientSecret"
                              " in sasl.jaas.config; 'cdcsync probe --config' names the failing hop",
                              exit_code=ExitCode.UNREACHABLE if kind == "unreachable" else ExitCode.AUTH)
        self.kind = kind


def from_jaas(p: dict[str, str], module: str | None, jaas: dict[str, str]) -> OidcClient | None:
    """The client of Kafka's OIDC login handler: the endpoint URL and the login module's clientId/clientSecret."""
    if not p.get(URL_KEY) or module != "OAuthBearerLoginModule":
        return None
    return OidcClient(p[URL_KEY].strip(), jaas.get("clientId") or "", jaas.get("clientSecret") or "",
                      jaas.get("scope") or None)


def check(client: OidcClient, origin: str) -> None:
    scheme = urllib.parse.urlsplit(client.token_url).scheme
    if scheme not in ("http", "https"):
        raise ConfigError(f"{origin}: {URL_KEY} must be an http(s) URL (Kafka 3.4's clients read file: tokens, the "
                          "planner does not)", hint="give the identity provider's token endpoint", key=URL_KEY)
    if not (client.client_id and client.client_secret):
        raise ConfigError(f"{origin}: sasl.mechanism = OAUTHBEARER with {URL_KEY} needs clientId and clientSecret",
                          hint='set sasl.jaas.config = "org.apache.kafka.common.security.oauthbearer.'
                               'OAuthBearerLoginModule required clientId=\\"..\\" clientSecret=\\"..\\" '
                               'scope=\\"..\\";"', key="sasl.jaas.config")


def no_endpoint(origin: str) -> ConfigError:
    return ConfigError(f"{origin}: sasl.mechanism = OAUTHBEARER without {URL_KEY}: cdcsync's offset planner "
                       "(kafka-python) gets tokens from an OIDC token endpoint with client credentials only",
                       hint=f'set {URL_KEY} and sasl.jaas.config = "org.apache.kafka.common.security.oauthbearer.'
                            'OAuthBearerLoginModule required clientId=\\"..\\" clientSecret=\\"..\\";"', key=URL_KEY)


def java_settings(p: dict[str, str], origin: str) -> None:
    """Kafka's OIDC login handler for Spark's client, unless the config names it already; any other handler fetches
    tokens the planner cannot, so it is refused."""
    handler = p.setdefault("sasl.login.callback.handler.class", LOGIN_HANDLER).strip()
    if handler not in LOGIN_HANDLERS:
        raise ConfigError(f"{origin}: sasl.login.callback.handler.class = {handler} with {URL_KEY}: the offset "
                          "planner (kafka-python) asks the token endpoint as Kafka's OIDC login handler does, not as "
                          "this class", hint=f"remove it (cdcsync sets {LOGIN_HANDLER})",
                          key="sasl.login.callback.handler.class")


class TokenProvider(AbstractTokenProvider):
    """kafka-python's OAUTHBEARER token: client credentials POSTed as Kafka 3.4's HttpAccessTokenRetriever does
    (HTTP Basic client_id:client_secret, form grant_type=client_credentials and scope), one token for all connections
    until it is due for refresh. Thread-safe: the probe's ladders share one."""

    def __init__(self, client: OidcClient, timeout: float = 10.0):
        super().__init__()
        self.client = client
        self.timeout = timeout
        self._lock = threading.Lock()
        self._token: str | None = None
        self._refresh_at = 0.0
        self.expires_at = 0.0  # the token's exp claim

    def token(self) -> str:
        with self._lock:
            if self._token is None or time.time() >= self._refresh_at:
                started = time.time()
                self._token, self.expires_at = self._fetch()
                self._refresh_at = started + max(self.expires_at - started, 0.0) * REFRESH_FACTOR
            return self._token

    def _fetch(self) -> tuple[str, float]:
        """(the access token, its expiry)."""
        c = self.client
        form = {"grant_type": "client_credentials", **({"scope": c.scope} if c.scope else {})}
        basic = base64.b64encode(f"{c.client_id}:{c.client_secret}".encode()).decode()
        req = urllib.request.Request(c.token_url, data=urllib.parse.urlencode(form).encode(), method="POST", headers={
            "Authorization": f"Basic {basic}", "Accept": "application/json",
            "Content-Type": "application/x-www-form-urlencoded"})
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as r:
                body = r.read()
        except urllib.error.HTTPError as e:
            answer = self._scrub(_oauth_error(e))
            kind = "refused" if 400 <= e.code < 500 else "unreachable"
            raise TokenError(kind, f"the token endpoint {c.endpoint} answered HTTP {e.code} {answer}") from None
        except (urllib.error.URLError, OSError) as e:
            reason = getattr(e, "reason", None) or e
            raise TokenError("unreachable", f"the token endpoint {c.endpoint} is unreachable ({reason})") from None
        return self._parse(body)

    def _parse(self, body: bytes) -> tuple[str, float]:
        where = f"the token endpoint {self.client.endpoint}"
        try:
            answer = json.loads(body)
            token = answer["access_token"]
        except (ValueError, KeyError, TypeError):
            raise TokenError("bad_answer", f"{where} answered HTTP 200 without an access_token") from None
        claims = _claims(token)
        if claims is None or not isinstance(claims.get("exp"), (int, float)) or not claims.get("sub"):
            raise TokenError("bad_answer", f"{where} issued a token that is not a JWT with sub and exp claims "
                             "(Kafka's login handler refuses it)")
        return token, float(claims["exp"])

    def _scrub(self, text: str) -> str:
        return text.replace(self.client.client_secret, MASK) if self.client.client_secret else text


def _oauth_error(e: urllib.error.HTTPError) -> str:
    """RFC 6749 5.2's `error` and `error_description`, else the start of the body."""
    try:
        raw = e.read(2048).decode(errors="replace")
    except OSError:
        raw = ""
    try:
        doc = json.loads(raw)
        if isinstance(doc, dict) and doc.get("error"):
            return f"{doc['error']}" + (f": {doc['error_description']}" if doc.get("error_description") else "")
    except ValueError:
        pass
    return (raw.strip().splitlines() or [e.reason or ""])[0][:200]


def _claims(token: str) -> dict[str, Any] | None:
    parts = token.split(".")
    if len(parts) != 3:
        return None
    try:
        claims = json.loads(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)))
    except ValueError:
        return None
    return claims if isinstance(claims, dict) else None
