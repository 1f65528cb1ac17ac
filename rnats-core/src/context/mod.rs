//! natscli's contexts: the named connection settings the `nats` command line keeps in
//! `~/.config/nats/context/NAME.json` (or under `$XDG_CONFIG_HOME`), with the selected one
//! named in `~/.config/nats/context.txt`. A program connects with the same settings as the
//! command line, as nats.go programs do with jsm.go's `natscontext.Connect(name)`.
//! Needs the `context` feature; not in async-nats.
//!
//! ```no_run
//! use rnats_core::context::Context;
//!
//! # async fn run() -> Result<(), rnats_core::Error> {
//! // The context `nats context select` chose, else the defaults (nats://127.0.0.1:4222).
//! let context = Context::load_selected()?.unwrap_or_default();
//! let client = context.connect().await?;
//!
//! // A named one, with options of the program's own on top.
//! let context = Context::load("prod")?;
//! let client = context
//!     .connect_options()?
//!     .name("billing")
//!     .connect(context.servers())
//!     .await?;
//! # drop(client); Ok(()) }
//! ```
//!
//! Reading needs no server:
//!
//! ```
//! use rnats_core::context::Context;
//!
//! let context = Context::from_json(
//!     "dev",
//!     br#"{"url": "nats://a:4222,nats://b:4222", "token": "env://DEV_TOKEN",
//!          "jetstream_domain": "hub", "tls_first": true}"#,
//! )?;
//! assert_eq!(context.servers(), "nats://a:4222,nats://b:4222");
//! assert_eq!(context.token(), Some("env://DEV_TOKEN")); // resolved when connecting
//! assert_eq!(context.jetstream_domain(), Some("hub"));
//! assert!(context.tls_first());
//! assert_eq!(context.user(), None); // natscli writes unset settings as ""
//! # Ok::<(), rnats_core::context::ContextError>(())
//! ```
//!
//! What the settings do when connecting (natscli's rules, [`Context::connect_options`]):
//! one way to log in, the first set of `user` (with `password`), `creds`, `nkey`, and
//! `user_jwt` (with `user_seed`, or alone as a bearer JWT), plus `token` if set; `ca` turns
//! TLS on and trusts that CA, `cert` with `key` is the client certificate, `tls_first`,
//! `inbox_prefix`. Secrets may be references (see [`resolve_secret`] and [`Material`]);
//! paths expand `~`, `$NAME` and `${NAME}` ([`expand_path`]). The JetStream settings are
//! for the JetStream context the program makes (`jetstream::ContextBuilder::domain`,
//! `api_prefix`). `socks_proxy` sends the connections through that SOCKS5 proxy, as
//! natscli does. Not applied: `color_scheme`, which is the command line's. Refused with a typed error: `nsc://` and
//! `op://` references and the old `nsc` setting (natscli runs the `nsc` or 1Password
//! program for them), and the Windows certificate store.

mod apply;
mod error;
mod reference;
mod settings;
mod store;

pub use apply::nkey_seed;
pub use error::ContextError;
pub use reference::{Material, expand_path, resolve_path, resolve_secret};
pub use settings::{Context, DEFAULT_URL};
pub use store::ContextStore;

#[cfg(test)]
mod tests;
