"""Asks a Minecraft: Bedrock server for its status with mcstatus and prints one JSON
object on stdout.

Usage: python mcstatus_bedrock.py HOST PORT [TIMEOUT]

Output: {"brand", "motd_raw", "motd_plain", "version", "protocol", "online", "max",
"map_name", "gamemode"} as mcstatus's BedrockServer(...).status() reads them, or
{"error": "..."}. Used by crates/ogp-cli/tests/all/bedrock_cli.rs.
"""

import json
import sys

from mcstatus import BedrockServer


def main():
    host, port = sys.argv[1], int(sys.argv[2])
    timeout = float(sys.argv[3]) if len(sys.argv) > 3 else 3.0
    try:
        s = BedrockServer(host, port, timeout=timeout).status()
    except Exception as e:  # reported, not raised: the test says what failed
        print(json.dumps({"error": f"{type(e).__name__}: {e}"}))
        return
    print(
        json.dumps(
            {
                "brand": s.version.brand,
                "motd_raw": s.motd.raw,
                "motd_plain": s.motd.to_plain(),
                "version": s.version.name,
                "protocol": s.version.protocol,
                "online": s.players.online,
                "max": s.players.max,
                "map_name": s.map_name,
                "gamemode": s.gamemode,
            },
            ensure_ascii=False,
        )
    )


main()
