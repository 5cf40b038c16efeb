#!/usr/bin/env python3
"""Regenerates the committed seed corpora in fuzz/corpus/ from the test captures.

    python3 fuzz/seeds.py            # also runs the Rust seed generator (needs cargo)
    python3 fuzz/seeds.py --no-cargo # only what Python writes

Sources: crates/ogp-proto/tests/data/ogp/{sdk,synthetic}/*.bin (raw UDP payloads of the
reference SDK and hand-made answers), crates/ogp-proto/tests/data/state.json, the GQP
draft's examples (crates/ogp-proto/tests/protocols/gqp.rs), the v0.02 draft's tables
(crates/ogp-proto/tests/protocols/ogp_draft.rs), and the A2S and GameSpy v3 captures of real servers
(crates/ogp-proto/tests/data/{a2s,gamespy3}/*.json, the same files as shared/captures/).
`fuzz/examples/gen_seeds.rs` adds what needs the encoders: the GQP, draft and A2S clients'
queries and a responder's answers to them, and the A2S captures' split replies
reassembled (`gen-*` files). Existing files in fuzz/corpus/<target>/ with other names
(e.g. added crash reproducers) are kept.
"""

import glob
import gzip
import json
import os
import struct
import subprocess
import sys
import zlib

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

    gqp_seeds()
    draft_seeds()
    responder_seeds(captures)
    client_seeds()
    gs3_seeds()
    a2s_seeds()
    valve_master_seeds()
    master_registry_seeds()
    stream_seeds()
    if "--no-cargo" not in sys.argv:
        subprocess.run(["cargo", "run", "--quiet", "--release", "--manifest-path",
                        os.path.join(ROOT, "fuzz", "Cargo.toml"), "--example", "gen_seeds",
                        "--", CORPUS], check=True)


# ---------------------------------------------------------------------------------------
# GQP (tests/gqp.rs: the draft's examples and the abuse cases)

SOH, STX, EOT, ACK, DLE, DC1, DC2, DC3, DC4, ETB, GS, RS, US = (
    b"\x01", b"\x02", b"\x04", b"\x06", b"\x10", b"\x11", b"\x12", b"\x13", b"\x14",
    b"\x17", b"\x1d", b"\x1e", b"\x1f")


def deflate(data):
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    return c.compress(data) + c.flush()


def gqp_frame(encoding, payload, end=EOT):
    """A GQP datagram: SOH encoding ACK (unless plain), the payload (compressed as the
    encoding says), then EOT or ETB."""
    enc = encoding.lower()
    if "deflate" in enc:
        payload = deflate(payload)
    elif "gzip" in enc:
        payload = gzip.compress(payload, mtime=0)
    head = SOH + encoding.encode() + ACK if encoding else b""
    return head + payload + end


STATUS_COMMANDS = b"identify" + GS + b"serverinfo" + GS + b"players" + GS + b"teams" + GS \
    + b"rules" + GS + b"addons" + GS + b"limits"

GQP_QUERIES = {
    "identify": b"identify" + EOT,
    "unknown": b"unknown command" + EOT,
    "empty_command": b"echo" + GS + EOT,
    "two_echoes": b"echo" + RS + b"this text" + GS + b"echo" + RS + b"more text" + EOT,
    "escapes": b"echo" + RS + b"a" + DLE + b"Db" + DLE + b"?" + DLE + b"^c" + EOT,
    "latin1": b"echo" + RS + b"ec\xe9ho" + EOT,
    "probe": b"challenge" + RS + b"0" * 13 + EOT,
    "token_status": b"challenge" + RS + b"1a2b3c4d" + GS + STATUS_COMMANDS + EOT,
    "login": b"challenge" + RS + b"1a2b3c4d" + GS + b"login" + RS + b"admin" + EOT,
    "validate": b"challenge" + RS + b"1a2b3c4d" + GS + b"validate" + RS + b"admin" + RS
                + b"0f" * 32 + GS + b"rules" + EOT,
    "extensions": b"extensions" + GS + b"echo" + RS + b"a" + RS + RS + b"b" + EOT,
    "utf8": gqp_frame("utf-8", b"identify" + GS + b"echo" + RS + "\u00e9\u2713".encode()),
    "utf8_bad": gqp_frame("utf-8", b"echo" + RS + b"\xff\xfe"),
    "deflate": gqp_frame("deflate", STATUS_COMMANDS),
    "deflate_utf8": gqp_frame("UTF-8+Deflate", b"challenge" + RS + b"00000000" + GS
                              + STATUS_COMMANDS),
    "gzip": gqp_frame("gzip", b"echo" + RS + b"a" * 200),
    "gzip_utf8": gqp_frame("gzip+utf-8", b"serverinfo" + GS + b"players"),
    "deflate_bomb": gqp_frame("deflate", b"echo" + RS + b"a" * 5000),
    "unknown_encoding": SOH + b"bzip2+utf-8" + ACK + b"identify" + RS + b"a" * 40 + EOT,
    "unknown_encoding2": SOH + b"UNICODE" + ACK + b"x" + EOT,
    "raw_control": b"iden\x07tify" + EOT,
    "bad_escape": b"echo" + RS + b"a" + DLE + b"\x01b" + EOT,
    "unit_separator": b"echo" + RS + b"a" + US + b"b" + EOT,
    "etb": b"identify" + ETB,
    "empty_header": SOH + ACK + b"identify" + EOT,
    "many_commands": GS.join([b"echo"] * 33) + EOT,
}

GQP_REPLIES = {
    "identify": b"10identify" + RS + DC2 + b"gamename" + US + b"ut" + RS + DC2 + b"gamever"
                + US + b"432" + RS + DC2 + b"netver" + US + b"432" + EOT,
    "unknown": b"20unknown command" + RS + STX + b"error: unknown command" + EOT,
    "empty": b"20" + RS + ACK + EOT,
    "echo_empty": b"10echo" + RS + ACK + GS + b"20" + RS + ACK + EOT,
    "two_echoes": b"10echo" + RS + STX + b"this text" + GS + b"10echo" + RS + STX
                  + b"more text" + EOT,
    "continued": RS + DC1 + b"more" + GS + b"10x" + RS + ACK + EOT,
    "continued_only": RS + DC1 + b"x" + ETB,
    "proof_request": b"32challenge" + RS + DC1 + b"1a2b3c4d" + EOT,
    "every_record": b"10x" + RS + STX + b"t" + RS + DC1 + RS + DC2 + b"k" + US + b"v" + DLE
                    + b"D" + RS + DC3 + b"a" + US + RS + DC4 + b"l" + RS + DC4 + b"l" + US
                    + b"1" + US + b"2" + GS + b"10empty" + RS + ACK + GS + b"20nope" + RS
                    + STX + b"error: unknown command" + EOT,
    "serverinfo": b"10serverinfo" + RS + DC2 + b"host_name" + US + b"Demo" + RS + DC2
                  + b"map.name" + US + b"Harbor" + RS + DC2 + b"mod.size" + US + b"5242880"
                  + RS + DC2 + b"server_type" + US + b"dedicated" + RS + DC2 + b"os" + US
                  + b"7" + RS + DC2 + b"map.file_md5" + US + b"00112233445566778899aabbccddeeff"
                  + EOT,
    "players": b"10players" + RS + DC4 + b"0" + US + b"name" + US + b"Alice" + US + b"duration"
               + US + b"754.25" + US + b"address" + US + b"[2001:db8::1]:27005" + US
               + b"extra.rate" + US + b"20000" + RS + DC4 + b"1" + US + b"bot" + US + b"1" + US
               + b"address" + US + b"raw:0200abcd" + US + b"odd" + EOT,
    "limits": b"10limits" + RS + DC4 + b"0" + US + b"type" + US + b"time" + US + b"limit" + US
              + b"1200" + US + b"left" + US + b"446" + RS + DC4 + b"1" + US + b"type" + US
              + b"7" + EOT,
    "query_error": b"41" + RS + STX + b"error: decode error: bad escape" + EOT,
    "deflate": gqp_frame("deflate+utf-8", b"10identify" + RS + DC2 + b"gamename" + US
                         + b"ut" + GS + b"10echo" + RS + STX + "\u00e9".encode()),
    "gzip_etb": gqp_frame("gzip", b"10rules" + RS + DC2 + b"a" + US + b"b", ETB),
}


def gqp_seeds():
    for name, d in GQP_QUERIES.items():
        put("gqp_query", f"{name}.bin", d)
    for name, d in GQP_REPLIES.items():
        put("gqp_reply", f"{name}.bin", d)


# ---------------------------------------------------------------------------------------
# OGP v0.02 draft (tests/ogp_draft.rs: the draft's tables)

def unhex(s):
    return bytes.fromhex("".join(s.split()))


DRAFT_TABLE_BODY = unhex("""
    3f
    ff07 02
    03 416c69636500 0c00 04030201 40e20100 3200 0100 01 6769676e00 204e 00
    07 426f6200     fdff 09000000 00000000 e703 0000 ff 00         0000 ff
    447261667420536572766572 00
    80510100
    10
    63737472696b65 00
    64655f64757374 00""")
DRAFT_CHALLENGE = unhex("462613b9")


def draft_split(body, count, request_id=unhex("44332211")):
    """The packets of a draft split answer (packet 0 with the challenge)."""
    each = len(body) // count
    out = []
    for k in range(count):
        chunk = body[k * each:] if k == count - 1 else body[k * each:(k + 1) * each]
        if k == 0:
            head = PREFIX + b"\x0f" + request_id + DRAFT_CHALLENGE + bytes([count, 0]) + b"\x02"
        else:
            head = PREFIX + b"\x0b" + request_id + bytes([count, k]) + b"\x02"
        out.append(head + chunk)
    return out


DRAFT_DATAGRAMS = {
    "query_everything": unhex("ffffffff 4f475000 0e 44332211 ffffffff dc05 02 0a ff0f"),
    "query_info": unhex("ffffffff 4f475000 00 02 02"),
    "query_challenge": unhex("ffffffff 4f475000 06 44332211 462613b9 02 0a ff0f"),
    "query_nonminimal": unhex("ffffffff 4f475000 06 44332211 462613b9 02 8a01 ff7f"),
    "probe": unhex("ffffffff 4f475000 00 02"),
    "none_query": unhex("ffffffff 4f475000 02 01000000 01"),
    "none_answer": unhex("ffffffff 4f475000 07 44332211 462613b9 01"),
    "banned": unhex("ffffffff 4f475000 03 44332211 00"),
    "answer_table": unhex("ffffffff 4f475000 07 44332211 462613b9 02") + DRAFT_TABLE_BODY,
    "answer_lossy": unhex("ffffffff 4f475000 01 02 02 41ff4200"),
    "answer_dead": unhex("ffffffff 4f475000 01 02 01 0004 01 07"),
    "other": unhex("ffffffff 4f475000 01 09 aabb"),
    "rcon": unhex("ffffffff 4f475000 02 44332211 03 00"),
    "v101_query": unhex("ffffffff4f475000 07 01 12 462613b9 bf018f9f0f1f3f3fbfbfbf010f"),
    "unknown_flag": unhex("ffffffff 4f475000 10 02"),
}


def draft_seeds():
    for name, d in DRAFT_DATAGRAMS.items():
        put("ogp_draft_datagram", f"{name}.bin", d)
    for k, p in enumerate(draft_split(DRAFT_TABLE_BODY, 3)):
        put("ogp_draft_datagram", f"split_table_{k}.bin", p)
    put("ogp_draft_datagram", "body_table.bin", DRAFT_TABLE_BODY)


# ---------------------------------------------------------------------------------------
# responder: records [s] [dt] [n: u16 LE] [datagram]; s & 7 source, s & 8 prove,
# s >> 6 time unit (1 ms, 50 ms, 1 s, 20 s)

def rec(d, src=0, prove=False, dt=0, unit=0):
    s = src | (8 if prove else 0) | (unit << 6)
    return bytes([s, dt]) + struct.pack("<H", len(d)) + d


def responder_seeds(captures):
    queries = [read(p) for p in captures if p.endswith(".query.bin")]
    # every SDK query as is, then proving its source (OGP answers; draft listener too)
    put("responder", "sdk_queries.bin",
        b"".join(rec(q, src=i % 6, dt=3, unit=1) for i, q in enumerate(queries)))
    put("responder", "sdk_queries_proven.bin",
        b"".join(rec(q, src=i % 6, prove=True, dt=3, unit=1) for i, q in enumerate(queries)))
    full = read(os.path.join(DATA, "ogp", "sdk", "02_php_full_utf8.query.bin"))
    split = read(os.path.join(DATA, "ogp", "sdk", "09_split_500.query.bin"))
    ping = read(os.path.join(DATA, "ogp", "sdk", "16_ping_with_challenge.query.bin"))
    put("responder", "ogp_flow.bin",
        rec(full) + rec(full, prove=True) + rec(split, src=2, prove=True)
        + rec(ping, src=4) + rec(full, src=6) + rec(full, src=7)
        + rec(full, prove=True, dt=1, unit=3) + rec(full, prove=True, dt=4, unit=3))
    put("responder", "gqp_flow.bin",
        rec(GQP_QUERIES["probe"]) + rec(GQP_QUERIES["token_status"], prove=True)
        + rec(GQP_QUERIES["login"], src=3, prove=True)
        + rec(GQP_QUERIES["validate"], src=3, prove=True)
        + rec(GQP_QUERIES["deflate_utf8"], src=4, prove=True)
        + rec(GQP_QUERIES["gzip"], src=5, prove=True)
        + rec(GQP_QUERIES["identify"], src=1) + rec(GQP_QUERIES["unknown_encoding"])
        + rec(GQP_QUERIES["bad_escape"]) + rec(GQP_QUERIES["token_status"], src=6)
        + rec(STATUS_COMMANDS + EOT, prove=True, dt=100, unit=2))
    put("responder", "draft_flow.bin",
        rec(DRAFT_DATAGRAMS["query_everything"]) + rec(DRAFT_DATAGRAMS["query_everything"],
                                                       prove=True)
        + rec(unhex("ffffffff 4f475000 0e 44332211 ffffffff f401 02 0a ff0f"), src=1, prove=True)
        + rec(DRAFT_DATAGRAMS["none_query"], src=4) + rec(DRAFT_DATAGRAMS["query_info"], src=6)
        + rec(DRAFT_DATAGRAMS["probe"], prove=True) + rec(DRAFT_DATAGRAMS["rcon"], prove=True))
    # a burst from one source: the rate limit
    put("responder", "burst.bin", b"".join(rec(full) for _ in range(50)))


# ---------------------------------------------------------------------------------------
# client_machines: a 16-byte option prefix, then ops (0 datagram, 1 time, 2 serve,
# 3 synthesized answer)

def prefix(kind, flags=0, attempt=0, total=0, backoff=0, tries=0, max_bytes=0, known=0,
           request_id=0x11223344):
    return bytes([kind, flags, attempt, total, backoff, tries]) + struct.pack(
        "<HII", max_bytes, known, request_id)


SERVE = 2


def serve(flags=0):
    return bytes([SERVE | flags << 2])


def wait(k, unit=3):
    return bytes([1 | unit << 2, k])


def datagram(d):
    return b"\x00" + struct.pack("<H", len(d)) + d


def synth(a, b, c, d):
    return bytes([3, a, b, c, d])


def client_seeds():
    ogp, gqp, draft = 0, 1, 2
    seqs = {
        "ogp_plain": prefix(ogp, 1) + serve() * 4,
        "ogp_split500": prefix(ogp, 1 | 2, max_bytes=500) + serve() + serve(1) + serve(2)
                        + serve(4) + wait(2) + serve(),
        "ogp_latin1_late": prefix(ogp, 0) + serve(0x20) + serve(0x30) + wait(9),
        "ogp_corrupt": prefix(ogp, 1) + serve() + serve(8) + wait(2) + serve(),
        "ogp_known_challenge": prefix(ogp, 1 | 4, known=0x0badcafe) + serve() * 3,
        "ogp_big_fragments": prefix(ogp, 1) + serve() + b"".join(
            synth(5, n, 255, 0) for n in range(5)),
        "ogp_capture": prefix(ogp, 1, request_id=0) + datagram(
            read(os.path.join(DATA, "ogp", "sdk", "12_request_id.answer.bin"))),
        "ogp_timeouts": prefix(ogp, 1, attempt=10, total=40, backoff=50, tries=3) + wait(9, 2),
        "gqp_status": prefix(gqp, 0x08) + serve() * 4,
        "gqp_deflate_login": prefix(gqp, 0x10 | 0x20) + serve() * 6,
        "gqp_gzip_wrong_password": prefix(gqp, 0x18 | 0x40) + serve() * 8,
        "gqp_raw": prefix(gqp, 0x80 | 0x08, max_bytes=0xff00) + serve() * 3,
        "gqp_token_small_cap": prefix(gqp, 0x04, max_bytes=1, known=0x1a2b3c4d) + serve(1)
                               + serve(2) + serve(),
        "gqp_hostile": prefix(gqp, 0x10, known=1) + serve() + b"".join(
            synth(0x20 | i & 7, 0xff, 0x7f - i, 2 | 32 | (i & 7) << 3) for i in range(20)),
        "gqp_tokens": prefix(gqp, 0) + datagram(GQP_REPLIES["proof_request"])
                      + b"".join(datagram(b"32challenge" + RS + DC1 + b"%08x" % i + EOT)
                                 for i in range(6)),
        "draft_plain": prefix(draft) + serve() * 3,
        "draft_split": prefix(draft, 2, max_bytes=500) + serve() + serve(1) + serve(2),
        "draft_big_fragments": prefix(draft) + serve() + b"".join(
            synth(127, n, 200, 0) for n in range(6)),
        "draft_banned": prefix(draft) + datagram(
            unhex("ffffffff 4f475000 03 44332211 00")),
    }
    for name, d in seqs.items():
        put("client_machines", f"{name}.bin", d)


# ---------------------------------------------------------------------------------------
# GameSpy v3: gs3_datagram ([a] [b] limits, then records [n: u16 LE] [datagram]) from the
# captures in tests/data/gamespy3/, and client_machines sequences for the GS3 machine

def gs3_captures():
    out = {}
    for path in sorted(glob.glob(os.path.join(DATA, "gamespy3", "*.json"))):
        with open(path) as f:
            cap = json.load(f)
        name = os.path.splitext(os.path.basename(path))[0]
        out[name] = [bytes.fromhex(h) for h in cap["responses"]["gs3"]]
    return out


def gs3_record(d):
    return struct.pack("<H", len(d)) + d


GS3_SINGLES = {
    "challenge_request": unhex("fefd09 10203040"),
    "challenge_request_gamedig": unhex("fefd09 00000001 00000000"),
    "request_b": unhex("fefd00 10203040 ffffff01"),
    "request_b_challenge": unhex("fefd00 10203040 019db3c4 ffffff01"),
    "request_a": unhex("fefd00 20212120 ff00ff00"),
    "request_c": unhex("fefd00 20212120 02 0801 0000"),
    "request_c_challenge": unhex("fefd00 20212120 019db3c4 03 010a10 0000"),
    "echo": unhex("fefd02") + bytes(range(40)),
    "keep_alive": unhex("fefd08 01020304"),
    "challenge_reply_bf2": unhex("09 10203040 3000"),
    "challenge_reply": unhex("09 10203040") + b"27111876\0",
    "challenge_reply_negative": unhex("09 10203040") + b"-1234\0",
    "echo_reply": unhex("05") + bytes(range(32)),
    "keys_reply": unhex("00 20212120") + b"\x84\0[PR v1.4.17.0] My Server\0",
    "heartbeat": unhex("03 01020304") + b"localip0\0192.168.1.3\0localip1\0192.168.1.4\0"
                 + b"localport\029900\0natneg\01\0statechanged\03\0gamename\0"
                 + b"battlefield2\0hostname\0Demo\0numplayers\03\0\0",
}


def gs3_seeds():
    caps = gs3_captures()
    for name, packets in caps.items():
        put("gs3_datagram", f"{name}.bin", b"\x7f\xff" + b"".join(gs3_record(p) for p in packets))
        if len(packets) > 1:
            rev = packets[::-1] + packets[:1]
            put("gs3_datagram", f"{name}.reversed_dup.bin",
                b"\x7f\xff" + b"".join(gs3_record(p) for p in rev))
    # small limits: TooLarge and BadNumber are reachable
    bf2 = caps["gameq-bf2-1"]
    put("gs3_datagram", "bf2_small_limits.bin", b"\x01\x07" + b"".join(gs3_record(p) for p in bf2))
    for name, d in GS3_SINGLES.items():
        put("gs3_datagram", f"{name}.bin", b"\x7f\xff" + gs3_record(d))

    gs3 = 3
    sid = 0x10203040  # the captures' session id
    seqs = {
        # auto handshake against the responder (real challenge): 09, challenge, request
        "gs3_auto": prefix(gs3) + serve() * 3,
        "gs3_always_reversed": prefix(gs3, 1) + serve() + serve(1) + serve(2 | 4),
        # never: the real-challenge responder stays silent; timers run out
        "gs3_never": prefix(gs3, 2) + serve() + wait(9),
        "gs3_sub_a": prefix(gs3, 4, max_bytes=0x0300) + serve() * 3,
        "gs3_sub_c": prefix(gs3, 8) + serve() * 3,
        "gs3_late": prefix(gs3, 0, attempt=10) + wait(30, 0) + serve(0x20) + serve() * 2,
        "gs3_synth": prefix(gs3, 2) + b"".join(synth(n, int(n == 3), 60, k << 1)
                                               for n, k in [(0, 0), (1, 1), (2, 2), (3, 3)]),
        "gs3_synth_other_session": prefix(gs3, 2) + synth(0, 1, 4, 1),
    }
    for name in ["gameq-bf2-1", "gameq-ut3-1", "gameq-justcause2-1", "gameq-crysis-1"]:
        packets = caps[name]
        seqs[f"gs3_capture_{name[6:]}"] = (
            prefix(gs3, 2, request_id=sid)
            + b"".join(datagram(p) for p in packets[::-1] + packets[:1]))
    # 09 answered by hand with a new challenge each time: the challenge cap
    loop = b"".join(datagram(unhex("09 10203040") + b"%d\0" % (i + 1)) for i in range(8))
    seqs["gs3_challenge_loop"] = prefix(gs3, 1, request_id=sid) + loop
    for name, d in seqs.items():
        put("client_machines", f"{name}.bin", d)


# ---------------------------------------------------------------------------------------
# Valve A2S, from the 153 captures in tests/data/a2s/: a2s_reply (one unsplit reply of each
# kind the captures show, and hand-made ones), a2s_split ([f] [b] [z] limits, then records
# [w: u16 LE] [datagram]), a2s_request ([c0] [c1], then records [s] [dt] [n: u16 LE]
# [datagram]), and A2S sequences for responder and client_machines

A2S_SINGLE = b"\xff\xff\xff\xff"
A2S_INFO = A2S_SINGLE + b"TSource Engine Query\x00"
A2S_PLAYER = A2S_SINGLE + b"U\xff\xff\xff\xff"
A2S_RULES = A2S_SINGLE + b"V\xff\xff\xff\xff"
A2S_REQUESTS = {
    "info": A2S_INFO,
    "info_challenge": A2S_INFO + unhex("4ba1d522"),
    "info_padded": A2S_INFO + b"\xff" * 8,  # source-server-query: FFFFFFFF and 4 more
    "info_short_challenge": A2S_INFO + b"\x4b\xa1",
    "info_wrong_payload": A2S_SINGLE + b"TSource Engine Quer\x00",
    "player_ask": A2S_PLAYER,
    "player_zero": A2S_SINGLE + b"U\x00\x00\x00\x00",
    "player_bare": A2S_SINGLE + b"U",
    "rules_ask": A2S_RULES,
    "get_challenge": A2S_SINGLE + b"W",
    "get_challenge_padded": A2S_SINGLE + b"W\xff\xff\xff\xff",
    "ping": A2S_SINGLE + b"i",
}
A2S_REPLIES = {
    "challenge_trailing": A2S_SINGLE + unhex("41 4ba1d522 00"),
    "ping_goldsrc": A2S_SINGLE + b"j\x00",
    "ping_goldsrc_bare": A2S_SINGLE + b"j",
    "ping_source": A2S_SINGLE + b"j000000000000000\x00",
    "ping_other": A2S_SINGLE + b"jab\xff\x00",
    # EDF with every known field and the unknown bits 0x0e, then bytes we cannot read
    "info_edf_unknown": A2S_SINGLE + b"I\x11n\x00m\x00f\x00g\x00"
                        + unhex("b801 0510 00 64 6c 01 01") + b"1.0\x00"
                        + unhex("ff 8769 0807060504030201 8c69") + b"tv\x00" + b"a,b\x00"
                        + unhex("b801000000000000 0102"),
    "players_short": A2S_SINGLE + b"D\x05\x00a\x00" + unhex("01000000 0000803f"),
    "players_trailing": A2S_SINGLE + b"D\x01\x00a\x00" + unhex("01000000 0000c07f 010203"),
    "rules_short": A2S_SINGLE + b"E\x09\x00a\x001\x00b\x00\x00",
    "rules_lossy": A2S_SINGLE + b"E\x01\x00k\xff\x00v\xc3\x00\x07",
}
A2S_SPLIT_LIMITS = bytes([128, 0xFF, 0xFF])  # 128 fragments, 64 KiB, 64 KiB decompressed


def a2s_captures():
    out = {}
    for path in sorted(glob.glob(os.path.join(DATA, "a2s", "*.json"))):
        with open(path) as f:
            out[os.path.splitext(os.path.basename(path))[0]] = json.load(f)
    return out


def a2s_signature(m):
    """What makes an unsplit reply of the captures different from the others."""
    t = m["type"]
    if t == "I":
        return (t, m.get("edf"), m.get("appid") == 2400, m.get("protocol") == 48)
    if t == "m":
        return (t, m.get("is_mod"), str(m.get("missing_trailing_fields")))
    if t == "D":
        return (t, bool(m.get("ship_extra")), m.get("player_count") == 0)
    if t == "E":
        return (t, m.get("rule_count") == 0)
    return (t,)


def a2s_split_record(d):
    return struct.pack("<H", len(d)) + d


def a2s_synth_record(k, j, body):
    """An a2s_split record the harness turns into a compressed reply (w >> 11 == 0x1f)."""
    rec = bytes([k, j]) + body
    return struct.pack("<H", (0x1F << 11) | len(rec)) + rec


def a2s_seeds():
    caps = a2s_captures()
    # a2s_reply: the smallest unsplit reply of each signature, plus some big real ones
    best = {}
    for name, cap in caps.items():
        for kind in ["info", "players", "rules", "challenge"]:
            decoded = [m for m in cap["decoded"].get(kind, [])
                       if not (m.get("framing") or {}).get("split")]
            singles = [d for d in map(bytes.fromhex, cap["responses"].get(kind, []))
                       if d.startswith(A2S_SINGLE)]
            if len(decoded) != len(singles):
                continue
            for m, d in zip(decoded, singles):
                sig = a2s_signature(m)
                if sig not in best or len(d) < len(best[sig][1]):
                    best[sig] = (name, d)
    for name, d in best.values():
        put("a2s_reply", f"{name}.{chr(d[4])}.bin", d)
    for name, kind in [("libssq-info-tf2", "info"), ("xpaw-info-tf2", "info"),
                       ("gameq-cs16-2", "info"), ("gameq-tf2-1", "players"),
                       ("gameq-ffe-1", "players"), ("gameq-arma3-1", "rules")]:
        d = bytes.fromhex(caps[name]["responses"][kind][0])
        put("a2s_reply", f"{name}.{chr(d[4])}.bin", d)
    for name, d in A2S_REPLIES.items():
        put("a2s_reply", f"{name}.bin", d)

    # a2s_split: split replies of each layout, in order, reversed, mixed, under small limits
    def frags(name, kind):
        return [bytes.fromhex(h) for h in caps[name]["responses"][kind]]

    def seq(limits, datagrams):
        return limits + b"".join(a2s_split_record(d) for d in datagrams)

    split = {
        "tf2_rules": frags("gameq-tf2-1", "rules"),  # Source, size field 1248, 4 fragments
        "csgo_players": frags("xpaw-players-csgo", "players"),  # size field 1188
        "wiki_rules": frags("libssq-rules-wiki_example", "rules"),  # 5 fragments
        "cs16_rules": frags("gameq-cs16-1", "rules"),  # GoldSrc
        "cs15_rules": frags("gameq-cs15-1", "rules"),  # GoldSrc, 'm' era
        "ffe1_bz2": frags("gameq-ffe-1", "rules"),  # bzip2, no size field
        "ffe2_bz2": frags("gameq-ffe-2", "rules"),
    }
    for name, datagrams in split.items():
        put("a2s_split", f"{name}.bin", seq(A2S_SPLIT_LIMITS, datagrams))
    for name in ["tf2_rules", "cs16_rules"]:
        d = split[name]
        put("a2s_split", f"{name}.reversed_dup.bin", seq(A2S_SPLIT_LIMITS, d[::-1] + d[1:2]))
    tf2 = split["tf2_rules"]
    put("a2s_split", "tf2_rules.no_size_field.bin",
        seq(A2S_SPLIT_LIMITS, [d[:10] + d[12:] for d in tf2[::-1]]))
    put("a2s_split", "mixed.bin",
        seq(A2S_SPLIT_LIMITS, [tf2[1], split["ffe1_bz2"][0], tf2[0], tf2[2], tf2[1][:-1] + b"x",
                               split["cs16_rules"][0], tf2[3]]))
    put("a2s_split", "small_limits.bin", seq(bytes([2, 3, 0]), tf2 + split["ffe1_bz2"]))
    body = b"E\x02\x00sv_gravity\x00800\x00mp_timelimit\x0030\x00"
    put("a2s_split", "synth_bz2.bin", A2S_SPLIT_LIMITS + b"".join(
        a2s_synth_record(k, 0x10 + n, body * 20)
        for n, k in enumerate([0x00, 0x08 | 0x10 | 0x40, 0x04, 0x01, 0x02, 0x03, 0xE0])))

    # a2s_request: c0 = flavor | no INFO challenge 4 | GETCHALLENGE 8 | ping 16 |
    # 29-byte requests 32 | status << 6 (state, big, big Ship, empty); c1 & 3 max reply
    def reqs(c0, c1, records):
        return bytes([c0, c1]) + b"".join(records)

    forms = list(A2S_REQUESTS.values())
    put("a2s_request", "forms.bin",
        reqs(0x18, 0, [rec(d, src=i % 4) for i, d in enumerate(forms)]
             + [rec(d, src=i % 4, prove=True) for i, d in enumerate(forms)]))
    flow = [rec(A2S_INFO), rec(A2S_INFO, prove=True), rec(A2S_PLAYER, src=1, prove=True),
            rec(A2S_RULES, src=2, prove=True), rec(A2S_PLAYER, src=3, dt=3, unit=3),
            rec(A2S_RULES, prove=True, dt=3, unit=3)]
    for flavor, name in enumerate(["source", "goldsrc_m", "goldsrc_i"]):
        put("a2s_request", f"flow_{name}.bin", reqs(flavor, 0, flow))
        put("a2s_request", f"flow_{name}_big.bin", reqs(flavor | 0x40, 0, flow))
    put("a2s_request", "flow_ship_4000.bin", reqs(0x80, 2, flow))
    put("a2s_request", "flow_big_1mib.bin", reqs(0x40, 3, flow))
    put("a2s_request", "flow_empty_status.bin", reqs(0xC0 | 0x18, 1, flow + [rec(forms[-1])]))
    put("a2s_request", "open_info_small_requests.bin",
        reqs(0x04 | 0x20, 0, [rec(A2S_INFO), rec(A2S_REQUESTS["info_padded"], prove=True),
                              rec(A2S_REQUESTS["info_challenge"])]))
    # bursts from one source at one instant, past the default budgets (40 answers): without
    # a challenge (the unproven budgets) and with one (the source's own); the target lifts
    # every budget, so none may come back RateLimited
    put("a2s_request", "burst_unproven.bin", reqs(0, 0, [rec(A2S_INFO)] * 45))
    put("a2s_request", "burst_proven.bin", reqs(0, 0, [rec(A2S_INFO, prove=True)] * 45))

    # responder: A2S among the other protocols, default settings
    put("responder", "a2s_flow.bin",
        rec(A2S_INFO) + rec(A2S_INFO, prove=True) + rec(A2S_PLAYER, src=1, prove=True)
        + rec(A2S_RULES, src=2, prove=True) + rec(A2S_INFO, src=6, prove=True)
        + rec(A2S_INFO, src=7) + rec(A2S_PLAYER) + rec(A2S_REQUESTS["get_challenge"])
        + rec(A2S_REQUESTS["ping"]) + rec(A2S_REQUESTS["info_padded"], src=4, prove=True)
        + rec(A2S_REQUESTS["player_zero"], src=5) + rec(A2S_RULES, prove=True, dt=4, unit=3))

    # client_machines (machine 4): flags 1, 2, 4 leave out INFO, PLAYER, RULES, 8 a known
    # challenge; p[6] & 7 max_bytes (2 KiB << n), p[6] >> 6 max_decompressed (4 MiB, 4 KiB,
    # 64 KiB, 512 KiB), p[7] max_fragments
    a2s = 4

    def limits(max_bytes_shift=7, decompressed=0, fragments=0):
        return max_bytes_shift | decompressed << 6 | fragments << 8

    def captured(name):
        cap = caps[name]
        if "datagrams_in_order" in cap:
            return [bytes.fromhex(h) for h in cap["datagrams_in_order"]]
        return [bytes.fromhex(h) for k in ["info", "players", "rules"]
                for h in cap["responses"].get(k, [])]

    seqs = {
        "a2s_plain": prefix(a2s, max_bytes=limits()) + serve() * 5,
        "a2s_known_challenge": prefix(a2s, 8, known=0x12345678) + serve() * 5,
        "a2s_info_only": prefix(a2s, 2 | 4) + serve() * 3,
        "a2s_rules_only": prefix(a2s, 1 | 2) + serve() * 3,
        "a2s_nothing": prefix(a2s, 7),
        "a2s_mangled": prefix(a2s) + serve() + serve(1) + serve(2) + serve(4) + serve(8)
                       + wait(2) + serve(0x20) + serve(),
        "a2s_timeouts": prefix(a2s, 0, attempt=10, total=40, backoff=50, tries=3) + serve()
                        + wait(9, 2),
        "a2s_capture_tf2": prefix(a2s, max_bytes=limits()) + b"".join(
            datagram(d) for d in captured("gameq-tf2-1")),
        "a2s_capture_ffe_bz2": prefix(a2s, max_bytes=limits()) + b"".join(
            datagram(d) for d in captured("gameq-ffe-1")),
        "a2s_capture_cs16_m_and_i": prefix(a2s, max_bytes=limits()) + b"".join(
            datagram(d) for d in captured("gameq-cs16-2")),
        "a2s_challenge_loop": prefix(a2s) + b"".join(
            datagram(A2S_SINGLE + b"A" + struct.pack("<I", i + 1)) for i in range(8)),
        # big fragments against small caps: Source and GoldSrc, 2 KiB, 4 fragments
        "a2s_big_fragments": prefix(a2s, 1, max_bytes=limits(0, 0, 4)) + b"".join(
            synth(5, n, 60, 0) for n in range(3)),
        "a2s_big_goldsrc_fragments": prefix(a2s, 1, max_bytes=limits(3)) + b"".join(
            synth(3, n, 6, 1) for n in [1, 2, 0]),
        # bzip2 bombs: PLAYER with long names held while RULES is pending; 64 KiB cap
        "a2s_bz2_players": prefix(a2s, 1) + synth(0, 0, 200, 3) + serve(),
        "a2s_bz2_empty_rules": prefix(a2s, 1 | 2) + synth(0x0A, 0, 3, 6),
        "a2s_bz2_rules_too_big": prefix(a2s, 1 | 2, max_bytes=limits(7, 2))
                                 + synth(0x09, 0, 255, 2),
    }
    for name, d in seqs.items():
        put("client_machines", f"{name}.bin", d)


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

def valve_master_seeds():
    """valve_master: [k] then a request (k=0), a reply (1), a filter (2), a seed and a
    list (3)."""
    put("valve_master", "request_qstat.bin", b"\x00" + b"\x31\xff0.0.0.0:0\x00\x00")
    put("valve_master", "request_filter.bin",
        b"\x00" + b"\x31\x0310.0.0.1:27015\x00\\gamedir\\tf\\empty\\1\x00")
    entries = b"".join(bytes([10, 0, 0, i]) + struct.pack(">H", 27015 + i) for i in range(20))
    put("valve_master", "reply_end.bin",
        b"\x01" + b"\xff\xff\xff\xff\x66\x0a" + entries + b"\x00" * 6)
    put("valve_master", "reply_more.bin", b"\x01" + b"\xff\xff\xff\xff\x66\x0a" + entries)
    for n, f in enumerate([b"\\gamedir\\tf\\map\\ctf_2fort",
                           b"\\nand\\2\\map\\x\\gametype\\a,b\\nor\\1\\noplayers\\1",
                           b"\\name_match\\fuzz*\\version_match\\1.*\\collapse_addr_hash\\1",
                           b"\\appid\\440\\napp\\500\\gameaddr\\10.0.0.1:27015"]):
        put("valve_master", f"filter_{n}.bin", b"\x02" + f)
    put("valve_master", "pages.bin", bytes([3 | (5 << 2)]) + bytes([10, 0, 0, 3, 0x69, 0x8a]) + entries)


def master_registry_seeds():
    """master_registry: records [op][len][bytes]: op & 3 the source, bit 4 advances the
    clock by len * 50 ms, bit 5 marks the source listed."""
    def rec(op, d):
        return bytes([op, len(d)]) + d
    uplink = b"\xff\xff\xff\xffOGP\x00\x03\x03\x01\x07\x00"
    probe = b"\xff\xff\xff\xffOGP\x00\x03\x01\x00"
    # Error 3 (Invalid Challenge) with the new challenge and the copy of the probe
    error3 = (b"\xff\xff\xff\xffOGP\x00\x07\xff\x03\x11\x22\x33\x44\x03" + probe[:8]
              + b"\x07\x01\x02\x11\x22\x33\x44")
    hb = b"\x03\x01\x02\x03\x04"
    for k, v in [(b"localip0", b"127.0.0.1"), (b"localport", b"29900"),
                 (b"statechanged", b"3"), (b"gamename", b"battlefield2")]:
        hb += k + b"\x00" + v + b"\x00"
    hb += b"\x00"
    gs3_challenge = b"\x09\x00\x00\x00\x00" + b"123456789\x00"
    put("master_registry", "uplink_then_error3.bin", rec(0, uplink) + rec(0, error3) + rec(0x10, b"\x14"))
    put("master_registry", "heartbeat_then_challenge.bin", rec(1, hb) + rec(1, gs3_challenge))
    put("master_registry", "flood_and_time.bin",
        b"".join(rec(i & 3, uplink) for i in range(12)) + rec(0x10 | 2, b"\x64" * 40))
    put("master_registry", "listed_and_list.bin",
        rec(0x20, uplink) + rec(3, b"\x31\xff0.0.0.0:0\x00\x00"))


if __name__ == "__main__":
    main()


# ---------------------------------------------------------------------------------------
# The stream and list targets whose inputs are a first byte (a chunk size or a variant)
# and what a server sends: the replays of the interop tests (crates/ogp-cli/tests/all/
# interop_tcpfam.rs: GameQ's captures of real Battlefield and TeamSpeak servers), the
# HTTP responses and Minecraft frames of the wire formats, and dpmaster's requests and
# pages.

def stream_seeds():
    def data(rel):
        with open(os.path.join(DATA, rel), encoding="utf-8") as f:
            return json.load(f)

    # Battlefield: the responses to serverInfo (1), version (2) and listPlayers (3), in
    # Frostbite packets (sequence | IS_RESPONSE, size, word count, words with their
    # lengths and NULs); one with a server event (FROM_SERVER) before the players.
    def packet(sequence, words):
        body = b"".join(struct.pack("<I", len(w.encode())) + w.encode() + b"\0" for w in words)
        return struct.pack("<III", sequence, 12 + len(body), len(words)) + body
    for name in ["gameq-bf3-1", "gameq-bf4-1", "gameq-bfbc2-1"]:
        d = data(f"battlefield/{name}.json")
        info = packet(0x40000001, d["serverInfo"])
        version = packet(0x40000002, d["version"])
        players = packet(0x40000003, d["listPlayers"])
        put("battlefield_stream", f"{name}.bin", b"\x07" + info + version + players)
        event = packet(0x80000007, ["player.onJoin", "someone", "guid"])
        put("battlefield_stream", f"{name}.event.bin", b"\x40" + info + version + event + players)
    put("battlefield_stream", "refused.bin", b"\x03" + packet(0x40000001, ["LogInRequired"]))

    # TeamSpeak 3: the banner, then an error line after each command (use, serverinfo,
    # clientlist, channellist, quit), records joined by | as the server sends them.
    d = data("teamspeak3/gameq-ts3-2.json")
    ok = "error id=0 msg=ok\n\r"
    banner = "".join(f"{line}\n\r" for line in d["banner"])
    conversation = (banner + ok + d["serverinfo"] + "\n\r" + ok
                    + "|".join(d["clientlist"]) + "\n\r" + ok
                    + "|".join(d["channellist"]) + "\n\r" + ok + ok)
    put("teamspeak3_stream", "gameq-ts3-2.bin", b"\x09" + conversation.encode())
    put("teamspeak3_stream", "flood-ban.bin", b"\x00" + (banner + "error id=3329 msg=connection\\sfailed,\\syou\\sare\\sbanned extra_msg=you\\smay\\sretry\\sin\\s600\\sseconds\n\r").encode())

    # TeamSpeak 2: the banner, then each answer ending in OK (sel, si, pl, cl).
    d = data("teamspeak2/gameq-ts2-1.json")
    lines = lambda k: "".join(f"{line}\r\n" for line in d[k])
    conversation = (d["banner"] + "\r\n" + "OK\r\n" + lines("si") + "OK\r\n"
                    + lines("pl") + "OK\r\n" + lines("cl") + "OK\r\n")
    put("teamspeak2_stream", "gameq-ts2-1.bin", b"\x05" + conversation.encode("utf-8"))
    put("teamspeak2_stream", "invalid-id.bin", b"\x00" + b"[TS]\r\nERROR, invalid id\r\n")

    # HTTP responses: with a length, chunked, until the close, a redirect, an error.
    body = json.dumps(data("fivem/zap-esx.players.json")[:2], separators=(",", ":")).encode()
    head = b"HTTP/1.1 200 OK\r\nServer: FXServer\r\nContent-Type: application/json\r\n"
    put("http_response", "length.bin",
        b"\x05" + head + b"Content-Length: %d\r\n\r\n" % len(body) + body)
    chunks = b"".join(b"%x\r\n" % len(c) + c + b"\r\n" for c in [body[:40], body[40:]])
    put("http_response", "chunked.bin",
        b"\x0b" + head + b"Transfer-Encoding: chunked\r\n\r\n" + chunks + b"0\r\n\r\n")
    put("http_response", "close.bin", b"\x02" + head + b"Connection: close\r\n\r\n" + body)
    put("http_response", "redirect.bin",
        b"\x00HTTP/1.1 301 Moved Permanently\r\nLocation: /info.json\r\nContent-Length: 0\r\n\r\n")
    put("http_response", "404.bin",
        b"\x10HTTP/1.0 404 Not Found\r\nContent-Length: 9\r\n\r\nnot found")

    # Minecraft: a status frame (length, packet 0, the JSON) and a pong (packet 1), and a
    # legacy kick (FF, UTF-16BE). First byte: bit 0 legacy, bit 1 no ping, piece a/4+1.
    def varint(n):
        out = b""
        while True:
            b = n & 0x7f
            n >>= 7
            out += bytes([b | (0x80 if n else 0)])
            if not n:
                return out
    def frame(packet_id, payload):
        inner = varint(packet_id) + payload
        return varint(len(inner)) + inner
    status = json.dumps({
        "version": {"name": "1.21.1", "protocol": 767},
        "players": {"max": 20, "online": 2, "sample": [
            {"name": "Alex", "id": "ec561538-f3fd-461d-aff5-086b22154bce"},
            {"name": "Steve", "id": "8667ba71-b85a-4004-af54-457a9734eed7"}]},
        "description": {"text": "A Minecraft Server", "extra": [{"text": " \u00a7aon", "bold": True}]},
        "enforcesSecureChat": True}).encode()
    status_frame = frame(0, varint(len(status)) + status)
    put("minecraft_stream", "status-pong.bin", b"\x10" + status_frame + frame(1, struct.pack(">q", 0x0102030405060708)))
    put("minecraft_stream", "status-no-ping.bin", b"\x06" + status_frame)
    legacy = "\u00a71\x00127\x001.21.1\x00A Minecraft Server\x002\x0020".encode("utf-16-be")
    put("minecraft_stream", "legacy.bin", b"\x01" + b"\xff" + struct.pack(">H", len(legacy) // 2) + legacy)

    # dpmaster: heartbeats and list requests (first byte odd: "getservers" is put first),
    # and list pages (first byte odd: getserversExtResponse) ending in EOT.
    for name, k, rest in [("heartbeat", 0, b"heartbeat DarkPlaces\n"),
                          ("heartbeat-q3", 0, b"heartbeat QuakeArena-1\n"),
                          ("getservers-q3", 0, b"getservers 68 empty full"),
                          ("getservers-game", 1, b" Nexuiz 3 empty full gametype=ctf"),
                          ("getserversext", 0, b"getserversExt Xonotic 3 empty full ipv4 ipv6")]:
        put("dpmaster_request", f"{name}.bin", bytes([k]) + rest)
    v4 = lambda a, port: b"\\" + bytes(a) + struct.pack(">H", port)
    v6 = lambda a, port: b"/" + bytes(a) + struct.pack(">H", port)
    eot = b"\\EOT\0\0\0"
    put("dpmaster_page", "ipv4.bin",
        b"\x00" + v4([203, 0, 113, 5], 27960) + v4([198, 51, 100, 7], 26000) + eot)
    put("dpmaster_page", "ext.bin",
        b"\x01" + v4([203, 0, 113, 5], 26000)
        + v6([0x20, 0x01, 0x0d, 0xb8] + [0] * 11 + [1], 26000) + eot)
    put("dpmaster_page", "two-pages.bin",
        b"\x00" + v4([203, 0, 113, 9], 27960) + b"\n" + v4([203, 0, 113, 10], 27961) + eot)
