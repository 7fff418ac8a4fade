"""Kafka client security settings: Java-style properties ([source.properties]) and CLI flags become one `Security`.

Also the redaction helpers: secrets never reach repr(), describe(), or any text that passes through `scrub`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from cdcsync.errors import ConfigError
from cdcsync.secrets import is_secret_key

PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
PASSWORD_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")  # the ones the probe can authenticate with
MASK = "****"

_JAAS_OPT = re.compile(r'([A-Za-z_][\w.\-]*)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s;"]+))')
# Java's default sasl.mechanism is GSSAPI; the login module tells us what the operator meant.
_MODULE_MECHANISM = {"PlainLoginModule": "PLAIN", "OAuthBearerLoginModule": "OAUTHBEARER", "Krb5LoginModule": "GSSAPI",
                     "IAMLoginModule": "AWS_MSK_IAM"}


@dataclass(frozen=True)
class Security:
    protocol: str = "PLAINTEXT"
    sasl_mechanism: str | None = None
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    ssl_cafile: str | None = None
    ssl_cadata: str | None = field(default=None, repr=False)  # inline PEM (ssl.truststore.certificates)
    ssl_certfile: str | None = None
    ssl_keyfile: str | None = None
    ssl_key_password: str | None = field(default=None, repr=False)
    ssl_check_hostname: bool = True
    ssl_verify: bool = True
    origin: str = "defaults"  # where the settings came from, named in hints

    @property
    def tls(self) -> bool:
        return self.protocol in ("SSL", "SASL_SSL")

    @property
    def sasl(self) -> bool:
        return self.protocol in ("SASL_PLAINTEXT", "SASL_SSL")

    def secrets(self) -> list[str]:
        return [s for s in (self.password, self.ssl_key_password) if s]

    def describe(self) -> dict[str, Any]:
        """What the probe used, safe to print."""
        out: dict[str, Any] = {"security_protocol": self.protocol, "from": self.origin}
        if self.sasl:
            out.update(sasl_mechanism=self.sasl_mechanism, sasl_username=self.username,
                       sasl_password=MASK if self.password else None)
        if self.tls:
            out.update(ssl_cafile=self.ssl_cafile or ("inline PEM" if self.ssl_cadata else "system default CAs"),
                       ssl_certfile=self.ssl_certfile, ssl_check_hostname=self.ssl_check_hostname,
                       ssl_verify=self.ssl_verify)
        return out

    def kafka_python_kwargs(self) -> dict[str, Any]:
        """The same settings as kafka-python 2.x client kwargs (for code that uses its clients)."""
        kw: dict[str, Any] = {"security_protocol": self.protocol}
        if self.sasl:
            kw.update(sasl_mechanism=self.sasl_mechanism, sasl_plain_username=self.username,
                      sasl_plain_password=self.password)
        if self.tls:
            kw.update(ssl_cafile=self.ssl_cafile, ssl_certfile=self.ssl_certfile, ssl_keyfile=self.ssl_keyfile,
                      ssl_password=self.ssl_key_password, ssl_check_hostname=self.ssl_check_hostname)
        return {k: v for k, v in kw.items() if v is not None}


def parse_jaas(text: str) -> tuple[str | None, dict[str, str]]:
    """`org.apache...PlainLoginModule required username="u" password="p";` -> ("PlainLoginModule", options)."""
    head = text.strip().split(None, 1)
    module = head[0].rsplit(".", 1)[-1] if head else None
    opts = {m.group(1): (m.group(2) if m.group(2) is not None else m.group(3)) for m in _JAAS_OPT.finditer(text)}
    return module, {k: re.sub(r"\\(.)", r"\1", v) for k, v in opts.items()}


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
        certfile = _pem_file(p["ssl.certificate.location"], "ssl.certificate.location", None, origin)
        keyfile = _pem_file(p["ssl.key.location"], "ssl.key.location", None, origin) if p.get("ssl.key.location") \
            else None
    if p.get("ssl.keystore.location"):
        certfile = keyfile = _pem_file(p["ssl.keystore.location"], "ssl.keystore.location",
                                       p.get("ssl.keystore.type"), origin)
    algo = p.get("ssl.endpoint.identification.algorithm")
    sec = Security(
        protocol=protocol, sasl_mechanism=mechanism, username=username, password=password,
        ssl_cafile=cafile, ssl_cadata=cadata, ssl_certfile=certfile, ssl_keyfile=keyfile,
        ssl_key_password=p.get("ssl.key.password") or None,
        ssl_check_hostname=algo is None or algo.strip().lower() not in ("", "none"),
        ssl_verify=p.get("enable.ssl.certificate.verification", "true").lower() != "false", origin=origin,
    )
    if not sec.sasl:  # Kafka clients ignore SASL settings unless security.protocol is SASL_*; so does the probe
        return replace(sec, sasl_mechanism=None, username=None, password=None)
    return _default_mechanism(sec, module, origin)


def _default_mechanism(sec: Security, module: str | None, origin: str) -> Security:
    if not sec.sasl or sec.sasl_mechanism:
        return sec
    if module == "ScramLoginModule":
        raise ConfigError(f"{origin}: sasl.jaas.config uses ScramLoginModule but sasl.mechanism is not set "
                          "(Kafka clients then try GSSAPI)", hint="set sasl.mechanism = SCRAM-SHA-256 or SCRAM-SHA-512",
                          key="sasl.mechanism")
    return replace(sec, sasl_mechanism=_MODULE_MECHANISM.get(module or "", "GSSAPI"))


def _truststore(p: dict[str, str], origin: str) -> tuple[str | None, str | None]:
    if p.get("ssl.truststore.certificates"):
        return None, p["ssl.truststore.certificates"]
    if p.get("ssl.ca.location"):
        return _pem_file(p["ssl.ca.location"], "ssl.ca.location", None, origin), None
    if p.get("ssl.truststore.location"):
        return _pem_file(p["ssl.truststore.location"], "ssl.truststore.location", p.get("ssl.truststore.type"),
                         origin), None
    return None, None


def _pem_file(path: str, key: str, store_type: str | None, origin: str) -> str:
    """Python's ssl reads PEM only; a JKS/PKCS12 store is a config error with the keytool fix."""
    if store_type and store_type.upper() != "PEM":
        raise ConfigError(f"{origin}: {key} is a {store_type.upper()} store; cdcsync probe reads PEM files only",
                          hint="export it to PEM (keytool -exportcert -rfc -alias <ca> -keystore <file> > ca.pem) "
                               f"and set {key} to that file with the type PEM", key=key)
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
        changes["ssl_cafile"] = _pem_file(flags.ssl_cafile, "--ssl-cafile", None, "command line")
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


def check(sec: Security) -> Security:
    """Settings that cannot work whatever the broker says: a config error (exit 78) before any connection."""
    if sec.sasl and sec.sasl_mechanism in PASSWORD_MECHANISMS and not (sec.username and sec.password):
        raise ConfigError(f"{sec.origin}: sasl.mechanism = {sec.sasl_mechanism} needs a username and a password",
                          hint='set sasl.jaas.config = "...PlainLoginModule required username=\\"u\\" '
                               'password=\\"p\\";" (or ScramLoginModule), or pass --sasl-username/--sasl-password',
                          key="sasl.jaas.config")
    if not sec.sasl and (sec.sasl_mechanism or sec.username):
        raise ConfigError(f"{sec.origin}: SASL settings are given but security.protocol is {sec.protocol}, "
                          "so Kafka clients ignore them",
                          hint="set security.protocol = SASL_PLAINTEXT or SASL_SSL (or drop the SASL settings)",
                          key="security.protocol")
    return sec


def secret_values(props: dict[str, Any]) -> list[str]:
    """Every secret in a property map (JAAS passwords included), for scrubbing output."""
    out = []
    for k, v in props.items():
        if v in (None, "") or not is_secret_key(k):
            continue
        out.append(str(v))
        if "jaas" in k.lower():
            out += [val for key, val in parse_jaas(str(v))[1].items() if is_secret_key(key) and val]
    return out


def redact_properties(props: dict[str, Any]) -> dict[str, Any]:
    """Secret values masked; a JAAS line keeps its module and username but loses its password."""
    out: dict[str, Any] = {}
    for k, v in props.items():
        if "jaas" in k.lower() and isinstance(v, str):
            out[k] = _JAAS_OPT.sub(lambda m: m.group(0) if m.group(1) == "username" else f'{m.group(1)}="{MASK}"', v)
        else:
            out[k] = MASK if is_secret_key(k) and v not in (None, "") else v
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
