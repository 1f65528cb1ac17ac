//! What a `HEALTHZ` request checks, as `server request jetstream-health` and `server report
//! health` both ask it, natscli's flags for both.

use clap::Args;
use serde_json::{Map, Value, json};

/// The checks of one `HEALTHZ` request.
#[derive(Debug, Args)]
pub(super) struct HealthChecks {
    /// Unhealthy unless JetStream is enabled.
    #[arg(long, short = 'J', overrides_with = "no_js_enabled")]
    js_enabled: bool,
    /// Leave --js-enabled off (the default; natscli's negation).
    #[arg(long, overrides_with = "js_enabled", hide = true)]
    no_js_enabled: bool,
    /// Check the JetStream server only, not its streams and consumers.
    #[arg(long, short = 'S', overrides_with = "no_server_only")]
    server_only: bool,
    /// Leave --server-only off (the default; natscli's negation).
    #[arg(long, overrides_with = "server_only", hide = true)]
    no_server_only: bool,
    /// Check only this account.
    #[arg(long, value_name = "ACCOUNT")]
    account: Option<String>,
    /// Check only this stream (with --account).
    #[arg(long, value_name = "STREAM")]
    stream: Option<String>,
    /// Check only this consumer (with --account and --stream).
    #[arg(long, value_name = "CONSUMER")]
    consumer: Option<String>,
}

impl HealthChecks {
    /// The request's options as the server reads them; `details` asks for each failure's.
    pub(super) fn options(&self, details: bool) -> Map<String, Value> {
        let mut options = Map::new();
        options.insert("js-enabled-only".into(), json!(self.js_enabled));
        options.insert("js-server-only".into(), json!(self.server_only));
        options.insert("details".into(), json!(details));
        for (key, value) in [
            ("account", &self.account),
            ("stream", &self.stream),
            ("consumer", &self.consumer),
        ] {
            if let Some(value) = value {
                options.insert(key.into(), json!(value));
            }
        }
        options
    }
}
