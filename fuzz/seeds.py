#!/usr/bin/env python3
"""Regenerates the committed seed corpora in fuzz/corpus/ from the test captures.

    python3 fuzz/seeds.py

Sources: crates/ogp-proto/tests/data/ogp/{sdk,synthetic}/*.bin (raw UDP payloads of the
reference SDK and hand-made answers) and crates/ogp-proto/tests/data/state.json. Existing
files in fuzz/corpus/<target>/ with other names (e.g. added crash reproducers) are kept.
"""

import glob
import json
import os
import struct

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "crates", "ogp-proto", "tests", "data")
CORPUS = os.path.join(ROOT, "fuzz", "corpus")
PREFIX = b"\xff\xff\xff\xffOGP\x00"


def put(target, name, data):
    d = os.path.join(CORPUS, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def split_header(datagram):
    """(header, body): the body starts at 8 + HeadSize."""
    n = 8 + datagram[8]
    return datagram[:n], datagram[n:]


def read(path):
    with open(path, "rb") as f:
        return f.read()


def split_record(datagram, pad_units=None):
    """One ogp_split record: u16 LE length (top 5 bits 0x1f = a pad byte follows)."""
    if pad_units is None:
        return struct.pack("<H", len(datagram)) + datagram
    return struct.pack("<H", (0x1F << 11) | len(datagram)) + bytes([pad_units]) + datagram


def split_answer_header(count, number, challenge):
    """A split answer header like the SDK's: bAnswer, bRequestID, bSplit, bUTF8, and
    bChallengeNumber on packet 0; RequestID 7."""
    flags = 0x1D | (0x02 if challenge else 0)
    fields = bytes([0x01, flags])
    if challenge:
        fields += struct.pack("<I", 0xB9132646)
    fields += struct.pack("<I", 7) + bytes([count, number])
    return PREFIX + bytes([len(fields) + 1]) + fields


def main():
    captures = sorted(glob.glob(os.path.join(DATA, "ogp", "sdk", "*.bin")))
    captures += sorted(glob.glob(os.path.join(DATA, "ogp", "synthetic", "*.bin")))
    for path in captures:
        b = read(path)
        name = os.path.basename(path)
        put("ogp_datagram", name, b)
        if not b.startswith(PREFIX) or len(b) < 11 or 8 + b[8] > len(b):
            continue
        _, body = split_header(b)
        packet_type, flags = b[9], b[10]
        if packet_type != 0x01:
            continue
        if flags & 0x01:  # bAnswer
            if not flags & 0x08:  # unsplit
                put("ogp_answer_body", name, body)
        else:
            put("ogp_query_body", name, body)

    sdk = os.path.join(DATA, "ogp", "sdk")
    parts = [read(os.path.join(sdk, f"09_split_500.answer.{k}.bin")) for k in range(9)]
    put("ogp_answer_body", "09_split_500.reassembled.bin",
        b"".join(split_header(p)[1] for p in parts))

    put("ogp_split", "09_split_500.in_order.bin", b"".join(split_record(p) for p in parts))
    put("ogp_split", "09_split_500.reversed_dup.bin",
        b"".join(split_record(p) for p in parts[::-1] + parts[:1]))
    full = read(os.path.join(sdk, "02_php_full_utf8.answer.bin"))
    body = split_header(full)[1]
    n = len(body) // 3
    small = [split_answer_header(3, i, i == 0) + c
             for i, c in enumerate([body[:n], body[n:2 * n], body[2 * n:]])]
    put("ogp_split", "02_full_in_3.bin",
        b"".join(split_record(d) for d in [small[2], small[0], small[1]]))
    # not split, another answer, a duplicate
    put("ogp_split", "mixed.bin", b"".join(split_record(d) for d in
                                           [small[0], full, parts[3], small[1], small[1], small[2]]))
    # 1 MiB limit: part 0 with 127 x 8 KiB of padding, part 1 padded once more (TooLarge),
    # then parts 1 and 2 unpadded (complete, ~1 MiB body)
    put("ogp_split", "too_large.bin", split_record(small[0], 127) + split_record(small[1], 1)
        + split_record(small[1]) + split_record(small[2]))

    state = read(os.path.join(DATA, "state.json"))
    put("state_json", "state.json", state)
    put("state_json", "state.min.json",
        json.dumps(json.loads(state), ensure_ascii=False, separators=(",", ":")).encode())
    put("state_json", "state.toml", STATE_TOML.encode())


STATE_TOML = """\
game_id = 42
game_name = "Demo Arena"
host_name = "Demo Arena #1 – Ünïcödé ✓"
connect_port = 27015
server_type = "dedicated"
os = "linux"
password = false
proxy = false
game_type = "CTF"
game_mode = "openplaying"
slot_max = 24
reserved_slots = 2

[host_name_color]
entries = [{ delta = 0, code = 1 }, { delta = 5, code = 0x91, color16 = 0xf800 }]

[mod]
name = "ctfplus"
identifier = "ctfp"
size = 5242880

[map]
name = "Harbor"
file_name = "ctf_harbor"
file_md5 = "00112233445566778899aabbccddeeff"

[next_map]
name = "Canyon"

[rules]
timelimit = 20
friendlyfire = true
gravity = 800.5
motd = "Hällo"

[[teams]]
name = "Red"
score = 3
color = 63488

[[players]]
slot = 0
name = "Alice"
team = 0
duration = 754.25
address = "[2001:db8::1]:27005"
alive = true

[[players]]
name = "Bob the Bot"
bot = true
address = "raw:0200abcd"

[[addons]]
short_name = "AMX"
admin_tool = true

[[limits]]
type = "time"
limit = 1200
left = 446

[[limits]]
type = 7
limit = 3
"""

if __name__ == "__main__":
    main()
