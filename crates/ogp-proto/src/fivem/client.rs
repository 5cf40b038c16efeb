//! The FiveM query as a machine of the client core's HTTP-JSON shape
//! (`client_http`): `GET /dynamic.json`, `/info.json`, `/players.json` on one kept-alive
//! connection, no I/O, time passed in.
//!
//! `/info.json` is required (the query fails without it: a server that answers it is a
//! CitizenFX server); `/dynamic.json` and `/players.json` are optional (servers hide
//! the players with `sv_requestParanoia` or a proxy): a refusal, a bad body or a
//! timeout leaves them out with a warning, named in [`Details::missing`].

use std::time::Instant;

use super::documents::{to_status, Documents};
use crate::client_core::Timing;
use crate::client_http::{http_json_driver, parse_json, Document, HttpJson, HttpMachine};
use crate::error::DecodeError;
use crate::http::HttpLimits;
use crate::protocol::Protocol;
use crate::text::Text;
use crate::Status;

/// The default port (the game port: UDP for the game, TCP for HTTP).
pub const DEFAULT_PORT: u16 = 30120;

/// The head of a response, at most (FXServer's are a few hundred bytes).
pub const MAX_HEAD: usize = 8 * 1024;
/// `/dynamic.json`'s body, at most (a few hundred bytes).
pub const MAX_DYNAMIC: usize = 64 * 1024;
/// `/info.json`'s body, at most: the icon (a 96×96 PNG in base64, up to ~40 KB),
/// the variables and up to thousands of resource names.
pub const MAX_INFO: usize = 1024 * 1024;
/// `/players.json`'s body, at most: 2,048 players (OneSync's most) with their
/// identifiers take about 1 MB.
pub const MAX_PLAYERS_BODY: usize = 2 * 1024 * 1024;

/// The documents, in the order asked.
const DOCUMENTS: [Document; 3] = [
    Document {
        path: "/dynamic.json",
        required: false,
        limits: HttpLimits::new(MAX_HEAD, MAX_DYNAMIC),
    },
    Document {
        path: "/info.json",
        required: true,
        limits: HttpLimits::new(MAX_HEAD, MAX_INFO),
    },
    Document {
        path: "/players.json",
        required: false,
        limits: HttpLimits::new(MAX_HEAD, MAX_PLAYERS_BODY),
    },
];

/// FiveM's own settings of one query (the timers are [`Timing`]).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct QueryOptions {
    /// The `Host` header; `None`: the connected address and port.
    pub host: Option<Text>,
    /// Skip `/players.json` (default false).
    pub no_players: bool,
}

/// What a FiveM answer says beyond the status.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Details {
    /// `/info.json`'s `version` (a build number).
    pub version: Option<Text>,
    /// `/info.json`'s `enhancedHostSupport`.
    pub enhanced_host_support: Option<Text>,
    /// `/info.json`'s `requestSteamTicket`.
    pub request_steam_ticket: Option<Text>,
    /// The length of `/info.json`'s base64 `icon`, which is not kept.
    pub icon_bytes: Option<usize>,
    /// `/dynamic.json`'s `iv`.
    pub iv: Option<Text>,
    /// Entries of `/players.json` (more than the players kept when over the cap).
    pub players_listed: Option<usize>,
    /// The documents not read (refused, broken or not in time).
    pub missing: Vec<&'static str>,
}

/// The protocol's side of the HTTP-JSON machine.
#[derive(Debug, Clone, Default)]
pub struct Fivem {
    docs: Documents,
    no_players: bool,
}

impl HttpJson for Fivem {
    type Details = Details;

    fn documents(&self) -> &'static [Document] {
        if self.no_players {
            DOCUMENTS.get(..2).unwrap_or_default()
        } else {
            &DOCUMENTS
        }
    }

    fn read(&mut self, i: usize, body: &[u8]) -> Result<(), DecodeError> {
        match i {
            0 => self.docs.dynamic = Some(parse_json(body, "/dynamic.json")?),
            1 => self.docs.info = Some(parse_json(body, "/info.json")?),
            _ => self.docs.players = Some(parse_json(body, "/players.json")?),
        }
        Ok(())
    }

    fn finish(
        &mut self,
        missing: &[&'static str],
        warnings: &mut Vec<String>,
    ) -> (Status, Details) {
        let (status, w) = to_status(&self.docs);
        warnings.extend(w);
        let info = self.docs.info.as_ref();
        let t = |s: Option<&str>| s.map(Text::from);
        let details = Details {
            version: t(info.and_then(|i| i.version.0.as_deref())),
            enhanced_host_support: t(info.and_then(|i| i.enhanced_host_support.0.as_deref())),
            request_steam_ticket: t(info.and_then(|i| i.request_steam_ticket.0.as_deref())),
            icon_bytes: info.and_then(|i| i.icon).map(|l| l.0),
            iv: t(self.docs.dynamic.as_ref().and_then(|d| d.iv.0.as_deref())),
            players_listed: self.docs.players.as_ref().map(|p| p.total),
            missing: missing.to_vec(),
        };
        (status, details)
    }
}

/// One FiveM query of one server.
#[derive(Debug, Clone)]
pub struct QueryMachine {
    m: HttpMachine<Fivem>,
}

impl QueryMachine {
    /// A query starting at `now`.
    pub fn new(opts: QueryOptions, timing: Timing, now: Instant) -> Self {
        let p = Fivem {
            docs: Documents::default(),
            no_players: opts.no_players,
        };
        Self {
            m: HttpMachine::new(
                Protocol::Fivem,
                p,
                &timing,
                now,
                opts.host.map(|h| h.to_string()),
            ),
        }
    }
}

http_json_driver!(QueryMachine, Details);

crate::client_core::start_query!(QueryOptions, no_id);
