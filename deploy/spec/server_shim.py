"""A pytest plugin (-p server_shim) for pymongo's own test suite run against the embedded backend.

pymongo's test/__init__.py asks the server `getParameter: "*"` while it sets up, and the embedded
backend (mongo-java-server) has no such command, so every test would fail before it starts. Here
that one command, when the server says CommandNotFound (59), answers "no test commands": the
tests that need fail points then skip themselves, as they would against a mongod started without
enableTestCommands. Nothing else is changed: every other command, and getParameter on a server
that has it, goes to the server as pymongo sends it.
"""
import pymongo.errors
from pymongo.synchronous.database import Database

_command = Database.command


def _command_or_no_test_commands(self, command, *args, **kwargs):
    try:
        return _command(self, command, *args, **kwargs)
    except pymongo.errors.OperationFailure as e:
        if command == "getParameter" and e.code == 59:
            return {"enableTestCommands": False, "ok": 1.0}
        raise


Database.command = _command_or_no_test_commands
