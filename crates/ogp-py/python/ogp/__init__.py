"""Query game servers from Python with the ogp Rust client.

    import ogp
    r = ogp.query("127.0.0.1:27015")
    print(r.status.host_name, r.ping_ms)

Every function is the ``ogp`` command's: ``query`` is ``ogp query``, ``scan`` is
``ogp scan``, ``games`` is ``ogp games``, ``decode`` is ``ogp decode``, ``list_servers`` is ``ogp list``, with the same names, defaults and meanings
(times in seconds). Results are the JSON schema of docs/json.md, made objects: each key
an attribute (``None`` when absent), ``to_dict()`` the JSON object itself. The protocol
work is all in Rust (``ogp._ogp``); this file only converts.
"""

from __future__ import annotations

import json as _json
from typing import Any, AsyncIterator, Dict, Iterable, Iterator, List, Optional, Union

from . import _ogp

__all__ = [
    "query",
    "query_async",
    "scan",
    "scan_async",
    "games",
    "decode",
    "list_servers",
    "Listed",
    "ListError",
    "Result",
    "Status",
    "Player",
    "Team",
    "MapInfo",
    "Game",
    "QueryError",
    "Timeout",
    "Refused",
    "Rejected",
    "Malformed",
    "ResolveError",
    "SocketError",
    "OptionsError",
    "Decoded",
    "Message",
    "DecodeError",
]

__version__: str = _ogp.__version__


class _Obj:
    """A JSON object whose keys read as attributes (absent keys read as None)."""

    __slots__ = ("_d",)
    _children: Dict[str, type] = {}

    def __init__(self, d: Dict[str, Any]) -> None:
        self._d = d

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            v = self._d[name]
        except KeyError:
            return None
        cls = self._children.get(name, _Obj)
        if cls is dict:  # free-form keys (rules, extra): the dict itself
            return v
        if isinstance(v, dict):
            return cls(v)
        if isinstance(v, list):
            return [cls(x) if isinstance(x, dict) else x for x in v]
        return v

    def to_dict(self) -> Dict[str, Any]:
        """The JSON object, as ``json.loads`` reads it (not a copy)."""
        return self._d

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Obj) and self._d == other._d

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._d!r})"

    def __dir__(self) -> List[str]:
        return sorted(set(self._d) | {"to_dict"})


class MapInfo(_Obj):
    """``status.map``: name, file_name, file_size, version, url."""

    __slots__ = ()


class Player(_Obj):
    """One of ``status.players``: name, score, ping, team, …"""

    __slots__ = ()
    _children = {"extra": dict}


class Team(_Obj):
    """One of ``status.teams``."""

    __slots__ = ()
    _children = {"extra": dict}


class Status(_Obj):
    """A server's status: the state-file schema (docs/state-file.md)."""

    __slots__ = ()
    _children = {"players": Player, "teams": Team, "map": MapInfo, "next_map": MapInfo, "rules": dict}


class Result(_Obj):
    """One result of docs/json.md: an answer (``ok``) or a failure."""

    __slots__ = ()
    _children = {"status": Status}


class Game(_Obj):
    """An entry of the games catalogue (``ogp games --json``)."""

    __slots__ = ()


class QueryError(Exception):
    """A query that failed. ``kind`` is docs/json.md's ``error``, ``fault`` whose
    fault (``network``, ``server``, ``local``), ``message`` the one line ``ogp query``
    prints, ``result`` the failure result (``to_dict()`` is ``ogp query --json``'s)."""

    kind = "error"

    def __init__(self, result: Result) -> None:
        self.result = result
        self.fault: str = result.fault or "local"
        self.message: str = result.message or ""
        self.target: str = result.target or ""
        super().__init__(f"{self.target}: {self.message}")


class Timeout(QueryError):
    """No usable answer before the deadline."""

    kind = "timeout"


class Refused(QueryError):
    """Nothing listens on that port (ICMP port unreachable, refused TCP)."""

    kind = "refused"


class Rejected(QueryError):
    """The server answered with a refusal."""

    kind = "rejected"


class Malformed(QueryError):
    """The answer did not decode."""

    kind = "malformed"


class ResolveError(QueryError):
    """The target is not host:port, or the host name did not resolve."""

    kind = "resolve"


class SocketError(QueryError):
    """A local socket error."""

    kind = "socket"


class OptionsError(QueryError):
    """The options ask for something the protocol cannot do."""

    kind = "options"


_ERRORS = {c.kind: c for c in (Timeout, Refused, Rejected, Malformed, ResolveError, SocketError, OptionsError)}


class Listed(_Obj):
    """One server of a list: ``ogp list --json``'s object (addr, protocols, and name, map,
    game, players, max_players… where the list gives them)."""

    __slots__ = ()


class ListError(Exception):
    """``list_servers`` failed: ``kind`` is the cause (usage, resolve, network, tls, http,
    timeout, malformed), ``str()`` the CLI's message."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


def _answer(text: str) -> Result:
    r = Result(_json.loads(text))
    if not r.ok:
        raise _ERRORS.get(r.error, QueryError)(r)
    return r


def query(
    address: str,
    protocol: Optional[str] = None,
    game: Optional[str] = None,
    timeout: float = 1.0,
    retries: int = 2,
    charset: str = "auto",
    try_query_ports: bool = False,
) -> Result:
    """``ogp query``: the server's answer, or a QueryError subclass by cause."""
    return _answer(_ogp.query(address, protocol, game, timeout, retries, charset, try_query_ports))


async def query_async(
    address: str,
    protocol: Optional[str] = None,
    game: Optional[str] = None,
    timeout: float = 1.0,
    retries: int = 2,
    charset: str = "auto",
    try_query_ports: bool = False,
) -> Result:
    """``query``, awaited (no thread per query: the Rust runtime's tasks)."""
    return _answer(await _ogp.query_async(address, protocol, game, timeout, retries, charset, try_query_ports))


def _set_done(f: Any) -> None:
    if not f.done():
        f.set_result(None)


def _scan(targets: Iterable[str], kw: Dict[str, Any]) -> Any:
    if isinstance(targets, str):
        targets = targets.splitlines()
    return _ogp.Scan(list(targets), **kw)


def scan(
    targets: Iterable[str],
    protocol: Optional[str] = None,
    timeout: float = 0.5,
    retries: int = 3,
    deadline: float = 6.0,
    rate: int = 5000,
    max_in_flight: int = 2048,
    resolvers: int = 32,
    sockets: int = 2,
    try_query_ports: bool = False,
    charset: str = "auto",
) -> Iterator[Result]:
    """``ogp scan``: every target's Result (answers and failures), as each completes."""
    s = _scan(targets, dict(protocol=protocol, timeout=timeout, retries=retries, deadline=deadline,
                            rate=rate, max_in_flight=max_in_flight, resolvers=resolvers, sockets=sockets,
                            try_query_ports=try_query_ports, charset=charset))
    try:
        while True:
            batch = s.next_blocking()  # the results ready now, as one JSON array
            if batch is None:
                return
            for d in _json.loads(batch):
                yield Result(d)
    finally:
        s.close()


async def scan_async(
    targets: Iterable[str],
    protocol: Optional[str] = None,
    timeout: float = 0.5,
    retries: int = 3,
    deadline: float = 6.0,
    rate: int = 5000,
    max_in_flight: int = 2048,
    resolvers: int = 32,
    sockets: int = 2,
    try_query_ports: bool = False,
    charset: str = "auto",
) -> AsyncIterator[Result]:
    """``scan``, as an async iterator; cancelling the task stops the scan at once."""
    import asyncio

    loop = asyncio.get_running_loop()
    s = _scan(targets, dict(protocol=protocol, timeout=timeout, retries=retries, deadline=deadline,
                            rate=rate, max_in_flight=max_in_flight, resolvers=resolvers, sockets=sockets,
                            try_query_ports=try_query_ports, charset=charset))
    fd = s.wake_fd()
    try:
        while True:
            if fd < 0:
                batch = await s.next_async()
            else:
                # A batch ready now, or a wait in the event loop for the scan's thread to
                # write to the wake-up socket (no thread but this one takes the GIL).
                batch = s.try_next()
                if batch == "":
                    woken = loop.create_future()
                    try:
                        loop.add_reader(fd, _set_done, woken)
                    except NotImplementedError:  # a loop without add_reader (Windows' proactor)
                        fd = -1
                        continue
                    try:
                        await woken
                    finally:
                        loop.remove_reader(fd)
                    continue
            if batch is None:
                return
            for d in _json.loads(batch):
                yield Result(d)
    finally:
        s.close()


def games(filter: Optional[str] = None) -> List[Game]:
    """``ogp games --json``: the catalogue's entries (those matching ``filter``)."""
    return [Game(g) for g in _json.loads(_ogp.games(filter))]


class Message(_Obj):
    """One decoded message (docs/decode.md): protocol, kind, its fields, and an
    answer's status and warnings."""

    __slots__ = ()
    _children = {"status": Status}


class Decoded(_Obj):
    """What ``decode`` found: ``messages`` (Message), ``notes`` (``note: …`` and
    ``warning: …`` lines: a protocol guess, a duplicate fragment)."""

    __slots__ = ()
    _children = {"messages": Message}


class DecodeError(ValueError):
    """Datagrams given to ``decode`` that do not decode (the line ``ogp decode`` prints)."""


def _bytes(d: Any) -> bytes:
    if isinstance(d, str):
        h = d.strip()
        h = h[2:] if h[:2].lower() == "0x" else h
        try:
            return bytes.fromhex("".join(c for c in h if c not in " \t\r\n:-"))
        except ValueError:
            raise ValueError("decode: a string must be hex digits") from None
    return bytes(d)


def decode(
    data: Union[bytes, bytearray, memoryview, str, Iterable[Union[bytes, bytearray, memoryview, str]]],
    protocol: Optional[str] = None,
    charset: str = "auto",
) -> Decoded:
    """``ogp decode``: a datagram (bytes or hex), or a run of them in order (fragments
    reassembled), decoded as docs/decode.md's objects."""
    if isinstance(data, (bytes, bytearray, memoryview, str)):
        datagrams = [_bytes(data)]
    else:
        datagrams = [_bytes(d) for d in data]
    text, why = _ogp.decode(datagrams, protocol, charset)
    if text is None:
        raise DecodeError(why)
    return Decoded(_json.loads(text))


def list_servers(
    master: str,
    kind: Optional[str] = None,
    filter: str = "",
    limit: Optional[int] = None,
    timeout: float = 60.0,
    page_timeout: float = 2.0,
    region: int = 255,
    game: Optional[str] = None,
    protocol: Optional[str] = None,
    gs1_key: Optional[str] = None,
    steam_key_file: Optional[str] = None,
    insecure: bool = False,
) -> List[Listed]:
    """``ogp list --json``: the servers of a master or a list on the web.

    ``kind`` is the CLI's flag: ``valve`` (the default for HOST:PORT), ``dp`` (with
    ``game`` and ``protocol``), ``gs1`` (with ``game``, ``gs1_key``), ``cube2``, ``qw``,
    ``tw``, ``tw7``, ``api`` (the default for an http(s):// URL), ``ddnet``,
    ``minetest``, ``openmp``, ``steam`` (the key from ``steam_key_file`` or the
    OGP_STEAM_KEY environment variable, never an argument). ``insecure=True`` takes any
    HTTPS certificate (self-signed servers only). Raises ListError.
    """
    err, text = _ogp.list_servers(master, kind, filter, limit, timeout, page_timeout, region, game,
                                  protocol, gs1_key, steam_key_file, insecure)
    if err is not None:
        raise ListError(err, text)
    return [Listed(d) for d in _json.loads(text)]
