# Mumble (issue #38): Debian's mumble-server (murmurd), answering Mumble's UDP ping.
# The testkit (crates/ogp-testkit/src/gameservers/mumble.rs) writes its ini in a temp
# folder the mumble-server user may write, and starts `murmurd -fg -ini FILE`.
DEBIAN_SERVERS+=("mumble-server=/usr/sbin/murmurd")
