"""A throwaway TCP server for tests: each connection handled on one thread, and no longer
listening once its block ends (a thread left blocked in accept would keep the socket listening,
and a later test's server could share its port)."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager


@contextmanager
def tcp_server(host: str, handle: Callable[[socket.socket, tuple], None]) -> Iterator[int]:
    """Serves `host`:<port> while the block runs, calling `handle(connection, peer)` for each
    connection (closed after it); yields the port."""
    listener = socket.create_server((host, 0))
    listener.settimeout(0.2)  # the loop looks at `stop` between waits
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                connection, peer = listener.accept()
            except OSError:
                continue
            with connection:
                handle(connection, peer)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        stop.set()
        thread.join()
        listener.close()
