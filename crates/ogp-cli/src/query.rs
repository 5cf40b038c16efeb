//! `ogp query`: query one server in one protocol and print its status. Nothing here
//! knows a protocol's wire format: the options go to `ogp_net::client::query`, the
//! answer comes back as one [`Answer`] whatever the protocol.

use std::fmt::Write as _;
use std::time::Duration;

use ogp_net::client;
use ogp_proto::client::{Answer, Event, Options, QueryError, Timing};
use ogp_proto::http::Secret;
use ogp_proto::{gqp, nadeo, teamspeak3, Charset, Protocol};

/// Options of `ogp query`.
#[derive(Debug, Default)]
pub struct QueryArgs {
    /// HOST:PORT.
    pub target: String,
    /// Per-attempt timeout.
    pub timeout: Duration,
    /// Retries.
    pub retries: u32,
    /// Ask for OGP split answers of this size (0: one datagram; None: the default).
    pub split: Option<u16>,
    /// GQP raw commands, `;`-separated.
    pub command: Option<String>,
    /// GQP user for protected commands.
    pub user: Option<String>,
    /// A2S and GameSpy v3: how to read strings that are not UTF-8.
    pub charset: Charset,
    /// Minecraft named without a port: look up its `_minecraft._tcp` SRV record first
    /// (`target` then holds the fallback, HOST:25565).
    pub srv: bool,
    /// TeamSpeak 3 and 2: the voice port `use port=` (`sel`) names (`None`: 9987, 8767).
    pub voice_port: Option<u16>,
    /// The HTTPS games' TLS.
    pub tls: Tls,
}

/// How the HTTPS game servers (Hytale) are asked: `--insecure`, `--no-tls`.
#[derive(Debug, Default, Clone, Copy)]
pub struct Tls {
    /// Accept any certificate.
    pub insecure: bool,
    /// Plain HTTP.
    pub no_tls: bool,
}

impl Tls {
    /// Sets Hytale's options; the certificate must be for `target`'s host when it is a
    /// name (an address: the address).
    pub fn set(self, o: &mut Options, target: Option<&str>) {
        o.hytale.insecure = self.insecure;
        o.hytale.plain = self.no_tls;
        o.hytale.server_name = target
            .and_then(|t| t.rsplit_once(':'))
            .map(|(host, _)| host)
            .filter(|h| h.parse::<std::net::IpAddr>().is_err() && !h.starts_with('['))
            .map(str::to_owned);
    }
}

/// The timers for the arguments ([`ogp_proto::front::query_timing`]).
pub fn timing(args: &QueryArgs, protocol: Protocol) -> Timing {
    ogp_proto::front::query_timing(args.timeout, args.retries, protocol)
}

pub use ogp_proto::front::{set_charset, set_handshake_host, with_default_port};

/// The address to query: `args.target` resolved, after its SRV record when
/// [`QueryArgs::srv`] says so (the look-up takes at most one step's attempts).
pub async fn resolve(
    args: &QueryArgs,
    protocol: Protocol,
) -> Result<std::net::SocketAddr, QueryError> {
    if args.srv && protocol == Protocol::Minecraft {
        if let Some((host, _)) = args.target.rsplit_once(':') {
            let limit = timing(args, protocol).connect_timeout;
            let (host, port) = client::minecraft_srv(host, None, limit).await;
            return client::resolve(&format!("{host}:{port}")).await;
        }
    }
    client::resolve(&args.target).await
}

/// A secret from the environment: the variable `var`, or else the first line of the file
/// the variable `{var}_FILE` names (`None`: neither is set; an unreadable file: an error
/// naming it, never its contents).
fn secret_from_env(var: &str) -> Result<Option<String>, String> {
    if let Ok(p) = std::env::var(var) {
        return Ok(Some(p));
    }
    let file = format!("{var}_FILE");
    match std::env::var_os(&file) {
        Some(path) => {
            let text = std::fs::read_to_string(&path).map_err(|e| {
                format!(
                    "{file} {}: {e}",
                    crate::render::sanitize(&path.to_string_lossy())
                )
            })?;
            Ok(Some(text.lines().next().unwrap_or_default().to_string()))
        }
        None => Ok(None),
    }
}

/// Credentials from the environment, never from the command line: Palworld's admin
/// password (`OGP_PALWORLD_PASSWORD`, or the first line of the file
/// `OGP_PALWORLD_PASSWORD_FILE` names), TShock's REST token (`OGP_TSHOCK_TOKEN`),
/// Farming Simulator's stats code (`OGP_FS_CODE`, or the file `OGP_FS_CODE_FILE`) and
/// the Nadeo XML-RPC login (`OGP_NADEO_LOGIN`, `User` when only a password is given, and
/// `OGP_NADEO_PASSWORD` or `OGP_NADEO_PASSWORD_FILE`).
pub fn set_http_credentials(o: &mut Options) -> Result<(), String> {
    o.palworld.password = secret_from_env("OGP_PALWORLD_PASSWORD")?.map(Secret);
    o.terraria.token = std::env::var("OGP_TSHOCK_TOKEN").ok().map(Secret);
    o.farmingsimulator.code = secret_from_env("OGP_FS_CODE")?.map(Secret);
    set_nadeo_login(o, None)
}

/// The Nadeo login: `login` (`--user`), else `OGP_NADEO_LOGIN`, else `User`, with the
/// password from `OGP_NADEO_PASSWORD` (or its `_FILE`); none without a password.
fn set_nadeo_login(o: &mut Options, login: Option<&str>) -> Result<(), String> {
    let password = secret_from_env("OGP_NADEO_PASSWORD")?;
    let login = login
        .map(str::to_owned)
        .or_else(|| std::env::var("OGP_NADEO_LOGIN").ok());
    o.nadeo.credentials = match (login, password) {
        (login, Some(p)) => Some(nadeo::client::Credentials::new(
            login.unwrap_or_else(|| "User".to_owned()),
            p,
        )),
        (Some(_), None) => return Err(
            "a Nadeo login needs its password in OGP_NADEO_PASSWORD (or OGP_NADEO_PASSWORD_FILE)"
                .to_string(),
        ),
        (None, None) => None,
    };
    Ok(())
}

/// What a `-vv` dump must not show: the credentials in `o`, and the forms a request
/// carries them in (Palworld's `Authorization` value, TShock's token and Farming
/// Simulator's code in the query, TeamSpeak 3's and Nadeo's escaped login passwords).
pub fn secrets(o: &Options) -> Vec<String> {
    let mut s = Vec::new();
    let text = |s: &Option<Secret>| s.as_ref().map(|s| s.0.clone()).filter(|s| !s.is_empty());
    if let Some(p) = text(&o.palworld.password) {
        s.push(ogp_proto::http::basic_authorization(
            ogp_proto::palworld::client::USER,
            &p,
        ));
        s.push(p);
    }
    for t in [&o.terraria.token, &o.farmingsimulator.code]
        .into_iter()
        .filter_map(text)
    {
        s.push(ogp_proto::http::query_value(&t));
        s.push(t);
    }
    if let Some(c) = &o.teamspeak3.credentials {
        s.extend(c.password_forms().into_iter().filter(|p| !p.is_empty()));
    }
    if let Some(c) = &o.nadeo.credentials {
        s.extend(c.password_forms().into_iter().filter(|p| !p.is_empty()));
    }
    s
}

/// `d` with each of `secrets` written over with `*`.
pub fn redact(d: &[u8], secrets: &[String]) -> Vec<u8> {
    let mut out = d.to_vec();
    for s in secrets
        .iter()
        .map(String::as_bytes)
        .filter(|s| !s.is_empty())
    {
        let mut i = 0;
        while let Some(at) = out
            .get(i..)
            .and_then(|rest| rest.windows(s.len()).position(|w| w == s))
        {
            let start = i.saturating_add(at);
            let end = start.saturating_add(s.len());
            if let Some(span) = out.get_mut(start..end) {
                span.fill(b'*');
            }
            i = end;
        }
    }
    out
}

/// The client options for the arguments.
pub fn options(args: &QueryArgs, protocol: Protocol) -> Result<Options, String> {
    let mut o = Options::with_timing(timing(args, protocol));
    set_charset(&mut o, args.charset);
    args.tls.set(&mut o, Some(&args.target));
    if matches!(
        protocol,
        Protocol::Palworld | Protocol::Terraria | Protocol::Farmingsimulator
    ) {
        set_http_credentials(&mut o)?;
    }
    if protocol == Protocol::Nadeo {
        set_nadeo_login(&mut o, args.user.as_deref())?;
        return Ok(o);
    }
    if protocol == Protocol::Minecraft {
        set_handshake_host(&mut o, &args.target);
    }
    if let Some(split) = args.split {
        // 0: one datagram, however much the server has to leave out to fit it.
        let split = (split != 0).then_some(split);
        o.ogp.max_bytes_per_packet = split;
        o.ogp_draft.max_bytes_per_packet = split.map(|m| i16::try_from(m).unwrap_or(i16::MAX));
    }
    if let Some(c) = &args.command {
        let commands = gqp::Command::parse_lines(c);
        if commands.is_empty() {
            return Err(format!("no command in {c:?}"));
        }
        o.gqp.mode = gqp::client::QueryMode::Raw(commands);
    }
    if protocol == Protocol::Teamspeak2 {
        if let Some(port) = args.voice_port {
            o.teamspeak2.voice_port = port;
        }
        return Ok(o);
    }
    if protocol == Protocol::Teamspeak3 {
        if let Some(port) = args.voice_port {
            o.teamspeak3.voice_port = port;
        }
        if let Some(user) = &args.user {
            let password = std::env::var("OGP_TS3_PASSWORD")
                .map_err(|_| "--user needs the password in OGP_TS3_PASSWORD".to_string())?;
            o.teamspeak3.credentials = Some(teamspeak3::client::Credentials::new(
                user.as_str(),
                password,
            ));
        }
        return Ok(o);
    }
    if let Some(user) = &args.user {
        let password = std::env::var("OGP_GQP_PASSWORD")
            .map_err(|_| "--user needs the password in OGP_GQP_PASSWORD".to_string())?;
        o.gqp.credentials = Some(gqp::client::Credentials::new(user.as_str(), password));
    }
    Ok(o)
}

/// Resolves `target` and queries it in `protocol`.
pub async fn run(target: &str, protocol: Protocol, opts: &Options) -> Result<Answer, QueryError> {
    let addr = client::resolve(target).await?;
    client::query(addr, protocol, opts).await
}

/// What happened on the wire, one indented line per event, each made safe for a
/// terminal (the line breaks between them are ours, not the peer's).
pub fn wire_summary(events: &[Event]) -> String {
    let mut s = String::new();
    for e in events {
        let _ = writeln!(s, "  {}", crate::render::sanitize(&e.to_string()));
    }
    s
}

/// Appends a hex dump of one datagram: a header line with its direction and size, then
/// 16 bytes a line with their printable ASCII (anything else shown as `.`).
pub fn hex_dump(out: &mut String, w: client::Wire<'_>) {
    let (arrow, d) = match w {
        client::Wire::Sent(d) => ("→ sent", d),
        client::Wire::Received(d) => ("← received", d),
    };
    let _ = writeln!(out, "  {arrow} {} B", d.len());
    for (i, chunk) in d.chunks(16).enumerate() {
        let hex: Vec<String> = chunk.iter().map(|b| format!("{b:02x}")).collect();
        let text: String = chunk
            .iter()
            .map(|b| {
                if b.is_ascii_graphic() || *b == b' ' {
                    char::from(*b)
                } else {
                    '.'
                }
            })
            .collect();
        let _ = writeln!(out, "    {:04x}  {:<47}  {text}", i * 16, hex.join(" "));
    }
}
