"""Stand-in clusters for the tests of the proxy's failover (issue 30): several mongos of one
cluster (Mongos), and a replica set (ReplicaSet) whose members answer
hello as mongod does in a replica set (isWritablePrimary, secondary, setName, hosts, primary,
electionId), in front of one embedded backend that holds the set's data, and an election that a
test can script.

- The primary passes commands to the backend as the stand-in mongos does (session_server.py:
  session fields removed, $clusterTime added), and records them.
- A secondary answers a write with NotWritablePrimary (10107) and a read that must go to the
  primary with NotPrimaryNoSecondaryOk (13435), as mongod does.
- A retryable write (lsid, txnNumber, its statements' stmtIds) that wrote something is applied
  once: its reply is kept by the cluster (RetryableWrites), as the replicated session table
  keeps it, and a retry (on any member or mongos) gets that reply again.
- elect(i, gap) steps the primary down, leaves the set without one for gap seconds, then makes
  member i primary with a higher electionId.
"""
import threading
import time

import bson
from bson import ObjectId

from scram_server import OP_MSG, OP_QUERY, command_of, op_reply
from session_server import SessionServer, build, sections

WRITES = {"insert", "update", "delete", "findAndModify", "findandmodify"}
ANYWHERE = {"endSessions", "ping", "buildInfo", "buildinfo", "getLastError", "killCursors"}


class RetryableWrites:
    """What a cluster remembers of retryable writes, as mongod's session table does:
    (lsid id, txnNumber, statement ids) -> the reply. The statement ids are the command's stmtIds
    (or stmtId onwards), else 0, 1, … for its statements, as mongod numbers them. A write is
    remembered only if it wrote something (n, or a findAndModify's lastErrorObject.n): mongod
    records a statement with the oplog entry of its write, and one that wrote nothing leaves none,
    so its retry runs again. (mongod keeps each statement apart; a retry here is matched by the
    whole set of ids it names.)

    drop(cmd): for a test, True to close the connection instead of answering the first
    application of a retryable write, after it was applied (as a member that fails just then)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.applied = {}
        self.retried = 0
        self.dropped = 0
        self.drops = []  # the names of the commands dropped
        self.drop = lambda cmd: False

    @staticmethod
    def statement_ids(cmd: dict, name: str):
        if "stmtIds" in cmd:
            return tuple(cmd["stmtIds"])
        count = len(cmd.get({"insert": "documents", "update": "updates", "delete": "deletes"}.get(name, ""), [None]))
        first = cmd.get("stmtId", 0)
        return tuple(range(first, first + count))

    @staticmethod
    def wrote(reply: dict) -> bool:
        if "lastErrorObject" in reply or "value" in reply:  # a findAndModify (the backend's remove has no lastErrorObject)
            return reply.get("lastErrorObject", {}).get("n", 0) > 0 or reply.get("value") is not None
        return reply.get("n", 0) > 0

    def once(self, cmd: dict, name: str, request_id: int, apply):
        """The reply to a write: apply() the first time, the same reply for a retry of it. A retry
        that arrives while the first attempt is under way waits for it (a server lets one
        operation at a time use a session's txnNumber), then gets its reply, or applies the write
        itself if the first attempt ended without writing anything."""
        # a statement of a transaction (autocommit: false) is no retryable write: a transaction's
        # statements share its txnNumber, and mongod keeps them with the transaction, not apart
        key = (bytes(cmd["lsid"]["id"]), cmd["txnNumber"], self.statement_ids(cmd, name)) \
            if name in WRITES and "txnNumber" in cmd and cmd.get("autocommit") is not False else None
        if key is None:
            return apply()
        while True:
            with self.lock:
                entry = self.applied.get(key)
                first = entry is None
                if first:
                    entry = self.applied[key] = {"done": threading.Event(), "reply": None}
            if first:
                break
            entry["done"].wait(30)
            if entry["reply"] is not None:
                with self.lock:
                    self.retried += 1
                return build(0, request_id, entry["reply"])
            with self.lock:  # the first attempt wrote nothing: this one runs
                if self.applied.get(key) is entry:
                    del self.applied[key]
        reply = None
        try:
            reply = apply()
            body = sections(reply)[1]
            if self.wrote(bson.decode(body)):
                entry["reply"] = body
                if self.drop(cmd):
                    with self.lock:
                        self.dropped += 1
                        self.drops.append(name)
                    raise OSError("dropped after applying the write, as the test asked")
            return reply
        finally:
            if entry["reply"] is None:
                with self.lock:
                    if self.applied.get(key) is entry:
                        del self.applied[key]
            entry["done"].set()


class Mongos(SessionServer):
    """A stand-in mongos (session_server.py) of a cluster whose retryable writes apply once."""

    def __init__(self, backend_port: int, writes: RetryableWrites):
        self.writes = writes
        super().__init__(backend_port)

    def _answer(self, request_id, message, backend):
        cmd = bson.decode(sections(message)[1])
        return self.writes.once(cmd, next(iter(cmd)), request_id,
                                lambda: super(Mongos, self)._answer(request_id, message, backend))


class ReplicaSet:
    def __init__(self, backend_port: int, members: int = 3, name: str = "rs0"):
        self.name = name
        self.lock = threading.Lock()
        self.primary = 0
        self.election = ObjectId()
        self.writes = RetryableWrites()
        self.not_primary = 0  # the commands a member that is not primary refused
        self.members = [Member(backend_port, self, i) for i in range(members)]

    def hosts(self):
        return [f"127.0.0.1:{m.port}" for m in self.members]

    def uri(self, heartbeat_ms: int = 200) -> str:
        return f"mongodb://{','.join(self.hosts())}/?replicaSet={self.name}&heartbeatFrequencyMS={heartbeat_ms}"

    def elect(self, new: int, gap: float = 1.0):
        with self.lock:
            self.primary = None
        time.sleep(gap)
        with self.lock:
            self.primary = new
            self.election = ObjectId()

    def hello(self, index: int) -> dict:
        with self.lock:
            primary, election = self.primary, self.election
        doc = {"isWritablePrimary": primary == index, "ismaster": primary == index, "secondary": primary != index,
               "setName": self.name, "setVersion": 1, "hosts": self.hosts(), "me": self.hosts()[index],
               "maxBsonObjectSize": 16 * 1024 * 1024, "maxMessageSizeBytes": 48_000_000, "maxWriteBatchSize": 100_000,
               "localTime": bson.datetime.datetime.now(), "logicalSessionTimeoutMinutes": 30, "connectionId": 1,
               "minWireVersion": 0, "maxWireVersion": 17, "readOnly": False, "ok": 1.0}
        if primary is not None:
            doc["primary"] = self.hosts()[primary]
        if primary == index:
            doc["electionId"] = election
        return doc

    def close(self):
        for m in self.members:
            m.kill()


class Member(SessionServer):
    def __init__(self, backend_port: int, rs: ReplicaSet, index: int):
        self.rs, self.index = rs, index
        super().__init__(backend_port)

    def _reply(self, state, request_id, op, message, backend):
        cmd, _ = command_of(op, message)
        name = next(iter(cmd)) if cmd else None
        if op == OP_QUERY and name in ("hello", "ismaster", "isMaster"):
            return op_reply(0, request_id, self.rs.hello(self.index))
        if op != OP_MSG:
            return super()._reply(state, request_id, op, message, backend)
        if name in ("hello", "ismaster", "isMaster"):
            return build(0, request_id, bson.encode(self.rs.hello(self.index)))
        with self.rs.lock:
            primary = self.rs.primary == self.index
        mode = (cmd.get("$readPreference") or {}).get("mode", "primary")
        if not primary and (name in WRITES or name not in ANYWHERE and mode == "primary"):
            with self.rs.lock:
                self.rs.not_primary += 1
        if not primary and name in WRITES:
            return build(0, request_id, bson.encode({"ok": 0.0, "code": 10107, "codeName": "NotWritablePrimary",
                                                     "errmsg": "not primary"}))
        if not primary and name not in WRITES | ANYWHERE and mode == "primary":
            return build(0, request_id, bson.encode({"ok": 0.0, "code": 13435, "codeName": "NotPrimaryNoSecondaryOk",
                                                     "errmsg": "not primary and secondaryOk=false"}))
        return self.rs.writes.once(cmd, name, request_id, lambda: self._answer(request_id, message, backend))
