//! The user a callout lets in: [`UserClaims`], what the handler decides, and [`User`], the
//! `nats` section of the user JWT it becomes.

use std::time::{Duration, SystemTime};

use nkeys::KeyPairType;
use serde::{Deserialize, Serialize};

use super::error::CalloutError;
use super::jwt::{ClaimType, Claims, unix_seconds};
use super::times::{TimeOfDay, TimeRange};

/// A limit that is not set: the user JWT's `-1`.
pub const NO_LIMIT: i64 = -1;

/// The longest a user JWT is written to last: 100 years. The server counts the time left in
/// nanoseconds in an `i64`, which overflows past 292 years and makes it close the connection
/// at once.
pub const MAX_LIFETIME: Duration = Duration::from_secs(100 * 365 * 24 * 3600);

/// What an authorization handler grants a client: the account it is bound to, its
/// permissions, limits and lifetime. The callout signs it into a user JWT whose subject is
/// the request's `user_nkey`.
///
/// ```
/// use std::time::Duration;
/// use rnats_service::auth_callout::UserClaims;
///
/// let claims = UserClaims::new()
///     .account("APP")
///     .allow_publish("orders.>")
///     .allow_subscribe("_INBOX.>")
///     .allow_responses(1, Duration::from_secs(5))
///     .max_payload(64 * 1024)
///     .expires_after(Duration::from_secs(3600));
/// # let _ = claims;
/// ```
#[non_exhaustive]
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UserClaims {
    /// The user's name (the JWT's `name`); the server shows it as the connection's user.
    pub name: Option<String>,
    /// The account the client is bound to. A server configured with accounts in its file
    /// places the user in the account of this name (the JWT's `aud`), and refuses the client
    /// when there is none. In operator mode the server places the user in the account that
    /// issued the user JWT, so name the account by its public key (`A...`): the callout signs
    /// with the key it holds for that account, the issuer's own or one given with
    /// [`AuthCalloutBuilder::account_signer`](super::AuthCalloutBuilder::account_signer), and
    /// refuses the client ([`CalloutError::NoAccountSigner`]) when it holds none. Left unset
    /// (or empty), the callout writes its default account: the global account `$G` unless
    /// [`AuthCalloutBuilder::default_account`](super::AuthCalloutBuilder::default_account)
    /// names another; in operator mode, a name is ignored and the user joins the issuer's
    /// account.
    pub account: Option<String>,
    /// When the user's connection ends: the server closes it then. Capped at
    /// [`MAX_LIFETIME`] after signing, past which the server's arithmetic overflows.
    pub expires: Option<Expiry>,
    /// Permissions, limits and the rest of the JWT's `nats` section.
    pub user: User,
}

/// When a user JWT expires.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expiry {
    /// At this time (an OAuth token's own expiry, say).
    At(SystemTime),
    /// This long after the callout signs it.
    After(Duration),
}

impl UserClaims {
    /// A user with no name, bound to the callout's default account (`$G` unless set), with the
    /// account's default permissions, no limits and no expiry.
    pub fn new() -> UserClaims {
        UserClaims::default()
    }

    /// Sets the user's name.
    pub fn name(mut self, name: impl Into<String>) -> UserClaims {
        self.name = Some(name.into());
        self
    }

    /// Binds the user to the account of this name, or in operator mode of this public key
    /// (see [`account`](Self::account)).
    pub fn account(mut self, account: impl Into<String>) -> UserClaims {
        self.account = Some(account.into());
        self
    }

    /// Ends the user's connection at `time` (at most [`MAX_LIFETIME`] after signing). A time
    /// not after the Unix epoch cannot be written (`exp` 0 means "never"): the request is
    /// then not answered, and reported as [`CalloutError::ExpiryBeforeEpoch`].
    pub fn expires_at(mut self, time: SystemTime) -> UserClaims {
        self.expires = Some(Expiry::At(time));
        self
    }

    /// Ends the user's connection `lifetime` after the callout signs the JWT (at most
    /// [`MAX_LIFETIME`]).
    pub fn expires_after(mut self, lifetime: Duration) -> UserClaims {
        self.expires = Some(Expiry::After(lifetime));
        self
    }

    /// Lets the user publish to `subject` (wildcards allowed).
    pub fn allow_publish(mut self, subject: impl Into<String>) -> UserClaims {
        self.user.publish.allow.push(subject.into());
        self
    }

    /// Forbids the user to publish to `subject`, even where an allow matches.
    pub fn deny_publish(mut self, subject: impl Into<String>) -> UserClaims {
        self.user.publish.deny.push(subject.into());
        self
    }

    /// Lets the user subscribe to `subject` (wildcards, and `subject queue` for one queue
    /// group, allowed).
    pub fn allow_subscribe(mut self, subject: impl Into<String>) -> UserClaims {
        self.user.subscribe.allow.push(subject.into());
        self
    }

    /// Forbids the user to subscribe to `subject`, even where an allow matches.
    pub fn deny_subscribe(mut self, subject: impl Into<String>) -> UserClaims {
        self.user.subscribe.deny.push(subject.into());
        self
    }

    /// Lets the user answer the requests it receives, `max` replies to each within `ttl`,
    /// whatever its publish permissions.
    pub fn allow_responses(mut self, max: i64, ttl: Duration) -> UserClaims {
        self.user.responses = Some(ResponsePermission { max, ttl });
        self
    }

    /// Caps the user's subscriptions.
    pub fn max_subscriptions(mut self, max: i64) -> UserClaims {
        self.user.subs = max;
        self
    }

    /// Caps the user's message payload, in bytes.
    pub fn max_payload(mut self, max: i64) -> UserClaims {
        self.user.payload = max;
        self
    }

    /// Caps the bytes the user may send.
    pub fn max_data(mut self, max: i64) -> UserClaims {
        self.user.data = max;
        self
    }

    /// Lets the user connect only from this network (a CIDR such as `10.0.0.0/8`).
    pub fn allow_source_network(mut self, cidr: impl Into<String>) -> UserClaims {
        self.user.source_networks.push(cidr.into());
        self
    }

    /// Lets the user connect only over this kind of connection (`STANDARD`, `WEBSOCKET`,
    /// `LEAFNODE`, `MQTT`, ...).
    pub fn allow_connection_type(mut self, kind: impl Into<String>) -> UserClaims {
        self.user.allowed_connection_types.push(kind.into());
        self
    }

    /// Lets the user connect only between `start` and `end` each day (the JWT's `times`),
    /// in the [`times_location`](Self::times_location) time zone; an `end` before the `start`
    /// spans midnight. With several windows, any of them will do. The server refuses the
    /// client outside them, and closes the connection when its window ends. A window whose
    /// `end` equals its `start` is empty: the server never lets the user in through it.
    ///
    /// ```
    /// use rnats_service::auth_callout::{TimeOfDay, UserClaims};
    ///
    /// let office_hours = UserClaims::new()
    ///     .allow_connect_between("08:00:00".parse()?, "18:00:00".parse()?)
    ///     .times_location("Europe/Berlin");
    /// # let _ = office_hours;
    /// # Ok::<(), rnats_service::auth_callout::TimeOfDayError>(())
    /// ```
    pub fn allow_connect_between(mut self, start: TimeOfDay, end: TimeOfDay) -> UserClaims {
        self.user.times.push(TimeRange::new(start, end));
        self
    }

    /// The time zone of the connect-time windows (the JWT's `times_location`): an IANA name
    /// such as `Europe/Berlin`, or `UTC`. Unset, the server reads the windows in its own
    /// local time zone. The server refuses a client whose JWT names a zone it does not know.
    pub fn times_location(mut self, zone: impl Into<String>) -> UserClaims {
        self.user.times_location = Some(zone.into());
        self
    }

    /// Lets the user in only through a trusted proxy (the JWT's `proxy_required`): a server
    /// with `proxies { trusted: [...] }` refuses the client when it connects directly.
    pub fn require_proxy(mut self) -> UserClaims {
        self.user.proxy_required = true;
        self
    }

    /// Adds a tag.
    pub fn tag(mut self, tag: impl Into<String>) -> UserClaims {
        self.user.tags.push(tag.into());
        self
    }

    /// The user JWT's claims for `user_nkey`, signed at `now`, in `default_account` when no
    /// account is named.
    pub(crate) fn into_claims(
        self,
        user_nkey: &str,
        now: SystemTime,
        default_account: &str,
    ) -> Result<Claims<User>, CalloutError> {
        let mut claims = Claims::new(user_nkey, now, self.user);
        claims.name = self.name;
        claims.audience = Some(
            self.account
                .filter(|account| !account.is_empty())
                .unwrap_or_else(|| default_account.to_owned()),
        );
        claims.expires = self
            .expires
            .map(|expiry| expiry.unix_seconds(now))
            .transpose()?;
        Ok(claims)
    }
}

impl Expiry {
    /// The JWT's `exp` for this expiry, signed at `now`: at most [`MAX_LIFETIME`] from `now`,
    /// and never 0 (which would mean "never").
    fn unix_seconds(self, now: SystemTime) -> Result<i64, CalloutError> {
        let latest = now.checked_add(MAX_LIFETIME).map_or(i64::MAX, unix_seconds);
        match self {
            Expiry::At(time) if unix_seconds(time) < 1 => {
                Err(CalloutError::ExpiryBeforeEpoch(time))
            }
            Expiry::At(time) => Ok(unix_seconds(time).min(latest)),
            Expiry::After(lifetime) => Ok(now
                .checked_add(lifetime.min(MAX_LIFETIME))
                .map_or(latest, unix_seconds)
                .max(1)),
        }
    }
}

/// The `nats` section of a user JWT: permissions, limits and connection rules.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct User {
    /// What the user may publish to.
    #[serde(rename = "pub", default, skip_serializing_if = "Permission::is_empty")]
    pub publish: Permission,
    /// What the user may subscribe to.
    #[serde(rename = "sub", default, skip_serializing_if = "Permission::is_empty")]
    pub subscribe: Permission,
    /// Whether, and how much, the user may answer the requests it receives.
    #[serde(rename = "resp", default, skip_serializing_if = "Option::is_none")]
    pub responses: Option<ResponsePermission>,
    /// The most subscriptions ([`NO_LIMIT`] for any number).
    #[serde(default = "no_limit")]
    pub subs: i64,
    /// The most bytes the user may send ([`NO_LIMIT`] for any number).
    #[serde(default = "no_limit")]
    pub data: i64,
    /// The largest payload ([`NO_LIMIT`] for the server's own limit).
    #[serde(default = "no_limit")]
    pub payload: i64,
    /// The networks (CIDRs) the user may connect from; empty for any.
    #[serde(rename = "src", default, skip_serializing_if = "Vec::is_empty")]
    pub source_networks: Vec<String>,
    /// The windows of the day in which the user may connect; empty for any time.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub times: Vec<TimeRange>,
    /// The time zone of [`times`](Self::times) (an IANA name); unset, the server's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub times_location: Option<String>,
    /// Whether the JWT alone is enough, without signing the server's nonce.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub bearer_token: bool,
    /// Whether the user must connect through a trusted proxy (nats-server 2.12+).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub proxy_required: bool,
    /// The kinds of connection the user may use; empty for any.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allowed_connection_types: Vec<String>,
    /// The account the issuer signs for, when the issuer is one of its signing keys
    /// (operator mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issuer_account: Option<String>,
    /// Tags.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
}

impl Default for User {
    fn default() -> User {
        User {
            publish: Permission::default(),
            subscribe: Permission::default(),
            responses: None,
            subs: NO_LIMIT,
            data: NO_LIMIT,
            payload: NO_LIMIT,
            source_networks: Vec::new(),
            times: Vec::new(),
            times_location: None,
            bearer_token: false,
            proxy_required: false,
            allowed_connection_types: Vec::new(),
            issuer_account: None,
            tags: Vec::new(),
        }
    }
}

impl ClaimType for User {
    const TYPE: &'static str = "user";
    const ISSUER: KeyPairType = KeyPairType::Account;
}

/// Subjects allowed and denied for publishing or subscribing. Empty on both sides means the
/// account's default permissions apply.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Permission {
    /// The subjects allowed (none listed: all but the denied).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allow: Vec<String>,
    /// The subjects denied, even where an allow matches.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deny: Vec<String>,
}

impl Permission {
    /// Whether nothing is allowed or denied explicitly.
    pub fn is_empty(&self) -> bool {
        self.allow.is_empty() && self.deny.is_empty()
    }
}

/// Leave to answer the requests received: up to `max` replies each, within `ttl`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResponsePermission {
    /// Replies allowed per request.
    pub max: i64,
    /// How long after the request a reply is allowed (nanoseconds on the wire).
    #[serde(with = "nanos")]
    pub ttl: Duration,
}

fn no_limit() -> i64 {
    NO_LIMIT
}

/// A `Duration` as Go's `time.Duration`: whole nanoseconds.
mod nanos {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_i64(i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        let nanos = i64::deserialize(d)?;
        Ok(Duration::from_nanos(u64::try_from(nanos).unwrap_or(0)))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::time::UNIX_EPOCH;

    use nkeys::KeyPair;

    use super::*;
    use crate::auth_callout::JwtError;

    fn now() -> SystemTime {
        UNIX_EPOCH + Duration::from_millis(1_700_000_000_500)
    }

    fn exp(user: UserClaims) -> Result<Option<i64>, CalloutError> {
        user.into_claims("U", now(), "$G")
            .map(|claims| claims.expires)
    }

    #[test]
    fn expiry_is_capped_at_the_max_lifetime() {
        let latest = 1_700_000_000 + i64::try_from(MAX_LIFETIME.as_secs()).unwrap();
        // `Duration::MAX` would be `i64::MAX` seconds, which the server overflows on.
        assert_eq!(
            exp(UserClaims::new().expires_after(Duration::MAX)).unwrap(),
            Some(latest)
        );
        assert_eq!(
            exp(UserClaims::new().expires_at(now() + MAX_LIFETIME * 2)).unwrap(),
            Some(latest)
        );
        assert_eq!(
            exp(UserClaims::new().expires_after(MAX_LIFETIME)).unwrap(),
            Some(latest)
        );
        // Below the cap, as asked (the half second of `now` counts).
        assert_eq!(
            exp(UserClaims::new().expires_after(Duration::from_millis(1500))).unwrap(),
            Some(1_700_000_002)
        );
        assert_eq!(exp(UserClaims::new()).unwrap(), None);
    }

    #[test]
    fn an_expiry_not_after_the_epoch_is_refused() {
        // `exp` 0 means "never expires": a time in the epoch's first second or before it
        // cannot be written.
        let before = UNIX_EPOCH - Duration::from_secs(3600);
        for time in [before, UNIX_EPOCH, UNIX_EPOCH + Duration::from_millis(999)] {
            assert!(
                matches!(
                    exp(UserClaims::new().expires_at(time)),
                    Err(CalloutError::ExpiryBeforeEpoch(t)) if t == time
                ),
                "{time:?}"
            );
        }
        // One second after the epoch is long past: written as is, the server refuses it.
        assert_eq!(
            exp(UserClaims::new().expires_at(UNIX_EPOCH + Duration::from_secs(1))).unwrap(),
            Some(1)
        );
    }

    #[test]
    fn connect_windows_are_written_as_the_server_reads_them() {
        let claims = UserClaims::new()
            .allow_connect_between("8:00:00".parse().unwrap(), "18:30:00".parse().unwrap())
            .allow_connect_between(TimeOfDay::new(22, 0, 0).unwrap(), TimeOfDay::MIDNIGHT)
            .times_location("Europe/Berlin")
            .into_claims("U", now(), "$G")
            .unwrap();
        let json = serde_json::to_value(&claims.nats).unwrap();
        // nats-io/jwt's `UserLimits`: `times` a list of {start, end} in Go's `15:04:05`,
        // `times_location` an IANA zone name.
        assert_eq!(
            json["times"],
            serde_json::json!([
                {"start": "08:00:00", "end": "18:30:00"},
                {"start": "22:00:00", "end": "00:00:00"},
            ])
        );
        assert_eq!(json["times_location"], "Europe/Berlin");
        // Left out when unset, as Go's `omitempty` does.
        let json = serde_json::to_value(User::default()).unwrap();
        assert!(json.get("times").is_none() && json.get("times_location").is_none());
    }

    #[test]
    fn a_user_jwt_with_issuer_account_and_times_decodes() {
        let (account, signing_key) = (KeyPair::new_account(), KeyPair::new_account());
        let user = KeyPair::new_user().public_key();
        // The shape nats-io/jwt writes for a user a signing key issued, with connect times.
        let payload = serde_json::json!({
            "jti": "", "iat": 1_700_000_000, "iss": signing_key.public_key(), "sub": user,
            "nats": {
                "pub": {}, "sub": {}, "subs": -1, "data": -1, "payload": -1,
                "times": [{"start": "09:00:00", "end": "17:00:00"}],
                "times_location": "America/New_York",
                "issuer_account": account.public_key(),
                "type": "user", "version": 2,
            },
        });
        let token = sign(&payload, &signing_key);
        let claims = Claims::<User>::decode(&token).unwrap();
        assert_eq!(claims.issuer, signing_key.public_key());
        assert_eq!(claims.nats.issuer_account, Some(account.public_key()));
        assert_eq!(
            claims.nats.times,
            vec![TimeRange::new(
                TimeOfDay::new(9, 0, 0).unwrap(),
                TimeOfDay::new(17, 0, 0).unwrap()
            )]
        );
        assert_eq!(
            claims.nats.times_location.as_deref(),
            Some("America/New_York")
        );
        // A window that is not a time of day is a decode error, not a panic.
        let mut bad = payload;
        bad["nats"]["times"][0]["end"] = "17h".into();
        assert!(matches!(
            Claims::<User>::decode(&sign(&bad, &signing_key)),
            Err(JwtError::Json(_))
        ));
    }

    /// `payload` as a JWT signed by `key`.
    fn sign(payload: &serde_json::Value, key: &KeyPair) -> String {
        use data_encoding::BASE64URL_NOPAD;
        let header = BASE64URL_NOPAD.encode(br#"{"typ":"JWT","alg":"ed25519-nkey"}"#);
        let body = BASE64URL_NOPAD.encode(&serde_json::to_vec(payload).unwrap());
        let signed = format!("{header}.{body}");
        let signature = BASE64URL_NOPAD.encode(&key.sign(signed.as_bytes()).unwrap());
        format!("{signed}.{signature}")
    }
}
