"""The project's certificate authority: a CA and one certificate per service identity, in a directory.

Layout (the same as a Kubernetes ``kubernetes.io/tls`` Secret with the CA added, so a service reads
its ``TLS_DIR`` the same way under ``make run``, the tests, compose and k8s)::

    DIR/ca.crt  DIR/ca.key               the CA (the key never leaves DIR)
    DIR/IDENTITY/ca.crt tls.crt tls.key  one directory per identity (TLS_DIR of that service)

The identity is the certificate's common name and a ``spiffe://cardroom/IDENTITY`` URI SAN; the
DNS/IP SANs (the identity, its dashed form, localhost, 127.0.0.1 and any ``hosts``) let a client
verify the server it dialled. ``make_pki`` is idempotent: it keeps a valid CA and valid certificates
and issues only what is missing or expires within :data:`RENEW_BEFORE`; ``rotate=True`` reissues
every leaf certificate (same CA). A new CA = a new directory.

``python -m cardroom.runtime.pki DIR [--host NAME ...] [--rotate] [IDENTITY ...]``
"""

from __future__ import annotations

import argparse
import datetime as dt
import ipaddress
import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

#: Every identity the trust table names (services and the operator's tooling).
IDENTITIES = ("evaluator", "wallet", "dealer", "connection_monitor", "gateway", "tournament", "operator")
CA_DAYS = 3650
LEAF_DAYS = 90
RENEW_BEFORE = dt.timedelta(days=14)
SPIFFE_PREFIX = "spiffe://cardroom/"


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def _write_private(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def _valid(path: Path, at: dt.datetime) -> bool:
    if not path.exists():
        return False
    cert = x509.load_pem_x509_certificate(path.read_bytes())
    return cert.not_valid_after_utc - RENEW_BEFORE > at


def _make_ca(directory: Path) -> None:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name(
        [
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Cardroom"),
            x509.NameAttribute(NameOID.COMMON_NAME, "Cardroom project CA"),
        ]
    )
    now = _now()
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=CA_DAYS))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=False,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .sign(key, hashes.SHA256())
    )
    _write_private(directory / "ca.key", _key_pem(key))
    (directory / "ca.crt").write_bytes(cert.public_bytes(serialization.Encoding.PEM))


def _sans(identity: str, hosts: Iterable[str]) -> list[x509.GeneralName]:
    names: list[x509.GeneralName] = [x509.UniformResourceIdentifier(SPIFFE_PREFIX + identity)]
    seen: set[str] = set()
    for host in (identity, identity.replace("_", "-"), "localhost", "127.0.0.1", "::1", *hosts):
        if host in seen:
            continue
        seen.add(host)
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            names.append(x509.DNSName(host))
    return names


def _issue(directory: Path, identity: str, hosts: Iterable[str]) -> None:
    ca_key = serialization.load_pem_private_key((directory / "ca.key").read_bytes(), password=None)
    assert isinstance(ca_key, ec.EllipticCurvePrivateKey)
    ca_pem = (directory / "ca.crt").read_bytes()
    ca = x509.load_pem_x509_certificate(ca_pem)
    key = ec.generate_private_key(ec.SECP256R1())
    now = _now()
    cert = (
        x509.CertificateBuilder()
        .subject_name(
            x509.Name(
                [
                    x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Cardroom"),
                    x509.NameAttribute(NameOID.COMMON_NAME, identity),
                ]
            )
        )
        .issuer_name(ca.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=LEAF_DAYS))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False
        )
        .add_extension(x509.SubjectAlternativeName(_sans(identity, hosts)), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    leaf = directory / identity
    leaf.mkdir(parents=True, exist_ok=True)
    _write_private(leaf / "tls.key", _key_pem(key))
    (leaf / "tls.crt").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (leaf / "ca.crt").write_bytes(ca_pem)


def make_pki(
    directory: Path | str, identities: Sequence[str] = IDENTITIES, hosts: Iterable[str] = (), rotate: bool = False
) -> Path:
    """Make (or complete, or with ``rotate`` reissue) the CA and the identities' certificates in
    ``directory``; returns the directory. Each identity's ``TLS_DIR`` is ``directory / identity``."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    directory.chmod(0o700)
    now = _now()
    if not (_valid(directory / "ca.crt", now) and (directory / "ca.key").exists()):
        _make_ca(directory)
        rotate = True  # certificates of an old CA are useless
    hosts = tuple(hosts)
    for identity in identities:
        if (
            rotate
            or not _valid(directory / identity / "tls.crt", now)
            or (directory / identity / "ca.crt").read_bytes() != (directory / "ca.crt").read_bytes()
        ):
            _issue(directory, identity, hosts)
    return directory


def identity_of(cert_pem: bytes) -> str:
    """The identity (common name) a certificate was issued to."""
    cert = x509.load_pem_x509_certificate(cert_pem)
    (attribute,) = cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    return str(attribute.value)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("directory")
    parser.add_argument("identities", nargs="*", default=list(IDENTITIES))
    parser.add_argument("--host", action="append", default=[], help="an extra DNS name or IP for every certificate")
    parser.add_argument("--rotate", action="store_true", help="reissue every certificate (same CA)")
    args = parser.parse_args(argv)
    directory = make_pki(args.directory, args.identities, args.host, args.rotate)
    for identity in args.identities:
        print(f"{identity} TLS_DIR={directory / identity}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
