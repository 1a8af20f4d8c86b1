"""Raw wire messages for tests that must send what no driver would."""
import socket
import struct
import zlib

import bson

OP_REPLY, OP_QUERY, OP_COMPRESSED, OP_MSG = 1, 2004, 2012, 2013


def header(length: int, request_id: int, response_to: int, opcode: int) -> bytes:
    return struct.pack("<iiii", length, request_id, response_to, opcode)


def op_msg(body: dict, request_id: int = 1, flags: int = 0, sections: bytes = None) -> bytes:
    payload = struct.pack("<I", flags) + (sections if sections is not None else b"\x00" + bson.encode(body))
    return header(16 + len(payload), request_id, 0, OP_MSG) + payload


def op_compressed(inner: bytes, compressor_id: int = 2) -> bytes:
    original_opcode = struct.unpack("<i", inner[12:16])[0]
    compressed = zlib.compress(inner[16:])
    payload = struct.pack("<iiB", original_opcode, len(inner) - 16, compressor_id) + compressed
    return header(16 + len(payload), 5, 0, OP_COMPRESSED) + payload


def read_reply(sock: socket.socket) -> tuple:
    """Reads one message; returns (header fields, body bytes)."""
    head = recv_exactly(sock, 16)
    length, request_id, response_to, opcode = struct.unpack("<iiii", head)
    return (length, request_id, response_to, opcode), recv_exactly(sock, length - 16)


def recv_exactly(sock: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise ConnectionError(f"closed after {len(data)} of {n} bytes")
        data += chunk
    return data


def closed_by_peer(sock: socket.socket, timeout: float = 5.0) -> bool:
    """True once the peer has closed the connection (EOF or reset)."""
    sock.settimeout(timeout)
    try:
        while True:
            if not sock.recv(65536):
                return True
    except ConnectionResetError:
        return True
    except socket.timeout:
        return False
