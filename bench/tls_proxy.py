"""An HTTPS proxy on loopback for a program that reads no base-URL setting: it answers CONNECT for
the hosts it is given, terminates their TLS with a certificate of a certificate authority made at
run time, and hands each decrypted request to a plain-HTTP server of this machine (the test
suite's fake providers). The program is started with HTTPS_PROXY at the proxy and its CA file
trusted (SSL_CERT_FILE), and nothing it sends leaves the machine.

    authority = CertificateAuthority.make(directory, ["api.anthropic.com"])
    proxy = TlsTerminatingProxy({"api.anthropic.com": "http://127.0.0.1:8001"}, authority).start()
    ...  # HTTPS_PROXY=proxy.url, SSL_CERT_FILE=authority.ca_file
    proxy.stop()

One request at a time per tunnel (HTTP/1.1, no pipelining), forwarded over a keep-alive connection
of the tunnel's own. Summed, so that a bench can tell them apart from the program's own time:
`busy_seconds`, the proxy's own time (TLS, parsing, relaying; the upstream's answer excluded), and
`round_trip_seconds`, each request from its headers read to its reply sent, the upstream's
answer included. `settle()` waits for the requests in flight to be counted.
"""

from __future__ import annotations

import datetime
import http.client
import ssl
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

# Headers of one hop only: the proxy sets its own framing on each side.
HOP_BY_HOP = {
    "connection",
    "keep-alive",
    "proxy-connection",
    "proxy-authorization",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "content-length",
}
CERTIFICATE_DAYS = 2  # a run's certificates: long enough for any run, useless after it


@dataclass(frozen=True)
class CertificateAuthority:
    """A CA (its certificate in `ca_file`) and one server certificate it signed for the hosts."""

    ca_file: Path
    certificate_file: Path
    key_file: Path

    @classmethod
    def make(cls, directory: Path, hosts: list[str]) -> CertificateAuthority:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

        now = datetime.datetime.now(datetime.UTC)
        lifetime = (now - datetime.timedelta(minutes=5), now + datetime.timedelta(days=CERTIFICATE_DAYS))

        def signed(subject, public_key, issuer, signing_key, extensions) -> x509.Certificate:
            builder = (
                x509.CertificateBuilder()
                .subject_name(subject)
                .issuer_name(issuer)
                .public_key(public_key)
                .serial_number(x509.random_serial_number())
                .not_valid_before(lifetime[0])
                .not_valid_after(lifetime[1])
            )
            for extension, critical in extensions:
                builder = builder.add_extension(extension, critical=critical)
            return builder.sign(signing_key, hashes.SHA256())

        ca_key = ec.generate_private_key(ec.SECP256R1())
        ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "gligabao bench proxy CA")])
        ca = signed(
            ca_name,
            ca_key.public_key(),
            ca_name,
            ca_key,
            [
                (x509.BasicConstraints(ca=True, path_length=0), True),
                (x509.KeyUsage(False, False, False, False, False, True, True, False, False), True),
                (x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), False),
            ],
        )
        key = ec.generate_private_key(ec.SECP256R1())
        server = signed(
            x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, hosts[0])]),
            key.public_key(),
            ca_name,
            ca_key,
            [
                (x509.BasicConstraints(ca=False, path_length=None), True),
                (x509.SubjectAlternativeName([x509.DNSName(host) for host in hosts]), False),
                (x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), False),
                (x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), False),
            ],
        )
        directory.mkdir(parents=True, exist_ok=True)
        authority = cls(directory / "ca.pem", directory / "server.pem", directory / "server.key")
        authority.ca_file.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
        authority.certificate_file.write_bytes(server.public_bytes(serialization.Encoding.PEM))
        authority.key_file.write_bytes(
            key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            )
        )
        authority.key_file.chmod(0o600)
        return authority

    def server_context(self) -> ssl.SSLContext:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.certificate_file, self.key_file)
        context.set_alpn_protocols(["http/1.1"])  # clients that offer h2 fall back to HTTP/1.1
        return context


class TlsTerminatingProxy:
    """CONNECT host:443 for the hosts of `upstreams` ({host: "http://127.0.0.1:port"}), any other a 403."""

    def __init__(self, upstreams: dict[str, str], authority: CertificateAuthority):
        self.upstreams = {host: urlsplit(url) for host, url in upstreams.items()}
        self.context = authority.server_context()
        self.busy_seconds = 0.0
        self.round_trip_seconds = 0.0
        self.forwarded = 0
        self.in_flight = 0
        self.lock = threading.Lock()
        self.idle = threading.Condition(self.lock)
        self._httpd: ThreadingHTTPServer | None = None

    def start(self) -> TlsTerminatingProxy:
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._httpd.daemon_threads = True
        threading.Thread(target=self._httpd.serve_forever, name="tls-proxy", daemon=True).start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    @property
    def url(self) -> str:
        assert self._httpd is not None, "the proxy is not started"
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def begin(self) -> None:
        with self.lock:
            self.in_flight += 1

    def charge(self, round_trip: float, upstream: float) -> None:
        with self.lock:
            self.busy_seconds += round_trip - upstream
            self.round_trip_seconds += round_trip
            self.forwarded += 1
            self.in_flight -= 1
            self.idle.notify_all()

    def settle(self, timeout_s: float = 5.0) -> None:
        """Waits until no request is in the proxy: a client can have a reply before the proxy has
        counted it (the count comes after the reply's last byte, whose encryption is the proxy's)."""
        with self.idle:
            self.idle.wait_for(lambda: self.in_flight == 0, timeout_s)


def _handler_for(proxy: TlsTerminatingProxy) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        disable_nagle_algorithm = True
        protocol_version = "HTTP/1.1"

        def do_CONNECT(self) -> None:
            host, _, port = self.path.rpartition(":")
            upstream = proxy.upstreams.get(host)
            if upstream is None or port != "443":
                self.send_error(403, f"no upstream for {self.path}")
                return
            self.send_response(200, "Connection established")
            self.end_headers()
            self.wfile.flush()
            self._tunnel(upstream)

        def _tunnel(self, upstream) -> None:
            """The requests inside the tunnel, decrypted, each forwarded to `upstream`."""
            try:
                tls = proxy.context.wrap_socket(self.connection, server_side=True)
            except (ssl.SSLError, OSError):
                self.close_connection = True
                return
            self.connection, self.rfile, self.wfile = tls, tls.makefile("rb"), tls.makefile("wb")
            self.upstream = http.client.HTTPConnection(upstream.hostname, upstream.port, timeout=60)
            self.close_connection = False
            try:
                while not self.close_connection:
                    self.handle_one_request()
            finally:
                self.upstream.close()

        def _forward(self) -> None:
            started = time.perf_counter()
            proxy.begin()
            upstream_seconds = 0.0
            try:
                upstream_seconds = self._relay()
            finally:
                proxy.charge(time.perf_counter() - started, upstream_seconds)

        def _relay(self) -> float:
            """The request to the upstream, its reply back: the seconds the upstream took."""
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length) if length else None
            headers = {name: value for name, value in self.headers.items() if name.lower() not in HOP_BY_HOP}
            upstream_started = time.perf_counter()
            self.upstream.request(self.command, self.path, body, headers)
            reply = self.upstream.getresponse()
            payload = reply.read()
            upstream_seconds = time.perf_counter() - upstream_started
            self.send_response_only(reply.status, reply.reason)
            for name, value in reply.getheaders():
                if name.lower() not in HOP_BY_HOP:
                    self.send_header(name, value)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
            self.wfile.flush()
            return upstream_seconds

        do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _forward

        def log_message(self, format: str, *args: object) -> None:
            pass

    return Handler
