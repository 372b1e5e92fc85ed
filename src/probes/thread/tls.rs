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
    let server = ServerConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(&[&rustls::version::TLS13])
        .map_err(tls)?
        .with_no_client_auth()
        .with_single_cert(vec![cert.clone()], key)
        .map_err(tls)?;
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

/// The server end: handshakes, then sends `byte` (the signal).
pub fn serve_signal(configs: &Configs, mut sock: UnixStream, byte: u8) -> Result<(), String> {
    let mut conn =
        ServerConnection::new(configs.server.clone()).map_err(|e| format!("TLS server: {e}"))?;
    let mut stream = rustls::Stream::new(&mut conn, &mut sock);
    stream
        .write_all(&[byte])
        .and_then(|()| stream.flush())
        .map_err(|e| format!("TLS server send: {e}"))
}

/// The client end: handshakes, then receives one byte.
pub fn receive_signal(configs: &Configs, mut sock: UnixStream) -> Result<u8, String> {
    let name = ServerName::try_from(NAME).map_err(|e| format!("server name: {e}"))?;
    let mut conn = ClientConnection::new(configs.client.clone(), name)
        .map_err(|e| format!("TLS client: {e}"))?;
    let mut stream = rustls::Stream::new(&mut conn, &mut sock);
    let mut byte = [0u8];
    stream
        .read_exact(&mut byte)
        .map_err(|e| format!("TLS client receive: {e}"))?;
    Ok(byte[0])
}

/// A full exchange on a fresh socketpair: the server signals `to_client`,
/// the client answers `to_server` on the same session. For tests.
pub fn exchange(to_client: u8, to_server: u8) -> Result<(u8, u8), String> {
    let configs = configs()?;
    let (client_sock, mut server_sock) =
        UnixStream::pair().map_err(|e| format!("socketpair: {e}"))?;
    let server = std::thread::spawn(move || -> Result<u8, String> {
        let mut conn = ServerConnection::new(configs.server.clone()).map_err(|e| e.to_string())?;
        let mut stream = rustls::Stream::new(&mut conn, &mut server_sock);
        stream
            .write_all(&[to_client])
            .and_then(|()| stream.flush())
            .map_err(|e| e.to_string())?;
        let mut answer = [0u8];
        stream.read_exact(&mut answer).map_err(|e| e.to_string())?;
        Ok(answer[0])
    });
    let name = ServerName::try_from(NAME).map_err(|e| e.to_string())?;
    let mut conn =
        ClientConnection::new(configs.client.clone(), name).map_err(|e| e.to_string())?;
    let mut sock = client_sock;
    let mut stream = rustls::Stream::new(&mut conn, &mut sock);
    let mut got = [0u8];
    stream.read_exact(&mut got).map_err(|e| e.to_string())?;
    stream
        .write_all(&[to_server])
        .and_then(|()| stream.flush())
        .map_err(|e| e.to_string())?;
    let answered = server
        .join()
        .map_err(|_| "server thread panicked".to_string())??;
    Ok((got[0], answered))
}
