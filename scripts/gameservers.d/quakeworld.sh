# Quake 1 family (issue #38), sourced by scripts/install-gameservers.sh:
#
#   mvdsv   Debian package: /usr/games/mvdsv, a QuakeWorld dedicated server
#   ktx     Debian package: the KTX game module (/usr/share/games/quake/ktx, its
#           qwprogs.so a link into /usr/lib/quakeworld/ktx)
#
# Debian has no Quake data: the testkit (crates/ogp-testkit/src/gameservers/quakeworld.rs)
# writes a minimal BSP29 map into a temporary base directory and links `ktx` into it.
DEBIAN_SERVERS+=("mvdsv=/usr/games/mvdsv" "ktx=/usr/lib/quakeworld/ktx/qwprogs.so")
