"""Queries a GameSpy v1 server with opengsq (`\\status\\`) and prints one JSON object.

Usage: python gs1_py.py HOST PORT [TIMEOUT]

Output: {"client": "opengsq gamespy1", "info": {key: value} | null, "players": [{key:
value}] | null, "teams": [{key: value}] | null, "error": "..." | null}. The error is
reported instead of raised, so the test decides. Used by
crates/ogp-cli/tests/all/interop_gs1.rs.
"""

import asyncio
import json
import sys


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    host, port = sys.argv[1], int(sys.argv[2])
    timeout = float(sys.argv[3]) if len(sys.argv) == 4 else 2.0
    from opengsq.protocols import GameSpy1

    out = {"client": "opengsq gamespy1", "info": None, "players": None, "teams": None, "error": None}
    try:
        s = asyncio.run(GameSpy1(host, port, timeout=timeout).get_status())
        out["info"] = {str(k): str(v) for k, v in dict(s.info).items()}
        out["players"] = [{str(k): str(v) for k, v in dict(p).items()} for p in s.players]
        out["teams"] = [{str(k): str(v) for k, v in dict(t).items()} for t in (s.teams or [])]
    except Exception as e:  # noqa: BLE001 - reported, the test decides
        out["error"] = f"{type(e).__name__}: {e}"
    json.dump(out, sys.stdout, ensure_ascii=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
