"""The dependency step's egress proxy: who may be reached, how requests pass, and the upstream proxy."""

from __future__ import annotations

import base64
import socket
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from support.tcp import tcp_server

from difforacle.bot.app import egress
from difforacle.bot.app.egress import EgressProxy, HostListError, allow_list, forbidden_address
from difforacle.bot.app.egress_bridge import proxy_environment


def ask(proxy: EgressProxy, data: bytes, then: bytes = b"") -> tuple[bytes, bytes]:
    """Sends `data` to the proxy's socket, reads its answer's head, sends `then`, reads to the end."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
        client.settimeout(10)
        client.connect(str(proxy.socket_path))
        client.sendall(data)
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = client.recv(4096)
            if not chunk:
                break
            head += chunk
        head, _, body = head.partition(b"\r\n\r\n")
        if then:
            client.sendall(then)
            client.shutdown(socket.SHUT_WR)
        while chunk := client.recv(4096):
            body += chunk
        return head, body


@pytest.fixture
def server() -> Iterator[tuple[int, list[bytes], Callable[[bytes], bytes]]]:
    """A TCP server on 127.0.0.1: records what each connection sent (up to its end), answers
    with `answer(received)`; the answer function can be replaced through the yielded list."""
    received: list[bytes] = []
    answer = [lambda data: b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"]

    def handle(connection: socket.socket, _peer: tuple) -> None:
        data = b""
        connection.settimeout(5)
        try:
            while b"\r\n\r\n" not in data and (chunk := connection.recv(4096)):
                data += chunk
        except OSError:
            pass
        received.append(data)
        connection.sendall(answer[0](data))

    with tcp_server("127.0.0.1", handle) as port:
        yield port, received, answer  # type: ignore[misc]


def test_the_allow_list_holds_the_registries_the_index_variables_and_the_named_hosts() -> None:
    allowed = allow_list({"PIP_INDEX_URL": "https://Mirror.Example./simple",
                          "PIP_EXTRA_INDEX_URL": "http://extra.example:8080/simple other"},
                         ["private.example", " 10.0.0.5:3141 ", "[::1]:8000"])
    assert allowed.registries == {("pypi.org", 443), ("files.pythonhosted.org", 443)}
    assert allowed.named == {("mirror.example", 443), ("extra.example", 8080), ("private.example", 443),
                             ("private.example", 80), ("10.0.0.5", 3141), ("::1", 8000)}
    assert allowed.refusal("PYPI.org", 443) is None and allowed.refusal("pypi.org", 80) is not None
    assert "DIFFORACLE_INSTALL_HOSTS" in (allowed.refusal("evil.example", 443) or "")
    assert allowed.trusted("mirror.example", 443) and not allowed.trusted("pypi.org", 443)
    assert "pypi.org:443" in allowed.describe() and "10.0.0.5:3141" in allowed.describe()


@pytest.mark.parametrize("entry", ["", "two words", "host:port", "https://host/path", "host:99999"])
def test_a_named_host_that_is_no_host_is_an_error_naming_it(entry: str) -> None:
    with pytest.raises(HostListError, match="DIFFORACLE_INSTALL_HOSTS"):
        allow_list({}, [entry])


@pytest.mark.parametrize(("address", "forbidden"), [
    ("127.0.0.1", True), ("169.254.169.254", True), ("0.0.0.0", True), ("::1", True),
    ("::ffff:127.0.0.1", True), ("fe80::1%eth0", True), ("224.0.0.1", True),
    ("151.101.0.223", False), ("10.1.2.3", False), ("2a04:4e42::223", False)])
def test_forbidden_addresses_are_the_ones_no_registry_has(address: str, forbidden: bool) -> None:
    assert forbidden_address(address) is forbidden


def test_a_host_not_on_the_list_is_refused_and_remembered() -> None:
    with EgressProxy(allow_list({}), environ={}) as proxy:
        head, body = ask(proxy, b"CONNECT metadata.google.internal:443 HTTP/1.1\r\n\r\n")
        again, _ = ask(proxy, b"CONNECT metadata.google.internal:443 HTTP/1.1\r\n\r\n")
        folder = proxy.socket_path.parent
        assert folder.stat().st_mode & 0o777 == 0o711
    assert head.startswith(b"HTTP/1.1 403") and again.startswith(b"HTTP/1.1 403")
    assert body.startswith(b"difforacle: metadata.google.internal:443 is not a package registry")
    assert proxy.refused == [body.decode().removeprefix("difforacle: ").strip()]  # once, not twice
    assert not folder.exists()  # the socket's folder goes with the proxy


@pytest.mark.parametrize(("request_bytes", "status"), [
    (b"hello\r\n\r\n", b"400"), (b"GET /simple/ HTTP/1.1\r\nHost: pypi.org\r\n\r\n", b"400"),
    (b"GET ftp://pypi.org/ HTTP/1.1\r\n\r\n", b"400"), (b"CONNECT pypi.org HTTP/1.1\r\n\r\n", b"400")])
def test_anything_but_connect_or_an_absolute_http_request_is_a_bad_request(request_bytes: bytes,
                                                                            status: bytes) -> None:
    with EgressProxy(allow_list({}), environ={}) as proxy:
        head, _ = ask(proxy, request_bytes)
    assert head.split(b" ")[1] == status


def test_a_registrys_name_that_resolves_to_this_machine_is_refused(monkeypatch: pytest.MonkeyPatch,
                                                                    server: tuple) -> None:
    """A poisoned resolver (or a rebinding name) cannot turn pypi.org into the metadata service."""
    port, received, _ = server
    real = socket.getaddrinfo

    def resolve(host: str, *args: object, **kwargs: object) -> list:
        if host == "pypi.org":
            return real("127.0.0.1", port, type=socket.SOCK_STREAM)
        return real(host, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(egress.socket, "getaddrinfo", resolve)
    with EgressProxy(allow_list({}), environ={}) as proxy:
        head, body = ask(proxy, b"CONNECT pypi.org:443 HTTP/1.1\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 403"), head
    assert b"resolves to 127.0.0.1, an address a registry never has" in body
    assert received == []


def test_a_named_private_index_passes_in_origin_form_without_the_proxy_headers(server: tuple) -> None:
    port, received, _ = server
    request = (f"GET http://127.0.0.1:{port}/simple/six/?x=1 HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
               "Proxy-Authorization: Basic c2VjcmV0\r\nProxy-Connection: keep-alive\r\n"
               "Connection: keep-alive\r\nAccept: text/html\r\n\r\n").encode()
    with EgressProxy(allow_list({}, [f"127.0.0.1:{port}"]), environ={}) as proxy:
        head, body = ask(proxy, request)
    assert head.startswith(b"HTTP/1.1 200") and body == b"ok"
    [sent] = received
    assert sent.startswith(b"GET /simple/six/?x=1 HTTP/1.1\r\n")
    assert b"Accept: text/html\r\n" in sent and b"Connection: close\r\n" in sent
    assert b"Proxy-" not in sent and b"keep-alive" not in sent


def test_connect_opens_a_tunnel_to_a_named_host(server: tuple) -> None:
    port, received, _ = server
    with EgressProxy(allow_list({}, [f"localhost:{port}"]), environ={}) as proxy:
        head, body = ask(proxy, f"CONNECT localhost:{port} HTTP/1.1\r\n\r\n".encode(),
                         then=b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    assert head == b"HTTP/1.1 200 Connection established"
    assert body.endswith(b"\r\n\r\nok") and received == [b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"]


def test_the_workers_upstream_proxy_carries_the_tunnel_with_its_credentials(server: tuple) -> None:
    port, received, answer = server
    answer[0] = lambda data: b"HTTP/1.1 200 Connection established\r\n\r\ntunnelled"
    environ = {"HTTPS_PROXY": f"http://user:p%40ss@127.0.0.1:{port}"}
    with EgressProxy(allow_list({}, ["mirror.example"]), environ=environ) as proxy:
        head, body = ask(proxy, b"CONNECT mirror.example:443 HTTP/1.1\r\n\r\n")
        answer[0] = lambda data: b"HTTP/1.1 407 Proxy Authentication Required\r\n\r\n"
        refused, reason = ask(proxy, b"CONNECT mirror.example:443 HTTP/1.1\r\n\r\n")
        elsewhere, _ = ask(proxy, b"CONNECT other.example:443 HTTP/1.1\r\n\r\n")
    assert head == b"HTTP/1.1 200 Connection established" and body == b"tunnelled"
    credentials = base64.b64encode(b"user:p@ss")
    assert received[0] == (b"CONNECT mirror.example:443 HTTP/1.1\r\nHost: mirror.example:443\r\n"
                           b"Proxy-Authorization: Basic " + credentials + b"\r\n\r\n")
    assert refused.startswith(b"HTTP/1.1 502") and b"refused mirror.example:443: 407" in reason
    assert elsewhere.startswith(b"HTTP/1.1 403") and len(received) == 2  # the allow list comes first


def test_a_plain_request_goes_to_the_upstream_proxy_in_absolute_form(server: tuple) -> None:
    port, received, _ = server
    request = b"GET http://index.example:8080/simple/ HTTP/1.1\r\nHost: index.example:8080\r\n\r\n"
    environ = {"http_proxy": f"127.0.0.1:{port}"}
    with EgressProxy(allow_list({}, ["index.example:8080"]), environ=environ) as proxy:
        head, _ = ask(proxy, request)
    assert head.startswith(b"HTTP/1.1 200")
    assert received[0].startswith(request.split(b"\r\n\r\n")[0])


def test_no_proxy_hosts_are_reached_directly(server: tuple) -> None:
    port, received, _ = server
    environ = {"HTTP_PROXY": "http://127.0.0.1:9", "NO_PROXY": "localhost"}  # port 9: nothing listens
    with EgressProxy(allow_list({}, [f"localhost:{port}"]), environ=environ) as proxy:
        head, body = ask(proxy, f"GET http://localhost:{port}/ HTTP/1.1\r\nHost: localhost\r\n\r\n".encode())
    assert head.startswith(b"HTTP/1.1 200") and body == b"ok" and received[0].startswith(b"GET / HTTP/1.1")


def test_the_bridge_points_every_proxy_variable_at_itself_and_bypasses_nothing() -> None:
    env = proxy_environment({"PATH": "/usr/bin", "HTTPS_PROXY": "http://corporate:3128", "NO_PROXY": "*",
                             "no_proxy": "pypi.org"}, 4321)
    assert env["PATH"] == "/usr/bin" and "NO_PROXY" not in env and "no_proxy" not in env
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy"):
        assert env[name] == "http://127.0.0.1:4321"


def test_the_socket_path_stays_short_enough_for_a_unix_socket(tmp_path: Path) -> None:
    with EgressProxy(allow_list({}), environ={}) as proxy:
        assert len(str(proxy.socket_path)) < 100 and proxy.socket_path.is_socket()
