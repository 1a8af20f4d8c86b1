"""The leak fuzzer (issue 39): commands generated from the proxy's own command table
(`fle-proxy.jar commands`), with canaries wherever a value belongs to a policy field of an
encrypted collection, sent through the real proxy with a recording relay in front of the backend.
No canary may reach the relay: the server, its logs, profiler and files only ever see ciphertext.

A case is one message, made from a seed alone (a failure names the seed that reproduces it):

- a command from the table, on an encrypted collection (hr.people: ssn deterministic,
  address.street and items.price randomized; hr.all: every field), on the database that holds them
  or on admin, or on a plain collection whose stages reach into an encrypted one;
- every argument its row lists, each filled by its kind, with canaries in filters, updates,
  documents, pipelines, projections, let, comments, settings, configuration and metadata filters;
  arguments no row lists; document sequences; the own element a document;
- mutations: a top-level name given twice, an array argument moved into a document sequence or
  given both ways, an unknown sequence, another opcode (OP_COMMAND, OP_QUERY, a client's
  OP_REPLY, a legacy write opcode, one nobody defined), OP_COMPRESSED, moreToCome, a checksum,
  database and collection spellings a server could take for the encrypted one ("HR", "hr.",
  "hr\\0", "people\\0"), a flipped or cut byte.

What the proxy does with a case is its business (rewrite, seal, evaluate, refuse, close); the
oracle is only that no canary is in what reached the relay, that no refusal of the proxy's quotes
one, and that the proxy answers or closes every message within the timeout.
"""
import json
import random
import socket
import struct
import subprocess
import zlib

import bson
from bson import Int64, Regex, SON
from bson.binary import Binary, UUID_SUBTYPE

CANARY = b"C4NARY"
OP_REPLY, OP_QUERY, OP_COMPRESSED, OP_MSG = 1, 2004, 2012, 2013

# the policy the fuzzer's proxy runs with (conftest: EncryptingProxy)
POLICY_PATHS = {"people": ["ssn", "address.street", "items.price"], "all": None}


def policy_yaml(keys) -> str:
    return (f"  hr.people:\n    key: {keys['AES-256']}\n    fields:\n      ssn: {{ deterministic: true }}\n"
            f"      address.street: {{}}\n      items.price: {{}}\n"
            f"  hr.all: {{ key: {keys['ARIA-256']}, fields: \"*\" }}\n")


def command_table(java_jar) -> dict:
    out = subprocess.run(["java", "-jar", str(java_jar), "commands"], capture_output=True, text=True,
                         timeout=120, check=True).stdout
    return json.loads(out)


# ---- CRC-32C, for OP_MSG's checksum ---------------------------------------------------------------

def _crc_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_CRC = _crc_table()


def crc32c(data: bytes) -> int:
    c = 0xFFFFFFFF
    for b in data:
        c = _CRC[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


# ---- the generator ---------------------------------------------------------------------------------

class Case:
    """One generated message and what it is, for the report."""

    def __init__(self, seed, frame: bytes, what: str, more_to_come=False):
        self.seed = seed
        self.frame = frame
        self.what = what
        self.more_to_come = more_to_come


class Generator:
    def __init__(self, table: dict, seed: int):
        self.r = random.Random(seed)
        self.seed = seed
        self.placed = 0
        self.commands = table["commands"]
        self.by_name = {n: c for c in self.commands for n in c["names"]}
        self.db_stages = table["databaseStages"]

    # -- values ---------------------------------------------------------------------------------------

    def canary(self):
        self.placed += 1
        text = f"C4NARY-{self.seed}-{self.placed}"
        kind = self.r.randrange(12)
        if kind == 0:
            return Regex(text)
        if kind == 1:
            return [text, text + "b"]
        return text

    def plain(self):
        return self.r.choice([1, 2.5, "plain-value", True, None, Int64(7), {"k": 1}, [1, 2]])

    def coin(self, p=0.5):
        return self.r.random() < p

    def pick(self, xs):
        return self.r.choice(xs)

    def policy_path(self, coll):
        if coll == "all":
            return self.pick(["a", "b", "b.c", "2024", "name"])
        return self.pick(["ssn", "address.street", "items.price", "items.0.price", "items.$[].price", "ssn.x",
                          "address.street.x", "items.price.y"])

    def secret_doc(self, coll):
        """A document whose policy fields hold canaries, in nested or dotted form."""
        if coll == "all":
            return {self.pick(["a", "b", "name"]): self.canary(), "_id": self.r.randrange(1000)}
        return self.pick([
            {"ssn": self.canary()},
            {"address": {"street": self.canary(), "city": "c"}},
            {"items": [{"price": self.canary()}, {"price": 3}]},
            {"address.street": self.canary()},
            {"ssn": {"nested": self.canary()}},
            {"_id": self.r.randrange(1000), "ssn": self.canary(), "name": "n",
             "address": {"street": self.canary()}, "items": [{"price": self.canary()}]},
        ])

    # -- filters, updates, pipelines --------------------------------------------------------------------

    def filter(self, coll, depth=0):
        path = self.policy_path(coll)
        choices = [
            lambda: {path: self.canary()},
            lambda: {path: {self.pick(["$eq", "$ne", "$gt", "$gte", "$lt", "$lte"]): self.canary()}},
            lambda: {path: {self.pick(["$in", "$nin", "$all"]): [self.canary(), 1]}},
            lambda: {path: {"$not": {"$eq": self.canary()}}},
            lambda: {path: {"$regex": self.canary()}},
            lambda: {"items": {"$elemMatch": {"price": self.canary()}}},
            lambda: {"$expr": {self.pick(["$eq", "$gt", "$in"]): ["$" + path, self.canary()]}},
            lambda: {"$expr": {"$eq": [{"$concat": ["$" + path, "x"]}, self.canary()]}},
            lambda: {"$expr": {"$eq": ["$" + path, "$$v"]}},
            lambda: {"$where": f"this.{path} == '{self.canary()}'"},
            lambda: {"$jsonSchema": {"properties": {path.split(".")[0]: {"enum": [self.canary()]}}}},
            lambda: {"name": "plain", path: self.canary()},
            lambda: {"_id": self.r.randrange(50)},
            lambda: {path: {"$exists": True}},
        ]
        if depth < 2:
            choices.append(lambda: {self.pick(["$or", "$and", "$nor"]): [self.filter(coll, depth + 1),
                                                                         self.filter(coll, depth + 1)]})
        return self.pick(choices)()

    def update(self, coll):
        path = self.policy_path(coll)
        return self.pick([
            lambda: {"$set": {path: self.canary()}},
            lambda: {"$setOnInsert": {path: self.canary()}},
            lambda: {self.pick(["$min", "$max"]): {path: self.canary()}},
            lambda: {"$push": {"items": {"price": self.canary()}}},
            lambda: {"$addToSet": {"items": {"$each": [{"price": self.canary()}]}}},
            lambda: {"$pull": {"items": {"price": self.canary()}}},
            lambda: {"$pullAll": {path: [self.canary()]}},
            lambda: {"$set": {"address": {"street": self.canary()}}},
            lambda: {"$inc": {path: 1}},
            lambda: {"$rename": {path: "renamed"}},
            lambda: dict(self.secret_doc(coll), name="replacement"),
            lambda: [{"$set": {path: self.canary()}}],
            lambda: [{"$set": {path: {"$literal": self.canary()}}}],
            lambda: [{"$replaceWith": self.secret_doc(coll)}],
            lambda: [{"$set": {"x": {"$concat": ["$" + path, self.canary()]}}}],
            lambda: [{"$set": {path: "$$v"}}],
            lambda: {"$currentDate": {path: True}},
            lambda: {self.pick(["$bogusOp", "$thismodifierdoesntexist"]): {path: self.canary()}},
        ])()

    def stage(self, coll):
        path = self.policy_path(coll)
        return self.pick([
            lambda: {"$match": self.filter(coll)},
            lambda: {"$project": {path: {"$literal": self.canary()}}},
            lambda: {"$project": {"x": {"$concat": ["$" + path, self.canary()]}}},
            lambda: {"$project": {path: 1, "name": 1}},
            lambda: {self.pick(["$set", "$addFields"]): {path: self.canary()}},
            lambda: {self.pick(["$set", "$addFields"]): {path: {"$literal": self.canary()}}},
            lambda: {"$set": {"address": {"street": self.canary()}}},
            lambda: {"$set": {path: {"$cond": [True, self.canary(), 1]}}},
            lambda: {"$group": {"_id": "$name", path.split(".")[0]: {"$first": self.canary()}}},
            lambda: {"$group": {"_id": None, "n": {"$sum": {"$cond": [{"$eq": ["$" + path, self.canary()]}, 1, 0]}}}},
            lambda: {"$group": {"_id": {path.split(".")[0]: self.canary()}}},
            lambda: {"$sort": {path: 1}},
            lambda: {"$limit": 5},
            lambda: {"$skip": 1},
            lambda: {"$unwind": "$items"},
            lambda: {"$count": "n"},
            lambda: {"$lookup": {"from": "plain", "let": {"s": "$" + path},
                                 "pipeline": [{"$match": {"$expr": {"$eq": ["$$s", self.canary()]}}}], "as": "j"}},
            lambda: {"$lookup": {"from": self.pick(["people", "plain"]), "pipeline": [{"$match": self.filter("people")}],
                                 "as": "j"}},
            lambda: {"$lookup": {"from": "plain", "localField": path, "foreignField": "x", "as": "j"}},
            lambda: {"$facet": {"f": [{"$match": self.filter(coll)}]}},
            lambda: {"$unionWith": {"coll": self.pick(["people", "plain"]),
                                    "pipeline": [{"$match": self.filter("people")}]}},
            lambda: {"$replaceWith": self.secret_doc(coll)},
            lambda: {"$replaceRoot": {"newRoot": self.secret_doc(coll)}},
            lambda: {"$out": self.pick(["people", "plain", {"db": "HR", "coll": "people"}])},
            lambda: {"$merge": {"into": self.pick(["people", "plain", {"db": "HR", "coll": "people"}])}},
            lambda: {"$documents": [self.secret_doc(coll)]},
            lambda: {"$bucket": {"groupBy": "$name", "boundaries": [0, 5],
                                 "output": {path.split(".")[0]: {"$first": self.canary()}}}},
            lambda: {"$sortByCount": {"$concat": ["$" + path, self.canary()]}},
            lambda: {"$setWindowFields": {"output": {path.split(".")[0]: {"$first": self.canary()}}}},
            lambda: {"$fill": {"output": {path.split(".")[0]: {"value": self.canary()}}}},
            lambda: {"$redact": {"$cond": [{"$eq": ["$" + path, self.canary()]}, "$$KEEP", "$$PRUNE"]}},
            lambda: {"$graphLookup": {"from": "people", "startWith": self.canary(), "connectFromField": "ssn",
                                      "connectToField": "ssn", "as": "g"}},
            lambda: {"$changeStream": {}},
            lambda: {"$match": {"fullDocument." + path: self.canary()}},
            lambda: {"$unset": path},
            lambda: {"$sample": {"size": 2}},
            lambda: {"$densify": {"field": path, "range": {"step": 1, "bounds": "full"}}},
            lambda: {"$bogusStage": {path: self.canary()}},
        ])()

    def pipeline(self, coll, n=None):
        return [self.stage(coll) for _ in range(n or self.r.randint(1, 3))]

    def database_pipeline(self, db):
        first = self.pick([
            {"$changeStream": self.pick([{}, {"allChangesForCluster": True}, {"fullDocument": "updateLookup"}])},
            {"$documents": [self.secret_doc("people")]},
            {"$currentOp": self.pick([{}, {"allUsers": True}, {"localOps": True, "ssn": self.canary()}])},
            {"$listLocalSessions": {}},
            {"$querySettings": {}},
            {"$listSampledQueries": {}},
            {"$listClusterCatalog": {}},
            {"$bogusSource": {"ssn": self.canary()}},
        ])
        rest = []
        for _ in range(self.r.randint(0, 2)):
            rest.append(self.pick([
                {"$match": self.pick([{"command.filter.ssn": self.canary()}, {"fullDocument.ssn": self.canary()},
                                      {"ssn": self.canary()}, {"op": "query"}, {"ns.coll": "people"},
                                      {"fullDocument.address.street": self.canary()},
                                      {"command.documents.0.ssn": self.canary()},
                                      {"active": {"$elemMatch": {"ssn": self.canary()}}}])},
                {"$project": {"command": 1}},
                {"$project": {"x": {"$literal": self.canary()}}},
                {"$set": {"ssn": self.canary()}},
                {"$merge": {"into": self.pick(["people", {"db": "hr", "coll": "people"}, {"db": "HR", "coll": "people"}])}},
                {"$unionWith": "people"},
                {"$limit": 3},
                self.stage("people"),
            ]))
        return [first] + rest

    # -- arguments by kind --------------------------------------------------------------------------------

    def value(self, kind, arg, coll, name, spec):
        """A value for an argument of this kind, canaries wherever the kind holds a policy field's values."""
        fields = arg.get("fields", {})
        if kind == "FILTER" or kind == "STORED_FILTER":
            return self.filter(coll)
        if kind == "UPDATE":
            return self.update(coll)
        if kind in ("PIPELINE", "VIEW"):
            return self.pipeline(coll) if name == "pipeline" else self.pick(["people", "plain"])
        if kind == "DOCUMENTS":
            return [self.secret_doc(coll) for _ in range(self.r.randint(1, 2))] if arg.get("sequence") or name == "documents" \
                else self.secret_doc(coll)
        if kind in ("UPDATE_STATEMENTS", "DELETE_STATEMENTS", "BULK_OPERATIONS", "INDEX_SPECS", "NAMESPACES"):
            return [self.statement(fields, coll, kind) for _ in range(self.r.randint(1, 2))]
        if kind in ("SORT", "BOUNDS"):
            return {self.policy_path(coll): self.pick([1, -1, self.canary()])}
        if kind == "PROJECTION":
            return self.pick([{self.policy_path(coll): 1}, {self.policy_path(coll): {"$literal": self.canary()}},
                              {"x": {"$concat": ["$ssn", self.canary()]}}, {"ssn": {"$elemMatch": {"a": self.canary()}}}])
        if kind in ("INDEX", "KEY_PATTERN"):
            return self.pick(["idx", {self.policy_path(coll): 1}, {self.policy_path(coll): self.canary()}])
        if kind == "COLLATION":
            return self.pick([{"locale": "en", "strength": 2}, {"locale": "en", "ssn": self.canary()},
                              {"locale": {"x": self.canary()}}])
        if kind in ("LET", "CONSTANTS"):
            # a variable's value is a policy field's only where the command uses it on one ("$$v" below):
            # make_case arms it with a canary then, and gives it a plain value otherwise
            return self.pick([{"v": LET_VALUE}, {"v": "$ssn"}, {"v": {"$literal": LET_VALUE}}])
        if kind in ("COMMENT", "CONFIGURATION"):
            return self.pick(["a plain comment", self.secret_doc(coll), {"a": {"b": [self.secret_doc(coll)]}},
                              {"x": 1}])
        if kind == "OPTION":
            # a single value is no policy field's (nothing tells whose it would be): a document is refused
            return self.pick([1, True, "s", self.secret_doc(coll)]) if name not in ("$db", "collection") else "x"
        if kind == "NAMES":
            return self.pick([["a", "b"], [self.secret_doc(coll)], "x"])
        if kind in ("SETTINGS", "SETTINGS_LIST"):
            doc = {k: self.value(f["kind"], f, coll, k, spec) for k, f in fields.items() if self.coin(0.3)}
            if self.coin(0.3):
                doc.update(self.secret_doc(coll))
            return [doc] if kind == "SETTINGS_LIST" else doc
        if kind == "METADATA_FILTER":
            return self.pick([{"name": "x"}, {"ssn": self.canary()}, {"command.filter.ssn": self.canary()},
                              {"op": {"$in": ["query", "insert"]}}, {"options.validator.ssn": self.canary()},
                              {"$or": [{"ssn": self.canary()}]}, {"$expr": {"$eq": ["$ssn", self.canary()]}},
                              {"ns": {"$elemMatch": {"ssn": self.canary()}}}])
        if kind == "COMMAND":
            # explain's command runs on explain's own database (the fuzzer sends explain to hr)
            inner = self.command("hr")
            inner.pop("$db", None)
            return inner
        if kind == "DISTINCT_KEY":
            return self.pick(["ssn", "name", "address.street", "ssn.x"])
        if kind == "CURSOR_IDS":
            return [Int64(self.r.randrange(1, 5))]
        if kind == "NAMESPACE":
            return "hr"
        return self.secret_doc(coll)

    def statement(self, fields, coll, kind):
        if kind == "NAMESPACES":
            # encrypted ones, or spellings of them: an operation on a plain one is plain
            return {"ns": self.pick(["hr.people", "hr.all", "HR.people", "hr.people\0", "hr.People".lower()])}
        doc = {}
        for k, f in fields.items():
            if k in ("insert", "update", "delete"):
                continue
            if self.coin(0.5) or k in ("q", "u", "document", "filter", "updateMods", "key", "limit"):
                doc[k] = self.value(f["kind"], f, coll, k, None)
        if kind == "BULK_OPERATIONS":
            doc[self.pick(["insert", "update", "delete"])] = self.r.randrange(0, 2)
        if kind == "DELETE_STATEMENTS":
            doc["limit"] = self.pick([0, 1])
        if kind == "INDEX_SPECS":
            doc.setdefault("name", "i")
        if self.coin(0.1):
            doc["bogusField"] = self.secret_doc(coll)
        return doc

    # -- commands -----------------------------------------------------------------------------------------

    def valid_command(self):
        """What an application sends: a CRUD command with canaries only where the proxy seals, evaluates or refuses
        them by design (most of them go to the server sealed), and a few of the options drivers add."""
        coll = self.pick(["people", "people", "all"])
        eq = (lambda: {"ssn": self.canary()}) if coll == "people" else (lambda: {"a": self.canary()})
        filt = self.pick([eq, eq, lambda: self.filter(coll), lambda: {"_id": self.r.randrange(20)}])
        sets = (lambda: {"ssn": self.canary(), "address.street": self.canary()}) if coll == "people" \
            else (lambda: {"a": self.canary(), "b": {"c": self.canary()}})
        body = self.pick([
            lambda: SON([("insert", coll), ("documents", [self.secret_doc(coll) | {"_id": self.r.randrange(10 ** 6)}
                                                          for _ in range(self.r.randint(1, 3))])]),
            lambda: SON([("find", coll), ("filter", filt()), ("limit", self.r.randint(0, 3))]
                        + ([("projection", {"ssn": 1, "name": 1})] if self.coin(0.2) else [])
                        + ([("sort", {"_id": 1})] if self.coin(0.2) else [])),
            lambda: SON([("update", coll), ("updates", [{"q": filt(), "u": self.pick([
                {"$set": sets()}, {"$setOnInsert": sets()}, [{"$set": sets()}], self.secret_doc(coll),
                {"$inc": {"n": 1}}, {"$unset": {"ssn": ""}}]), "upsert": self.coin(), "multi": self.coin(0.3)}])]),
            lambda: SON([("delete", coll), ("deletes", [{"q": filt(), "limit": self.pick([0, 1])}])]),
            lambda: SON([("findAndModify", coll), ("query", filt()), ("update", {"$set": sets()}),
                         ("new", self.coin()), ("upsert", self.coin())]),
            lambda: SON([("aggregate", coll), ("pipeline", [{"$match": filt()}]
                                              + ([self.pick([{"$project": {"ssn": 1}}, {"$limit": 2},
                                                             {"$sort": {"_id": -1}}, {"$count": "n"}])]
                                                 if self.coin() else [])), ("cursor", {})]),
            lambda: SON([("count", coll), ("query", filt())]),
            lambda: SON([("distinct", coll), ("key", self.pick(["ssn", "name", "a"])), ("query", filt())]),
            lambda: SON([("bulkWrite", 1), ("ops", [{"insert": 0, "document": self.secret_doc(coll)},
                                                     {"update": 0, "filter": filt(), "updateMods": {"$set": sets()}},
                                                     {"delete": 0, "filter": filt(), "multi": False}]
                                            [:self.r.randint(1, 3)]), ("nsInfo", [{"ns": "hr." + coll}])]),
            lambda: SON([("createIndexes", coll), ("indexes", [{"key": {"ssn": 1}, "name": "ssn_1",
                                                               "partialFilterExpression": {"ssn": {"$exists": True}}}])]),
        ])()
        if self.coin(0.3):
            body["lsid"] = {"id": Binary(bytes(self.r.randrange(256) for _ in range(16)), UUID_SUBTYPE)}
        if self.coin(0.2):
            body["writeConcern" if next(iter(body)) not in ("find", "aggregate", "count", "distinct")
                 else "readConcern"] = {"w": 1} if next(iter(body)) not in ("find", "aggregate", "count", "distinct") \
                else {"level": "local"}
        body["$db"] = "admin" if next(iter(body)) == "bulkWrite" else "hr"
        return body

    def command(self, db=None):
        """A command body (with $db) from the table."""
        spec = self.pick(self.commands)
        name = self.pick(spec["names"])
        scope = spec["scope"]
        coll = self.pick(["people", "people", "all"])
        body = SON()
        if scope == "COLLECTION":
            db = db or "hr"
            if name.lower() == "aggregate" and self.coin(0.25):
                body[name] = 1
                body["pipeline"] = self.database_pipeline(db)
                body["cursor"] = {}
                return self.finish(body, spec, coll, db, skip={"pipeline", "cursor"})
            if self.coin(0.15):
                return self.cross_reference(db)
            body[name] = coll
        elif scope == "CURSOR":
            db = db or "hr"
            body[name] = Int64(self.r.randrange(1, 10))
            body["collection"] = coll
        elif scope == "NAMESPACE":
            db = "admin"
            body[name] = "hr." + coll
        elif scope == "NAMESPACES":
            db = "admin"
            body[name] = 1
        else:
            db = db or ("hr" if spec["name"] == "explain" else self.pick(["hr", "admin"]))
            # a whole database's command holds no collection's documents: its canaries go under the names
            # of people's fields (hr.all, fields "*", has no names a value could be told by)
            coll = "people"
            self_arg = spec.get("self")
            body[name] = self.value(self_arg["kind"], self_arg, coll, name, spec) if self_arg and self.coin(0.6) \
                else self.pick([1, True, "x"])
            if self.coin(0.1):
                body[name] = self.secret_doc(coll)
        return self.finish(body, spec, coll, db)

    def finish(self, body, spec, coll, db, skip=()):
        for k, arg in spec["args"].items():
            if k in skip or k == "$db" or k == "collection":
                continue
            required = k in ("documents", "updates", "deletes", "ops", "nsInfo", "indexes", "pipeline", "filter",
                             "query", "update", "key")
            if required or self.coin(0.25):
                body[k] = self.value(arg["kind"], arg, coll, k, spec)
        others = spec.get("others")
        if others and self.coin(0.5):
            # arguments the row does not list: a policy field's name holds a canary, another name none
            if self.coin():
                body[self.pick(["ssn", "command.filter.ssn", "address.street"])] = self.pick(
                    [self.canary(), self.secret_doc(coll)])
            else:
                body[self.pick(["op", "active", "logLevel"])] = self.pick([1, "x", self.secret_doc(coll)])
        if self.coin(0.15):
            body[self.pick(["bogusArg", "filteX", "ssn", "address.street", "$bogus"])] = self.secret_doc(coll)
        if spec["name"] == "aggregate" and "cursor" not in body:
            body["cursor"] = {}
        body["$db"] = db
        return body

    def cross_reference(self, db):
        """A command on a plain collection whose stages, view or output reach into an encrypted one."""
        return self.pick([
            lambda: SON([("aggregate", "plain"), ("pipeline", [self.pick([
                {"$lookup": {"from": "people", "pipeline": [{"$match": self.filter("people")}], "as": "j"}},
                {"$unionWith": {"coll": "people", "pipeline": [{"$match": self.filter("people")}]}},
                {"$graphLookup": {"from": "people", "startWith": self.canary(), "connectFromField": "ssn",
                                  "connectToField": "ssn", "as": "g"}},
            ]), {"$set": self.secret_doc("people")}, {"$merge": {"into": self.pick(["people", {"db": "HR", "coll": "people"}])}}][:self.r.randint(1, 3)]),
                ("cursor", {}), ("$db", db)]),
            lambda: SON([("create", "v" + str(self.r.randrange(100))), ("viewOn", "people"),
                         ("pipeline", [{"$match": self.filter("people")}]), ("$db", db)]),
            lambda: SON([("aggregate", 1), ("pipeline", [{"$documents": [self.secret_doc("people")]},
                                                          {"$merge": {"into": self.pick(["people", "plain"])}}]),
                         ("cursor", {}), ("$db", db)]),
            lambda: SON([("mapReduce", "plain"), ("map", "function(){}"), ("reduce", "function(){}"),
                         ("out", self.pick(["people", {"merge": "people"}])), ("query", self.secret_doc("people")),
                         ("$db", db)]),
        ])()


# ---- frames and mutations ------------------------------------------------------------------------------

def encode(doc) -> bytes:
    return bson.encode(doc)


def header(length, request_id, opcode, response_to=0):
    return struct.pack("<iiii", length, request_id, response_to, opcode)


def op_msg(body: bytes, sequences=(), flags=0, request_id=1, checksum=False) -> bytes:
    sections = b"\x00" + body
    for ident, docs in sequences:
        payload = ident.encode() + b"\x00" + b"".join(docs)
        sections += b"\x01" + struct.pack("<i", 4 + len(payload)) + payload
    if checksum:
        flags |= 1
    payload = struct.pack("<I", flags) + sections
    length = 16 + len(payload) + (4 if checksum else 0)
    msg = header(length, request_id, OP_MSG) + payload
    if checksum:
        msg += struct.pack("<I", crc32c(msg))
    return msg


def duplicate_key(raw: bytes, name: str, value) -> bytes:
    """The document with one more element of a name it already has (encode() would keep one)."""
    extra = encode({name: value})[4:-1]
    out = raw[:-1] + extra + b"\x00"
    return struct.pack("<i", len(out)) + out[4:]


def mutate_db(db, r):
    return r.choice(["HR", "Hr", "hR", db + ".", db + "\0", db + "\0x", "." + db, " " + db, db + "$"])


LET_VALUE = "let-value"


def arm_variables(value, armed):
    """The command with its let/constants placeholder given this value."""
    if isinstance(value, dict):
        return type(value)((k, arm_variables(v, armed)) for k, v in value.items())
    if isinstance(value, list):
        return [arm_variables(v, armed) for v in value]
    return armed if value == LET_VALUE else value


def make_case(table, seed) -> Case:
    g = Generator(table, seed)
    r = g.r
    body = g.valid_command() if r.random() < 0.4 else g.command()
    if LET_VALUE in repr(body):
        body = arm_variables(body, g.canary() if "$$v" in repr(body) else "plain-let-value")
    what = next(iter(body))
    sequences = []
    flags = 0
    mutation = r.randrange(20)
    if mutation == 0 and body.get("$db") in ("hr", "admin"):
        body["$db"] = mutate_db("hr", r)
        what += " db=" + repr(body["$db"])
    elif mutation == 1 and isinstance(body.get(next(iter(body))), str):
        first = next(iter(body))
        body[first] = r.choice(["people\0", "people\0x", ".people", "people$", "all\0"])
        what += " coll=" + repr(body[first])
    seq_names = [k for k in ("documents", "updates", "deletes", "ops", "nsInfo") if isinstance(body.get(k), list)]
    if seq_names and r.random() < 0.5:
        k = r.choice(seq_names)
        docs = [encode(d) for d in body[k] if isinstance(d, dict)]
        if r.random() < 0.8:
            del body[k]
        sequences.append((k, docs))
        if r.random() < 0.15:
            sequences.append((k, [encode(g.secret_doc("people"))]))
        what += " seq=" + k
    if r.random() < 0.05:
        sequences.append((r.choice(["bogus", "ssn", "documents"]), [encode(g.secret_doc("people"))]))
        what += " extra-seq"
    try:
        raw = encode(body)
    except Exception:  # noqa: BLE001 - a value BSON cannot hold (a NUL in a name): not the proxy's input
        raw = encode({"ping": 1, "$db": "admin"})
    if mutation == 2:
        raw = duplicate_key(raw, "$db", "hr")
        what += " $db-twice"
    elif mutation == 3:
        key = r.choice(["filter", "documents", "pipeline", "comment", "nsInfo", "query", "updates", "ssn"])
        raw = duplicate_key(raw, key, [g.secret_doc("people")] if key in ("documents", "pipeline", "nsInfo", "updates")
                            else g.secret_doc("people"))
        what += f" {key}-twice"
    more = False
    if mutation == 4:
        flags |= 2  # moreToCome
        more = True
        what += " moreToCome"
    frame = op_msg(raw, sequences, flags, request_id=seed & 0x3FFFFFFF or 1, checksum=mutation == 5)
    if mutation == 6:
        opcode = r.choice([2010, 9999, OP_REPLY, 2001, 2002, 2005, 2006, 2007, 2011])
        frame = frame[:12] + struct.pack("<i", opcode) + frame[16:]
        what += f" opcode={opcode}"
    elif mutation == 7:
        inner = frame
        comp = struct.pack("<iiB", OP_MSG, len(inner) - 16, 2) + zlib.compress(inner[16:])
        frame = header(16 + len(comp), 5, OP_COMPRESSED) + comp
        what += " compressed"
    elif mutation == 8:
        q = SON([("isMaster", 1)]) if r.random() < 0.3 else body
        name = r.choice(["admin.$cmd", "hr.$cmd", "hr.people"])
        qraw = encode(dict(q, **({"$db": "hr"} if r.random() < 0.3 else {})))
        payload = struct.pack("<i", 0) + name.encode() + b"\x00" + struct.pack("<ii", 0, -1) + qraw
        frame = header(16 + len(payload), 9, OP_QUERY) + payload
        what += f" OP_QUERY {name}"
    elif mutation in (9, 10):
        # a length inside the body that lies (the message's own lengths hold): malformed BSON, so the
        # proxy must close without forwarding. (A flipped byte anywhere could as well rename the
        # collection into a plain one, where a canary is no secret: the Jazzer targets take those.)
        at = r.choice(length_offsets(raw, 21))
        b = bytearray(frame)
        b[at:at + 4] = struct.pack("<i", r.choice([0, 4, -1, len(frame) * 4]))
        frame = bytes(b)
        what += f" length@{at}"
    return Case(seed, frame, what, more)


def length_offsets(doc: bytes, base: int, out=None):
    """Where the lengths of a document, of the documents, arrays and strings in it, lie in the frame."""
    out = [] if out is None else out
    out.append(base)
    at = 4
    while at < len(doc) - 1:
        kind = doc[at]
        name_end = doc.index(b"\x00", at + 1)
        value = name_end + 1
        if kind in (0x03, 0x04):
            n = struct.unpack("<i", doc[value:value + 4])[0]
            length_offsets(doc[value:value + n], base + value, out)
            at = value + n
        elif kind in (0x02, 0x0D, 0x0E):
            out.append(base + value)
            at = value + 4 + struct.unpack("<i", doc[value:value + 4])[0]
        else:
            at = value + _fixed(kind, doc, value)
    return out


def _fixed(kind, doc, at):
    """The size of a value the walk does not go into."""
    sizes = {0x01: 8, 0x07: 12, 0x08: 1, 0x09: 8, 0x0A: 0, 0x10: 4, 0x11: 8, 0x12: 8, 0x13: 16, 0x7F: 0, 0xFF: 0,
             0x06: 0}
    if kind in sizes:
        return sizes[kind]
    if kind == 0x05:
        return 5 + struct.unpack("<i", doc[at:at + 4])[0]
    if kind == 0x0B:
        first = doc.index(b"\x00", at)
        return doc.index(b"\x00", first + 1) + 1 - at
    if kind == 0x0F:
        return struct.unpack("<i", doc[at:at + 4])[0]
    if kind == 0x0C:
        return 4 + struct.unpack("<i", doc[at:at + 4])[0] + 12
    raise ValueError(f"BSON type {kind}")


# ---- running cases through the proxy ------------------------------------------------------------------

class Connection:
    """One client connection to the proxy, reopened whenever the proxy closes it."""

    def __init__(self, port, timeout):
        self.port = port
        self.timeout = timeout
        self.sock = None

    def _open(self):
        self.sock = socket.create_connection(("127.0.0.1", self.port), timeout=self.timeout)

    def close(self):
        if self.sock:
            self.sock.close()
        self.sock = None

    def send(self, case: Case):
        """Sends the case; returns ('reply', body bytes) | ('closed', None) | ('timeout', None)."""
        if self.sock is None:
            self._open()
        try:
            self.sock.sendall(case.frame)
            if case.more_to_come:
                # no reply comes: a ping behind it says when the proxy has dealt with it
                self.sock.sendall(op_msg(encode({"ping": 1, "$db": "admin"}), request_id=77))
            head = self._recv(16)
            if head is None:
                self.close()
                return "closed", None
            length = struct.unpack("<i", head[:4])[0]
            rest = self._recv(length - 16)
            if rest is None:
                self.close()
                return "closed", None
            return "reply", head + rest
        except socket.timeout:
            self.close()
            return "timeout", None
        except (ConnectionResetError, BrokenPipeError):
            self.close()
            return "closed", None

    def _recv(self, n):
        data = b""
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            if not chunk:
                return None
            data += chunk
        return data


def proxy_refusal_quotes_canary(reply: bytes) -> bool:
    """An error the proxy itself answered (9720xxx) that repeats a canary."""
    if CANARY not in reply:
        return False
    opcode = struct.unpack("<i", reply[12:16])[0]
    try:
        if opcode == OP_MSG:
            doc = bson.decode(reply[21:21 + struct.unpack("<i", reply[21:25])[0]])
        elif opcode == OP_REPLY:
            doc = bson.decode(reply[36:36 + struct.unpack("<i", reply[36:40])[0]])
        else:
            return False
    except Exception:  # noqa: BLE001
        return False
    code = doc.get("code")
    return isinstance(code, int) and 9720000 <= code <= 9720999


def run(table, port, relay, first_seed, count, timeout=20.0, batch=100, reset=None, progress=None):
    """Runs count cases from first_seed; returns (summary dict, failures list)."""
    conn = Connection(port, timeout)
    failures = []
    # forwarded: cases of which something reached the server; sealed: those that held canaries
    outcomes = {"reply": 0, "closed": 0, "timeout": 0, "forwarded": 0, "sealed": 0}
    seed = first_seed
    end = first_seed + count
    while seed < end:
        cases = [make_case(table, s) for s in range(seed, min(seed + batch, end))]
        relay.clear()
        for c in cases:
            before = relay.size()
            outcome, reply = conn.send(c)
            outcomes[outcome] += 1
            if relay.size() > before:
                outcomes["forwarded"] += 1
                outcomes["sealed"] += CANARY in c.frame
            if outcome == "timeout":
                failures.append((c.seed, c.what, "no answer and no close within the timeout"))
            elif outcome == "reply" and proxy_refusal_quotes_canary(reply):
                failures.append((c.seed, c.what, "a refusal of the proxy quotes a canary"))
        if CANARY in relay.captured():
            failures.extend(bisect(table, port, relay, cases, timeout))
        seed += len(cases)
        if reset:
            reset()
        if progress:
            progress(seed - first_seed, outcomes, failures)
    conn.close()
    return {"cases": count, **outcomes}, failures


def bisect(table, port, relay, cases, timeout):
    """The cases of a batch whose canaries reached the relay, each sent alone on a new connection."""
    found = []
    for c in cases:
        conn = Connection(port, timeout)
        relay.clear()
        conn.send(c)
        conn.close()
        captured = relay.captured()
        if CANARY in captured:
            at = captured.index(CANARY)
            found.append((c.seed, c.what, "canary reached the server: "
                          + captured[max(0, at - 80):at + 40].decode("latin-1").encode("unicode_escape").decode()))
    if not found:
        found.append((cases[0].seed, "batch", "a canary reached the server, but no case alone sent it again"))
    return found
