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
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

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
        self._closed = True
        self._listener.close()

    def _accept(self):
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self.upstream_port))
            threading.Thread(target=self._pump, args=(client, upstream, True), daemon=True).start()
            threading.Thread(target=self._pump, args=(upstream, client, False), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket, record: bool):
        pump(src, dst, self._record if record else None)

    def _record(self, data: bytes):
        with self._lock:
            self._sent.extend(data)


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
