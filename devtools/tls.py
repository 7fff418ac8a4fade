"""Throw-away TLS material for tests and local brokers: a self-signed CA and a server certificate, all PEM.

    from devtools.tls import make_ca, make_server_cert
    ca = make_ca(tmp / "ca", "test CA")
    srv = make_server_cert(ca, tmp / "srv", dns=["localhost"], ips=["127.0.0.1"])
    # srv.keystore: key + chain in one PEM file (Kafka's ssl.keystore.type=PEM); ca.cert_path: the client's CA file
"""

from __future__ import annotations

import datetime as dt
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID


@dataclass
class CertFiles:
    cert_path: Path  # the certificate (PEM)
    key_path: Path  # its private key, unencrypted PKCS#8 (PEM)
    keystore: Path  # key followed by the certificate chain: what Kafka's PEM keystore expects
    cert: x509.Certificate
    key: ec.EllipticCurvePrivateKey


def _write(directory: Path, stem: str, cert: x509.Certificate, key, chain: list[x509.Certificate]) -> CertFiles:
    directory.mkdir(parents=True, exist_ok=True)
    key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
    certs_pem = b"".join(c.public_bytes(serialization.Encoding.PEM) for c in [cert, *chain])
    cert_path, key_path, keystore = directory / f"{stem}.crt", directory / f"{stem}.key", directory / f"{stem}.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key_pem)
    keystore.write_bytes(key_pem + certs_pem)
    return CertFiles(cert_path, key_path, keystore, cert, key)


def make_ca(directory: Path, name: str = "cdcsync test CA", days: int = 365) -> CertFiles:
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder().subject_name(subject).issuer_name(subject).public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5)).not_valid_after(now + dt.timedelta(days=days))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                     content_commitment=False, key_encipherment=False, data_encipherment=False,
                                     key_agreement=False, encipher_only=False, decipher_only=False), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    return _write(Path(directory), "ca", cert, key, [])


def make_server_cert(ca: CertFiles, directory: Path, dns: list[str] = ("localhost",), ips: list[str] = (),
                     days: int = 365, common_name: str | None = None, client: bool = False) -> CertFiles:
    """A server certificate signed by `ca` whose SANs are `dns` and `ips` (hostname checks use only the SANs);
    `client=True`: a client certificate for mutual TLS instead."""
    key = ec.generate_private_key(ec.SECP256R1())
    now = dt.datetime.now(dt.UTC)
    sans = [x509.DNSName(d) for d in dns] + [x509.IPAddress(ipaddress.ip_address(i)) for i in ips]
    cn = common_name or (list(dns) or list(ips) or ["server"])[0]
    cert = (
        x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)]))
        .issuer_name(ca.cert.subject).public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5)).not_valid_after(now + dt.timedelta(days=days))
        .add_extension(x509.SubjectAlternativeName(sans), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH if client
                                              else ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca.key.public_key()), critical=False)
        .sign(ca.key, hashes.SHA256())
    )
    return _write(Path(directory), "client" if client else "server", cert, key, [ca.cert])


def kafka_ssl_props(listener: str, server: CertFiles) -> dict[str, str]:
    """Broker properties that give listener `listener` this certificate (PEM keystore, no client auth)."""
    p = f"listener.name.{listener.lower()}.ssl"
    return {f"{p}.keystore.type": "PEM", f"{p}.keystore.location": str(server.keystore), f"{p}.client.auth": "none"}


def java_stores(cert: CertFiles, ca: CertFiles, directory: Path, password: str, store_type: str = "JKS"
                ) -> tuple[Path, Path]:
    """(key store, trust store) as Java's keytool writes them: `cert` with its key and chain, and `ca` trusted."""
    import subprocess

    from cryptography.hazmat.primitives.serialization import BestAvailableEncryption, pkcs12

    directory.mkdir(parents=True, exist_ok=True)
    p12 = directory / "key.p12"
    p12.write_bytes(pkcs12.serialize_key_and_certificates(b"client", cert.key, cert.cert, [ca.cert],
                                                          BestAvailableEncryption(password.encode())))
    ext = store_type.lower()
    keystore, truststore = directory / f"keystore.{ext}", directory / f"truststore.{ext}"
    keytool = ["keytool", "-noprompt", "-storepass", password]
    subprocess.run([*keytool, "-importkeystore", "-srckeystore", str(p12), "-srcstoretype", "PKCS12",
                    "-srcstorepass", password, "-destkeystore", str(keystore), "-deststoretype", store_type,
                    "-destkeypass", password], check=True, capture_output=True)
    subprocess.run([*keytool, "-importcert", "-alias", "ca", "-file", str(ca.cert_path), "-keystore", str(truststore),
                    "-storetype", store_type], check=True, capture_output=True)
    return keystore, truststore
