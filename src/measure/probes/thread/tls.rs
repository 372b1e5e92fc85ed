//! The TLS 1.3 channel of seed 002: rustls with the ring provider over a
//! Unix socketpair, a self-signed certificate made once (rcgen) outside any
//! timed region.

use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName};
use rustls::{ClientConfig, ClientConnection, RootCertStore, ServerConfig, ServerConnection};
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::sync::{Arc, OnceLock};

const NAME: &str = "mitbench.invalid";

pub struct Configs {
    pub server: Arc<ServerConfig>,
    pub client: Arc<ClientConfig>,
}

/// The server and client configurations, made on first use.
pub fn configs() -> Result<&'static Configs, String> {
    static CONFIGS: OnceLock<Result<Configs, String>> = OnceLock::new();
    CONFIGS.get_or_init(build).as_ref().map_err(Clone::clone)
}

fn build() -> Result<Configs, String> {
    let certified = rcgen::generate_simple_self_signed(vec![NAME.to_string()])
        .map_err(|e| format!("making the certificate failed: {e}"))?;
    let cert: CertificateDer<'static> = certified.cert.der().clone();
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(
        certified.signing_key.serialize_der(),
    ));
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let tls = |e: rustls::Error| format!("TLS configuration failed: {e}");
    let mut server = ServerConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(&[&rustls::version::TLS13])
        .map_err(tls)?
        .with_no_client_auth()
        .with_single_cert(vec![cert.clone()], key)
        .map_err(tls)?;
    // No session is ever resumed, so no tickets: rustls would otherwise send
    // two after the handshake, and the client would read them with the
    // signal, charging ticket crypto to the first signal.
    server.send_tls13_tickets = 0;
    let mut roots = RootCertStore::empty();
    roots.add(cert).map_err(tls)?;
    let client = ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])
        .map_err(tls)?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(Configs {
        server: Arc::new(server),
        client: Arc::new(client),
    })
}

/// One end of a channel whose handshake is done.
pub type Session<C> = rustls::StreamOwned<C, UnixStream>;

/// Runs the handshake to its end on `conn`, so the caller can tell the
/// handshake's cost from the first message's.
fn handshake<C, D>(mut conn: C, mut sock: UnixStream) -> Result<Session<C>, String>
where
    C: std::ops::DerefMut<Target = rustls::ConnectionCommon<D>>,
    D: rustls::SideData,
{
    while conn.is_handshaking() {
        conn.complete_io(&mut sock)
            .map_err(|e| format!("TLS handshake: {e}"))?;
    }
    Ok(rustls::StreamOwned::new(conn, sock))
}

/// The server's side of the handshake.
pub fn accept(configs: &Configs, sock: UnixStream) -> Result<Session<ServerConnection>, String> {
    let conn =
        ServerConnection::new(configs.server.clone()).map_err(|e| format!("TLS server: {e}"))?;
    handshake(conn, sock)
}

/// The client's side of the handshake; its key share is made here too.
pub fn connect(configs: &Configs, sock: UnixStream) -> Result<Session<ClientConnection>, String> {
    let name = ServerName::try_from(NAME).map_err(|e| format!("server name: {e}"))?;
    let conn = ClientConnection::new(configs.client.clone(), name)
        .map_err(|e| format!("TLS client: {e}"))?;
    handshake(conn, sock)
}

/// Sends one byte (the signal) on an established session.
pub fn send(session: &mut impl Write, byte: u8) -> Result<(), String> {
    session
        .write_all(&[byte])
        .and_then(|()| session.flush())
        .map_err(|e| format!("TLS send: {e}"))
}

/// Receives one byte on an established session.
pub fn receive(session: &mut impl Read) -> Result<u8, String> {
    let mut byte = [0u8];
    session
        .read_exact(&mut byte)
        .map_err(|e| format!("TLS receive: {e}"))?;
    Ok(byte[0])
}

/// The server end of a signal channel: handshakes, then sends `byte`.
pub fn serve_signal(configs: &Configs, sock: UnixStream, byte: u8) -> Result<(), String> {
    send(&mut accept(configs, sock)?, byte)
}

/// A full exchange on a fresh socketpair: the server signals `to_client`,
/// the client answers `to_server` on the same session. For tests.
pub fn exchange(to_client: u8, to_server: u8) -> Result<(u8, u8), String> {
    let configs = configs()?;
    let (client_sock, server_sock) = UnixStream::pair().map_err(|e| format!("socketpair: {e}"))?;
    let server = std::thread::spawn(move || -> Result<u8, String> {
        let mut session = accept(configs, server_sock)?;
        send(&mut session, to_client)?;
        receive(&mut session)
    });
    let mut session = connect(configs, client_sock)?;
    let got = receive(&mut session)?;
    send(&mut session, to_server)?;
    let answered = server
        .join()
        .map_err(|_| "server thread panicked".to_string())??;
    Ok((got, answered))
}
