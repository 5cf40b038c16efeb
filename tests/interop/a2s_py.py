"""Queries an A2S server with a Python client and prints one JSON object on stdout.

Usage: python a2s_py.py python-a2s|opengsq HOST PORT [TIMEOUT]

Output: {"client": ..., "info": {...} | null, "players": [{"name", "score", "duration"}]
| null, "rules": [[key, value], ...] | null, "errors": {"info"|"players"|"rules": "..."}}.
Each part is queried on its own, so one failing part does not hide the others; its
error is reported instead of raising. Used by crates/ogp-cli/tests/all/interop_a2s.rs.
"""

import asyncio
import dataclasses
import json
import sys


def plain(obj):
    """A JSON-friendly copy of a client's result object."""
    if dataclasses.is_dataclass(obj):
        return {k: plain(v) for k, v in dataclasses.asdict(obj).items()}
    if isinstance(obj, dict):
        return {str(k): plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, set)):
        return [plain(v) for v in obj]
    if isinstance(obj, bytes):
        return obj.decode("utf-8", errors="replace")
    if isinstance(obj, (str, int, float, bool)) or obj is None:
        return obj
    if hasattr(obj, "value"):  # enums
        return plain(obj.value)
    if hasattr(obj, "__dict__"):
        return {k: plain(v) for k, v in vars(obj).items() if not k.startswith("_")}
    return str(obj)


def player(p):
    return {"name": p.name, "score": p.score, "duration": p.duration}


def with_python_a2s(host, port, timeout):
    import a2s

    addr = (host, port)
    return {
        "info": lambda: plain(a2s.info(addr, timeout=timeout)),
        "players": lambda: [player(p) for p in a2s.players(addr, timeout=timeout)],
        # a dict: key order is the wire order, duplicate keys would collapse
        "rules": lambda: [[k, v] for k, v in a2s.rules(addr, timeout=timeout).items()],
    }


def with_opengsq(host, port, timeout):
    from opengsq.protocols import Source

    def run(f):
        return lambda: asyncio.run(f(Source(host, port, timeout=timeout)))

    async def info(s):
        return plain(await s.get_info())

    async def players(s):
        return [player(p) for p in await s.get_players()]

    async def rules(s):
        # opengsq 3.7.0 returns a set of (key, value) tuples: order is lost
        return sorted([k, v] for k, v in await s.get_rules())

    return {"info": run(info), "players": run(players), "rules": run(rules)}


def main():
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__)
    client, host, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
    timeout = float(sys.argv[4]) if len(sys.argv) == 5 else 2.0
    parts = {"python-a2s": with_python_a2s, "opengsq": with_opengsq}[client](host, port, timeout)
    out = {"client": client, "errors": {}}
    for name, query in parts.items():
        try:
            out[name] = query()
        except Exception as e:  # noqa: BLE001 - reported, the test decides
            out[name] = None
            out["errors"][name] = f"{type(e).__name__}: {e}"
    json.dump(out, sys.stdout, ensure_ascii=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
