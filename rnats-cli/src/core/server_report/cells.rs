//! The cells the link reports share: text and numbers read leniently from a server's JSON
//! (see [`crate::core::server_json`]), long account names shortened, repeated values left
//! blank, uptimes and round trip times.

use serde_json::Value;

pub(super) use crate::core::server_json::{number, text};
use crate::jetstream::duration;
use crate::stats::human;

/// An account name that fits a column: one longer than 23 characters (an account's public
/// key is 56) as its first and last ten, as natscli shortens it.
pub(super) fn account(name: &str) -> String {
    let chars: Vec<char> = name.chars().collect();
    if chars.len() <= 23 {
        return name.to_owned();
    }
    let head: String = chars[..10].iter().collect();
    let tail: String = chars[chars.len() - 10..].iter().collect();
    format!("{head}...{tail}")
}

/// `ip:port` of a connection entry.
pub(super) fn address(entry: &Value) -> String {
    format!("{}:{}", text(&entry["ip"]), number(&entry["port"]))
}

/// An uptime as the server writes it (a Go duration with days and years, `"1d2h3m4s"`),
/// written as the reports write a duration, as natscli rewrites it; text that is no
/// duration is shown as it came.
pub(super) fn uptime(value: &Value) -> String {
    let text = value.as_str().unwrap_or_default();
    match crate::parse::duration(text) {
        Ok(d) => duration(d),
        Err(_) => text.to_owned(),
    }
}

/// A round trip time as the server writes it (a Go duration, `"1.127119ms"`), to three
/// or so digits (`1.13 ms`); text that is no duration is shown as it came, none as `-`.
pub(super) fn rtt(value: &Value) -> String {
    let text = value.as_str().unwrap_or_default();
    if text.is_empty() {
        return "-".to_owned();
    }
    match crate::parse::duration(text) {
        Ok(d) => human::latency_us(d.as_secs_f64() * 1e6),
        Err(_) => text.to_owned(),
    }
}

/// A column whose value is left blank where it repeats the row above, as natscli groups
/// rows by server.
#[derive(Debug, Default)]
pub(super) struct Grouped {
    last: Option<String>,
}

impl Grouped {
    /// `value`, or an empty cell when the row above showed the same.
    pub(super) fn cell(&mut self, value: &str) -> String {
        if self.last.as_deref() == Some(value) {
            return String::new();
        }
        self.last = Some(value.to_owned());
        value.to_owned()
    }

    /// Forgets the row above: the next value is shown whatever it is.
    pub(super) fn reset(&mut self) {
        self.last = None;
    }
}
