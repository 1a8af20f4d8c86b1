"""A TCP relay between the proxy and the backend that records every byte the proxy sends upstream:
what the server (and so its logs, profiler and data files) would see."""
import socket
import threading


class RecordingRelay:
    def __init__(self, upstream_port: int):
        self.upstream_port = upstream_port
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._lock = threading.Lock()
        self._sent = bytearray()
        connect = lambda: socket.create_connection(("127.0.0.1", self.upstream_port))  # noqa: E731
        threading.Thread(target=forward, args=(self._listener, connect, self._record), daemon=True).start()

    def captured(self) -> bytes:
        """Everything sent towards the server since the last clear()."""
        with self._lock:
            return bytes(self._sent)

    def size(self) -> int:
        """How many bytes went towards the server since the last clear() (nothing copied)."""
        with self._lock:
            return len(self._sent)

    def clear(self):
        with self._lock:
            self._sent.clear()

    def close(self):
        self._listener.close()

    def _record(self, data: bytes):
        with self._lock:
            self._sent.extend(data)


def forward(listener: socket.socket, connect, seen=None, opened=None):
    """Until the listener is closed: each connection it accepts goes to connect()'s socket (None:
    it is closed at once), its bytes copied both ways, the client's shown to seen first; both
    sockets are added to opened, if given."""
    while True:
        try:
            client, _ = listener.accept()
        except OSError:
            return
        upstream = connect()
        if upstream is None:
            client.close()
            continue
        if opened is not None:
            opened += [client, upstream]
        threading.Thread(target=pump, args=(client, upstream, seen), daemon=True).start()
        threading.Thread(target=pump, args=(upstream, client), daemon=True).start()


def pump(src: socket.socket, dst: socket.socket, seen=None):
    """Copies src's bytes to dst (each chunk shown to seen first) until either side closes, then
    shuts both down, so that the peers of both see the close."""
    try:
        while data := src.recv(65536):
            if seen:
                seen(data)
            dst.sendall(data)
    except OSError:
        pass
    finally:
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
