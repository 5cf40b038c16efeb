"""Queries a GameSpy v3 server with opengsq and prints one JSON object on stdout.

Usage: python gs3_py.py gamespy3|battlefield2|gamespy4 HOST PORT [TIMEOUT]

Output: {"client": ..., "info": {key: value} | null, "players": [{column: value}] | null,
"teams": [{column: value}] | null, "error": "..." | null}. opengsq's GameSpy3 and
Battlefield2 send no 0x09 challenge request; GameSpy4 does. The error is reported
instead of raised, so the test decides. Used by crates/ogp-cli/tests/all/interop_gs3.rs.
"""

import asyncio
import json
import sys


def main():
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__)
    kind, host, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
    timeout = float(sys.argv[4]) if len(sys.argv) == 5 else 2.0
    from opengsq.protocols import Battlefield2, GameSpy3, GameSpy4

    cls = {"gamespy3": GameSpy3, "battlefield2": Battlefield2, "gamespy4": GameSpy4}[kind]
    out = {"client": f"opengsq {kind}", "info": None, "players": None, "teams": None, "error": None}
    try:
        status = asyncio.run(cls(host, port, timeout=timeout).get_status())
        out["info"] = {str(k): str(v) for k, v in dict(status.info).items()}
        out["players"] = [{str(k): str(v) for k, v in dict(p).items()} for p in status.players]
        out["teams"] = [{str(k): str(v) for k, v in dict(t).items()} for t in status.teams]
    except Exception as e:  # noqa: BLE001 - reported, the test decides
        out["error"] = f"{type(e).__name__}: {e}"
    json.dump(out, sys.stdout, ensure_ascii=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
