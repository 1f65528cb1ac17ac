//! The first sections of `rnats account info`: who the connection is (its user and account,
//! as `$SYS.REQ.USER.INFO` and the INFO that answered the CONNECT say) and what it is
//! connected to, as natscli's account info shows them.

use std::time::Duration;

use bytes::Bytes;
use rnats::Client;
use serde::Serialize;
use serde_json::Value;

use super::duration;
use crate::conn::Settings;
use crate::out::Fields;
use crate::stats::human;

/// The request any user may send to learn its user, account and permissions (nats-server
/// 2.10 and later).
const USER_INFO: &str = "$SYS.REQ.USER.INFO";

/// Who the connection is and what it is connected to.
#[derive(Debug, Serialize)]
pub(super) struct Identity {
    /// The server's `$SYS.REQ.USER.INFO` answer (`user`, `account`, `permissions`,
    /// `expires`); `None` when the server is older than 2.10 or did not answer.
    user: Option<Value>,
    /// Why `user` is missing, when the server was asked.
    #[serde(skip_serializing_if = "Option::is_none")]
    user_error: Option<String>,
    /// The account the user is bound to, from the INFO that answered the CONNECT
    /// (nats-server 2.12 and later).
    account: Option<String>,
    /// Whether that account is the system account; `None` from a server that does not say.
    system_account: Option<bool>,
    /// The connection, as the client sees it.
    connection: Connection,
}

/// The connection's facts: natscli's "Connection Information".
#[derive(Debug, Serialize)]
struct Connection {
    client_id: u64,
    client_ip: String,
    /// A round trip to the server, in microseconds (`None` when the PING failed).
    rtt_us: Option<u128>,
    headers: bool,
    max_payload: usize,
    cluster: Option<String>,
    /// The server the link is up to, as the server pool names it.
    url: Option<String>,
    server_id: String,
    server_name: String,
    server_version: String,
    tls: bool,
}

impl Identity {
    /// Asks the server who the user is and gathers the connection's facts. The round trip
    /// comes first: it is the PING behind which a 2.12+ server has said which account the
    /// user is bound to.
    pub(super) async fn of(client: &Client, settings: &Settings) -> Identity {
        let rtt = client.rtt().await.ok();
        let info = client.server_info();
        let (user, user_error) = match at_least_2_10(&info.version) {
            true => match user_info(client, settings.timeout).await {
                Ok(user) => (Some(user), None),
                Err(reason) => (None, Some(reason)),
            },
            false => (None, None),
        };
        let server = client.connected_server();
        let tls = settings.tls()
            || info.tls_required
            || server.as_ref().is_some_and(|s| s.tls_required());
        Identity {
            user,
            user_error,
            system_account: info
                .remote_account
                .as_ref()
                .map(|_| client.is_system_account()),
            account: info.remote_account.clone(),
            connection: Connection {
                client_id: info.client_id,
                client_ip: info.client_ip.clone(),
                rtt_us: rtt.map(|d| d.as_micros()),
                headers: info.headers,
                max_payload: info.max_payload,
                cluster: info.cluster.clone(),
                // Its `Display`, which leaves out a user and password the URL carries.
                url: server.map(|s| s.to_string()),
                server_id: info.server_id.clone(),
                server_name: info.server_name.clone(),
                server_version: info.version.clone(),
                tls,
            },
        }
    }

    /// The "Account Information", "Connection Information" and, when the server sent
    /// them, "Connection Permissions" sections.
    pub(super) fn render(&self) -> String {
        let mut who = Fields::new();
        let user = self.user.as_ref();
        let text = |v: Option<&Value>, field: &str| {
            v.and_then(|v| v[field].as_str())
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
        };
        // In operator mode `user` and `account` are public keys, and the names come
        // beside them; without an operator the name is the ID.
        let named = |name: Option<String>, id: Option<String>| match (name, id) {
            (Some(name), Some(id)) if name != id => Some(format!("{name} ({id})")),
            (name, id) => name.or(id),
        };
        who.add_some(
            "User",
            named(text(user, "user_name"), text(user, "user")).as_deref(),
        );
        let account = named(text(user, "account_name"), text(user, "account"));
        who.add(
            "Account",
            account
                .or_else(|| self.account.clone())
                .as_deref()
                .unwrap_or("unknown"),
        );
        who.add(
            "System account",
            match self.system_account {
                Some(true) => "yes",
                Some(false) => "no",
                None => "unknown (the server does not say before 2.12)",
            },
        );
        if let Some(user) = user {
            let expires = user["expires"].as_u64().unwrap_or(0);
            who.add(
                "Expires",
                match expires {
                    0 => "never".to_owned(),
                    ns => duration(Duration::from_nanos(ns)),
                },
            );
        }
        who.add_some("User information", self.user_error.as_deref());
        let c = &self.connection;
        let mut link = Fields::new();
        link.add("Client ID", c.client_id);
        link.add("Client IP", &c.client_ip);
        link.add(
            "RTT",
            c.rtt_us
                .map_or("-".to_owned(), |us| human::latency_us(us as f64)),
        );
        link.add("Headers supported", yes_no(c.headers));
        link.add("Maximum payload", human::size(c.max_payload));
        link.add_some("Connected cluster", c.cluster.as_deref());
        link.add("Connected URL", c.url.as_deref().unwrap_or("-"));
        link.add("Connected server ID", &c.server_id);
        if c.server_name != c.server_id {
            link.add("Connected server name", &c.server_name);
        }
        link.add("Connected server version", &c.server_version);
        link.add("TLS connection", yes_no(c.tls));
        let mut text = format!(
            "Account Information\n\n{}\nConnection Information\n\n{}",
            who.render(),
            link.render()
        );
        if let Some(permissions) = user.map(|u| &u["permissions"]).filter(|p| p.is_object()) {
            text.push_str(&format!(
                "\nConnection Permissions\n\n{}",
                permissions_fields(permissions).render()
            ));
        }
        text
    }
}

/// Publish and subscribe allow and deny lists, each sorted.
fn permissions_fields(permissions: &Value) -> Fields {
    let mut fields = Fields::new();
    for (direction, key) in [("Publish", "publish"), ("Subscribe", "subscribe")] {
        for (rule, list) in [("allow", "allow"), ("deny", "deny")] {
            let mut subjects: Vec<&str> = permissions[key][list]
                .as_array()
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            if subjects.is_empty() {
                continue;
            }
            subjects.sort_unstable();
            fields.add(&format!("{direction} {rule}"), subjects.join(", "));
        }
    }
    fields
}

/// Asks `$SYS.REQ.USER.INFO`; its `data`, or why there is none.
async fn user_info(client: &Client, timeout: Duration) -> Result<Value, String> {
    let reply = tokio::time::timeout(timeout, client.request(USER_INFO, Bytes::new()))
        .await
        .map_err(|_| format!("no answer on {USER_INFO} within {timeout:?}"))?
        .map_err(|e| format!("{USER_INFO} failed: {e}"))?;
    let answer: Value = serde_json::from_slice(&reply.payload)
        .map_err(|e| format!("{USER_INFO} answered with bad JSON: {e}"))?;
    if let Some(error) = answer.get("error") {
        let description = error["description"].as_str().unwrap_or("unknown error");
        return Err(format!("{USER_INFO} failed: {description}"));
    }
    match answer.get("data") {
        Some(data) if data.is_object() => Ok(data.clone()),
        _ => Err(format!("{USER_INFO} answered without data")),
    }
}

/// Whether a server `version` ("2.10.4", "2.11.0-RC.1") is 2.10 or later: the first that
/// answers `$SYS.REQ.USER.INFO`.
fn at_least_2_10(version: &str) -> bool {
    let mut parts = version.split(['.', '-']).map(|p| p.parse::<u64>().ok());
    match (parts.next().flatten(), parts.next().flatten()) {
        (Some(major), Some(minor)) => (major, minor) >= (2, 10),
        _ => false,
    }
}

fn yes_no(on: bool) -> &'static str {
    if on { "yes" } else { "no" }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn user_info_needs_a_2_10_server() {
        for (version, asks) in [
            ("2.10.0", true),
            ("2.15.1", true),
            ("3.0.0", true),
            ("2.9.25", false),
            ("2.11.0-RC.1", true),
            ("", false),
            ("junk", false),
        ] {
            assert_eq!(at_least_2_10(version), asks, "{version}");
        }
    }

    #[test]
    fn permissions_list_each_direction_and_rule_sorted() {
        let permissions = json!({
            "publish": { "allow": ["b", "a"] },
            "subscribe": { "allow": ["x"], "deny": ["y.>"] },
        });
        let text = permissions_fields(&permissions).render();
        assert_eq!(
            text,
            "    Publish allow: a, b\n  Subscribe allow: x\n   Subscribe deny: y.>\n"
        );
    }
}
