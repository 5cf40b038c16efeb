"""Queries an Unreal 2 server with opengsq and prints one JSON object on stdout.

Usage: python unreal2_py.py HOST PORT [TIMEOUT]

Output: {"client": "opengsq unreal2", "details": {...} | null (server information, colour
codes stripped), "rules": {key: value, "Mutators": [...]} | null, "players": [{"id",
"name", "ping", "score", "stats_id"}] | null, "error": "..." | null}. The error is
reported instead of raised, so the test decides. Used by
crates/ogp-cli/tests/all/interop_unreal2.rs.
"""

import asyncio
import dataclasses
import json
import sys


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    host, port = sys.argv[1], int(sys.argv[2])
    timeout = float(sys.argv[3]) if len(sys.argv) == 4 else 2.0
    from opengsq.protocols import Unreal2

    out = {"client": "opengsq unreal2", "details": None, "rules": None, "players": None, "error": None}
    try:
        u = Unreal2(host, port, timeout=timeout)
        out["details"] = dataclasses.asdict(asyncio.run(u.get_details()))
        out["rules"] = asyncio.run(u.get_rules())
        out["players"] = [dataclasses.asdict(p) for p in asyncio.run(u.get_players())]
    except Exception as e:  # reported, not raised: the test says what failed
        out["error"] = f"{type(e).__name__}: {e}"
    print(json.dumps(out, default=str))


if __name__ == "__main__":
    main()
