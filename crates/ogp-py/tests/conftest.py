"""Servers for the Python package's tests: `ogp serve` (the build's `ogp` binary) and
hostile ones (silent, garbage, truncated, a flood, a TCP drip), each on a free loopback
port, stopped at the end. tests/python.rs passes the real servers' addresses (OpenArena,
the npm Minecraft server, the testkit's SLP responder) in OGP_TEST_* variables."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import tempfile
import threading
import time
from typing import Iterator, List

import pytest

# The Ctrl-C tests raise SIGINT in the process (`_thread.interrupt_main`), which does
# nothing when SIGINT is ignored, as it is in a process a non-interactive shell started
# in the background (a CI runner's `cmd &`): Python then installs no handler of its own.
# A user's interpreter at a terminal has it; the tests make sure they have it too.
signal.signal(signal.SIGINT, signal.default_int_handler)


def _free_udp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="session")
def served() -> Iterator[str]:
    """`ogp serve` of the project's demo state, OGP, A2S, GameSpy v3 and Quake III."""
    ogp = os.environ["OGP_BIN"]
    state = os.environ["OGP_TEST_STATE"]
    for _ in range(5):
        port = _free_udp_port()
        log = tempfile.TemporaryFile()
        p = subprocess.Popen(
            [ogp, "serve", "--state", state, "--listen", f"127.0.0.1:{port}", "--quake3",
             "--rate", "10000", "--burst", "10000", "--threads", "1"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log,
        )
        # ready when A2S answers (a raw A2S_INFO; its challenge reply counts)
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.connect(("127.0.0.1", port))
        s.settimeout(0.05)
        deadline = time.monotonic() + 10
        up = False
        while time.monotonic() < deadline and p.poll() is None:
            s.send(b"\xff\xff\xff\xffTSource Engine Query\x00")
            try:
                s.recv(2048)
                up = True
                break
            except OSError:
                pass
        s.close()
        if up:
            try:
                yield f"127.0.0.1:{port}"
            finally:
                p.kill()
                p.wait()
            return
        p.kill()
        p.wait()
    raise RuntimeError("ogp serve did not start")


class _Udp:
    """A UDP server on loopback: `reply(datagram)` gives the datagrams to send back."""

    def __init__(self, reply) -> None:  # type: ignore[no-untyped-def]
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.settimeout(0.1)
        self.addr = "127.0.0.1:%d" % self.sock.getsockname()[1]
        self.reply = reply
        self.stop = False
        self.t = threading.Thread(target=self.run, daemon=True)
        self.t.start()

    def run(self) -> None:
        while not self.stop:
            try:
                d, peer = self.sock.recvfrom(65536)
            except OSError:
                continue
            for out in self.reply(d):
                try:
                    self.sock.sendto(out, peer)
                except OSError:
                    pass

    def close(self) -> None:
        self.stop = True
        self.t.join()
        self.sock.close()


@pytest.fixture(scope="session")
def silent() -> Iterator[List[str]]:
    """Ten UDP ports that read and never answer."""
    servers = [_Udp(lambda d: []) for _ in range(10)]
    yield [s.addr for s in servers]
    for s in servers:
        s.close()


@pytest.fixture(scope="session")
def garbage() -> Iterator[str]:
    """Answers every datagram with bytes of no protocol."""
    s = _Udp(lambda d: [b"\x00garbage\x7f" * 20])
    yield s.addr
    s.close()


@pytest.fixture(scope="session")
def truncated() -> Iterator[str]:
    """Answers every datagram with an A2S_INFO header cut short (a lying length)."""
    s = _Udp(lambda d: [b"\xff\xff\xff\xffI\x11Host"])
    yield s.addr
    s.close()


@pytest.fixture(scope="session")
def flood() -> Iterator[str]:
    """Answers every datagram with 300 datagrams of A2S-looking junk."""
    s = _Udp(lambda d: [b"\xff\xff\xff\xffA" + bytes([i % 256]) * 4 for i in range(300)])
    yield s.addr
    s.close()


@pytest.fixture(scope="session")
def drip() -> Iterator[str]:
    """A TCP server that, once connected, announces a 255-byte frame and drips it, one
    byte every 50 ms (never finishing within any test's timeout)."""
    ls = socket.socket()
    ls.bind(("127.0.0.1", 0))
    ls.listen(16)
    ls.settimeout(0.1)
    stop = threading.Event()

    def feed(c: socket.socket) -> None:
        with c:
            try:
                c.send(b"\xff\x01\x00")  # length 255, packet id 0
            except OSError:
                return
            while not stop.is_set():
                try:
                    c.send(b"{")
                except OSError:
                    return
                time.sleep(0.05)

    def accept() -> None:
        while not stop.is_set():
            try:
                c, _ = ls.accept()
            except OSError:
                continue
            threading.Thread(target=feed, args=(c,), daemon=True).start()

    t = threading.Thread(target=accept, daemon=True)
    t.start()
    yield "127.0.0.1:%d" % ls.getsockname()[1]
    stop.set()
    t.join()
    ls.close()


@pytest.fixture()
def closed_port() -> str:
    return f"127.0.0.1:{_free_udp_port()}"
