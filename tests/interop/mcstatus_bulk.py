"""Bulk Minecraft: Java Edition status with mcstatus in its fastest form: asyncio,
`JavaServer.async_status()` on every target at once under a semaphore of CONCURRENCY.

Usage: mcstatus_bulk.py LIST CONCURRENCY TIMEOUT_S
LIST has one HOST:PORT a line. Prints `ok HOST:PORT ONLINE/MAX` or `err HOST:PORT WHY`
per target as it finishes, then a summary line on standard error. The soft open-file
limit is raised to the hard one first (each status holds a socket). Used by
`ogp-load minecraft` for the side-by-side benchmark.
"""

import asyncio
import resource
import sys
import time

from mcstatus import JavaServer


async def main(path, concurrency, timeout):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    with open(path) as f:
        targets = [line.strip() for line in f if line.strip()]
    sem = asyncio.Semaphore(concurrency)
    out = sys.stdout
    answered = 0

    async def one(target):
        nonlocal answered
        host, port = target.rsplit(":", 1)
        async with sem:
            try:
                s = await JavaServer(host, int(port), timeout=timeout).async_status()
                answered += 1
                out.write(f"ok {target} {s.players.online}/{s.players.max}\n")
            except Exception as e:  # noqa: BLE001 - every failure is a result
                out.write(f"err {target} {type(e).__name__}\n")

    t0 = time.monotonic()
    await asyncio.gather(*(one(t) for t in targets))
    took = time.monotonic() - t0
    out.flush()
    print(
        f"mcstatus: {answered} of {len(targets)} answered in {took:.2f} s "
        f"(concurrency {concurrency})",
        file=sys.stderr,
    )


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2]), float(sys.argv[3])))
