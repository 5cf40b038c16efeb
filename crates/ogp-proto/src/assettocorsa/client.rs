//! The Assetto Corsa query as a machine of the client core's HTTP-JSON shape
//! (`client_http`): `GET /INFO` (required), then `GET /JSON|1` (the entry list's cars;
//! left out with a warning when refused) on one connection; no I/O, time passed in.
//! gamedig puts a random number after the `|` (the server reads it as a client's
//! GUID, to mark that client's own car): a fixed one asks the same.
//!
//! The documents' mapping:
//!
//! | document, key | status |
//! |---|---|
//! | `/INFO` `name` | `host_name` |
//! | `clients`, `maxclients` | `player_count`, `slot_max` |
//! | `track` | `map` |
//! | `pass` | `password` |
//! | `port` | `connect_port` (the game's TCP/UDP port) |
//! | `poweredBy` | `game_version` (AssettoServer's name and version, as gamedig reads it) |
//! | `tport`, `cport`, `session`, `timeofday`, `timeleft`, `pickup`, `timed`, `pit`, `inverted`, `cars` (joined by `,`, at most [`MAX_CARS`]) | `rules`, those sent, in this order |
//! | `/JSON\|1` `Cars` | `players`: the connected cars (`IsConnected`): `DriverName` (`name`); `Model`, `Skin`, `DriverTeam`, `DriverNation` in `extra`; at most [`MAX_PLAYERS`] |
//!
//! `game_name` is `Assetto Corsa`.

use serde::Deserialize;

use crate::bounded::MAX_LIST_ENTRIES;
use crate::client_http::{
    http_json_query, optional, parse_json, required, rules_of, with_extra, Capped, Document,
    HttpJson, Listed, NoOptions, Object, Scalar, HEAD_LIMIT,
};
use crate::error::{DecodeError, DecodeErrorKind};
use crate::http::HttpLimits;
use crate::model::{MapInfo, Player};
use crate::text::Text;
use crate::Status;

/// The default port (gamedig's; servers set `HTTP_PORT`, often 8081).
pub const DEFAULT_PORT: u16 = 9610;
/// A body, at most (an entry list of 100 cars is a few tens of KB).
pub const MAX_BODY: usize = 512 * 1024;
/// Cars of the entry list kept (the rest are counted).
pub const MAX_PLAYERS: usize = MAX_LIST_ENTRIES;
/// Car models of `/INFO`'s `cars` kept.
pub const MAX_CARS: usize = 256;
/// The cars' document's path.
pub const CARS_PATH: &str = "/JSON|1";

const LIMITS: HttpLimits = HttpLimits::new(HEAD_LIMIT, MAX_BODY);
const DOCUMENTS: [Document; 2] = [required("/INFO", LIMITS), optional(CARS_PATH, LIMITS)];

/// No settings of its own.
pub type QueryOptions = NoOptions;

/// What an Assetto Corsa answer says beyond the status (`players_listed`: the cars of
/// the entry list, connected or not).
pub type Details = Listed;

/// `/INFO`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct Info {
    /// `name`.
    pub name: Option<Scalar>,
    /// `clients`.
    pub clients: Scalar,
    /// `maxclients`.
    pub maxclients: Scalar,
    /// `track`.
    pub track: Scalar,
    /// `pass`.
    pub pass: Scalar,
    /// `port`.
    pub port: Scalar,
    /// `tport`.
    pub tport: Scalar,
    /// `cport`.
    pub cport: Scalar,
    /// `session`.
    pub session: Scalar,
    /// `timeofday`.
    pub timeofday: Scalar,
    /// `timeleft`.
    pub timeleft: Scalar,
    /// `pickup`.
    pub pickup: Scalar,
    /// `timed`.
    pub timed: Scalar,
    /// `pit`.
    pub pit: Scalar,
    /// `inverted`.
    pub inverted: Scalar,
    /// `cars`.
    pub cars: Option<Capped<Scalar, MAX_CARS>>,
    /// `poweredBy`.
    #[serde(rename = "poweredBy")]
    pub powered_by: Scalar,
}

/// One car of `/JSON|N`'s `Cars`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default, rename_all = "PascalCase")]
pub struct Car {
    /// `Model`.
    pub model: Scalar,
    /// `Skin`.
    pub skin: Scalar,
    /// `DriverName`.
    pub driver_name: Scalar,
    /// `DriverTeam`.
    pub driver_team: Scalar,
    /// `DriverNation`.
    pub driver_nation: Scalar,
    /// `IsConnected`.
    pub is_connected: Scalar,
}

/// `/JSON|N`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default, rename_all = "PascalCase")]
pub struct Cars {
    /// `Cars`.
    pub cars: Capped<Car, MAX_PLAYERS>,
}

impl Car {
    fn to_player(&self) -> Player {
        let extra = [
            ("car", &self.model),
            ("skin", &self.skin),
            ("team", &self.driver_team),
            ("nation", &self.driver_nation),
        ];
        with_extra(
            Player {
                name: self.driver_name.as_str().map(Text::from),
                ..Player::default()
            },
            &extra,
        )
    }
}

/// The status the documents say (see the module's documentation).
pub fn to_status(info: &Info, cars: Option<&Cars>) -> Status {
    let models = info.cars.as_ref().map(|c| {
        let names: Vec<&str> = c.kept.iter().filter_map(Scalar::as_str).collect();
        Scalar(Some(names.join(",")))
    });
    let none = Scalar::default();
    Status {
        game_name: Some(Text::from("Assetto Corsa")),
        host_name: info.name.as_ref().and_then(Scalar::as_str).map(Text::from),
        player_count: info.clients.number(),
        slot_max: info.maxclients.number(),
        map: info.track.as_str().map(MapInfo::named),
        password: info.pass.as_str().and_then(|p| p.parse().ok()),
        connect_port: info.port.number(),
        game_version: info.powered_by.as_str().map(Text::from),
        players: cars.map(|c| {
            c.cars
                .kept
                .iter()
                .filter(|car| car.is_connected.as_str() == Some("true"))
                .map(Car::to_player)
                .collect()
        }),
        rules: Some(rules_of(&[
            ("tport", &info.tport),
            ("cport", &info.cport),
            ("session", &info.session),
            ("timeofday", &info.timeofday),
            ("timeleft", &info.timeleft),
            ("pickup", &info.pickup),
            ("timed", &info.timed),
            ("pit", &info.pit),
            ("inverted", &info.inverted),
            ("cars", models.as_ref().unwrap_or(&none)),
        ])),
        ..Status::default()
    }
}

/// The protocol's side of the HTTP-JSON machine.
#[derive(Debug, Clone, Default)]
pub struct AssettoCorsa {
    info: Option<Info>,
    cars: Option<Cars>,
}

impl From<QueryOptions> for AssettoCorsa {
    fn from(_: QueryOptions) -> Self {
        Self::default()
    }
}

impl HttpJson for AssettoCorsa {
    type Details = Details;

    fn documents(&self) -> &'static [Document] {
        &DOCUMENTS
    }

    fn read(&mut self, i: usize, body: &[u8]) -> Result<(), DecodeError> {
        if i == 0 {
            let Object(info) = parse_json::<Object<Info>>(body, "/INFO")?;
            if info.name.is_none() {
                return Err(DecodeError::new(
                    0,
                    "/INFO",
                    DecodeErrorKind::Invalid("no name: not an Assetto Corsa server"),
                ));
            }
            self.info = Some(info);
        } else {
            self.cars = Some(parse_json::<Object<Cars>>(body, CARS_PATH)?.0);
        }
        Ok(())
    }

    fn finish(
        &mut self,
        _missing: &[&'static str],
        warnings: &mut Vec<String>,
    ) -> (Status, Details) {
        let info = self.info.take().unwrap_or_default();
        if let Some(c) = info.cars.as_ref() {
            warnings.extend(c.cut_warning("/INFO", "car models"));
        }
        let details = Listed::of(self.cars.as_ref().map(|c| &c.cars), CARS_PATH, warnings);
        (to_status(&info, self.cars.as_ref()), details)
    }
}

http_json_query!(Assettocorsa, AssettoCorsa);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_connected_cars_are_players() {
        let cars: Cars = parse_json(
            br#"{"Cars":[{"DriverName":"a","IsConnected":true,"Model":"m"},{"DriverName":"","IsConnected":false},{"DriverName":"c","IsConnected":"yes"}]}"#,
            CARS_PATH,
        )
        .unwrap();
        let info: Info =
            parse_json(br#"{"name":"n","clients":"x","pass":1,"port":-2}"#, "/INFO").unwrap();
        let s = to_status(&info, Some(&cars));
        let p = s.players.unwrap();
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].extra.get("car").map(Text::as_str), Some("m"));
        assert_eq!(
            (s.player_count, s.password, s.connect_port),
            (None, None, None)
        );
    }
}
