#!/usr/bin/env python3
"""10,000 loopback A2S servers read from Python: `ogp.scan_async` against python-a2s
and opengsq (asyncio, each at its best concurrency), side by side; then the per-call
overhead of `ogp.query` over the Rust client alone.

    python bench/a2s_10k.py --ogp-load target/release/ogp-load [--targets 10000] [--minecraft 1000]

Run it with the interop venv's python (scripts/install-interop.sh: python-a2s,
opengsq) and the `ogp` package importable (`pip install ./crates/ogp-py`, or
PYTHONPATH at a directory holding ogp/ with the built _ogp.abi3.so).

The servers: `ogp-load scan-serve --mix a2s` (the farm of `ogp-load scan`,
crates/ogp-load/README.md): real `ogp_net::responder`s on 127.81.0.1 ports 10000 and up,
challenges required, one child process. Every client asks each server what `ogp scan`
asks an A2S server: INFO, PLAYER and RULES (with their challenges); a target counts as
answered when all three came back. Each run is a child process of its own: wall time,
CPU (user + system, from wait4) and peak RSS (ru_maxrss) are that process's,
interpreter start-up and imports included.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import time

IP = "127.81.0.1"
MC_IP = "127.79.0.1"  # the farm of `ogp-load minecraft`
FIRST_PORT = 10000


def targets(n: int, ip: str = IP) -> list:
    """The farm's addresses, less the ports it could not bind (SKIP, set by the parent)."""
    skip = {int(i) for i in os.environ.get("BENCH_SKIP", "").split(",") if i}
    return [f"{ip}:{FIRST_PORT + i}" for i in range(n) if i not in skip]


# --- the contenders (each runs in a child: `a2s_10k.py run NAME N CONCURRENCY`) -------


async def run_ogp(addrs: list, concurrency: int) -> int:
    import ogp

    ok = 0
    async for r in ogp.scan_async([f"a2s {a}" for a in addrs], max_in_flight=concurrency, rate=1_000_000):
        ok += r.ok
    return ok


async def run_python_a2s(addrs: list, concurrency: int) -> int:
    import a2s

    sem = asyncio.Semaphore(concurrency)

    async def one(a: str) -> bool:
        host, port = a.rsplit(":", 1)
        addr = (host, int(port))
        async with sem:
            try:
                await a2s.ainfo(addr, timeout=3.0)
                await a2s.aplayers(addr, timeout=3.0)
                await a2s.arules(addr, timeout=3.0)
                return True
            except Exception:
                return False

    return sum(await asyncio.gather(*(one(a) for a in addrs)))


async def run_opengsq(addrs: list, concurrency: int) -> int:
    from opengsq.protocols import Source

    sem = asyncio.Semaphore(concurrency)

    async def one(a: str) -> bool:
        host, port = a.rsplit(":", 1)
        s = Source(host, int(port), timeout=3.0)
        async with sem:
            try:
                await s.get_info()
                await s.get_players()
                await s.get_rules()
                return True
            except Exception:
                return False

    return sum(await asyncio.gather(*(one(a) for a in addrs)))


async def run_ogp_minecraft(addrs: list, concurrency: int) -> int:
    import ogp

    ok = 0
    async for r in ogp.scan_async([f"minecraft {a}" for a in addrs], max_in_flight=concurrency, rate=1_000_000):
        ok += r.ok
    return ok


async def run_mcstatus(addrs: list, concurrency: int) -> int:
    from mcstatus import JavaServer

    sem = asyncio.Semaphore(concurrency)

    async def one(a: str) -> bool:
        host, port = a.rsplit(":", 1)
        async with sem:
            try:
                await JavaServer(host, int(port), timeout=3.0).async_status()
                return True
            except Exception:
                return False

    return sum(await asyncio.gather(*(one(a) for a in addrs)))


RUNNERS = {"ogp": run_ogp, "python-a2s": run_python_a2s, "opengsq": run_opengsq,
           "ogp-minecraft": run_ogp_minecraft, "mcstatus": run_mcstatus}


def child(name: str, n: int, concurrency: int) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    ip = MC_IP if name in ("ogp-minecraft", "mcstatus") else IP
    ok = asyncio.run(RUNNERS[name](targets(n, ip), concurrency))
    print(json.dumps({"answered": ok}))


def measure(name: str, n: int, concurrency: int) -> dict:
    t = time.monotonic()
    p = subprocess.Popen([sys.executable, __file__, "run", name, str(n), str(concurrency)],
                         stdout=subprocess.PIPE, text=True, env=dict(os.environ, BENCH_SKIP=SKIP[0]))
    out = p.stdout.read()
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t
    answered = json.loads(out.strip().splitlines()[-1])["answered"] if out.strip() else -1
    return {"name": name, "concurrency": concurrency, "answered": answered, "wall": wall,
            "cpu": ru.ru_utime + ru.ru_stime, "rss_mb": ru.ru_maxrss / 1024, "status": status}


def farm(ogp_load: str, n: int, minecraft: bool = False) -> subprocess.Popen:
    cmd = ([ogp_load, "mc-serve", "--ip", MC_IP, "--count", str(n)] if minecraft else
           [ogp_load, "scan-serve", "--ip", IP, "--count", str(n), "--mix", "a2s", "--offset", "0"])
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    line = p.stdout.readline().split()
    if not line or line[0] != "ready":
        raise SystemExit(f"the farm did not start: {line}")
    bound = int(line[1])
    SKIP[0] = line[2] if len(line) > 2 else ""
    if bound != n:
        print(f"note: {n - bound} of the farm's ports were taken (left out of every run: "
              f"{bound} targets)", file=sys.stderr)
    return p


SKIP = [""]


def overhead(addr: str, n: int) -> None:
    import ogp
    from ogp import _ogp

    ogp.query(addr, protocol="a2s")  # warm: the runtime, the code
    rust = min(_ogp._bench_rust_queries(addr, "a2s", n) for _ in range(3))
    best = 1e9
    for _ in range(3):
        t = time.perf_counter()
        for _ in range(n):
            ogp.query(addr, protocol="a2s")
        best = min(best, time.perf_counter() - t)

    async def many() -> float:
        t = time.perf_counter()
        for _ in range(n):
            await ogp.query_async(addr, protocol="a2s")
        return time.perf_counter() - t

    best_async = min(asyncio.run(many()) for _ in range(3))
    us = lambda s: s / n * 1e6  # noqa: E731
    print(f"\nper-call overhead, {n} sequential A2S queries (INFO+PLAYER+RULES) of one server, best of 3:")
    print(f"  Rust client alone (ogp_net::client::query + the result JSON): {us(rust):8.1f} µs/query")
    print(f"  ogp.query       {us(best):8.1f} µs/query  overhead {us(best - rust):7.1f} µs")
    print(f"  ogp.query_async {us(best_async):8.1f} µs/query  overhead {us(best_async - rust):7.1f} µs")


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "run":
        child(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("--ogp-load", required=True)
    ap.add_argument("--targets", type=int, default=10000)
    ap.add_argument("--ogp-concurrency", default="512,2048")
    ap.add_argument("--py-concurrency", default="100,500,1000")
    ap.add_argument("--overhead-queries", type=int, default=2000)
    ap.add_argument("--minecraft", type=int, default=0, help="then this many Minecraft servers vs mcstatus")
    a = ap.parse_args()
    f = farm(a.ogp_load, a.targets)
    try:
        plan = [("ogp", c) for c in map(int, a.ogp_concurrency.split(","))]
        for lib in ("python-a2s", "opengsq"):
            plan += [(lib, c) for c in map(int, a.py_concurrency.split(","))]
        compare(f"{a.targets} loopback A2S servers, INFO+PLAYER+RULES each", plan, a.targets, "ogp",
                ("python-a2s", "opengsq"))
        overhead(f"{IP}:{FIRST_PORT}", a.overhead_queries)
    finally:
        f.stdin.close()
        f.wait(timeout=30)
    if a.minecraft:
        f = farm(a.ogp_load, a.minecraft, minecraft=True)
        try:
            plan = [("ogp-minecraft", c) for c in map(int, a.ogp_concurrency.split(","))]
            plan += [("mcstatus", c) for c in map(int, a.py_concurrency.split(","))]
            compare(f"{a.minecraft} loopback Minecraft: Java Edition servers (Server List Ping)", plan,
                    a.minecraft, "ogp-minecraft", ("mcstatus",))
        finally:
            f.stdin.close()
            f.wait(timeout=30)


def compare(title: str, plan: list, n: int, ours: str, others: tuple) -> None:
    runs = []
    total = n - len([i for i in SKIP[0].split(",") if i])
    for name, c in plan:
        r = measure(name, n, c)
        runs.append(r)
        print(f"  {name:13} concurrency {c:5}: {r['answered']:6}/{total} answered in {r['wall']:7.2f} s, "
              f"CPU {r['cpu']:7.2f} s, peak RSS {r['rss_mb']:6.1f} MB", flush=True)
    print(f"\n{title}, best run of each client:")
    best: dict = {}
    for r in runs:
        b = best.get(r["name"])
        if b is None or (r["answered"], -r["wall"]) > (b["answered"], -b["wall"]):
            best[r["name"]] = r
    o = best[ours]
    for name in (ours,) + others:
        r = best[name]
        print(f"  {name:13} (concurrency {r['concurrency']:5}) {r['answered']:6} answered  {r['wall']:7.2f} s  "
              f"CPU {r['cpu']:7.2f} s  peak RSS {r['rss_mb']:6.1f} MB  "
              f"time {r['wall'] / o['wall']:5.1f}x  CPU {r['cpu'] / o['cpu']:5.1f}x of ogp.scan_async", flush=True)


if __name__ == "__main__":
    main()
