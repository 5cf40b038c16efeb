# Doomsday (issue #38): doomsday-server answers the "Doomsday" query on its TCP port
# (13209 by default) with its serialized server info. It needs an IWAD: Freedoom's, from
# the `freedoom` package that doom.sh adds. About 6 MB of Debian packages (Qt5's GUI
# libraries come with it).
DEBIAN_SERVERS+=("doomsday-server=/usr/games/doomsday-server")
