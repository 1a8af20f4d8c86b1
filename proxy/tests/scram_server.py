"""A server that really authenticates, for the identity tests: in front of the embedded backend (which
has no authentication), it runs SCRAM-SHA-256 server-side with `scramp` (saslStart, saslContinue,
and the speculativeAuthenticate of a hello, as mongod does) and refuses every other command of a
connection that has not authenticated (code 13, Unauthorized); an authenticated connection's
messages go to the backend unchanged. As with mongod, a failed attempt leaves an earlier
authentication of the connection in force (the proxy, stricter, takes it as no identity). One backend connection per client connection."""
import socket
import struct
import threading

import bson
from bson.binary import Binary
from scramp import ScramException, ScramMechanism

OP_REPLY, OP_QUERY, OP_MSG = 1, 2004, 2013
OPEN = {"hello", "ismaster", "isMaster", "saslStart", "saslContinue", "ping", "buildInfo", "buildinfo"}


def read_message(sock):
    header = _read(sock, 16)
    if header is None:
        return None
    length, request_id, response_to, op = struct.unpack("<iiii", header)
    return request_id, op, header + _read(sock, length - 16)


def _read(sock, n):
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return buf


def op_msg(request_id, response_to, body: dict) -> bytes:
    payload = struct.pack("<I", 0) + b"\x00" + bson.encode(body)
    return struct.pack("<iiii", 16 + len(payload), request_id, response_to, OP_MSG) + payload


def op_reply(request_id, response_to, doc: dict) -> bytes:
    payload = struct.pack("<iqii", 0, 0, 0, 1) + bson.encode(doc)
    return struct.pack("<iiii", 16 + len(payload), request_id, response_to, OP_REPLY) + payload


def command_of(op, message):
    """(command document, database) of an OP_MSG's body or an OP_QUERY command; (None, None) otherwise."""
    if op == OP_MSG and message[20] == 0:
        length = struct.unpack("<i", message[21:25])[0]
        doc = bson.decode(message[21:21 + length])
        return doc, doc.get("$db")
    if op == OP_QUERY:
        end = message.index(b"\x00", 20)
        db = message[20:end].decode().split(".")[0]
        start = end + 1 + 8
        length = struct.unpack("<i", message[start:start + 4])[0]
        return bson.decode(message[start:start + length]), db
    return None, None


class Conversation:
    def __init__(self, server, users, db):
        self.db, self.users = db, users
        self.scram = ScramMechanism("SCRAM-SHA-256").make_server(self._auth_info)
        self.step = 0
        self.user = None

    def _auth_info(self, username):
        if (self.db, username) not in self.users:
            raise ScramException("unknown user")
        self.user = username
        return self.users[(self.db, username)]

    def start(self, payload: bytes) -> bytes:
        self.scram.set_client_first(payload.decode())
        return self.scram.get_server_first().encode()

    def finish(self, payload: bytes) -> bytes:
        self.scram.set_client_final(payload.decode())
        return self.scram.get_server_final().encode()


class StandIn:
    """A stand-in server in front of the backend: listens on a free port, and serves each
    connection on a thread of its own with _serve(client) (the subclass's)."""

    def __init__(self, backend_port: int):
        self.backend_port = backend_port
        self.sock = socket.create_server(("127.0.0.1", 0), backlog=64)
        self.port = self.sock.getsockname()[1]
        self.closed = False
        self.open = set()  # the sockets of the connections being served (client and backend)
        self.clients = set()  # their client sockets, for kill()
        self.open_lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def close(self):
        self.closed = True
        self.sock.close()

    def kill(self):
        """As a server that dies: no more connections, and its clients' connections cut (what it
        was sending the backend completes, as a write a dying mongos passed on does)."""
        self.close()
        with self.open_lock:
            socks = list(self.clients)
        for s in socks:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()

    def _accept(self):
        while not self.closed:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(c,), daemon=True).start()

    def _serve(self, client):
        backend = socket.create_connection(("127.0.0.1", self.backend_port))
        with self.open_lock:
            self.open.update((client, backend))
            self.clients.add(client)
        state = self._new_connection()
        try:
            while True:
                m = read_message(client)
                if m is None:
                    return
                request_id, op, message = m
                client.sendall(self._reply(state, request_id, op, message, backend))
        except OSError:
            return
        finally:
            with self.open_lock:
                self.open.difference_update((client, backend))
                self.clients.discard(client)
            client.close()
            backend.close()

    def _new_connection(self):
        """What the subclass keeps of one client connection."""
        return None

    def _reply(self, state, request_id, op, message, backend) -> bytes:
        """The bytes that answer one message (the subclass's)."""
        raise NotImplementedError


class ScramServer(StandIn):
    """Listens on a free port; users maps (db, name) to a password."""

    def __init__(self, backend_port: int, users: dict):
        mech = ScramMechanism("SCRAM-SHA-256")
        self.users = {k: mech.make_auth_info(pw, iteration_count=4096) for k, pw in users.items()}
        super().__init__(backend_port)

    def _new_connection(self):
        return {"user": None, "conversation": None}

    def _reply(self, state, request_id, op, message, backend):
        cmd, db = command_of(op, message)
        name = next(iter(cmd), None) if cmd else None
        return self._answer(state, op, request_id, cmd, name, db, message, backend)

    def _answer(self, state, op, request_id, cmd, name, db, message, backend):
        reply = op_reply if op == OP_QUERY else op_msg
        if name == "saslStart":
            return reply(0, request_id, self._start(state, cmd, db))
        if name == "saslContinue":
            return reply(0, request_id, self._continue(state, cmd))
        if state["user"] is None and name not in OPEN:
            return reply(0, request_id, {"ok": 0.0, "code": 13, "codeName": "Unauthorized",
                                         "errmsg": f"command {name} requires authentication"})
        backend.sendall(message)
        _, back_op, answer = read_message(backend)
        spec = cmd.get("speculativeAuthenticate") if cmd and name in ("hello", "ismaster", "isMaster") else None
        if spec is None:
            return answer
        result = self._start(state, spec, spec.get("db", db))
        if back_op == OP_MSG:  # header, flagBits, section kind 0: the body
            doc = bson.decode(answer[21:21 + struct.unpack("<i", answer[21:25])[0]])
        else:  # header, responseFlags, cursorID, startingFrom, numberReturned: the first document
            doc = bson.decode(answer[36:36 + struct.unpack("<i", answer[36:40])[0]])
        if result.get("ok") == 1:
            doc["speculativeAuthenticate"] = result
        response_to = struct.unpack("<i", answer[8:12])[0]
        return (op_msg if back_op == OP_MSG else op_reply)(0, response_to, doc)

    def _start(self, state, cmd, db):
        # as mongod: a new attempt that fails leaves an earlier authentication in force
        if cmd.get("mechanism") != "SCRAM-SHA-256":
            return {"ok": 0.0, "code": 2, "codeName": "BadValue", "errmsg": "only SCRAM-SHA-256 here"}
        conv = Conversation(self, self.users, db)
        conv.skip_empty = bool(cmd.get("options", {}).get("skipEmptyExchange"))
        try:
            first = conv.start(bytes(cmd["payload"]))
        except ScramException:
            return {"ok": 0.0, "code": 18, "codeName": "AuthenticationFailed", "errmsg": "Authentication failed."}
        state["conversation"] = conv
        return {"conversationId": 1, "done": False, "payload": Binary(first), "ok": 1.0}

    def _continue(self, state, cmd):
        conv = state["conversation"]
        if conv is None:
            return {"ok": 0.0, "code": 17, "codeName": "ProtocolError", "errmsg": "no SASL session state found"}
        if conv.step == 0:
            try:
                final = conv.finish(bytes(cmd["payload"]))
            except ScramException:
                state["conversation"] = None
                return {"ok": 0.0, "code": 18, "codeName": "AuthenticationFailed", "errmsg": "Authentication failed."}
            conv.step = 1
            done = conv.skip_empty
            if done:
                state["user"], state["conversation"] = f"{conv.user}@{conv.db}", None
            return {"conversationId": 1, "done": done, "payload": Binary(final), "ok": 1.0}
        state["user"], state["conversation"] = f"{conv.user}@{conv.db}", None
        return {"conversationId": 1, "done": True, "payload": Binary(b""), "ok": 1.0}
