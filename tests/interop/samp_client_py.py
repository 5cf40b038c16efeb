"""Queries a SA-MP server with PyPI samp-client and prints one JSON object on stdout.

Usage: python samp_client_py.py HOST PORT

Output: {"info": {password, players, max_players, hostname, gamemode, language},
"rules": {name: value}, "clients": [{"name", "score"}], "error": "..." | null}; the
error is reported instead of raised, so the test decides. Used by
crates/ogp-cli/tests/all/interop_samp.rs.
"""

import json
import sys


def main():
    host, port = sys.argv[1], int(sys.argv[2])
    from samp_client.client import SampClient

    out = {"info": None, "rules": None, "clients": None, "error": None}
    try:
        with SampClient(address=host, port=port) as c:
            c.socket.settimeout(2)
            i = c.get_server_info()
            out["info"] = {
                "password": i.password,
                "players": i.players,
                "max_players": i.max_players,
                "hostname": i.hostname,
                "gamemode": i.gamemode,
                "language": i.language,
            }
            out["rules"] = c.get_server_rules_dict()
            out["clients"] = [{"name": p.name, "score": p.score} for p in c.get_server_clients()]
    except Exception as e:  # reported, not raised: the test says what it expected
        out["error"] = f"{type(e).__name__}: {e}"
    print(json.dumps(out))


main()
