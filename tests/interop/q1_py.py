"""Queries a QuakeWorld (or, with `quake2`, a Quake 2) server with opengsq and prints
one JSON object on stdout.

Usage: python q1_py.py quake1|quake2 HOST PORT [TIMEOUT]

Output: {"client": "opengsq quake1", "info": {key: value} | null, "players": [{"name",
"score", "ping", ...}] | null, "error": "..." | null}. The error is reported instead of
raised, so the test decides. Used by crates/ogp-cli/tests/all/real_quakeworld.rs.
"""

import asyncio
import json
import sys


def main():
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__)
    kind, host, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
    timeout = float(sys.argv[4]) if len(sys.argv) == 5 else 2.0
    from opengsq.protocols import Quake1, Quake2

    out = {"client": "opengsq " + kind, "info": None, "players": None, "error": None}
    try:
        q = (Quake1 if kind == "quake1" else Quake2)(host, port, timeout=timeout)
        status = asyncio.run(q.get_status())
        out["info"] = {str(k): str(v) for k, v in dict(status.info).items()}
        players = []
        for p in status.players:
            d = {"name": str(p.name), "ping": int(p.ping)}
            for field in ("id", "score", "frags", "time", "skin", "color1", "color2"):
                if hasattr(p, field):
                    v = getattr(p, field)
                    d[field] = v if isinstance(v, int) else str(v)
            players.append(d)
        out["players"] = players
    except Exception as e:  # reported, not raised: the test compares
        out["error"] = f"{type(e).__name__}: {e}"
    print(json.dumps(out))


if __name__ == "__main__":
    main()
