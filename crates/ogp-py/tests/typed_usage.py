"""Typed use of the package, checked by `mypy --strict` against its stubs."""

from __future__ import annotations

import asyncio
from typing import Dict, List, Optional

import ogp


def names(address: str) -> List[str]:
    try:
        r: ogp.Result = ogp.query(address, protocol="a2s", timeout=1.5, retries=2)
    except ogp.Timeout as e:
        print(e.fault, e.message, e.result.to_dict())
        return []
    except ogp.QueryError as e:
        print(e.kind, e.target)
        return []
    s: Optional[ogp.Status] = r.status
    if s is None or s.players is None:
        return []
    ping: Optional[float] = r.ping_ms
    print(s.host_name, ping, s.map.name if s.map else "-", (s.rules or {}).get("mp_timelimit"))
    return [p.name or "" for p in s.players]


async def many(targets: List[str]) -> Dict[str, Optional[str]]:
    out: Dict[str, Optional[str]] = {}
    async for r in ogp.scan_async(targets, timeout=0.5, max_in_flight=512):
        out[r.target] = r.status.host_name if r.ok and r.status else r.error
    one = await ogp.query_async(targets[0], game="tf2")
    out["one"] = one.game_id
    return out


def blocking(targets: List[str]) -> int:
    return sum(1 for r in ogp.scan(targets, protocol="a2s") if r.ok)


def catalogue() -> List[str]:
    return [f"{g.id} {g.protocol} {g.port}" for g in ogp.games("quake")]


def decoded(hexdump: str) -> List[str]:
    try:
        d = ogp.decode(bytes.fromhex(hexdump), protocol="a2s")
    except ogp.DecodeError as e:
        return [str(e)]
    return [f"{m.protocol} {m.kind}" for m in d.messages] + d.notes


def listed(url: str) -> List[str]:
    try:
        servers = ogp.list_servers(url, kind="minetest", limit=10, timeout=5.0)
    except ogp.ListError as e:
        print(e.kind, e)
        return []
    return [f"{s.protocols[0]} {s.addr} {s.name or '-'} {s.players}" for s in servers]


if __name__ == "__main__":
    print(names("127.0.0.1:27015"), asyncio.run(many(["127.0.0.1:27015"])), blocking([]), catalogue(), listed("http://127.0.0.1:1/"))
