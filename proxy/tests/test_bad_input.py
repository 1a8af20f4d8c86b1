"""Bad input closes that one connection with one log line saying why; everything else carries on."""
import socket
import struct

import bson
import pytest

from conftest import client
from wire import OP_MSG, closed_by_peer, header, op_compressed, op_msg

PING = {"ping": 1, "$db": "admin"}


def bad_section_kind():
    sections = b"\x02" + bson.encode(PING)
    return op_msg(None, sections=sections)


def lying_document_length():
    body = bytearray(bson.encode(PING))
    struct.pack_into("<i", body, 0, 4000)
    return op_msg(None, sections=b"\x00" + bytes(body))


def bad_checksum():
    msg = bytearray(op_msg(PING, flags=1) + b"\x00\x00\x00\x00")
    struct.pack_into("<i", msg, 0, len(msg))
    return bytes(msg)


CASES = {
    "length below the header": (header(5, 1, 0, OP_MSG), "smaller than the 16-byte header"),
    "negative length": (struct.pack("<i", -20) + b"\x00" * 12, "smaller than the 16-byte header"),
    "over-size message": (header(48_000_001, 1, 0, OP_MSG), "exceeds the maximum of 48000000 bytes"),
    "garbage (an HTTP request)": (b"GET / HTTP/1.1\r\nHost: proxy\r\n\r\n", "exceeds the maximum"),
    "unknown OP_MSG section kind": (bad_section_kind(), "unknown section kind 2"),
    "document length beyond the message": (lying_document_length(), "OP_MSG body declares 4000 bytes"),
    "wrong CRC-32C checksum": (bad_checksum(), "checksum mismatch"),
    "OP_COMPRESSED although never negotiated": (op_compressed(op_msg(PING)), "never negotiates compression"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_bad_input_closes_only_that_connection(proxy, proxy_client, name):
    payload, reason = CASES[name]
    # A connection that is already in use must not notice anything.
    bystander = proxy_client.bad_input.bystander
    bystander.insert_one({"before": name})
    proxy.mark_log()

    with socket.create_connection(("127.0.0.1", proxy.port)) as s:
        s.sendall(payload)
        assert closed_by_peer(s), "the proxy closes the offending connection"

    lines = proxy.new_log_lines("closed: protocol error")
    assert len(lines) == 1, lines
    assert reason in lines[0]
    assert "WARN" in lines[0]

    assert proxy.alive()
    assert bystander.find_one({"before": name}) is not None
    with client(proxy.uri()) as fresh:
        assert fresh.admin.command("ping")["ok"] == 1.0


def test_a_frame_cut_short_by_the_client(proxy):
    msg = op_msg(PING)
    proxy.mark_log()
    with socket.create_connection(("127.0.0.1", proxy.port)) as s:
        s.sendall(msg[:-5])
        s.shutdown(socket.SHUT_WR)
        assert closed_by_peer(s)
    lines = proxy.new_log_lines("closed: protocol error")
    assert len(lines) == 1, lines
    assert f"closed in the middle of a message (got {len(msg) - 5} of {len(msg)} bytes)" in lines[0]
    with client(proxy.uri()) as fresh:
        assert fresh.admin.command("ping")["ok"] == 1.0


def test_a_message_fed_one_byte_at_a_time_is_answered(proxy):
    from wire import read_reply
    msg = op_msg(PING, request_id=4242)
    with socket.create_connection(("127.0.0.1", proxy.port)) as s:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for i in range(len(msg)):
            s.sendall(msg[i:i + 1])
        (length, _, response_to, opcode), body = read_reply(s)
    assert (response_to, opcode) == (4242, OP_MSG)
    assert bson.decode(body[5:])["ok"] == 1.0
