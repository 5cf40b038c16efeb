#!/usr/bin/env python3
"""A Mumble user for the interop tests: connects to HOST PORT over TLS as NAME, sends
Version and Authenticate, prints `joined` once the server sends ServerSync, then stays
connected (a Ping every 5 s) until its stdin closes.

Usage: mumble-user.py HOST PORT NAME

Mumble's control channel: each message is a 16-bit type and a 32-bit length (both
big-endian), then a protobuf body. Only the few fields needed are written here.
"""
import socket
import ssl
import struct
import sys
import threading
import time


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def field_varint(num, value):
    return varint(num << 3) + varint(value)


def field_bytes(num, data):
    return varint(num << 3 | 2) + varint(len(data)) + data


def message(kind, body):
    return struct.pack(">HI", kind, len(body)) + body


VERSION, AUTHENTICATE, PING, SERVER_SYNC, REJECT = 0, 2, 3, 5, 4


def main():
    host, port, name = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    raw = socket.create_connection((host, port), timeout=10)
    s = ctx.wrap_socket(raw)
    s.sendall(
        message(VERSION, field_varint(1, 0x00010304) + field_bytes(2, b"1.3.4"))
        + message(AUTHENTICATE, field_bytes(1, name.encode()) + field_varint(5, 1))
    )
    buf = b""
    deadline = time.time() + 10
    while time.time() < deadline:
        chunk = s.recv(65536)
        if not chunk:
            sys.exit("closed before ServerSync")
        buf += chunk
        while len(buf) >= 6:
            kind, n = struct.unpack(">HI", buf[:6])
            if len(buf) < 6 + n:
                break
            buf = buf[6 + n:]
            if kind == REJECT:
                sys.exit("rejected")
            if kind == SERVER_SYNC:
                print("joined", flush=True)
                stop = threading.Event()

                def pinger():
                    while not stop.wait(5):
                        try:
                            s.sendall(message(PING, field_varint(1, int(time.time()))))
                        except OSError:
                            return

                threading.Thread(target=pinger, daemon=True).start()
                s.settimeout(None)
                threading.Thread(target=lambda: [None for _ in iter(lambda: s.recv(65536), b"")], daemon=True).start()
                sys.stdin.read()
                stop.set()
                s.close()
                return
    sys.exit("no ServerSync within 10 s")


main()
