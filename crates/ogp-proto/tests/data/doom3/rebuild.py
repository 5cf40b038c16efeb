#!/usr/bin/env python3
"""Rebuilds the Doom 3 and Quake 4 infoResponse datagrams of GameQ's test data
(Austinb/GameQ tests/Protocols/Providers/{Doom3,Quake4}/1_response.txt, binary files the
stored index does not show) from the values of their 1_result.json (stored here as
gameq-*.result.json), in the layout of the Doom 3 engine's reply. Run from this folder.

What GameQ's results give away of the bytes: GameQ reads the challenge as a "version"
(80.105: 'P', 'i' of the echoed "PiNG") and the protocol number's bytes as a key and a
value ("NG)" = "\\x01": 29 00 01 00, Doom 3's protocol 1.41; "NGU" = "\\x02": 55 00 02
00, Quake 4's 2.85). Not given, so chosen here: the rules' order (GameQ sorts them; the
server's order is lost), the OS mask (0), and Latin-1 for the names (the engine's 8-bit
strings)."""
import json

PREFIX = b"\xff\xffinfoResponse\x00"
SKIP = {"version", "clients", "numplayers", "players", "NG)", "NGU"}

def s(v):
    return v.encode("latin-1") + b"\x00"

def rebuild(result, protocol, clan):
    (server,) = json.load(open(result)).values()
    out = PREFIX + b"PiNG" + protocol.to_bytes(4, "little")
    rules = [(k, v) for k, v in server.items() if not k.startswith("gq_") and k not in SKIP]
    for k, v in rules:
        out += s(k) + s(v)
    out += b"\x00\x00"
    for p in server.get("players", []):
        out += bytes([p["id"]]) + p["ping"].to_bytes(2, "little") + p["rate"].to_bytes(4, "little")
        out += s(p["name"])
        if clan:
            out += s(p["clantag"])
    out += b"\x20" + (0).to_bytes(4, "little")
    return out, rules, server

for game, protocol, clan in (("doom3", 0x10029, False), ("quake4", 0x20055, True)):
    out, rules, server = rebuild(f"gameq-{game}-1.result.json", protocol, clan)
    capture = {
        "protocol": "doom3",
        "game": {"doom3": "Doom3", "quake4": "Quake4"}[game],
        "origin": {
            "repo": "Austinb/GameQ",
            "commit": "5bac0ac24b76cc9808d060d52aaa947e0fc5e675",
            "path": f"tests/Protocols/Providers/{game.capitalize()}/1_response.txt",
            "expected_path": f"tests/Protocols/Providers/{game.capitalize()}/1_result.json",
        },
        "note": "Rebuilt from GameQ's result values in the engine's layout (see rebuild.py): "
                "the protocol number and challenge as GameQ's misreading shows them; rule "
                "order, OS mask 0 and Latin-1 names chosen.",
        "challenge": "PiNG",
        "expected": {
            "host_name_raw": server["si_name"],
            "map": server["si_map"],
            "slot_max": int(server["si_maxPlayers"]),
            "game_name": server["gamename"],
            "game_type": server["si_gameType"],
            "protocol": f"{protocol >> 16}.{protocol & 0xffff}",
            "rules": len(rules),
            "players": [[p["id"], p["name"], p["ping"], p["clantag"]] for p in server.get("players", [])],
        },
        "responses": {"reply": [out.hex()]},
    }
    with open(f"gameq-{game}-1.json", "w") as f:
        json.dump(capture, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print(game, len(out), "bytes")
