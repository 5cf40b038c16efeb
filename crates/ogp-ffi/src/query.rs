//! `ogp_query`: query one server from C, the result as JSON.

use std::ffi::{c_char, c_int};
use std::time::Duration;

use ogp_net::scan::{self, ScanConfig, Target};
use ogp_proto::client::{Options, QueryError, Timing};
use ogp_proto::Protocol;

use crate::error::{
    guard, opt_cstr, out_string, Error, OGP_ERR_INVALID, OGP_ERR_IO, OGP_ERR_MALFORMED,
    OGP_ERR_REFUSED, OGP_ERR_REJECTED, OGP_ERR_RESOLVE, OGP_ERR_TIMEOUT, OGP_OK,
};

/// Find out: every auto-detectable protocol at once (all but the OGP v0.02 draft), the
/// first correct answer wins.
pub const OGP_PROTO_AUTO: c_int = -1;
/// Open Game Protocol v1.01.
pub const OGP_PROTO_OGP: c_int = 0;
/// GameSpy v3 (and v4).
pub const OGP_PROTO_GAMESPY3: c_int = 1;
/// Valve A2S.
pub const OGP_PROTO_A2S: c_int = 2;
/// The GQP text-protocol draft.
pub const OGP_PROTO_GQP: c_int = 3;
/// The OGP v0.02 draft (never auto-detected).
pub const OGP_PROTO_OGP_DRAFT: c_int = 4;
/// The Quake III family (`getinfo`, then `getstatus`).
pub const OGP_PROTO_QUAKE3: c_int = 5;
/// Minecraft: Bedrock Edition's RakNet ping.
pub const OGP_PROTO_BEDROCK: c_int = 6;
/// Minecraft: Java Edition's Server List Ping (TCP).
pub const OGP_PROTO_MINECRAFT: c_int = 7;
/// GameSpy v1.
pub const OGP_PROTO_GAMESPY1: c_int = 8;
/// The Unreal 2 engine's query (UT2003/2004, Killing Floor…).
pub const OGP_PROTO_UNREAL2: c_int = 9;
/// GameSpy v2.
pub const OGP_PROTO_GAMESPY2: c_int = 10;
/// ASE, the All-Seeing Eye.
pub const OGP_PROTO_ASE: c_int = 11;
/// Teeworlds 0.6 and DDNet.
pub const OGP_PROTO_TEEWORLDS: c_int = 12;
/// Teeworlds 0.7.
pub const OGP_PROTO_TEEWORLDS7: c_int = 13;
/// OpenTTD's game info over TCP.
pub const OGP_PROTO_OPENTTD: c_int = 24;
/// The Doom 3 engine (Doom 3, Quake 4, Prey, ET:QW).
pub const OGP_PROTO_DOOM3: c_int = 25;
/// Minetest / Luanti's handshake.
pub const OGP_PROTO_MINETEST: c_int = 26;
/// Mumble's UDP ping.
pub const OGP_PROTO_MUMBLE: c_int = 20;
/// Chocolate Doom's query.
pub const OGP_PROTO_DOOM: c_int = 21;
/// Doomsday's beacon.
pub const OGP_PROTO_DOOMSDAY: c_int = 23;
/// SA-MP and open.mp.
pub const OGP_PROTO_SAMP: c_int = 22;
/// Cube 2: Sauerbraten and Red Eclipse (the ping on the game port + 1, Sauerbraten's
/// extinfo).
pub const OGP_PROTO_CUBE2: c_int = 18;
/// QuakeWorld's `status`.
pub const OGP_PROTO_QUAKEWORLD: c_int = 14;
/// Quake 2's `status`.
pub const OGP_PROTO_QUAKE2: c_int = 15;
/// NetQuake: Quake and Hexen II servers' control queries.
pub const OGP_PROTO_NETQUAKE: c_int = 16;
/// HexenWorld's `status`.
pub const OGP_PROTO_HEXENWORLD: c_int = 17;
/// FiveM and RedM (CitizenFX) over HTTP: `/dynamic.json`, `/info.json`, `/players.json`.
pub const OGP_PROTO_FIVEM: c_int = 27;
/// Battlefield's Frostbite query over TCP (Bad Company 2, 3, 4, Hardline, 1).
pub const OGP_PROTO_BATTLEFIELD: c_int = 28;
/// TeamSpeak 3's ServerQuery over TCP (the voice port 9987 is `use`d).
pub const OGP_PROTO_TEAMSPEAK3: c_int = 29;
/// TeamSpeak 2's TCP query (the voice port 8767 is `sel`ected).
pub const OGP_PROTO_TEAMSPEAK2: c_int = 30;
/// Eco over HTTP: `/frontpage` on the web port (the game port + 1).
pub const OGP_PROTO_ECO: c_int = 31;
/// Halo Online's ElDewrito over HTTP: `GET /` on port 11775.
pub const OGP_PROTO_ELDEWRITO: c_int = 32;
/// CS2D: `01 00 FB 01 F5 03 FB 05` on port 36963.
pub const OGP_PROTO_CS2D: c_int = 33;
/// Satisfactory's lightweight UDP query on the game port 7777.
pub const OGP_PROTO_SATISFACTORY: c_int = 34;
/// Savage 2: the byte `01` on port 11235.
pub const OGP_PROTO_SAVAGE2: c_int = 35;
/// Mafia II Multiplayer: `M2MP` on the game port + 1.
pub const OGP_PROTO_MAFIA2MP: c_int = 36;
/// Mafia II Online: `M2Online` on the game port + 1.
pub const OGP_PROTO_MAFIA2ONLINE: c_int = 37;
/// Starsiege: Tribes (Tribes 1): `62` and a challenge on port 28001.
pub const OGP_PROTO_TRIBES1: c_int = 38;
/// Starsiege (2009): `72` and a challenge on port 29001.
pub const OGP_PROTO_STARSIEGE: c_int = 39;
/// Terraria's TShock REST API over HTTP: `/v2/server/status` (game port + 101).
pub const OGP_PROTO_TERRARIA: c_int = 40;
/// Palworld's REST API over HTTP (8212); the admin password is not settable through
/// the C API yet: a server wanting it refuses (`401`).
pub const OGP_PROTO_PALWORLD: c_int = 41;
/// Kerbal Space Program's DarkMultiPlayer over HTTP: `GET /` (game port + 1).
pub const OGP_PROTO_KSPDMP: c_int = 42;
/// Build and Shoot / Ace of Spades over HTTP: `/json` on the status server (game port − 1).
pub const OGP_PROTO_BUILDANDSHOOT: c_int = 43;
/// Assetto Corsa over HTTP: `/INFO` and `/JSON|1` on the server's HTTP port.
pub const OGP_PROTO_ASSETTOCORSA: c_int = 44;
/// VC:MP (Vice City Multiplayer): SA-MP's query with `VCMP` / `MP04` on port 8192.
pub const OGP_PROTO_VCMP: c_int = 45;
/// Frontlines: Fuel of War: A2S in its own dialect on the game port + 2.
pub const OGP_PROTO_FFOW: c_int = 46;
/// Ventrilo: the obfuscated detailed-status request on port 3784.
pub const OGP_PROTO_VENTRILO: c_int = 47;
/// Armagetron Advanced: the server-info request (descriptor 53) on port 4534.
pub const OGP_PROTO_ARMAGETRON: c_int = 48;
/// rFactor 1 and Arca Sim Racing '08: `rF_S` on the game port − 100 (34297).
pub const OGP_PROTO_RFACTOR: c_int = 49;
/// BeamMP: one byte `I` on the game port (TCP 30814), a JSON reply.
pub const OGP_PROTO_BEAMMP: c_int = 50;
/// StarMade: the server-info command on TCP 4242.
pub const OGP_PROTO_STARMADE: c_int = 51;
/// Nadeo's GBXRemote 2 XML-RPC (Trackmania, Shootmania) on TCP 5000. Without a login,
/// which the C API does not take yet: most servers refuse `GetServerOptions`.
pub const OGP_PROTO_NADEO: c_int = 52;
/// Farming Simulator 19/22/25: the web interface's stats feed (XML) over HTTP on port
/// 8080; its code from `OGP_FS_CODE` (or the file `OGP_FS_CODE_FILE` names).
pub const OGP_PROTO_FARMINGSIMULATOR: c_int = 53;
/// Hytale: Nitrado's query plugin, `GET /Nitrado/Query` over HTTPS on port 5523 (the
/// certificate checked; the bindings take no `--insecure`).
pub const OGP_PROTO_HYTALE: c_int = 54;
/// Open Tibia servers (The Forgotten Server and others): the status protocol's XML `info`
/// over TCP on the login port, 7171.
pub const OGP_PROTO_TIBIA: c_int = 55;

fn protocol(p: c_int) -> Option<Option<Protocol>> {
    Some(match p {
        OGP_PROTO_AUTO => None,
        OGP_PROTO_OGP => Some(Protocol::Ogp),
        OGP_PROTO_GAMESPY3 => Some(Protocol::Gamespy3),
        OGP_PROTO_A2S => Some(Protocol::A2s),
        OGP_PROTO_GQP => Some(Protocol::Gqp),
        OGP_PROTO_OGP_DRAFT => Some(Protocol::OgpDraft),
        OGP_PROTO_QUAKE3 => Some(Protocol::Quake3),
        OGP_PROTO_BEDROCK => Some(Protocol::Bedrock),
        OGP_PROTO_MINECRAFT => Some(Protocol::Minecraft),
        OGP_PROTO_GAMESPY1 => Some(Protocol::Gamespy1),
        OGP_PROTO_UNREAL2 => Some(Protocol::Unreal2),
        OGP_PROTO_GAMESPY2 => Some(Protocol::Gamespy2),
        OGP_PROTO_ASE => Some(Protocol::Ase),
        OGP_PROTO_TEEWORLDS => Some(Protocol::Teeworlds),
        OGP_PROTO_TEEWORLDS7 => Some(Protocol::Teeworlds7),
        OGP_PROTO_OPENTTD => Some(Protocol::Openttd),
        OGP_PROTO_DOOM3 => Some(Protocol::Doom3),
        OGP_PROTO_MINETEST => Some(Protocol::Minetest),
        OGP_PROTO_MUMBLE => Some(Protocol::Mumble),
        OGP_PROTO_DOOM => Some(Protocol::Doom),
        OGP_PROTO_DOOMSDAY => Some(Protocol::Doomsday),
        OGP_PROTO_SAMP => Some(Protocol::Samp),
        OGP_PROTO_CUBE2 => Some(Protocol::Cube2),
        OGP_PROTO_QUAKEWORLD => Some(Protocol::Quakeworld),
        OGP_PROTO_QUAKE2 => Some(Protocol::Quake2),
        OGP_PROTO_NETQUAKE => Some(Protocol::Netquake),
        OGP_PROTO_HEXENWORLD => Some(Protocol::Hexenworld),
        OGP_PROTO_FIVEM => Some(Protocol::Fivem),
        OGP_PROTO_BATTLEFIELD => Some(Protocol::Battlefield),
        OGP_PROTO_TEAMSPEAK3 => Some(Protocol::Teamspeak3),
        OGP_PROTO_TEAMSPEAK2 => Some(Protocol::Teamspeak2),
        OGP_PROTO_ECO => Some(Protocol::Eco),
        OGP_PROTO_ELDEWRITO => Some(Protocol::Eldewrito),
        OGP_PROTO_CS2D => Some(Protocol::Cs2d),
        OGP_PROTO_SATISFACTORY => Some(Protocol::Satisfactory),
        OGP_PROTO_SAVAGE2 => Some(Protocol::Savage2),
        OGP_PROTO_MAFIA2MP => Some(Protocol::Mafia2mp),
        OGP_PROTO_MAFIA2ONLINE => Some(Protocol::Mafia2online),
        OGP_PROTO_TRIBES1 => Some(Protocol::Tribes1),
        OGP_PROTO_STARSIEGE => Some(Protocol::Starsiege),
        OGP_PROTO_TERRARIA => Some(Protocol::Terraria),
        OGP_PROTO_PALWORLD => Some(Protocol::Palworld),
        OGP_PROTO_KSPDMP => Some(Protocol::Kspdmp),
        OGP_PROTO_BUILDANDSHOOT => Some(Protocol::Buildandshoot),
        OGP_PROTO_ASSETTOCORSA => Some(Protocol::Assettocorsa),
        OGP_PROTO_VCMP => Some(Protocol::Vcmp),
        OGP_PROTO_FFOW => Some(Protocol::Ffow),
        OGP_PROTO_VENTRILO => Some(Protocol::Ventrilo),
        OGP_PROTO_ARMAGETRON => Some(Protocol::Armagetron),
        OGP_PROTO_RFACTOR => Some(Protocol::Rfactor),
        OGP_PROTO_BEAMMP => Some(Protocol::Beammp),
        OGP_PROTO_STARMADE => Some(Protocol::Starmade),
        OGP_PROTO_NADEO => Some(Protocol::Nadeo),
        OGP_PROTO_FARMINGSIMULATOR => Some(Protocol::Farmingsimulator),
        OGP_PROTO_HYTALE => Some(Protocol::Hytale),
        OGP_PROTO_TIBIA => Some(Protocol::Tibia),
        _ => return None,
    })
}

fn error_code(e: &QueryError) -> c_int {
    match e.kind() {
        "timeout" => OGP_ERR_TIMEOUT,
        "refused" => OGP_ERR_REFUSED,
        "rejected" => OGP_ERR_REJECTED,
        "malformed" => OGP_ERR_MALFORMED,
        "resolve" => OGP_ERR_RESOLVE,
        "options" => OGP_ERR_INVALID,
        _ => OGP_ERR_IO,
    }
}

/// Queries the server `target` (`"host:port"`, `"1.2.3.4:port"`, `"[::1]:port"`;
/// NUL-terminated) in `protocol` (`OGP_PROTO_AUTO` or one `OGP_PROTO_*`), waiting at most
/// `timeout_ms` (0: 5000), and blocks the calling thread until then. The result is one
/// JSON object in the schema of `ogp query --json` (docs/json.md): `ok`, `protocol`,
/// `addr`, `ping_ms`, `status` (the state-file schema)… or `error`, `fault`, `message`.
///
/// `*out_json` receives it (NUL-terminated, `*out_len` its length unless `out_len` is
/// `NULL`) for failed queries too; free it with `ogp_string_free`. Returns `OGP_OK` for
/// an answer, else `OGP_ERR_TIMEOUT`, `OGP_ERR_REFUSED`, `OGP_ERR_REJECTED`,
/// `OGP_ERR_MALFORMED`, `OGP_ERR_RESOLVE`, `OGP_ERR_IO` (with the JSON), or
/// `OGP_ERR_NULL`/`OGP_ERR_UTF8`/`OGP_ERR_INVALID` for bad arguments (no JSON:
/// `*out_json` untouched). Callable from any thread (each call runs a small runtime of
/// its own; not from inside a tokio runtime).
///
/// # Safety
///
/// `target` must be `NULL` or NUL-terminated; `out_json` must be `NULL` or valid for a
/// write, `out_len` too.
#[no_mangle]
pub unsafe extern "C" fn ogp_query(
    target: *const c_char,
    protocol: c_int,
    timeout_ms: u32,
    out_json: *mut *mut c_char,
    out_len: *mut usize,
) -> c_int {
    guard(|| {
        // SAFETY: the caller's promise on `target`.
        let target = unsafe { opt_cstr(target, "target") }?.ok_or_else(|| Error::null("target"))?;
        if out_json.is_null() {
            return Err(Error::null("out_json"));
        }
        let requested = self::protocol(protocol).ok_or_else(|| {
            Error::invalid(format!(
                "protocol {protocol}: not OGP_PROTO_AUTO or an OGP_PROTO_*"
            ))
        })?;
        let total =
            Duration::from_millis(u64::from(if timeout_ms == 0 { 5000 } else { timeout_ms }));
        let attempt = (total / 3).clamp(Duration::from_millis(1), Duration::from_millis(1000));
        let mut config = ScanConfig::default();
        config.options = Options::with_timing(
            Timing::default()
                .attempt_timeout(attempt)
                .total_timeout(total),
        );
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| Error::new(OGP_ERR_IO, format!("runtime: {e}")))?;
        let result = rt.block_on(scan::query(Target::new(target, requested), config));
        let about = ogp_proto::result::About {
            target,
            line: None,
            requested,
            addr: result.addr,
        };
        let json = ogp_proto::result::compact(&about, result.outcome.as_ref());
        let code = match &result.outcome {
            Ok(_) => OGP_OK,
            Err(e) => error_code(e),
        };
        // SAFETY: the caller's promise on `out_json`/`out_len`.
        unsafe { out_string(json, out_json, out_len) }?;
        if code != OGP_OK {
            if let Err(e) = &result.outcome {
                return Err(Error::new(code, e.to_string()));
            }
        }
        Ok(code)
    })
}

#[cfg(test)]
mod protocol_numbers {
    use super::*;

    /// Every protocol of the table has a number (a new one must get its own, fixed: the
    /// numbers are an ABI), and no two numbers name one protocol.
    #[test]
    fn every_protocol_has_one_number() {
        let mut named = Vec::new();
        // 60 and up: the HTTP games of another branch's range (the lead compacts)
        for n in 0..128 {
            if let Some(Some(p)) = protocol(n) {
                assert!(!named.contains(&p), "{p:?} twice");
                named.push(p);
            }
        }
        for p in Protocol::ALL {
            assert!(named.contains(&p), "{p:?} has no OGP_PROTO_ number");
        }
        assert_eq!(protocol(OGP_PROTO_AUTO), Some(None));
        assert_eq!(protocol(12), Some(Some(Protocol::Teeworlds)));
        assert_eq!(protocol(24), Some(Some(Protocol::Openttd)));
        assert_eq!(protocol(25), Some(Some(Protocol::Doom3)));
        assert_eq!(protocol(26), Some(Some(Protocol::Minetest)));
        assert_eq!(protocol(27), Some(Some(Protocol::Fivem)));
        assert_eq!(protocol(18), Some(Some(Protocol::Cube2)));
        // Doomsday in the range of Mumble, Chocolate Doom and SA-MP (issue #38)
        assert_eq!(protocol(23), Some(Some(Protocol::Doomsday)));
        // numbers no protocol took (each family was given a range)
        assert_eq!(protocol(19), None);
        // issue #39's TCP family: 28 to 30 (27 left to the HTTP family)
        assert_eq!(protocol(28), Some(Some(Protocol::Battlefield)));
        assert_eq!(protocol(29), Some(Some(Protocol::Teamspeak3)));
        assert_eq!(protocol(30), Some(Some(Protocol::Teamspeak2)));
        assert_eq!(protocol(31), Some(Some(Protocol::Eco)));
        assert_eq!(protocol(32), Some(Some(Protocol::Eldewrito)));
        assert_eq!(protocol(33), Some(Some(Protocol::Cs2d)));
        assert_eq!(protocol(34), Some(Some(Protocol::Satisfactory)));
        assert_eq!(protocol(35), Some(Some(Protocol::Savage2)));
        assert_eq!(protocol(36), Some(Some(Protocol::Mafia2mp)));
        assert_eq!(protocol(37), Some(Some(Protocol::Mafia2online)));
        assert_eq!(protocol(38), Some(Some(Protocol::Tribes1)));
        assert_eq!(protocol(39), Some(Some(Protocol::Starsiege)));
        assert_eq!(protocol(40), Some(Some(Protocol::Terraria)));
        assert_eq!(protocol(41), Some(Some(Protocol::Palworld)));
        assert_eq!(protocol(42), Some(Some(Protocol::Kspdmp)));
        assert_eq!(protocol(43), Some(Some(Protocol::Buildandshoot)));
        assert_eq!(protocol(44), Some(Some(Protocol::Assettocorsa)));
        assert_eq!(protocol(45), Some(Some(Protocol::Vcmp)));
        assert_eq!(protocol(46), Some(Some(Protocol::Ffow)));
        assert_eq!(protocol(47), Some(Some(Protocol::Ventrilo)));
        assert_eq!(protocol(48), Some(Some(Protocol::Armagetron)));
        assert_eq!(protocol(49), Some(Some(Protocol::Rfactor)));
        assert_eq!(protocol(50), Some(Some(Protocol::Beammp)));
        assert_eq!(protocol(51), Some(Some(Protocol::Starmade)));
        assert_eq!(protocol(52), Some(Some(Protocol::Nadeo)));
        assert_eq!(protocol(53), Some(Some(Protocol::Farmingsimulator)));
        assert_eq!(protocol(54), Some(Some(Protocol::Hytale)));
        assert_eq!(protocol(55), Some(Some(Protocol::Tibia)));
        assert_eq!(protocol(56), None);
    }
}
