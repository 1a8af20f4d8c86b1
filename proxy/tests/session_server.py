"""A stand-in for mongos that accepts sessions and transactions, for the test that the proxy passes
their fields intact (the embedded backend has neither). In front of the embedded backend, it:

- answers hello as a mongos of wire version 17 with logical sessions, so that drivers send
  lsid, txnNumber, startTransaction, autocommit, readConcern.afterClusterTime and $clusterTime;
- records every other command as it arrived (its body's raw bytes), then removes those fields
  and passes the command to the backend, and adds $clusterTime and operationTime to the reply,
  as mongos would, so that the driver gossips them back;
- answers commitTransaction, abortTransaction and endSessions itself (ok: 1). It does not roll
  anything back: the test is about what reaches the server, not about transactions.
"""
import socket
import struct
import threading

import bson
from bson import Timestamp
from bson.raw_bson import RawBSONDocument

from scram_server import OP_MSG, StandIn, read_message

SESSION_FIELDS = ("lsid", "txnNumber", "autocommit", "startTransaction", "readConcern", "writeConcern",
                  "$readPreference", "$clusterTime", "recoveryToken", "stmtId", "stmtIds")
ANSWERED = {"commitTransaction", "abortTransaction", "endSessions"}
CLUSTER_TIME = Timestamp(1_800_000_000, 7)


def sections(message: bytes):
    """(flagBits, body bytes, [(identifier, [document bytes])]) of an OP_MSG without checksum."""
    flags = struct.unpack("<I", message[16:20])[0]
    at, body, seqs = 20, None, []
    while at < len(message):
        kind = message[at]
        if kind == 0:
            n = struct.unpack("<i", message[at + 1:at + 5])[0]
            body = message[at + 1:at + 1 + n]
            at += 1 + n
        else:
            size = struct.unpack("<i", message[at + 1:at + 5])[0]
            end = at + 1 + size
            nul = message.index(b"\x00", at + 5)
            ident, docs, p = message[at + 5:nul].decode(), [], nul + 1
            while p < end:
                n = struct.unpack("<i", message[p:p + 4])[0]
                docs.append(message[p:p + n])
                p += n
            seqs.append((ident, docs))
            at = end
    return flags, body, seqs


def build(request_id, response_to, body: bytes, seqs=()) -> bytes:
    payload = struct.pack("<I", 0) + b"\x00" + body
    for ident, docs in seqs:
        section = ident.encode() + b"\x00" + b"".join(docs)
        payload += b"\x01" + struct.pack("<i", 4 + len(section)) + section
    return struct.pack("<iiii", 16 + len(payload), request_id, response_to, OP_MSG) + payload


class SessionServer(StandIn):
    def __init__(self, backend_port: int):
        self.lock = threading.Lock()
        self.received = []  # (command name, RawBSONDocument of the body as it arrived, sequences)
        super().__init__(backend_port)

    def commands(self):
        with self.lock:
            return list(self.received)

    def clear(self):
        with self.lock:
            self.received.clear()

    def _reply(self, state, request_id, op, message, backend):
        if op != OP_MSG:  # the legacy hello of a handshake: the backend answers it
            backend.sendall(message)
            return read_message(backend)[2]
        return self._answer(request_id, message, backend)

    def _answer(self, request_id, message, backend):
        _, body, seqs = sections(message)
        raw = RawBSONDocument(body)
        name = next(iter(raw))
        hello = name in ("hello", "ismaster", "isMaster")
        if not hello:
            with self.lock:
                self.received.append((name, raw, seqs))
        if name in ANSWERED:
            return build(0, request_id, bson.encode(self._gossip({"ok": 1.0})))
        command = {k: v for k, v in bson.decode(body).items() if k not in SESSION_FIELDS}
        backend.sendall(build(request_id, 0, bson.encode(command), seqs))
        _, _, answer = read_message(backend)
        reply = bson.decode(sections(answer)[1])
        if hello:
            reply.update(msg="isdbgrid", maxWireVersion=17, logicalSessionTimeoutMinutes=30)
            reply.pop("setName", None)
        return build(0, request_id, bson.encode(self._gossip(reply)))

    @staticmethod
    def _gossip(reply):
        reply["$clusterTime"] = {"clusterTime": CLUSTER_TIME, "signature": {"hash": bson.Binary(bytes(20)), "keyId": 0}}
        reply["operationTime"] = CLUSTER_TIME
        return reply
