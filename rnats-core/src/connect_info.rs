//! The CONNECT a client sends, for both drivers: the credentials' answer to the server's
//! nonce, and the CONNECT body built from the options, the URL and the INFO.

use rnats_proto::{ConnectInfo, ServerInfo};

#[cfg(feature = "nkeys")]
use crate::auth::Credentials;
use crate::auth::Proof;
use crate::error::ConnectError;
use crate::options::ConnectOptions;
#[cfg(feature = "nkeys")]
use crate::options::load_creds_file;
use crate::server_addr::ServerAddr;

/// The credentials' answer to the server's nonce (the auth callback's, if one is set). A
/// `.creds` file is read again here, at every connect.
pub(crate) async fn prove(
    options: &ConnectOptions,
    info: &ServerInfo,
) -> Result<Proof, ConnectError> {
    match &options.credentials {
        #[cfg(feature = "nkeys")]
        Some(Credentials::CredsFile(path)) if !info.nonce.is_empty() => {
            let credentials = load_creds_file(path).await?;
            Ok(credentials.sign(&info.nonce)?.into())
        }
        Some(credentials) => Ok(credentials.prove(&info.nonce).await?),
        None => Ok(Proof::default()),
    }
}

/// The CONNECT body for `info`, with `proof` from [`prove`].
pub(crate) fn connect_info(
    proof: Proof,
    addr: &ServerAddr,
    options: &ConnectOptions,
    info: &ServerInfo,
    tls: bool,
) -> ConnectInfo {
    // Credentials in the URL win over those in the options, as in other NATS clients; an
    // auth callback's answer wins over both.
    let (user, pass) = match (
        proof.user_and_password,
        addr.user_and_password(),
        &options.user_and_password,
    ) {
        (Some((u, p)), _, _) | (None, Some((u, p)), _) => (Some(u), Some(p)),
        (None, None, Some((u, p))) => (Some(u.clone()), Some(p.clone())),
        (None, None, None) => (None, None),
    };
    let token = proof
        .token
        .or_else(|| addr.token())
        .or_else(|| options.token.clone());
    ConnectInfo {
        verbose: false,
        user_jwt: proof.jwt,
        nkey: proof.nkey,
        signature: proof.sig,
        pedantic: false,
        name: options.name.clone(),
        echo: !options.no_echo,
        lang: "rust".to_owned(),
        version: env!("CARGO_PKG_VERSION").to_owned(),
        protocol: rnats_proto::Protocol::Dynamic,
        tls_required: tls,
        user,
        pass,
        auth_token: token,
        headers: info.headers,
        no_responders: info.headers,
    }
}
