"""The service's database connection verifies the server's certificate (verify-full against the
public roots that RDS Proxy's ACM certificates chain to): a server whose certificate does not chain
to them is refused during the TLS handshake, before the startup message or any password."""

from __future__ import annotations

import datetime
import socket
import ssl
import threading

import psycopg
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from gligabao.aws.secrets import public_root_certificates

SSL_REQUEST = (8).to_bytes(4, "big") + (80877103).to_bytes(4, "big")


def _self_signed(tmp_path) -> ssl.SSLContext:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]), critical=False)
        .sign(key, hashes.SHA256())
    )
    (tmp_path / "cert.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (tmp_path / "key.pem").write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(tmp_path / "cert.pem", tmp_path / "key.pem")
    return context


@pytest.fixture
def impostor(tmp_path):
    """A TCP server that accepts PostgreSQL's SSLRequest and shows a self-signed certificate."""
    context = _self_signed(tmp_path)
    listener = socket.create_server(("127.0.0.1", 0))

    def serve():
        conn, _ = listener.accept()
        with conn:
            assert conn.recv(8) == SSL_REQUEST
            conn.sendall(b"S")
            try:
                with context.wrap_socket(conn, server_side=True) as tls:
                    tls.recv(1024)
            except (ssl.SSLError, OSError):
                return

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield listener.getsockname()[1]
    listener.close()
    thread.join(5)


def test_verify_full_refuses_a_server_whose_certificate_is_not_from_the_public_roots(impostor):
    port = impostor
    with pytest.raises(psycopg.OperationalError, match="certificate verify failed"):
        psycopg.connect(
            host="localhost",
            port=port,
            user="gligabao_app",
            password="never-sent",
            sslmode="verify-full",
            sslrootcert=public_root_certificates(),
            connect_timeout=5,
        )
