"""A stand-in for mongod's checking of hints, in front of the embedded backend, which takes any
hint and ignores it. As mongod (4.4 and later) does, it refuses a hint that names no index of
the collection: by name or by key pattern ({$natural: ±1} always names one), with code 2
(BadValue), "hint provided does not correspond to an existing index":

- a find, count, distinct, aggregate or findAndModify with such a hint fails whole (ok: 0);
- an update or delete statement with one is that statement's write error (ok: 1, writeErrors),
  the other statements run (one by one, on the backend) until the first error of an ordered
  command, as mongod runs them.

Everything else passes to the backend as it came. Each find it is sent is recorded (its body),
and so is each update or delete statement, so that a test can see which carried a hint.
"""
import threading

import bson
from pymongo import MongoClient

from scram_server import OP_MSG, StandIn, read_message
from session_server import build, sections

HINT_ERROR = "hint provided does not correspond to an existing index"
READS = ("find", "count", "distinct", "aggregate", "findAndModify", "findandmodify")


class HintServer(StandIn):
    def __init__(self, backend_port: int):
        self.lock = threading.Lock()
        self.finds = []  # the body of every find, as received
        self.statements = []  # (command, statement) of every update and delete statement
        self.backend = MongoClient(f"mongodb://127.0.0.1:{backend_port}")
        super().__init__(backend_port)

    def close(self):
        super().close()
        self.backend.close()

    def clear(self):
        with self.lock:
            self.finds.clear()
            self.statements.clear()

    def _new_connection(self):
        return None

    def _reply(self, state, request_id, op, message, backend):
        if op != OP_MSG:  # a legacy hello
            backend.sendall(message)
            return read_message(backend)[2]
        _, body, seqs = sections(message)
        command = bson.decode(body)
        for ident, docs in seqs:
            command[ident] = [bson.decode(d) for d in docs]
        name = next(iter(command))
        if name == "find":
            with self.lock:
                self.finds.append(command)
        if name in READS and "hint" in command and not self._exists(command, command["hint"]):
            return self._answer(request_id, {"ok": 0.0, "errmsg": HINT_ERROR, "code": 2, "codeName": "BadValue"})
        if name in ("update", "delete"):
            arg = "updates" if name == "update" else "deletes"
            with self.lock:
                self.statements.extend((name, st) for st in command[arg])
            if any("hint" in st and not self._exists(command, st["hint"]) for st in command[arg]):
                return self._answer(request_id, self._one_by_one(command, name, arg))
        backend.sendall(message)
        return read_message(backend)[2]

    def _exists(self, command, hint) -> bool:
        if isinstance(hint, dict) and list(hint) == ["$natural"]:
            return True
        indexes = list(self.backend[command["$db"]][next(iter(command.values()))].list_indexes())
        if isinstance(hint, str):
            return any(i["name"] == hint for i in indexes)
        return isinstance(hint, dict) and any(list(i["key"].items()) == list(hint.items()) for i in indexes)

    def _one_by_one(self, command, name, arg):
        """The statements of the command run in turn, a bad hint a statement's write error."""
        ordered = command.get("ordered", True)
        out = {"n": 0, "nModified": 0, "upserted": [], "writeErrors": []}
        for i, st in enumerate(command[arg]):
            if "hint" in st and not self._exists(command, st["hint"]):
                out["writeErrors"].append({"index": i, "code": 2, "errmsg": HINT_ERROR})
            else:
                one = {k: v for k, v in command.items() if k not in (arg, "$db", "lsid", "$clusterTime", "txnNumber",
                                                                      "$readPreference")}
                one[arg] = [st]
                r = self.backend[command["$db"]].command(bson.SON([(name, one.pop(name))] + list(one.items())),
                                                          check=False)
                out["n"] += r.get("n", 0)
                out["nModified"] += r.get("nModified", 0)
                out["upserted"] += [dict(u, index=i) for u in r.get("upserted", [])]
                out["writeErrors"] += [dict(e, index=i) for e in r.get("writeErrors", [])]
            if ordered and out["writeErrors"]:
                break
        if name == "delete":
            del out["nModified"]
        for k in ("upserted", "writeErrors"):
            if not out[k]:
                del out[k]
        out["ok"] = 1.0
        return out

    @staticmethod
    def _answer(request_id, reply):
        return build(0, request_id, bson.encode(reply))
