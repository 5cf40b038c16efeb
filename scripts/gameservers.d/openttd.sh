# OpenTTD (issue #38): the dedicated server (`openttd -D`) and the free base graphics it
# needs to start. Its TCP game info (PACKET_CLIENT_GAME_INFO -> SERVER_GAME_INFO) is what
# the `openttd` protocol reads; gamedig's `openttd` reads the same server.
DEBIAN_SERVERS+=("openttd=/usr/games/openttd" "openttd-opengfx=/usr/share/games/openttd/baseset/opengfx")
