#!/usr/bin/env python3
"""Writes sauerbraten-players-constructed.json: an extinfo exchange with players built
from Sauerbraten's byte layout (extinfo version 105), requests with id 0x01020304. No
server here has players (see SOURCES.md)."""
import json
import os


def putint(v):
    if -126 <= v <= 127:
        return bytes([v & 0xFF])
    if -32768 <= v <= 32767:
        return b"\x80" + (v & 0xFFFF).to_bytes(2, "little")
    return b"\x81" + (v & 0xFFFFFFFF).to_bytes(4, "little")


def putstr(s):
    return b"".join(putint(b if b < 128 else b - 256) for b in s) + b"\x00"


ID = bytes([0x81, 4, 3, 2, 1])


def head(req):
    return req + putint(-1) + putint(105)


ping = (ID + putint(3) + putint(5) + b"".join(putint(v) for v in [260, 11, 437, 16, 1])
        + putstr(b"forge") + putstr(b"\x0c3Capture \x0c7test"))
players_req = b"\x00\x01\xff" + ID
ids = head(players_req) + putint(0) + putint(-10) + b"".join(putint(c) for c in [0, 5, 128])


def stats(cn, ping_ms, name, team, values, ip):
    return (head(players_req) + putint(0) + putint(-11) + putint(cn) + putint(ping_ms)
            + putstr(name) + putstr(team) + b"".join(putint(v) for v in values) + bytes(ip))


# frags, flags, deaths, teamkills, accuracy, health, armour, gun, privilege, state
p0 = stats(0, 31, b"alice", b"good", [12, 2, 3, 0, 41, 100, 50, 4, 1, 0], [192, 0, 2])
p5 = stats(5, 260, b"b\xe9b", b"evil", [-1, 0, 7, 1, 9, 0, 0, 0, 0, 1], [198, 51, 100])
pbot = stats(128, 0, b"bot", b"evil", [4, 1, 4, 0, 25, 1000, 200, 6, 0, 5], [0, 0, 0])
teams_req = b"\x00\x02" + ID
teams = (head(teams_req) + putint(0) + putint(11) + putint(437)
         + putstr(b"good") + putint(3) + putint(-1) + putstr(b"evil") + putint(1) + putint(-1))
uptime_req = b"\x00\x00" + ID
uptime = head(uptime_req) + putint(70000)
c = {
    "protocol": "cube2",
    "origin": {"constructed": "from Sauerbraten's byte layout (extinfo version 105), not "
               "captured: no server here has players (construct.py)"},
    "requests": {"ping": ID.hex(), "uptime": uptime_req.hex(), "players": players_req.hex(),
                 "teams": teams_req.hex()},
    "responses": {"ping": [ping.hex()], "uptime": [uptime.hex()],
                  "players": [ids.hex(), p0.hex(), p5.hex(), pbot.hex()], "teams": [teams.hex()]},
}
out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sauerbraten-players-constructed.json")
with open(out, "w") as f:
    json.dump(c, f, indent=1)
    f.write("\n")
