"""A throw-away certificate authority for tests: a CA, a server certificate for loopback
and a client certificate, written as PEM files (made with the ``cryptography`` package)."""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID


@dataclass(frozen=True)
class TlsFiles:
    """PEM files of one test CA and the certificates it signed."""

    ca: Path
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path
    route_cert: Path
    route_key: Path


def make_tls_files(folder: Path, *, name: str = "apollo-test") -> TlsFiles:
    """A fresh CA plus server (``localhost``, 127.0.0.1), client and route (``CN=apollo-route``) certificates."""
    folder.mkdir(parents=True, exist_ok=True)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"{name} CA")])
    ca_cert = (
        _builder(ca_name, ca_name, ca_key)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True, key_cert_sign=True, crl_sign=True, content_commitment=False,
                key_encipherment=False, data_encipherment=False, key_agreement=False,
                encipher_only=False, decipher_only=False,
            ),
            critical=True,
        )
        .sign(ca_key, hashes.SHA256())
    )
    files = TlsFiles(
        ca=folder / "ca.pem",
        server_cert=folder / "server.pem",
        server_key=folder / "server-key.pem",
        client_cert=folder / "client.pem",
        client_key=folder / "client-key.pem",
        route_cert=folder / "route.pem",
        route_key=folder / "route-key.pem",
    )
    files.ca.write_bytes(ca_cert.public_bytes(serialization.Encoding.PEM))
    _leaf(files.server_cert, files.server_key, "localhost", ca_cert, ca_key, server=True)
    _leaf(files.client_cert, files.client_key, f"{name}-client", ca_cert, ca_key, server=False)
    _leaf(files.route_cert, files.route_key, "apollo-route", ca_cert, ca_key, server=True)
    return files


def _builder(subject: x509.Name, issuer: x509.Name, key: ec.EllipticCurvePrivateKey) -> x509.CertificateBuilder:
    now = datetime.datetime.now(datetime.UTC)
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
    )


def _leaf(
    cert_path: Path, key_path: Path, common_name: str, ca_cert: x509.Certificate,
    ca_key: ec.EllipticCurvePrivateKey, *, server: bool,
) -> None:
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    usage = ExtendedKeyUsageOID.SERVER_AUTH if server else ExtendedKeyUsageOID.CLIENT_AUTH
    builder = _builder(subject, ca_cert.subject, key).add_extension(
        x509.BasicConstraints(ca=False, path_length=None), critical=True
    ).add_extension(x509.ExtendedKeyUsage([usage, ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
    if server:
        names = [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
        builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
    cert = builder.sign(ca_key, hashes.SHA256())
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    key_path.chmod(0o600)
