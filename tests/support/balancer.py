"""A small TCP load balancer on 127.0.0.1, as in front of paperbot's replicas: each new connection to
the next backend in turn (round robin), skipping one that refuses the connection (a dead replica).

    with Balancer([port1, port2, port3]) as lb:
        http.client.HTTPConnection("127.0.0.1", lb.port) ...
        lb.served        # connections each backend took, by port
"""

from __future__ import annotations

import contextlib
import itertools
import socket
import threading
from collections import Counter


class Balancer:
    def __init__(self, backends: list[int]):
        self.backends = list(backends)
        self.served: Counter[int] = Counter()
        self._turn = itertools.count()
        self._lock = threading.Lock()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._closing = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def __enter__(self) -> Balancer:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self._closing.set()
        with contextlib.suppress(OSError):
            self._listener.shutdown(socket.SHUT_RDWR)
        self._listener.close()
        self._thread.join(5)

    def _accept(self) -> None:
        while not self._closing.is_set():
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _backend(self) -> tuple[socket.socket, int] | None:
        with self._lock:
            first = next(self._turn)
        for i in range(len(self.backends)):
            port = self.backends[(first + i) % len(self.backends)]
            try:
                upstream = socket.create_connection(("127.0.0.1", port), timeout=2)
            except OSError:
                continue  # a replica that is gone: the next one
            upstream.settimeout(None)
            with self._lock:
                self.served[port] += 1
            return upstream, port
        return None

    def _serve(self, client: socket.socket) -> None:
        found = self._backend()
        if found is None:
            client.close()
            return
        upstream, _ = found
        answered = threading.Event()  # the backend's side is over

        def pipe(src: socket.socket, dst: socket.socket, done: threading.Event | None = None) -> None:
            try:
                while data := src.recv(65536):
                    dst.sendall(data)
            except OSError:
                pass
            finally:
                with contextlib.suppress(OSError):
                    dst.shutdown(socket.SHUT_WR)
                if done is not None:
                    done.set()

        threading.Thread(target=pipe, args=(upstream, client, answered), daemon=True).start()
        pipe(client, upstream)
        answered.wait(30)
        for s in (client, upstream):
            with contextlib.suppress(OSError):
                s.close()
