"""Inside the dependency step's sandbox: 127.0.0.1:<port> forwarded to the egress proxy's unix
socket, then the step's command with the proxy variables pointing there.

    python -I egress_bridge.py SOCKET COMMAND [ARG...]

The sandbox has no network of its own (only its loopback), so pip's HTTPS requests reach
nothing but this bridge, and the bridge reaches nothing but the proxy (`egress.py`), which
decides where they may go. The project's install code runs beside the bridge with the same
rights: it can use the socket directly, or stop the bridge, and gains nothing by it.

Standard library only (it runs under the sandbox's interpreter before anything is installed);
`splice` is shared with the proxy.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import socket
import subprocess
import sys
import threading

IDLE_SECONDS = 300.0  # a tunnel that moves nothing this long is closed (a stalled download)
PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy")
BYPASS_VARIABLES = ("NO_PROXY", "no_proxy")
CHUNK = 1 << 16


def splice(a: socket.socket, b: socket.socket, idle: float = IDLE_SECONDS) -> None:
    """Copy bytes both ways until both sides have finished sending, or nothing moved for `idle` seconds.

    One side's end of stream is passed on as a half close, so that a request-then-response
    exchange over the tunnel completes."""
    other = {a: b, b: a}
    with selectors.DefaultSelector() as waiting:
        for side in other:
            waiting.register(side, selectors.EVENT_READ)
        while waiting.get_map():
            ready = waiting.select(idle)
            if not ready:
                return
            for key, _ in ready:
                source: socket.socket = key.fileobj  # type: ignore[assignment]
                try:
                    data = source.recv(CHUNK)
                except OSError:
                    data = b""
                if data:
                    try:
                        other[source].sendall(data)
                    except OSError:
                        return
                    continue
                waiting.unregister(source)
                with contextlib.suppress(OSError):
                    other[source].shutdown(socket.SHUT_WR)


def _forward(client: socket.socket, socket_path: str) -> None:
    with client, socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as proxy:
        try:
            proxy.connect(socket_path)
        except OSError:
            return  # the client sees its connection closed: pip reports a proxy error
        splice(client, proxy)


def _serve(listener: socket.socket, socket_path: str) -> None:
    while True:
        try:
            client, _ = listener.accept()
        except OSError:
            return
        threading.Thread(target=_forward, args=(client, socket_path), daemon=True).start()


def proxy_environment(environ: dict[str, str], port: int) -> dict[str, str]:
    """`environ` with every proxy variable naming the bridge and no bypass list (nothing is direct)."""
    dropped = (*PROXY_VARIABLES, *BYPASS_VARIABLES)
    env = {name: value for name, value in environ.items() if name not in dropped}
    address = f"http://127.0.0.1:{port}"
    env.update({name: address for name in PROXY_VARIABLES})
    return env


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) < 2:
        print("usage: python egress_bridge.py SOCKET COMMAND [ARG...]", file=sys.stderr)
        return 2
    socket_path, command = args[0], args[1:]
    listener = socket.create_server(("127.0.0.1", 0))
    threading.Thread(target=_serve, args=(listener, socket_path), daemon=True).start()
    env = proxy_environment(dict(os.environ), listener.getsockname()[1])
    try:
        child = subprocess.Popen(command, env=env)
    except OSError as exc:
        print(f"egress bridge: cannot run {command[0]}: {exc}", file=sys.stderr)
        return 127
    for number in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(number, lambda received, _frame: child.send_signal(received))
    code = child.wait()
    return 128 - code if code < 0 else code


if __name__ == "__main__":
    sys.exit(main())
