"""Kafka client security settings: Java-style properties ([source.properties]) and CLI flags become one `Security`.

Also the redaction helpers: secrets never reach repr(), describe(), or any text that passes through `scrub`.
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cdcsync.errors import ConfigError
from cdcsync.kafka import msk, oidc
from cdcsync.kafka.jaas import MODULE_MECHANISM, escape, parse_jaas
from cdcsync.secrets import is_secret_key

if TYPE_CHECKING:
    from cdcsync.kafka.stores import Store

PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
PASSWORD_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
TOKEN_MECHANISMS = ("OAUTHBEARER", "AWS_MSK_IAM")  # with an OIDC token endpoint, with AWS credentials
MASK = "****"


@dataclass(frozen=True)
class Security:
    protocol: str = "PLAINTEXT"
    sasl_mechanism: str | None = None
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    ssl_cafile: str | None = None
    ssl_cadata: str | None = field(default=None, repr=False)  # PEM text: inline, or read from a JKS/PKCS12 store
    ssl_certfile: str | None = None
    ssl_keyfile: str | None = None
    ssl_key_password: str | None = field(default=None, repr=False)
    ssl_keystore_pem: str | None = field(default=None, repr=False)  # key and chain read from a JKS/PKCS12/inline store
    ssl_check_hostname: bool = True
    ssl_verify: bool = True
    oauth: oidc.OidcClient | None = None  # OAUTHBEARER's token endpoint and client credentials
    aws_profile: str | None = None  # AWS_MSK_IAM's awsProfileName; None: botocore's default credential chain
    origin: str = "defaults"  # where the settings came from, named in hints

    @property
    def tls(self) -> bool:
        return self.protocol in ("SSL", "SASL_SSL")

    @property
    def sasl(self) -> bool:
        return self.protocol in ("SASL_PLAINTEXT", "SASL_SSL")

    def secrets(self) -> list[str]:
        return [s for s in (self.password, self.ssl_key_password, self.oauth and self.oauth.client_secret) if s]

    @property
    def authenticates(self) -> bool:
        """The probe and the planner can log in with this mechanism and these settings."""
        return self.sasl_mechanism in PASSWORD_MECHANISMS or self.sasl_mechanism == "AWS_MSK_IAM" or \
            (self.sasl_mechanism == "OAUTHBEARER" and self.oauth is not None)

    def token_provider(self) -> oidc.TokenProvider | None:
        return oidc.TokenProvider(self.oauth) if self.sasl_mechanism == "OAUTHBEARER" and self.oauth else None

    def describe(self) -> dict[str, Any]:
        """What the probe used, safe to print."""
        out: dict[str, Any] = {"security_protocol": self.protocol, "from": self.origin}
        if self.sasl:
            out.update(sasl_mechanism=self.sasl_mechanism, sasl_username=self.username,
                       sasl_password=MASK if self.password else None)
        if self.sasl and self.oauth:
            out.update(sasl_oauthbearer_token_endpoint=self.oauth.endpoint, sasl_oauthbearer_scope=self.oauth.scope,
                       sasl_oauthbearer_client_id=self.oauth.client_id, sasl_oauthbearer_client_secret=MASK)
        if self.sasl_mechanism == "AWS_MSK_IAM":
            out.update(aws_profile=self.aws_profile or "default credential chain")
        if self.tls:
            out.update(ssl_cafile=self.ssl_cafile or ("from the trust store" if self.ssl_cadata else
                                                      "system default CAs"),
                       ssl_certfile=self.ssl_certfile or ("from the key store" if self.ssl_keystore_pem else None),
                       ssl_check_hostname=self.ssl_check_hostname,
                       ssl_verify=self.ssl_verify)
        return out

    def kafka_python_kwargs(self) -> dict[str, Any]:
        """The same settings as kafka-python 2.x client kwargs (for code that uses its clients)."""
        kw: dict[str, Any] = {"security_protocol": self.protocol}
        if self.sasl:
            kw.update(sasl_mechanism=self.sasl_mechanism, sasl_plain_username=self.username,
                      sasl_plain_password=self.password)
        if self.sasl_mechanism == "AWS_MSK_IAM":
            msk.install(self.aws_profile)
        tokens = self.token_provider()
        if tokens is not None:
            tokens.token()  # now: a refused client fails here with the endpoint's answer, not in kafka-python's retries
            kw.update(sasl_oauth_token_provider=tokens)
        if self.tls:  # one context, so trust stores, inline PEM and verification reach kafka-python too
            kw.update(ssl_context=self.ssl_context(), ssl_check_hostname=self.ssl_check_hostname)
        return {k: v for k, v in kw.items() if v is not None}

    def ssl_context(self) -> ssl.SSLContext:
        """Like a Java client: verify against the given CA (or the system's), check the hostname unless turned off.
        A CA, certificate or key that cannot be loaded is a config error, found before connecting."""
        try:
            ctx = ssl.create_default_context(cafile=self.ssl_cafile, cadata=self.ssl_cadata)
            if self.ssl_certfile:
                ctx.load_cert_chain(self.ssl_certfile, self.ssl_keyfile, password=self.ssl_key_password)
            elif self.ssl_keystore_pem:
                _load_chain_from_memory(ctx, self.ssl_keystore_pem, self.ssl_key_password)
        except (ssl.SSLError, OSError) as e:
            reason = getattr(e, "reason", None) or getattr(e, "strerror", None) or e
            raise ConfigError(f"{self.origin}: cannot load the TLS files: {reason}",
                              hint="check ssl.truststore.* / ssl.ca.location, ssl.keystore.* / "
                                   "ssl.certificate.location, ssl.key.location and ssl.key.password") from None
        ctx.check_hostname = self.ssl_check_hostname and self.ssl_verify
        if not self.ssl_verify:
            ctx.verify_mode = ssl.CERT_NONE
        return ctx


def _load_chain_from_memory(ctx: ssl.SSLContext, pem_text: str, password: str | None) -> None:
    """Python's ssl loads a key from a file only: a private file that lives for the call."""
    import os
    import tempfile

    fd, path = tempfile.mkstemp(prefix="cdcsync-key-", suffix=".pem")  # mode 0600
    try:
        with os.fdopen(fd, "w") as f:
            f.write(pem_text)
        ctx.load_cert_chain(path, password=password)
    finally:
        os.unlink(path)


def from_properties(props: dict[str, Any], origin: str = "[source.properties]") -> Security:
    """Map Java client properties (plus librdkafka's ssl.ca.location / sasl.username spellings) to a Security."""
    p = {str(k).strip(): ("" if v is None else str(v)) for k, v in props.items()}
    protocol = (p.get("security.protocol") or "PLAINTEXT").upper()
    if protocol not in PROTOCOLS:
        raise ConfigError(f"{origin}: security.protocol = {protocol!r} is not one of {', '.join(PROTOCOLS)}",
                          hint="use the protocol of the broker listener you connect to", key="security.protocol")
    module, jaas = parse_jaas(p["sasl.jaas.config"]) if p.get("sasl.jaas.config") else (None, {})
    mechanism = (p.get("sasl.mechanism") or "").upper() or None
    username = p.get("sasl.username") or jaas.get("username")
    password = p.get("sasl.password") or jaas.get("password")
    cafile, cadata = _truststore(p, origin)
    certfile = keyfile = None
    if p.get("ssl.certificate.location"):
        certfile = _pem_file(p["ssl.certificate.location"], "ssl.certificate.location", origin)
        keyfile = _pem_file(p["ssl.key.location"], "ssl.key.location", origin) if p.get("ssl.key.location") \
            else None
    keystore_pem = None
    if p.get("ssl.keystore.location") and _store_type(p, "ssl.keystore.type") == "PEM":
        certfile = keyfile = _pem_file(p["ssl.keystore.location"], "ssl.keystore.location", origin)
    elif p.get("ssl.keystore.location"):
        store = _java_store(p, "ssl.keystore", origin, p.get("ssl.key.password"))
        if store.key is None:
            raise ConfigError(f"{origin}: ssl.keystore.location = {p['ssl.keystore.location']} holds no private key",
                              hint="a client key store holds the client's key and certificate chain",
                              key="ssl.keystore.location")
        keystore_pem = store.key + "".join(store.certs)
    elif p.get("ssl.keystore.key") and p.get("ssl.keystore.certificate.chain"):  # Kafka's inline PEM key store
        keystore_pem = p["ssl.keystore.key"].strip() + "\n" + p["ssl.keystore.certificate.chain"].strip() + "\n"
    algo = p.get("ssl.endpoint.identification.algorithm")
    sec = Security(oauth=oidc.from_jaas(p, module, jaas), aws_profile=jaas.get("awsProfileName") or None,
        protocol=protocol, sasl_mechanism=mechanism, username=username, password=password,
        ssl_cafile=cafile, ssl_cadata=cadata, ssl_certfile=certfile, ssl_keyfile=keyfile,
        ssl_key_password=p.get("ssl.key.password") or None, ssl_keystore_pem=keystore_pem,
        ssl_check_hostname=algo is None or algo.strip().lower() not in ("", "none"),
        ssl_verify=p.get("enable.ssl.certificate.verification", "true").lower() != "false", origin=origin,
    )
    if not sec.sasl:  # Kafka clients ignore SASL settings unless security.protocol is SASL_*; so does the probe
        return replace(sec, sasl_mechanism=None, username=None, password=None, oauth=None, aws_profile=None)
    return _default_mechanism(sec, module, origin)


def _default_mechanism(sec: Security, module: str | None, origin: str) -> Security:
    if not sec.sasl or sec.sasl_mechanism:
        return sec
    if module == "ScramLoginModule":
        raise ConfigError(f"{origin}: sasl.jaas.config uses ScramLoginModule but sasl.mechanism is not set "
                          "(Kafka clients then try GSSAPI)", hint="set sasl.mechanism = SCRAM-SHA-256 or SCRAM-SHA-512",
                          key="sasl.mechanism")
    return replace(sec, sasl_mechanism=MODULE_MECHANISM.get(module or "", "GSSAPI"))


def _truststore(p: dict[str, str], origin: str) -> tuple[str | None, str | None]:
    if p.get("ssl.truststore.certificates"):
        return None, p["ssl.truststore.certificates"]
    if p.get("ssl.ca.location"):
        return _pem_file(p["ssl.ca.location"], "ssl.ca.location", origin), None
    if p.get("ssl.truststore.location"):
        if _store_type(p, "ssl.truststore.type") == "PEM":
            return _pem_file(p["ssl.truststore.location"], "ssl.truststore.location", origin), None
        store = _java_store(p, "ssl.truststore", origin)
        if not store.certs:
            raise ConfigError(f"{origin}: ssl.truststore.location = {p['ssl.truststore.location']} holds no "
                              "trusted certificate", hint="import the brokers' CA (keytool -importcert ...)",
                              key="ssl.truststore.location")
        return None, "".join(store.certs)
    return None, None


def _store_type(p: dict[str, str], key: str) -> str:
    return (p.get(key) or "JKS").strip().upper()  # Kafka's default store type is JKS


def _java_store(p: dict[str, str], prefix: str, origin: str, key_password: str | None = None) -> Store:
    """A JKS or PKCS12 store read as Kafka's Java client reads it (type, store password, key password)."""
    from cdcsync.kafka.stores import StoreError, read_store

    key, kind = f"{prefix}.location", _store_type(p, f"{prefix}.type")
    f = Path(p[key]).expanduser()
    try:
        data = f.read_bytes()
    except OSError as e:
        raise ConfigError(f"{origin}: {key} = {p[key]}: {e.strerror or e}", hint="point it at a readable store file",
                          key=key) from None
    if b"-----BEGIN" in data[:4096]:
        default = "" if p.get(f"{prefix}.type") else " (the Kafka default)"
        raise ConfigError(f"{origin}: {key} = {p[key]} is a PEM file but {prefix}.type is {kind}{default}",
                          hint=f"set {prefix}.type = PEM", key=f"{prefix}.type")
    try:
        return read_store(data, kind, p.get(f"{prefix}.password") or None, key_password)
    except StoreError as e:
        raise ConfigError(f"{origin}: {key} = {p[key]} ({kind}): {e}",
                          hint=f"check {prefix}.type, {prefix}.password and ssl.key.password", key=key) from None


def _pem_file(path: str, key: str, origin: str) -> str:
    f = Path(path).expanduser()
    try:
        head = f.read_bytes()[:4096]
    except OSError as e:
        raise ConfigError(f"{origin}: {key} = {path}: {e.strerror or e}", hint="point it at a readable PEM file",
                          key=key) from None
    if b"-----BEGIN" not in head:
        raise ConfigError(f"{origin}: {key} = {path} is not a PEM file (JKS or PKCS12?)",
                          hint="export it to PEM (keytool -exportcert -rfc ...; openssl pkcs12 -nokeys ...)", key=key)
    return str(f)


@dataclass(frozen=True)
class Flags:
    """The command line's security options; None leaves the config file's setting."""
    security_protocol: str | None = None
    sasl_mechanism: str | None = None
    sasl_username: str | None = None
    sasl_password: str | None = field(default=None, repr=False)
    ssl_cafile: str | None = None
    ssl_check_hostname: bool | None = None


def with_flags(base: Security, flags: Flags) -> Security:
    """CLI flags override the config file, one setting at a time."""
    changes: dict[str, Any] = {}
    if flags.security_protocol:
        proto = flags.security_protocol.upper()
        if proto not in PROTOCOLS:
            raise ConfigError(f"--security-protocol {flags.security_protocol!r} is not one of "
                              f"{', '.join(PROTOCOLS)}", hint="use the protocol of the broker listener you connect to")
        changes["protocol"] = proto
    if flags.sasl_mechanism:
        changes["sasl_mechanism"] = flags.sasl_mechanism.upper()
    if flags.sasl_username is not None:
        changes["username"] = flags.sasl_username
    if flags.sasl_password is not None:
        changes["password"] = flags.sasl_password
    if flags.ssl_cafile:
        changes["ssl_cafile"] = _pem_file(flags.ssl_cafile, "--ssl-cafile", "command line")
        changes["ssl_cadata"] = None
    if flags.ssl_check_hostname is not None:
        changes["ssl_check_hostname"] = flags.ssl_check_hostname
    if not changes:
        return base
    origin = "command line" if base.origin == "defaults" else f"{base.origin} and command line"
    sec = replace(base, **changes, origin=origin)
    if sec.sasl and not sec.sasl_mechanism:
        sec = replace(sec, sasl_mechanism="GSSAPI")
    return sec


# librdkafka spellings the probe accepts: Spark's Java client ignores them, so run converts them or refuses them
_JAVA_LOGIN = {"PLAIN": "org.apache.kafka.common.security.plain.PlainLoginModule",
               "SCRAM-SHA-256": "org.apache.kafka.common.security.scram.ScramLoginModule",
               "SCRAM-SHA-512": "org.apache.kafka.common.security.scram.ScramLoginModule"}


def java_properties(props: dict[str, Any], origin: str = "[source.properties]") -> dict[str, str]:
    """[source.properties] as Spark's Java Kafka client must get them to mean what the offset planner does."""
    p = {str(k).strip(): ("" if v is None else str(v)) for k, v in props.items()}
    for key in ("ssl.certificate.location", "ssl.key.location"):
        if p.get(key):
            raise ConfigError(f"{origin}: {key} is librdkafka's setting; Spark's Java Kafka client ignores it",
                              hint="put the key and its certificate chain in one PEM file and set "
                                   "ssl.keystore.type = PEM and ssl.keystore.location to it", key=key)
    if p.pop("enable.ssl.certificate.verification", "true").strip().lower() == "false":
        raise ConfigError(f"{origin}: enable.ssl.certificate.verification = false is librdkafka's; a Java client "
                          "always verifies the brokers' certificates", hint="give the brokers' CA in "
                          "ssl.truststore.location (or ssl.ca.location)", key="enable.ssl.certificate.verification")
    if p.get("ssl.ca.location"):
        p.setdefault("ssl.truststore.type", "PEM")
        p.setdefault("ssl.truststore.location", p["ssl.ca.location"])
    p.pop("ssl.ca.location", None)
    user, password = p.pop("sasl.username", ""), p.pop("sasl.password", "")
    if user:  # the planner takes these over the JAAS line's: so must Java
        jaas = p.get("sasl.jaas.config", "")
        module = jaas.split(None, 1)[0] if jaas.strip() else None
        if jaas and any(parse_jaas(jaas)[1].get(k) not in (None, v) for k, v in (("username", user),
                                                                                  ("password", password))):
            raise ConfigError(f"{origin}: sasl.username/sasl.password and sasl.jaas.config name different "
                              "credentials", hint="keep one of them", key="sasl.username")
        mechanism = (p.get("sasl.mechanism") or MODULE_MECHANISM.get((module or "").rsplit(".", 1)[-1], "PLAIN"))
        if not module and mechanism.upper() not in _JAVA_LOGIN:
            raise ConfigError(f"{origin}: sasl.username is set for sasl.mechanism {mechanism}",
                              hint="set sasl.jaas.config for that mechanism", key="sasl.username")
        p["sasl.mechanism"] = mechanism.upper()
        p["sasl.jaas.config"] = f'{module or _JAVA_LOGIN[mechanism.upper()]} required ' \
                                f'username="{escape(user)}" password="{escape(password)}";'
    _token_settings(p, origin)
    return p


def _token_settings(p: dict[str, str], origin: str) -> None:
    """OAUTHBEARER and AWS_MSK_IAM as both clients must get them (their modules say how)."""
    if (p.get("security.protocol") or "").upper() not in ("SASL_PLAINTEXT", "SASL_SSL"):
        return
    module, jaas = parse_jaas(p["sasl.jaas.config"]) if p.get("sasl.jaas.config") else (None, {})
    mechanism = (p.get("sasl.mechanism") or MODULE_MECHANISM.get(module or "", "")).upper()
    if mechanism == "OAUTHBEARER" and p.get(oidc.URL_KEY):
        oidc.java_settings(p, origin)
    elif mechanism == "AWS_MSK_IAM":
        msk.check(p, module, jaas, origin)
        msk.java_settings(p)


def for_clients(props: dict[str, Any], origin: str = "[source.properties]") -> tuple[Security, dict[str, str]]:
    """The settings both clients of a run use: kafka-python's (offsets) and the Java client's (Spark's read).
    Everything that can be checked without a broker is, so `validate` and a run's start fail the same way."""
    java = java_properties(props, origin)  # first: a setting Spark would ignore matters more than its file
    sec = check(from_properties(props, origin))
    if sec.sasl and sec.sasl_mechanism == "OAUTHBEARER" and sec.oauth is None:
        raise oidc.no_endpoint(origin)
    if sec.sasl and not sec.authenticates:
        raise ConfigError(f"{origin}: sasl.mechanism = {sec.sasl_mechanism}: cdcsync's offset planner "
                          f"(kafka-python) authenticates with {', '.join(PASSWORD_MECHANISMS + TOKEN_MECHANISMS)} "
                          "only", hint="use one of those mechanisms on a listener the brokers offer",
                          key="sasl.mechanism")
    if sec.tls:
        sec.ssl_context()  # files and passwords, loaded once now
    return sec, java


def check(sec: Security) -> Security:
    """Settings that cannot work whatever the broker says: a config error (exit 78) before any connection."""
    if sec.sasl and sec.sasl_mechanism in PASSWORD_MECHANISMS and not (sec.username and sec.password):
        raise ConfigError(f"{sec.origin}: sasl.mechanism = {sec.sasl_mechanism} needs a username and a password",
                          hint='set sasl.jaas.config = "...PlainLoginModule required username=\\"u\\" '
                               'password=\\"p\\";" (or ScramLoginModule), or pass --sasl-username/--sasl-password',
                          key="sasl.jaas.config")
    if sec.sasl and sec.sasl_mechanism == "OAUTHBEARER" and sec.oauth:
        oidc.check(sec.oauth, sec.origin)
    if sec.sasl and sec.sasl_mechanism == "AWS_MSK_IAM":
        msk.check_protocol(sec.protocol, sec.origin)
    if not sec.sasl and (sec.sasl_mechanism or sec.username):
        raise ConfigError(f"{sec.origin}: SASL settings are given but security.protocol is {sec.protocol}, "
                          "so Kafka clients ignore them",
                          hint="set security.protocol = SASL_PLAINTEXT or SASL_SSL (or drop the SASL settings)",
                          key="security.protocol")
    return sec


def secret_values(props: dict[str, Any]) -> list[str]:
    """Every secret in a property map (JAAS passwords included), for scrubbing output. Of a URL (the OIDC token
    endpoint's), its user info: the rest names where the secret is sent, which a message must be able to say."""
    out = []
    for k, v in props.items():
        if v in (None, "") or not is_secret_key(k):
            continue
        out.append(oidc.url_secret(str(v)) if k.lower().endswith(".url") else str(v))
        if "jaas" in k.lower():
            out += [val for key, val in parse_jaas(str(v))[1].items() if is_secret_key(key) and val]
    return out


def scrub(value: Any, secrets: list[str]) -> Any:
    """Replace every occurrence of each secret in strings nested in dicts/lists (last line of defence)."""
    secrets = sorted({s for s in secrets if s}, key=len, reverse=True)
    if not secrets:
        return value
    if isinstance(value, str):
        for s in secrets:
            value = value.replace(s, MASK)
        return value
    if isinstance(value, dict):
        return {k: scrub(v, secrets) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [scrub(v, secrets) for v in value]
    return value
