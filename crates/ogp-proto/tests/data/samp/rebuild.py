#!/usr/bin/env python3
"""Rebuilds the SA-MP captures of this folder from the values two readers decoded from
real servers (their test data holds the decoded values, not the datagrams): the layout
is SA-MP's (an 11-byte header echoing the request: `SAMP`, the address, the port
little-endian, the opcode; then the opcode's fields, little-endian), the values are the
servers'. Run from this folder; see SOURCES.md."""
import json
import struct


def header(addr, port, op):
    return b"SAMP" + bytes(int(x) for x in addr.split(".")) + struct.pack("<H", port) + op.encode()


def long_str(s):
    b = s.encode("cp1252")
    return struct.pack("<I", len(b)) + b


def short_str(s):
    b = s.encode("cp1252")
    return bytes([len(b)]) + b


def info(h, password, players, maxp, name, mode, lang):
    return h + struct.pack("<BHH", password, players, maxp) + long_str(name) + long_str(mode) + long_str(lang)


def rules(h, pairs):
    out = h + struct.pack("<H", len(pairs))
    for k, v in pairs:
        out += short_str(k) + short_str(v)
    return out


def detailed(h, players):
    out = h + struct.pack("<H", len(players))
    for p in players:
        out += bytes([p["id"]]) + short_str(p["name"]) + struct.pack("<iI", p["score"], p["ping"])
    return out


def clients(h, players):
    out = h + struct.pack("<H", len(players))
    for p in players:
        out += short_str(p["name"]) + struct.pack("<i", p["score"])
    return out


def write(name, meta, addr, port, i, r, players):
    h = lambda op: header(addr, port, op)
    doc = dict(meta)
    doc["address"] = f"{addr}:{port}"
    doc["responses"] = {
        "i": info(h("i"), *i).hex(),
        "r": rules(h("r"), r).hex(),
        "d": detailed(h("d"), players).hex(),
        "c": clients(h("c"), players).hex(),
    }
    with open(name, "w") as f:
        json.dump(doc, f, indent=1, ensure_ascii=False)
        f.write("\n")


# GameQ tests/Protocols/Providers/Samp/1_result.json (the response file is binary)
gfz = [
    (0, "Unchiu", 33, 21), (1, "FighteR", 86, 19), (2, "AjMERAjMER", 53, 36), (3, "Host.", 27, 25),
    (4, "[ESL]Biceps", 25, 16), (6, "BuZz", 17, 21), (7, "Bibanu", 5, 40), (9, "vibe.", 27, 25),
    (12, "R@Ul", 25, 46), (18, "CaptainBoom", 24, 46), (21, "PinK", 13, 24),
    (22, "PotancaEinocent", 6, 15), (23, "YaLL", 5, 19), (24, "DOZE", 8, 25),
    (25, "[F3]KiNTA", 39, 24), (27, "KEN", 80, 26), (29, "Blindius", 21, 14),
    (30, "guabyy", 16, 20), (31, "KnND_196", 12, 21), (34, "Meryen", 40, 26), (35, "Jah", 54, 20),
    (36, "ZAGGYY", 13, 40), (37, "BoGDan", 11, 30), (47, "LiNu", 32, 26),
    (51, "SirRazvano", 13, 26), (53, "hd.GFZ", 20, 157), (78, "MaRio", 38, 26),
    (99, "sPz.", 20, 51), (102, "ShifT", 69, 26), (106, "BeLoDeDiky", 5, 24),
    (119, "ReDix", 49, 20), (149, "RaLuCa", 3, 71), (169, "FaLc0N", 6, 26), (170, "jrD", 32, 41),
]
write(
    "gameq-gfzone-1.json",
    {
        "protocol": "samp",
        "game": "Grand Theft Auto: San Andreas Multiplayer 0.3.7-R2",
        "origin": {
            "repo": "Austinb/GameQ",
            "commit": "243f0c0d36122b0be0b2ff059b8279b3ba8aa8a2",
            "path": "tests/Protocols/Providers/Samp/1_response.txt",
            "expected_path": "tests/Protocols/Providers/Samp/1_result.json",
        },
        "note": "Rebuilt from GameQ's decoded values (see rebuild.py): the values are a real SA-MP server's; the rule order is the result's (alphabetical).",
    },
    "93.119.26.201", 7777,
    (0, 34, 350, "GFZONE: RPG Server [0.3.7]", "GFZONE RPG v6.2.8c", "Romanian/English"),
    [("lagcomp", "On"), ("mapname", "San Andreas"), ("version", "0.3.7-R2"), ("weather", "10"),
     ("weburl", "www.gfzone.ro/forum"), ("worldtime", "05:00")],
    [dict(id=a, name=b, score=c, ping=d) for a, b, c, d in gfz],
)

# opengsq-python tests/results/test_samp/*.json (51.254.178.238:7777)
valrise = [
    (0, "Malcolm_Houston", 29, 55), (1, "Mircea_Niko", 12, 61), (2, "Murat_Kent", 27, 144),
    (3, "Lars_Vegas", 25, 261), (4, "Richard_Russo", 20, 20), (5, "Mark_Lynch", 22, 51),
    (6, "Sonny_Tattaglia", 21, 50), (7, "Kris_Stewart", 25, 133), (8, "Larry_Ozaak", 30, 55),
    (9, "Jason_Wilson", 31, 153), (10, "Eduard_Reiner", 49, 185), (11, "Igor_Sto", 20, 19),
    (12, "Tom_Willson", 26, 41), (13, "Matthew_Reiner", 31, 46), (14, "Ishaq_Zxytro", 22, 183),
    (15, "Hamdon_Clifford", 7, 77), (17, "Simon_Stewart", 29, 103),
]
write(
    "opengsq-valrise-1.json",
    {
        "protocol": "samp",
        "game": "Grand Theft Auto: San Andreas Multiplayer 0.3.7-R2",
        "origin": {
            "repo": "opengsq/opengsq-python",
            "commit": "1530a54fb829ddfb5fdbdb07b57ed6b540f60c30",
            "path": "tests/results/test_samp/test_get_status.json, test_get_players.json (and test_get_rules.json at 96d191d1a8afdbd426d4d8333ac25499f32f1877)",
        },
        "note": "Rebuilt from opengsq's decoded values (see rebuild.py): the values are a real SA-MP server's (51.254.178.238:7777); the rule order is the result's.",
    },
    "51.254.178.238", 7777,
    (0, 17, 250, "[ENG] Valrise RPG", "Valrise RP 1.2.3 (RPG/RP)", "English"),
    [("SAMPCAC version", "0.10.0"), ("lagcomp", "On"), ("mapname", "San Andreas"),
     ("version", "0.3.7-R2"), ("weather", "10"), ("weburl", "valrisegaming.com"),
     ("worldtime", "12:00")],
    [dict(id=a, name=b, score=c, ping=d) for a, b, c, d in valrise],
)
