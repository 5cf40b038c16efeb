#!/usr/bin/env python3
"""Rebuilds gameq-halo-1.json: a Halo: Combat Evolved 01.00.10.0621 server's two GameSpy v2
replies to GameQ's two requests (tests/Protocols/Providers/Halo/1_response.txt of
Austinb/GameQ, a binary file the stored index does not show as text), from the values
GameQ decoded from them (1_result.json). What is rebuilt, not recorded: the layout (the
one GameQ, gamedig, opengsq and qstat read), the order of the server keys (the result's,
alphabetical; the server's own order is lost) and the ids (GameQ's 'CORY' and 'CORX').
Strings are Latin-1 on the wire, as GameQ's isoToUtf8 says they were. Run from this
folder."""
import json

server = [
    ("dedicated", "1"), ("fraglimit", "10"), ("game_classic", "0"), ("game_flags", "65"),
    ("gamemode", "openplaying"), ("gametype", "CTF"), ("gamevariant", "POQclan.com PC16"),
    ("gamever", "01.00.10.0621"), ("hostname", "\u0001" * 62 + "!"), ("hostport", "2302"),
    ("mapname", "bloodgulch"), ("maxplayers", "16"), ("numplayers", "13"),
    ("password", "0"), ("player_flags", "1372606472,1091"), ("teamplay", "1"),
]
players = [
    ("Hooded_Claw", "1", "79", "1"), ("_", "0", "100", "0"), ("HAWK", "0", "61", "1"),
    ("el oso", "0", "130", "0"), ("OMEGA", "0", "139", "1"),
    ("\u00d1E\u00bbMcC\u00e1f", "1", "71", "1"), ("Thanos", "0", "112", "0"),
    ("WILL", "0", "120", "0"), ("MIRA P TRAS", "0", "61", "1"), ("AOK", "0", "130", "0"),
    ("BanderaRey", "0", "40", "0"), ("erickson", "0", "258", "1"), ("tibiri", "2", "68", "1"),
]
teams = [("Red", "2"), ("Blue", "9")]

def z(s):
    return s.encode("latin-1") + b"\0"

details = b"\0CORY" + b"".join(z(k) + z(v) for k, v in server) + b"\0"
roster = b"\0CORX" + b"\0" + bytes([len(players)])
roster += b"".join(z(k) for k in ("player_", "score_", "ping_", "team_")) + b"\0"
roster += b"".join(b"".join(z(v) for v in p) for p in players)
roster += b"\0" + bytes([len(teams)]) + z("team_t") + z("score_t") + b"\0"
roster += b"".join(z(n) + z(s) for n, s in teams)
capture = {
    "protocol": "gamespy2",
    "game": "Halo",
    "origin": {
        "repo": "Austinb/GameQ",
        "commit": "6cf6c2eb1c8218882333e75ca676ddfc3d6fef11",
        "path": "tests/Protocols/Providers/Halo/1_response.txt",
        "expected_path": "tests/Protocols/Providers/Halo/1_result.json",
    },
    "note": "Rebuilt from GameQ's decoded values (see rebuild.py): the values are a real "
            "Halo server's; the key order and the ids are not.",
    "responses": {"details": [details.hex()], "roster": [roster.hex()]},
    "expected": {
        "host_name": "\u0001" * 62 + "!", "map": "bloodgulch", "game_type": "CTF",
        "game_version": "01.00.10.0621", "mod": "POQclan.com PC16", "connect_port": 2302,
        "player_count": 13, "slot_max": 16, "password": False, "players": 13,
        "teams": ["Red", "Blue"], "team_scores": [2, 9],
        "first_player": {"name": "Hooded_Claw", "score": 1, "ping": 79, "team": 1},
        "latin1_player": "\u00d1E\u00bbMcC\u00e1f",
    },
}
json.dump(capture, open("gameq-halo-1.json", "w"), indent=1)
print(len(details), len(roster))
