from typing import Any, AsyncIterator, Dict, Iterable, Iterator, List, Optional, Union

__version__: str

class _Obj:
    def to_dict(self) -> Dict[str, Any]: ...
    def __getattr__(self, name: str) -> Any: ...

class MapInfo(_Obj):
    name: str
    file_name: Optional[str]
    file_size: Optional[int]
    version: Optional[str]
    url: Optional[str]

class Player(_Obj):
    name: Optional[str]
    name_raw: Optional[str]
    score: Optional[int]
    frags: Optional[int]
    kills: Optional[int]
    deaths: Optional[int]
    ping: Optional[int]
    team: Optional[int]
    time: Optional[int]
    bot: Optional[bool]
    extra: Optional[Dict[str, str]]

class Team(_Obj):
    extra: Optional[Dict[str, str]]
    name: Optional[str]
    score: Optional[int]
    player_count: Optional[int]

class Status(_Obj):
    host_name: Optional[str]
    host_name_raw: Optional[str]
    game_name: Optional[str]
    game_version: Optional[str]
    game_type: Optional[str]
    game_mode: Optional[str]
    map: Optional[MapInfo]
    next_map: Optional[MapInfo]
    player_count: Optional[int]
    slot_max: Optional[int]
    bot_count: Optional[int]
    password: Optional[bool]
    connect_port: Optional[int]
    players: Optional[List[Player]]
    teams: Optional[List[Team]]
    rules: Optional[Dict[str, Union[str, List[str]]]]

class Result(_Obj):
    schema: int
    target: str
    line: Optional[int]
    protocol: str
    ok: bool
    addr: Optional[str]
    ping_ms: Optional[float]
    datagrams: Optional[int]
    bytes: Optional[int]
    warnings: Optional[List[str]]
    game_id: Optional[str]
    game_name: Optional[str]
    game_rule: Optional[str]
    status: Optional[Status]
    error: Optional[str]
    fault: Optional[str]
    message: Optional[str]

class Game(_Obj):
    id: str
    aliases: List[str]
    name: str
    protocol: str
    dialect: Optional[str]
    port: int
    query: str
    query_port: Optional[int]
    notes: Optional[str]

class Listed(_Obj):
    addr: str
    protocols: List[str]
    name: Optional[str]
    map: Optional[str]
    game: Optional[str]
    version: Optional[str]
    players: Optional[int]
    max_players: Optional[int]
    password: Optional[bool]
    location: Optional[str]

class ListError(Exception):
    kind: str
    def __init__(self, kind: str, message: str) -> None: ...

class QueryError(Exception):
    kind: str
    fault: str
    message: str
    target: str
    result: Result
    def __init__(self, result: Result) -> None: ...

class Timeout(QueryError): ...
class Refused(QueryError): ...
class Rejected(QueryError): ...
class Malformed(QueryError): ...
class ResolveError(QueryError): ...
class SocketError(QueryError): ...
class OptionsError(QueryError): ...

def query(
    address: str,
    protocol: Optional[str] = None,
    game: Optional[str] = None,
    timeout: float = 1.0,
    retries: int = 2,
    charset: str = "auto",
    try_query_ports: bool = False,
) -> Result: ...
async def query_async(
    address: str,
    protocol: Optional[str] = None,
    game: Optional[str] = None,
    timeout: float = 1.0,
    retries: int = 2,
    charset: str = "auto",
    try_query_ports: bool = False,
) -> Result: ...
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
) -> Iterator[Result]: ...
def scan_async(
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
) -> AsyncIterator[Result]: ...
def games(filter: Optional[str] = None) -> List[Game]: ...

class Message(_Obj):
    protocol: str
    kind: str
    status: Optional[Status]
    warnings: Optional[List[str]]

class Decoded(_Obj):
    messages: List[Message]
    notes: List[str]

class DecodeError(ValueError): ...

_Bytes = Union[bytes, bytearray, memoryview, str]

def decode(
    data: Union[_Bytes, Iterable[_Bytes]],
    protocol: Optional[str] = None,
    charset: str = "auto",
) -> Decoded: ...
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
) -> List[Listed]: ...
