# Minetest / Luanti (issue #38): the dedicated server and its default game (`minetest`),
# which the `minetest` protocol's handshake proves.
DEBIAN_SERVERS+=("minetest-server=/usr/games/minetestserver")
