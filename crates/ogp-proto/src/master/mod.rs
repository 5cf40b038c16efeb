//! Master server protocols: how server lists are asked for and served.
//!
//! [`valve`] is Valve's Master Server Query Protocol over UDP (what Steam-style server
//! browsers and `quakestat -stma2s` speak): a list request with a region, a paging seed
//! and a [`filter`](valve::Filter), answered by pages of IPv4 addresses ending in
//! `0.0.0.0:0`. [`dpmaster`] is the Quake III family's (heartbeats verified by
//! `getinfo`, `getservers` / `getserversExt` answered by pages ending in `EOT`).
//! [`gsmaster`] is the GameSpy master's list over TCP (the challenge, the client's
//! `validate` and `\\list\\`, the `\\ip\\` answer; gsmsalg). [`qwmaster`] is
//! QuakeWorld's (heartbeats `a\n…` and shutdowns `C\n` without the `FF FF FF FF`
//! prefix, verified by a ping since no QuakeWorld query carries anything of ours; `c\n`
//! answered by `FF FF FF FF d \n` and 6-byte IPv4 entries).
//! [`budget`] bounds the bytes of the list answers, per source and in total (and of
//! the Cube 2 masters' list, [`crate::cube2::master`], whose registrations the
//! [`registry`] verifies by the Cube 2 ping). What
//! servers send to masters (OGP uplinks, GameSpy heartbeats) is in [`crate::announce`] and the protocols' folders; [`registry`] is what a master does
//! with them: classify, rate-limit, verify by querying back without amplifying.
//! [`connections`] decides which connections a master's HTTP server keeps (caps per
//! source address, per network prefix and in total; a newcomer displaces the connection
//! that has gone longest without a request), [`auth`] what it answers to wrong bearer
//! tokens (limited per source, reported once a minute). [`list_client`] is the client's side of the lists
//! (`ogp list`), bounded against a hostile master. [`addr`] judges which addresses a
//! master may list and poll (global ones only, whatever IPv6 form carries them) and
//! stores an IPv4-mapped address as its IPv4. [`ddnet`] reads DDNet's HTTP server list
//! (Teeworlds 0.6 and 0.7 addresses), [`weblist`] the lists published as JSON over
//! HTTP(S) (DDNet's, Minetest's, open.mp's, Steam's Web API), [`ddnet_register`] takes DDNet 16's HTTP
//! registrations (a UDP challenge, then verified as `bea2` heartbeats are); [`teemaster`] is the Teeworlds 0.6 master protocol
//! (`bea2` heartbeats verified by `gie3`, `req2` / `cou2` answered by `lis2` pages and
//! `siz2`), [`teemaster7`] Teeworlds 0.7's (the same messages in 0.7's
//! connectionless packets, after a token handshake; tokens keyed hashes of the address).

pub mod addr;
pub mod auth;
pub mod budget;
pub mod connections;
pub mod ddnet;
pub mod ddnet_register;
pub mod dpmaster;
pub mod gsmaster;
pub mod list_client;
pub mod qwmaster;
pub mod registry;
pub mod teemaster;
pub mod teemaster7;
pub mod valve;
pub mod weblist;
