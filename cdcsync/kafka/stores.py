"""Java key and trust stores (JKS, PKCS12) read without a JVM, as PEM text for Python's ssl module.

Kafka's Java client (Spark's reader) opens these stores itself; the offset planner, `probe` and `status` use
kafka-python, which reads PEM only. Reading the same file here is how one `[source.properties]` means the same
thing on both sides instead of working for one and failing for the other.
"""

from __future__ import annotations

import base64
import hashlib
import struct
import textwrap
from dataclasses import dataclass, field

_JKS_MAGIC = 0xFEEDFEED
_JKS_KEY_PROTECTOR = bytes.fromhex("2b060104012a02110101")  # OID 1.3.6.1.4.1.42.2.17.1.1


class StoreError(ValueError):
    """The store cannot be read: wrong password, not a JKS/PKCS12 file, or an entry type a client cannot use."""


@dataclass(frozen=True)
class Store:
    certs: list[str]  # PEM certificates: the trusted ones (trust store), or the key's chain (key store)
    key: str | None = field(default=None, repr=False)  # PEM PKCS#8 private key (key store)


def read_store(data: bytes, store_type: str, password: str | None, key_password: str | None = None) -> Store:
    """A store's contents. Like Java since 9, type JKS also opens a PKCS12 file (keystore.type.compat)."""
    kind = store_type.upper()
    if kind not in ("JKS", "PKCS12"):
        raise StoreError(f"store type {store_type!r} is not JKS, PKCS12 or PEM")
    if data[:4] == struct.pack(">I", _JKS_MAGIC):
        if kind == "PKCS12":
            raise StoreError("the file is a JKS store but its type is PKCS12")
        return _jks(data, password, key_password or password)
    return _pkcs12(data, password)


def pem(der: bytes, label: str) -> str:
    body = "\n".join(textwrap.wrap(base64.b64encode(der).decode(), 64))
    return f"-----BEGIN {label}-----\n{body}\n-----END {label}-----\n"


def _pkcs12(data: bytes, password: str | None) -> Store:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.serialization import pkcs12

    try:
        p12 = pkcs12.load_pkcs12(data, password.encode() if password else None)
    except ValueError as e:
        raise StoreError(f"not a PKCS12 store, or the store password is wrong ({e})") from None
    enc = serialization.Encoding.PEM
    certs = ([p12.cert.certificate] if p12.cert else []) + [c.certificate for c in p12.additional_certs]
    key = None
    if p12.key is not None:
        key = p12.key.private_bytes(enc, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()).decode()
    return Store([c.public_bytes(enc).decode() for c in certs], key)


class _Reader:
    def __init__(self, data: bytes):
        self.data, self.pos = data, 0

    def take(self, n: int) -> bytes:
        if self.pos + n > len(self.data):
            raise StoreError("the JKS store is truncated")
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def u32(self) -> int:
        return int(struct.unpack(">I", self.take(4))[0])

    def utf(self) -> str:
        return self.take(struct.unpack(">H", self.take(2))[0]).decode("utf-8", "replace")

    def cert(self, version: int) -> bytes:
        if version == 2 and self.utf() != "X.509":
            raise StoreError("the JKS store holds a certificate that is not X.509")
        return self.take(self.u32())


def _jks(data: bytes, password: str | None, key_password: str | None) -> Store:
    """The JKS layout (sun.security.provider.JavaKeyStore): entries, then SHA-1 over password and contents."""
    r = _Reader(data)
    r.take(4)
    version = r.u32()
    if version not in (1, 2):
        raise StoreError(f"unknown JKS version {version}")
    trusted: list[bytes] = []
    chain: list[bytes] = []
    protected: bytes | None = None
    for _ in range(r.u32()):
        tag = r.u32()
        r.utf(), r.take(8)  # alias and creation time
        if tag == 1:
            if protected is not None:
                raise StoreError("the JKS store holds more than one private key; Kafka clients need exactly one")
            protected = r.take(r.u32())
            chain = [r.cert(version) for _ in range(r.u32())]
        elif tag == 2:
            trusted.append(r.cert(version))
        else:
            raise StoreError("the JKS store holds a secret-key entry (JCEKS?); use a JKS or PKCS12 store")
    if password:
        pw = password.encode("utf-16-be")
        if hashlib.sha1(pw + b"Mighty Aphrodite" + data[:r.pos]).digest() != r.take(20):
            raise StoreError("the store password is wrong (or the JKS file was altered)")
    key = _recover_key(protected, key_password) if protected is not None else None
    certs = chain if key else trusted  # a key store's chain; a trust store's trusted certificates
    return Store([pem(c, "CERTIFICATE") for c in certs], pem(key, "PRIVATE KEY") if key else None)


def _recover_key(protected: bytes, password: str | None) -> bytes:
    """sun.security.provider.KeyProtector: salt, the PKCS#8 key XORed with a SHA-1 stream, SHA-1 check."""
    if not password:
        raise StoreError("the JKS store's private key needs a password (ssl.key.password or ssl.keystore.password)")
    algorithm, blob = _der_encrypted_key(protected)
    if algorithm != _JKS_KEY_PROTECTOR:
        raise StoreError("the JKS private key is not protected by the JKS key protector")
    pw = password.encode("utf-16-be")
    salt, body, check = blob[:20], blob[20:-20], blob[-20:]
    stream, digest = b"", salt
    while len(stream) < len(body):
        digest = hashlib.sha1(pw + digest).digest()
        stream += digest
    key = bytes(a ^ b for a, b in zip(body, stream[:len(body)], strict=True))
    if hashlib.sha1(pw + key).digest() != check:
        raise StoreError("the private key's password is wrong (ssl.key.password)")
    return key


def _der_encrypted_key(der: bytes) -> tuple[bytes, bytes]:
    """EncryptedPrivateKeyInfo ::= SEQUENCE { SEQUENCE { OID, params }, OCTET STRING } → (OID bytes, data)."""
    seq, _ = _tlv(der, 0, 0x30)
    alg, pos = _tlv(seq, 0, 0x30)
    oid, _ = _tlv(alg, 0, 0x06)
    data, _ = _tlv(seq, pos, 0x04)
    return oid, data


def _tlv(b: bytes, pos: int, tag: int) -> tuple[bytes, int]:
    if pos + 2 > len(b) or b[pos] != tag:
        raise StoreError("the JKS private key entry is not DER")
    n, pos = b[pos + 1], pos + 2
    if n & 0x80:
        size = n & 0x7F
        n, pos = int.from_bytes(b[pos:pos + size], "big"), pos + size
    return b[pos:pos + n], pos + n
