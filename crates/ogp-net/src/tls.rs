//! TLS for the stream transport's queries (HTTPS game servers: Hytale's Nitrado web
//! server), on the rustls (with ring) and webpki roots that `ogp list`'s https:// lists
//! already build with (feature `tls`): no other TLS stack, no other crate.
//!
//! [`Conn`] is a connection the query loop reads and writes the same way whether TLS
//! wraps it or not: [`Conn::readable`] then [`Conn::try_read`] (plaintext, or
//! `WouldBlock` when the bytes read were only TLS records), and [`Conn::write_all`].
//! The handshake ([`Conn::handshake`]) runs before the machine hears it is connected,
//! within the machine's connect timer; a certificate that does not check fails it with
//! one line naming TLS and `--insecure`.

use std::io;
#[cfg(feature = "tls")]
use std::io::{Read as _, Write as _};
#[cfg(feature = "tls")]
use std::sync::{Arc, OnceLock};

use ogp_proto::client::TlsRequest;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

/// A query's connection: plain TCP, or TLS over it.
pub(crate) enum Conn {
    /// Plain TCP.
    Plain(TcpStream),
    /// TLS over TCP.
    #[cfg(feature = "tls")]
    Tls(Box<TlsConn>),
}

/// TLS over a TCP stream, driven by hand (rustls is sans-IO too).
#[cfg(feature = "tls")]
pub(crate) struct TlsConn {
    tcp: TcpStream,
    tls: rustls::ClientConnection,
    /// Plaintext rustls holds that was not read yet.
    pending: usize,
}

/// `e` as an I/O error whose text says TLS (and how to take a self-signed certificate
/// when the certificate is why).
#[cfg(feature = "tls")]
fn tls_error(e: &rustls::Error) -> io::Error {
    let hint = match e {
        rustls::Error::InvalidCertificate(_) => " (--insecure takes a self-signed certificate)",
        rustls::Error::InvalidMessage(_) => " (a plain HTTP server? --no-tls asks over HTTP)",
        _ => "",
    };
    io::Error::new(io::ErrorKind::InvalidData, format!("TLS: {e}{hint}"))
}

/// The rustls client configuration: the certificate checked against webpki's roots, or
/// (`insecure`) any certificate taken, its handshake signature still checked. Built
/// once each.
#[cfg(feature = "tls")]
fn config(insecure: bool) -> io::Result<Arc<rustls::ClientConfig>> {
    static CHECKED: OnceLock<Result<Arc<rustls::ClientConfig>, String>> = OnceLock::new();
    static INSECURE: OnceLock<Result<Arc<rustls::ClientConfig>, String>> = OnceLock::new();
    let cell = if insecure { &INSECURE } else { &CHECKED };
    cell.get_or_init(|| {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = rustls::ClientConfig::builder_with_provider(Arc::clone(&provider))
            .with_safe_default_protocol_versions()
            .map_err(|e| e.to_string())?;
        let config = if insecure {
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(AnyCertificate(provider)))
                .with_no_client_auth()
        } else {
            let roots = rustls::RootCertStore {
                roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
            };
            builder.with_root_certificates(roots).with_no_client_auth()
        };
        Ok(Arc::new(config))
    })
    .clone()
    .map_err(|e| io::Error::other(format!("TLS: {e}")))
}

/// `--insecure`: any certificate is taken (the server is not authenticated); the
/// handshake's signatures are still checked against the certificate it sent.
#[cfg(feature = "tls")]
#[derive(Debug)]
struct AnyCertificate(Arc<rustls::crypto::CryptoProvider>);

#[cfg(feature = "tls")]
impl rustls::client::danger::ServerCertVerifier for AnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &rustls::pki_types::CertificateDer<'_>,
        _intermediates: &[rustls::pki_types::CertificateDer<'_>],
        _server_name: &rustls::pki_types::ServerName<'_>,
        _ocsp_response: &[u8],
        _now: rustls::pki_types::UnixTime,
    ) -> Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        Ok(rustls::client::danger::ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// The most TLS bytes read from the socket at a time (one record and its header).
#[cfg(feature = "tls")]
const RECORD: usize = 16 * 1024 + 512;

impl Conn {
    /// Wraps `tcp` in TLS as `want` says (its handshake done), or leaves it plain.
    /// The caller bounds the time.
    pub(crate) async fn handshake(tcp: TcpStream, want: Option<TlsRequest>) -> io::Result<Self> {
        let Some(want) = want else {
            return Ok(Self::Plain(tcp));
        };
        #[cfg(not(feature = "tls"))]
        {
            let _ = (tcp, want);
            Err(io::Error::other(
                "TLS: this ogp was built without the `tls` feature (--no-tls asks over HTTP)",
            ))
        }
        #[cfg(feature = "tls")]
        {
            let name = match want.server_name {
                Some(n) => rustls::pki_types::ServerName::try_from(n)
                    .map_err(|e| io::Error::other(format!("TLS: server name: {e}")))?,
                None => rustls::pki_types::ServerName::IpAddress(tcp.peer_addr()?.ip().into()),
            };
            let tls = rustls::ClientConnection::new(config(want.insecure)?, name)
                .map_err(|e| tls_error(&e))?;
            let mut c = TlsConn {
                tcp,
                tls,
                pending: 0,
            };
            while c.tls.is_handshaking() {
                c.flush().await?;
                if !c.tls.is_handshaking() {
                    break;
                }
                c.tcp.readable().await?;
                match c.read_records() {
                    Ok(false) => {}
                    Ok(true) => {
                        return Err(io::Error::new(
                            io::ErrorKind::UnexpectedEof,
                            "TLS: the server closed the connection during the handshake",
                        ))
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                    Err(e) => return Err(e),
                }
            }
            c.flush().await?;
            Ok(Self::Tls(Box::new(c)))
        }
    }

    /// The peer's address.
    pub(crate) fn tcp(&self) -> &TcpStream {
        match self {
            Self::Plain(t) => t,
            #[cfg(feature = "tls")]
            Self::Tls(c) => &c.tcp,
        }
    }

    /// Writes all of `data` (encrypted when TLS).
    pub(crate) async fn write_all(&mut self, data: &[u8]) -> io::Result<()> {
        match self {
            Self::Plain(t) => t.write_all(data).await,
            #[cfg(feature = "tls")]
            Self::Tls(c) => {
                c.tls.writer().write_all(data)?;
                c.flush().await
            }
        }
    }

    /// Waits until [`try_read`](Self::try_read) may have something.
    pub(crate) async fn readable(&self) -> io::Result<()> {
        match self {
            Self::Plain(t) => t.readable().await,
            #[cfg(feature = "tls")]
            Self::Tls(c) if c.pending > 0 || !c.tls.wants_read() => Ok(()),
            #[cfg(feature = "tls")]
            Self::Tls(c) => c.tcp.readable().await,
        }
    }

    /// Reads what is there: `Ok(0)` at the end of the stream, `WouldBlock` when
    /// nothing is (TLS: the bytes read held no plaintext yet).
    pub(crate) fn try_read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Self::Plain(t) => t.try_read(buf),
            #[cfg(feature = "tls")]
            Self::Tls(c) => {
                if c.pending == 0 && c.tls.wants_read() {
                    let _end = c.read_records()?;
                }
                match c.tls.reader().read(buf) {
                    Ok(n) => {
                        c.pending = c.pending.saturating_sub(n);
                        Ok(n)
                    }
                    Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Ok(0),
                    Err(e) => Err(e),
                }
            }
        }
    }
}

#[cfg(feature = "tls")]
impl TlsConn {
    /// Writes the TLS records rustls has to send.
    async fn flush(&mut self) -> io::Result<()> {
        while self.tls.wants_write() {
            let mut out = Vec::new();
            self.tls.write_tls(&mut out)?;
            self.tcp.write_all(&out).await?;
        }
        Ok(())
    }

    /// Reads TLS records from the socket (without waiting) and decrypts them (the
    /// plaintext, if any, counted in `pending`): `Ok(true)` at the socket's end (rustls
    /// then says so on read), `WouldBlock` when nothing came.
    fn read_records(&mut self) -> io::Result<bool> {
        let mut buf = [0u8; RECORD];
        let n = self.tcp.try_read(&mut buf)?;
        let mut got = buf.get(..n).unwrap_or_default();
        if n == 0 {
            // the end: rustls learns it from an empty read
            self.tls.read_tls(&mut got)?;
        }
        while !got.is_empty() {
            self.tls.read_tls(&mut got)?;
            let state = self.tls.process_new_packets().map_err(|e| tls_error(&e))?;
            self.pending = state.plaintext_bytes_to_read();
        }
        if n == 0 {
            let state = self.tls.process_new_packets().map_err(|e| tls_error(&e))?;
            self.pending = state.plaintext_bytes_to_read();
        }
        // Alerts or key updates rustls wants to answer: best effort, without waiting.
        while self.tls.wants_write() {
            let mut out = Vec::new();
            self.tls.write_tls(&mut out)?;
            if self.tcp.try_write(&out).is_err() {
                break;
            }
        }
        Ok(n == 0)
    }
}
