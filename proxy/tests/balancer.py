"""A TCP load balancer for the tests of several proxies as one service, as a Kubernetes Service
or HAProxy in TCP mode is: each accepted connection goes to the next target in turn (a target
that refuses is skipped), and its bytes are copied both ways until either side closes. It knows
nothing of MongoDB."""
import socket
import threading

from relay import forward


class RoundRobinBalancer:
    def __init__(self, ports):
        self.ports = list(ports)
        self.accepted = [0] * len(self.ports)  # connections that went to each target
        self._next = 0
        self._lock = threading.Lock()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._open = []
        threading.Thread(target=forward, args=(self._listener, self._connect, None, self._open), daemon=True).start()

    def uri(self, options="loadBalanced=true") -> str:
        return f"mongodb://127.0.0.1:{self.port}/?{options}"

    def close(self):
        self._listener.close()
        for s in self._open:
            s.close()

    def _connect(self):
        for _ in self.ports:
            with self._lock:
                i = self._next % len(self.ports)
                self._next += 1
            try:
                s = socket.create_connection(("127.0.0.1", self.ports[i]), timeout=2)
            except OSError:
                continue  # down: the next one
            s.settimeout(None)
            with self._lock:
                self.accepted[i] += 1
            return s
        return None
