# Doomsday (issue #38): doomsday-server answers its beacon's request (`Doomsday Beacon
# 1.1`, UDP, the first free port of 13209 to 13224) with its server information, zlib-
# packed; players join over TCP (`-port`). It needs an IWAD: Freedoom's, from the
# `freedoom` package that doom.sh adds. 20 Debian packages, 44 MB to download
# (doomsday-data 29 MB, Qt5's GUI libraries). How it is started: README.md here.
DEBIAN_SERVERS+=("doomsday-server=/usr/games/doomsday-server")
