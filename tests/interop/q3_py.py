"""Queries a Quake III server with opengsq and prints one JSON object on stdout.

Usage: python q3_py.py HOST PORT [TIMEOUT]

Output: {"client": "opengsq quake3", "info": {key: value} | null (getinfo, colour codes
kept), "plain": {"info": {...}, "players": [{"name", "frags", "ping"}]} | null
(getstatus with opengsq's colour stripping), "raw": the same without stripping | null,
"error": "..." | null}. The error is reported instead of raised, so the test decides.
Used by crates/ogp-cli/tests/all/interop_quake3.rs.
"""

import asyncio
import json
import sys


def status_json(status):
    return {
        "info": {str(k): str(v) for k, v in dict(status.info).items()},
        "players": [
            {"name": str(p.name), "frags": int(p.frags), "ping": int(p.ping)}
            for p in status.players
        ],
    }


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    host, port = sys.argv[1], int(sys.argv[2])
    timeout = float(sys.argv[3]) if len(sys.argv) == 4 else 2.0
    from opengsq.protocols import Quake3

    out = {"client": "opengsq quake3", "info": None, "plain": None, "raw": None, "error": None}
    try:
        q = Quake3(host, port, timeout=timeout)
        info = asyncio.run(q.get_info(strip_color=False))
        out["info"] = {str(k): str(v) for k, v in dict(info).items()}
        out["plain"] = status_json(asyncio.run(q.get_status()))
        out["raw"] = status_json(asyncio.run(q.get_status(strip_color=False)))
    except Exception as e:  # noqa: BLE001 - reported, the test decides
        out["error"] = f"{type(e).__name__}: {e}"
    json.dump(out, sys.stdout, ensure_ascii=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
