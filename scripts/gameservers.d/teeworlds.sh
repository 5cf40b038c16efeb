# Teeworlds (issue #38): Debian's teeworlds-server 0.7.5 (the 0.7 protocol: a token
# handshake, then `gie3`) and ddnet-server 16.4 (Teeworlds 0.6's `gie3` -> `inf3`,
# DDNet's extended `iext`, and the 0.7 handshake too). Both start headless in well under
# a second; crates/ogp-testkit/src/gameservers/teeworlds.rs starts them.
DEBIAN_SERVERS+=(
  "teeworlds-server=/usr/games/teeworlds-server"
  "ddnet-server=/usr/games/DDNet-Server"
)
