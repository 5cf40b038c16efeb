#!/usr/bin/env python3
"""Rebuilds gameq-mta-2.json: the datagram GameQ stores in
tests/Protocols/Providers/Mta/2_response.txt (Austinb/GameQ), whose stored text shows
every byte but the control characters (ASE's length bytes below 0x20 other than TAB and
LF). The values come from GameQ's 2_result.json (gameq-mta-2.players.txt: name, score or
'-' for empty, ping); the layout is ASE's. Checked: the rebuilt bytes, with the control
characters left out, are the stored text (gameq-mta-2.stored.txt), and their length is
the stored file's 3,333 characters. Run from this folder."""
import json

def lp(s):
    b = s.encode()
    return bytes([len(b) + 1]) + b

head = ["mta", "22003", "|| OwlGaming Roleplay || www.owlgaming.net ||", "Roleplay",
        "Los Santos", "1.4", "0", "122", "1000"]
rules = [("Script Version", "4.3.6.5"), ("Author", "OwlGaming - MTA Server Development Team"),
         ("Website", "www.owlgaming.net")]
players = [l.split(" ") for l in open("gameq-mta-2.players.txt").read().splitlines()]
out = b"EYE1" + b"".join(lp(f) for f in head)
out += b"".join(lp(k) + lp(v) for k, v in rules) + lp("")
for name, score, ping in players:
    # flags 0x3f: name, team, skin, score, ping, time; all but name, score, ping empty
    out += b"\x3f" + lp(name) + lp("") + lp("") + lp("" if score == "-" else score) + lp(ping)
    out += lp("")
shown = bytes(b for b in out if b >= 0x20 or b in (9, 10))
stored = open("gameq-mta-2.stored.txt", "rb").read()
assert shown == stored, "rebuilt bytes do not show as the stored text"
assert len(out) == 3333, len(out)
capture = {
    "protocol": "ase",
    "game": "Mta",
    "origin": {
        "repo": "Austinb/GameQ",
        "commit": "1d8bf6ba3c346936394f7b8d441e15ec2b687f31",
        "path": "tests/Protocols/Providers/Mta/2_response.txt",
        "expected_path": "tests/Protocols/Providers/Mta/2_result.json",
    },
    "note": "A real Multi Theft Auto: San Andreas 1.4 server's EYE1 reply (GameQ test data), "
            "its length bytes below 0x20 restored from the layout (see rebuild.py). GameQ reads "
            "the last player's empty time, at the very end, as false (PHP's substr at the end).",
    "responses": {"reply": [out.hex()]},
    "expected": {
        "host_name": head[2], "game_name": "mta", "connect_port": 22003,
        "game_type": "Roleplay", "map": "Los Santos", "game_version": "1.4",
        "password": False, "player_count": 122, "slot_max": 1000,
        "rules": dict(rules), "players": len(players),
        "first_player": {"name": "Douglas_Schrader", "score": 442, "ping": 60},
        "last_player": {"name": "Owl.Player.7526", "ping": 117},
    },
}
json.dump(capture, open("gameq-mta-2.json", "w"), indent=1)
print(len(out), "bytes,", len(players), "players")
