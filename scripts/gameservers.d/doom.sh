# Chocolate Doom (issue #38): chocolate-server answers Doom's network query
# (NET_PACKET_TYPE_QUERY); the chocolate-doom client's `-query HOST:PORT` is the reader
# the tests compare with (run with SDL_VIDEODRIVER=dummy). One Debian package has both.
DEBIAN_SERVERS+=("chocolate-doom=/usr/games/chocolate-server")
# Freedoom's IWADs (GPL-free data): a `chocolate-doom -connect` client joins the
# server with one, so that the query counts a player.
DEBIAN_SERVERS+=("freedoom=/usr/share/games/doom/freedoom2.wad")
