"""The dependency step's only way out: an HTTP proxy on a unix socket that lets the package
registries through and nothing else.

The install step runs in a sandbox with no network of its own (bwrap's --unshare-net, Docker's
`none`): no route to a cloud metadata address, the local network or this machine's services.
The one socket mounted into it is this proxy's; inside, `egress_bridge` forwards
127.0.0.1:<port> to it and sets the proxy variables, so pip (and git, and whatever honours
HTTPS_PROXY) reaches the registries through here.

What passes: `CONNECT host:port` (HTTPS: the TLS is end to end, the proxy sees only the name)
and absolute-form requests (`GET http://host/...`, an index over plain HTTP), to a host on the
allow list at one of its ports. The allow list: pypi.org and files.pythonhosted.org on 443; the
hosts of the worker's PIP_INDEX_URL and PIP_EXTRA_INDEX_URL on their ports; the hosts the
operator names (DIFFORACLE_INSTALL_HOSTS, `host` or `host:port`). The proxy resolves the name
itself and connects to the address it checked (no second lookup for a rebinding name to
change): a registry's name that resolves to a loopback, link-local (cloud metadata),
unspecified or multicast address is refused; a host the operator named may be anywhere (a
private index). An IP address passes only when named (the registries are names). With an
upstream proxy in the worker's environment (HTTPS_PROXY, HTTP_PROXY, minus NO_PROXY),
connections go on through it.

What was refused is kept (`refused`): the job's summary says what the step tried to reach.
"""

from __future__ import annotations

import base64
import contextlib
import ipaddress
import logging
import os
import shutil
import socket
import socketserver
import tempfile
import threading
import urllib.request
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import SplitResult, unquote, urlsplit

from .egress_bridge import splice

REGISTRIES = ("pypi.org", "files.pythonhosted.org")
INDEX_VARIABLES = ("PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL")
NAMED_PORTS = (443, 80)  # the ports of a host named without one
MAX_HEAD = 64 * 1024  # a request's line and headers
HEAD_SECONDS = 30.0  # to send them
CONNECT_SECONDS = 30.0
MAX_REFUSED = 20  # destinations remembered for the summary
log = logging.getLogger("difforacle.app")


class HostListError(ValueError):
    """An operator's host entry that is no host (the message names it)."""


@dataclass(frozen=True)
class AllowList:
    """Which host:port pairs the dependency step may reach; `named` ones may resolve anywhere."""

    registries: frozenset[tuple[str, int]]
    named: frozenset[tuple[str, int]]

    def refusal(self, host: str, port: int) -> str | None:
        """Why host:port may not be reached, or None."""
        key = (_normal(host), port)
        if key in self.named or key in self.registries:
            return None
        return (f"{host}:{port} is not a package registry this worker allows (an operator can name it in "
                "DIFFORACLE_INSTALL_HOSTS)")

    def trusted(self, host: str, port: int) -> bool:
        return (_normal(host), port) in self.named

    def describe(self) -> str:
        return ", ".join(sorted(f"{host}:{port}" for host, port in self.registries | self.named))


def allow_list(environ: Mapping[str, str] | None = None, named: Iterable[str] = ()) -> AllowList:
    """The registries, the worker's index hosts and the operator's `named` hosts (HostListError)."""
    env = os.environ if environ is None else environ
    registries = {(host, 443) for host in REGISTRIES}
    chosen: set[tuple[str, int]] = set()
    for variable in INDEX_VARIABLES:
        for url in env.get(variable, "").split():
            parts = urlsplit(url)
            if parts.scheme in ("http", "https") and parts.hostname:
                chosen.add((_normal(parts.hostname), _port(parts)))
    for entry in named:
        chosen |= _named(entry)
    return AllowList(frozenset(registries), frozenset(chosen))


def _named(entry: str) -> set[tuple[str, int]]:
    text = entry.strip()
    parts = urlsplit(text if "//" in text else f"//{text}")
    try:
        port = parts.port
    except ValueError:
        port = None
        parts = SplitResult("", "", "", "", "")
    host = parts.hostname
    if not host or parts.path not in ("", "/") or any(c.isspace() for c in host):
        raise HostListError(f"{entry!r} in DIFFORACLE_INSTALL_HOSTS is not a host or host:port")
    if port is not None:
        return {(_normal(host), port)}
    return {(_normal(host), p) for p in NAMED_PORTS}


def _normal(host: str) -> str:
    return host.strip().strip("[]").rstrip(".").lower()


def _port(parts: SplitResult) -> int:
    try:
        return parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return 443 if parts.scheme == "https" else 80


def forbidden_address(address: str) -> bool:
    """Loopback, link-local (cloud metadata), unspecified or multicast: never a registry's address."""
    ip = ipaddress.ip_address(address.split("%")[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped:
        ip = ip.ipv4_mapped
    return ip.is_loopback or ip.is_link_local or ip.is_unspecified or ip.is_multicast


class Refused(Exception):
    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status


@dataclass(frozen=True)
class Request:
    method: str
    host: str
    port: int
    head: bytes  # for an absolute-form request: the head to send on (origin form), else b""
    rest: bytes  # bytes the client sent after its head (a request body's start)


class EgressProxy:
    """The proxy, serving `socket_path` from a thread while the `with` block runs.

    The socket lies in a fresh folder of its own under the temporary directory (a job's folder
    may be too deep for a unix socket's 108-byte path); the sandbox mounts that folder."""

    def __init__(self, allowed: AllowList, environ: Mapping[str, str] | None = None) -> None:
        self.socket_path = Path()
        self.allowed = allowed
        self.proxies = urllib.request.getproxies_environment() if environ is None else _proxies(environ)
        self.refused: list[str] = []
        self._lock = threading.Lock()
        self._server: socketserver.ThreadingUnixStreamServer | None = None
        self._thread: threading.Thread | None = None

    def __enter__(self) -> EgressProxy:
        proxy = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                proxy.handle(self.request)

        folder = Path(tempfile.mkdtemp(prefix="difforacle-egress-"))
        folder.chmod(0o711)  # the sandbox's uid reaches the socket by its name, lists nothing
        self.socket_path = folder / "proxy.sock"
        server = socketserver.ThreadingUnixStreamServer(str(self.socket_path), Handler)
        server.daemon_threads = True
        server.block_on_close = False
        os.chmod(self.socket_path, 0o666)  # the sandbox's uid connects; the folder keeps others out
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.2},
                                        name="egress-proxy", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join()
        if self.socket_path.name:
            shutil.rmtree(self.socket_path.parent, ignore_errors=True)

    def handle(self, client: socket.socket) -> None:
        """One client connection: its request checked, then tunnelled or refused."""
        client.settimeout(HEAD_SECONDS)
        try:
            request = _read_request(client)
            refusal = self.allowed.refusal(request.host, request.port)
            if refusal:
                raise Refused(403, refusal)
            upstream, opening, early = self._connect(request)
        except Refused as exc:
            self._refuse(client, exc)
            return
        except (OSError, ValueError):
            return
        with upstream:
            client.settimeout(None)
            upstream.settimeout(None)
            try:
                if request.method == "CONNECT":
                    client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n" + early)
                upstream.sendall(opening + request.rest)
            except OSError:
                return
            splice(client, upstream)

    def _refuse(self, client: socket.socket, exc: Refused) -> None:
        reason = str(exc)
        with self._lock:
            if reason not in self.refused and len(self.refused) < MAX_REFUSED:
                self.refused.append(reason)
                log.info("egress refused: %s", reason)
        body = f"difforacle: {reason}\n".encode()
        title = {400: "Bad Request", 403: "Forbidden", 502: "Bad Gateway"}.get(exc.status, "Error")
        head = (f"HTTP/1.1 {exc.status} {title}\r\nContent-Type: text/plain; charset=utf-8\r\n"
                f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n")
        with contextlib.suppress(OSError):
            client.sendall(head.encode() + body)

    def _connect(self, request: Request) -> tuple[socket.socket, bytes, bytes]:
        """A connection to the destination (or through the upstream proxy to it), the bytes to
        send on it first (a plain request's head) and those the destination sent already (after
        an upstream proxy's answer), or Refused."""
        scheme = "https" if request.method == "CONNECT" else "http"
        upstream = self.proxies.get(scheme) or self.proxies.get("all")
        if upstream and not urllib.request.proxy_bypass_environment(request.host, self.proxies):
            return _through(upstream, request)
        return self._direct(request.host, request.port), request.head, b""

    def _direct(self, host: str, port: int) -> socket.socket:
        trusted = self.allowed.trusted(host, port)
        try:
            found = socket.getaddrinfo(_normal(host), port, type=socket.SOCK_STREAM)
        except OSError as exc:
            raise Refused(502, f"{host}:{port}: cannot resolve the name ({exc})") from None
        addresses = [info for info in found if trusted or not forbidden_address(info[4][0])]
        if not addresses:
            raise Refused(403, f"{host}:{port} resolves to {found[0][4][0]}, an address a registry never has")
        failure: OSError | None = None
        for family, kind, proto, _, address in addresses:
            connection = socket.socket(family, kind, proto)
            connection.settimeout(CONNECT_SECONDS)
            try:
                connection.connect(address)
                return connection
            except OSError as exc:
                connection.close()
                failure = exc
        raise Refused(502, f"{host}:{port}: cannot connect ({failure})")


def _proxies(environ: Mapping[str, str]) -> dict[str, str]:
    """urllib's reading of the proxy variables, from `environ` instead of os.environ."""
    proxies: dict[str, str] = {}
    for name, value in environ.items():
        lowered = name.lower()
        if value and lowered.endswith("_proxy"):
            proxies[lowered[:-len("_proxy")]] = value
    return proxies


def _through(proxy_url: str, request: Request) -> tuple[socket.socket, bytes, bytes]:
    """A tunnel to the destination opened by the worker's upstream proxy (CONNECT), or, for a plain
    HTTP request, a connection to that proxy and the request's head in absolute form for it."""
    parts = urlsplit(proxy_url if "//" in proxy_url else f"http://{proxy_url}")
    if not parts.hostname:
        raise Refused(502, f"the worker's upstream proxy {proxy_url!r} names no host")
    authorization = b""
    if parts.username:
        credentials = f"{unquote(parts.username)}:{unquote(parts.password or '')}".encode()
        authorization = b"Proxy-Authorization: Basic " + base64.b64encode(credentials) + b"\r\n"
    try:
        connection = socket.create_connection((parts.hostname, _port(parts)), timeout=CONNECT_SECONDS)
    except OSError as exc:
        raise Refused(502, f"cannot reach the worker's upstream proxy {parts.hostname} ({exc})") from None
    target = f"{request.host}:{request.port}"
    try:
        if request.method != "CONNECT":
            line, _, headers = request.head.partition(b"\r\n")
            method, _, rest = line.partition(b" ")
            path = rest.rsplit(b" ", 1)[0]
            absolute = b"%s http://%s%s HTTP/1.1\r\n" % (method, target.encode(), path)
            return connection, absolute + authorization + headers, b""
        opening = f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n".encode()
        connection.sendall(opening + authorization + b"\r\n")
        head, early = _read_head(connection)
        status = head.split(b"\r\n", 1)[0].split(b" ")
        if len(status) < 2 or status[1] != b"200":
            answer = b" ".join(status[1:]).decode(errors="replace")
            raise Refused(502, f"the worker's upstream proxy refused {target}: {answer}")
    except BaseException:
        connection.close()
        raise
    return connection, b"", early


def _read_head(connection: socket.socket) -> tuple[bytes, bytes]:
    """Bytes up to the blank line that ends a head, and what came after it."""
    data = b""
    while b"\r\n\r\n" not in data:
        if len(data) > MAX_HEAD:
            raise Refused(400, "a request head over 64 KiB")
        chunk = connection.recv(8192)
        if not chunk:
            raise ValueError("the connection ended inside a head")
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    return head + b"\r\n\r\n", rest


def _read_request(client: socket.socket) -> Request:
    """The client's request, or Refused (400) for anything but CONNECT or an absolute-form request."""
    head, rest = _read_head(client)
    line, _, headers = head.partition(b"\r\n")
    words = line.decode("latin-1").split(" ")
    if len(words) != 3 or not words[2].startswith("HTTP/"):
        raise Refused(400, "not an HTTP request")
    method, target, _ = words
    if method == "CONNECT":
        parts = urlsplit(f"//{target}")
        try:
            port = parts.port
        except ValueError:
            port = None
        if not parts.hostname or port is None:
            raise Refused(400, f"CONNECT {target[:100]}: not host:port")
        return Request("CONNECT", parts.hostname, port, b"", rest)
    parts = urlsplit(target)
    if parts.scheme != "http" or not parts.hostname:
        raise Refused(400, f"{method} {target[:100]}: only CONNECT and http:// requests pass this proxy")
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    kept = [h for h in headers.split(b"\r\n") if h and not h.lower().startswith((b"proxy-", b"connection:"))]
    origin = f"{method} {path} HTTP/1.1\r\n".encode("latin-1") + b"".join(h + b"\r\n" for h in kept)
    return Request(method, parts.hostname, _port(parts), origin + b"Connection: close\r\n\r\n", rest)
