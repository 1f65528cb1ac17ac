//! The callout's two protocol steps, free of I/O and of the clock: [`Responder::open`] reads
//! a request as it arrived (sealed or not) and checks it, [`Responder::answer`] turns the
//! handler's verdict into the bytes to reply with. [`AuthCallout`](super::AuthCallout) drives
//! them over a subscription; a program with its own loop (a Service API endpoint, say) can
//! drive them itself.

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use nkeys::XKey;
use nkeys::{KeyPair, KeyPairType};

use super::error::{CalloutError, KeyError};
use super::jwt::Claims;
use super::{
    AuthorizationRequest, AuthorizationResponse, GLOBAL_ACCOUNT, REQUEST_AUDIENCE, User, UserClaims,
};

/// The reason sent when a handler refuses a client without giving one: the server takes an
/// empty error for no answer at all.
const DEFAULT_DENIAL: &str = "not authorized";

/// How far the callout's clock may be ahead of the server's by default. The server gives a
/// request its auth timeout (2 s unless configured) in whole seconds, so a callout host a
/// second or two ahead would otherwise find every request expired. Replay is no concern: the
/// answer is bound to the connection's one-time `user_nkey`.
pub const DEFAULT_CLOCK_SKEW: Duration = Duration::from_secs(10);

/// The keys a callout answers with: the account key that signs user JWTs and responses, the
/// keys of other accounts it places users in (operator mode), and the xkey that opens sealed
/// requests; and two settings: the clock skew allowed for a request's expiry, and the account
/// a user is placed in when the handler names none.
#[derive(Debug, Clone)]
pub struct Responder {
    issuer: KeyPair,
    issuer_account: Option<String>,
    /// Account public key to the key that signs its users: the account's own, or one of its
    /// signing keys.
    account_signers: BTreeMap<String, KeyPair>,
    xkey: Option<XKey>,
    clock_skew: Duration,
    default_account: String,
}

/// A request that opened and passed the checks; [`Responder::answer`] replies to it.
#[derive(Debug, Clone)]
pub struct OpenedRequest {
    claims: Claims<AuthorizationRequest>,
    /// The server's xkey, when the request came sealed: the answer is sealed to it too.
    server_xkey: Option<XKey>,
}

impl Responder {
    /// Signs with `issuer`, an account key pair with its seed: in a server configured with
    /// accounts, the key whose public half is the `auth_callout` block's `issuer`; in operator
    /// mode, the account's key or one of its signing keys (see
    /// [`with_issuer_account`](Self::with_issuer_account)).
    pub fn new(issuer: KeyPair) -> Result<Responder, KeyError> {
        if issuer.key_pair_type() != KeyPairType::Account {
            return Err(KeyError::IssuerNotAccount(issuer.key_pair_type()));
        }
        if issuer.seed().is_err() {
            return Err(KeyError::IssuerWithoutSeed);
        }
        Ok(Responder {
            issuer,
            issuer_account: None,
            account_signers: BTreeMap::new(),
            xkey: None,
            clock_skew: DEFAULT_CLOCK_SKEW,
            default_account: GLOBAL_ACCOUNT.to_owned(),
        })
    }

    /// Opens sealed requests with `xkey`, the curve key pair whose public half is the
    /// `auth_callout` block's `xkey`. With one set, requests in clear are refused.
    pub fn with_xkey(mut self, xkey: XKey) -> Result<Responder, KeyError> {
        if xkey.seed().is_err() {
            return Err(KeyError::XkeyWithoutSeed);
        }
        self.xkey = Some(xkey);
        Ok(self)
    }

    /// Names the account the issuer signs for, when the issuer is one of its signing keys
    /// (operator mode): written as `issuer_account` in user JWTs and responses.
    pub fn with_issuer_account(
        mut self,
        account: impl Into<String>,
    ) -> Result<Responder, KeyError> {
        let account = account.into();
        if !is_public_key(&account, KeyPairType::Account) {
            return Err(KeyError::IssuerAccount(account));
        }
        self.issuer_account = Some(account);
        Ok(self)
    }

    /// Signs the users placed in `account` (an account public key) with `signer`: the
    /// account's own key pair, or one of its signing keys, with its seed. In operator mode the
    /// server places a user in the account that issued its JWT, so this is how a callout lets
    /// users into accounts other than its own; the callout's account must list `account` in
    /// its `authorization.allowed_accounts`. A signing key is written as the user JWT's
    /// issuer, with `issuer_account` naming the account; the response is still signed by the
    /// callout's issuer. A second signer for the same account replaces the first.
    pub fn with_account_signer(
        mut self,
        account: impl Into<String>,
        signer: KeyPair,
    ) -> Result<Responder, KeyError> {
        let account = account.into();
        if !is_public_key(&account, KeyPairType::Account) {
            return Err(KeyError::SignerAccount(account));
        }
        if signer.key_pair_type() != KeyPairType::Account {
            return Err(KeyError::SignerNotAccount {
                account,
                kind: signer.key_pair_type(),
            });
        }
        if signer.seed().is_err() {
            return Err(KeyError::SignerWithoutSeed(account));
        }
        self.account_signers.insert(account, signer);
        Ok(self)
    }

    /// Allows this much clock difference with the server (default [`DEFAULT_CLOCK_SKEW`]):
    /// a request is taken as expired only `skew` after its `exp`, and
    /// [`deadline`](Self::deadline) is as much later.
    pub fn with_clock_skew(mut self, skew: Duration) -> Responder {
        self.clock_skew = skew;
        self
    }

    /// The account written as the user JWT's `aud` when the handler names none (default
    /// `$G`, the global account, which a server configured with accounts always has). Such a
    /// server places the user in the account of that name; in operator mode a name is
    /// ignored, and an account public key places the user as
    /// [`UserClaims::account`](super::UserClaims::account) does.
    pub fn with_default_account(mut self, account: impl Into<String>) -> Responder {
        self.default_account = account.into();
        self
    }

    /// The issuer's public key.
    pub fn issuer(&self) -> String {
        self.issuer.public_key()
    }

    /// When an answer to `request` is no longer worth sending: its `exp` plus the clock skew
    /// allowed for. A request without `exp` (nats-server always sets one) gets the skew from
    /// `now`.
    pub fn deadline(&self, request: &OpenedRequest, now: SystemTime) -> SystemTime {
        let expires = request
            .claims
            .expires
            .and_then(|exp| u64::try_from(exp).ok())
            .map_or(now, |exp| UNIX_EPOCH + Duration::from_secs(exp));
        expires.checked_add(self.clock_skew).unwrap_or(expires)
    }

    /// Reads a request's payload: opens it with the server's xkey from the
    /// `Nats-Server-Xkey` header when it is sealed, verifies the server's signature, and
    /// checks that it is an authorization request (ADR-26) issued by the server it names, for
    /// the audience `nats-authorization-request`, not expired at `now` (allowing for the
    /// [clock skew](Self::with_clock_skew)), for a user nkey.
    pub fn open(
        &self,
        payload: &[u8],
        server_xkey: Option<&str>,
        now: SystemTime,
    ) -> Result<OpenedRequest, CalloutError> {
        // A JWT starts with the base64 of `{"`; anything else is sealed (`xkv1...`), the test
        // the server applies to responses.
        let sealed = !payload.starts_with(b"eyJ");
        let (token, server_xkey) = match (sealed, &self.xkey) {
            (false, None) => (payload.to_vec(), None),
            (false, Some(_)) => return Err(CalloutError::NotEncrypted),
            (true, None) => return Err(CalloutError::Encrypted),
            (true, Some(xkey)) => {
                let server = server_xkey
                    .and_then(|key| XKey::from_public_key(key).ok())
                    .ok_or(CalloutError::NoServerXkey)?;
                let opened = xkey.open(payload, &server).map_err(CalloutError::Decrypt)?;
                (opened, Some(server))
            }
        };
        // Bytes that are not UTF-8 are not base64 either: decoding refuses them.
        let claims = Claims::<AuthorizationRequest>::decode(&String::from_utf8_lossy(&token))
            .map_err(CalloutError::Request)?;
        let request = &claims.nats;
        if claims.issuer != request.server.id {
            return Err(CalloutError::NotFromServer {
                issuer: claims.issuer.clone(),
                server: request.server.id.clone(),
            });
        }
        if claims.audience.as_deref() != Some(REQUEST_AUDIENCE) {
            return Err(CalloutError::Audience(claims.audience.clone()));
        }
        if let Some(server) = &server_xkey {
            let header = server.public_key();
            if request.server.xkey.as_deref() != Some(header.as_str()) {
                return Err(CalloutError::XkeyMismatch {
                    signed: request.server.xkey.clone(),
                    header,
                });
            }
        }
        // Seen from a clock `skew` behind ours, as the server's may be.
        let server_now = now.checked_sub(self.clock_skew).unwrap_or(UNIX_EPOCH);
        if claims.is_expired(server_now) {
            return Err(CalloutError::Expired);
        }
        if !is_public_key(&request.user_nkey, KeyPairType::User) {
            return Err(CalloutError::UserNkey(request.user_nkey.clone()));
        }
        Ok(OpenedRequest {
            claims,
            server_xkey,
        })
    }

    /// The reply to `request`: with `Ok(user)`, a user JWT for the request's `user_nkey`
    /// (in the [default account](Self::with_default_account) when `user` names none), inside
    /// a response for the server signed by the issuer; with `Err(reason)`, a signed refusal.
    /// The user JWT is signed by the issuer, unless `user` names another account by its
    /// public key: then by that account's [signer](Self::with_account_signer), and without
    /// one it is [`CalloutError::NoAccountSigner`] (answer `Err(error.to_string())` to refuse
    /// the client at once). Sealed for the server when the request was; a sealed request is
    /// not answered in clear by a responder without an xkey ([`CalloutError::Encrypted`]).
    pub fn answer(
        &self,
        request: &OpenedRequest,
        verdict: Result<UserClaims, String>,
        now: SystemTime,
    ) -> Result<Bytes, CalloutError> {
        let user_nkey = &request.claims.nats.user_nkey;
        let mut response = match verdict {
            Ok(user) => {
                let mut claims = user.into_claims(user_nkey, now, &self.default_account)?;
                let signer = self.user_signer(&mut claims)?;
                let jwt = claims.encode(signer).map_err(CalloutError::Sign)?;
                AuthorizationResponse::allow(jwt)
            }
            Err(reason) if reason.is_empty() => AuthorizationResponse::deny(DEFAULT_DENIAL),
            Err(reason) => AuthorizationResponse::deny(reason),
        };
        response.issuer_account.clone_from(&self.issuer_account);
        let mut claims = Claims::new(user_nkey.as_str(), now, response);
        claims.audience = Some(request.claims.nats.server.id.clone());
        let token = claims.encode(&self.issuer).map_err(CalloutError::Sign)?;
        match (&request.server_xkey, &self.xkey) {
            (Some(server), Some(xkey)) => xkey
                .seal(token.as_bytes(), server)
                .map(Bytes::from)
                .map_err(CalloutError::Seal),
            // Opened by another responder: the answer would carry the user JWT in clear.
            (Some(_), None) => Err(CalloutError::Encrypted),
            (None, _) => Ok(Bytes::from(token)),
        }
    }

    /// The key that signs `claims`, by the account they place the user in (their `aud`),
    /// with `issuer_account` set to match. The issuer signs users of its own account and of
    /// accounts named by name (a server configured with accounts places them by `aud`); an
    /// account named by its public key needs a key of that account, as the server checks in
    /// operator mode.
    fn user_signer(&self, claims: &mut Claims<User>) -> Result<&KeyPair, CalloutError> {
        // `issuer_account` always follows the key that signs: one a handler set by hand
        // would claim an account for a key that is not that account's.
        let issuers_own = |claims: &mut Claims<User>| {
            claims.nats.issuer_account.clone_from(&self.issuer_account);
            Ok(&self.issuer)
        };
        let Some(account) = claims
            .audience
            .clone()
            .filter(|account| is_public_key(account, KeyPairType::Account))
        else {
            return issuers_own(claims);
        };
        let home = self.issuer_account.clone().unwrap_or_else(|| self.issuer());
        if account == home {
            return issuers_own(claims);
        }
        let signer = self
            .account_signers
            .get(&account)
            .ok_or_else(|| CalloutError::NoAccountSigner(account.clone()))?;
        // The server takes `issuer_account` as the account a signing key signs for.
        claims.nats.issuer_account = (signer.public_key() != account).then_some(account);
        Ok(signer)
    }
}

impl OpenedRequest {
    /// The request's `nats` section: the server, the client, its CONNECT options.
    pub fn request(&self) -> &AuthorizationRequest {
        &self.claims.nats
    }

    /// The whole request claims (issuer, expiry, ...).
    pub fn claims(&self) -> &Claims<AuthorizationRequest> {
        &self.claims
    }

    /// Whether the request came sealed (and the answer will be).
    pub fn is_sealed(&self) -> bool {
        self.server_xkey.is_some()
    }
}

/// Whether `key` is a public nkey of this kind.
fn is_public_key(key: &str, kind: KeyPairType) -> bool {
    KeyPair::from_public_key(key).is_ok_and(|key| key.key_pair_type() == kind)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::time::{Duration, UNIX_EPOCH};

    use super::*;
    use crate::auth_callout::jwt::unix_seconds;
    use crate::auth_callout::{ConnectOpts, ServerId, User};

    /// The server's side of the exchange, as nats-server plays it.
    struct FakeServer {
        key: KeyPair,
        xkey: XKey,
        user_nkey: String,
    }

    impl FakeServer {
        fn new() -> FakeServer {
            FakeServer {
                key: KeyPair::new_server(),
                xkey: XKey::new(),
                user_nkey: KeyPair::new_user().public_key(),
            }
        }

        /// The request claims for a client that sent `user`/`pass`, issued at `now`.
        fn claims(&self, now: SystemTime, sealed: bool) -> Claims<AuthorizationRequest> {
            let request = AuthorizationRequest {
                server: ServerId {
                    name: "A".into(),
                    host: "127.0.0.1".into(),
                    id: self.key.public_key(),
                    xkey: sealed.then(|| self.xkey.public_key()),
                    ..ServerId::default()
                },
                user_nkey: self.user_nkey.clone(),
                connect_opts: ConnectOpts {
                    username: Some("alice".into()),
                    password: Some("secret".into()),
                    protocol: 1,
                    ..ConnectOpts::default()
                },
                ..AuthorizationRequest::default()
            };
            let mut claims = Claims::new("ACALLOUTISSUER", now, request);
            claims.audience = Some(REQUEST_AUDIENCE.into());
            claims.expires = Some(unix_seconds(now) + 2);
            claims
        }

        /// Signs `claims`, and seals them to `callout` when given.
        fn request(
            &self,
            mut claims: Claims<AuthorizationRequest>,
            callout: Option<&XKey>,
        ) -> Vec<u8> {
            let token = claims.encode(&self.key).unwrap();
            match callout {
                Some(callout) => self.xkey.seal(token.as_bytes(), callout).unwrap(),
                None => token.into_bytes(),
            }
        }

        /// A plain (unsealed) request signed now, opened by `responder`.
        fn opened_by(&self, responder: &Responder) -> OpenedRequest {
            responder
                .open(&self.request(self.claims(now(), false), None), None, now())
                .unwrap()
        }

        /// Reads a reply as the server does: opens it if sealed, checks subject, audience and
        /// issuer, and returns the response.
        fn read(
            &self,
            reply: &[u8],
            callout: Option<&XKey>,
            issuer: &str,
        ) -> AuthorizationResponse {
            let token = if reply.starts_with(b"eyJ") {
                reply.to_vec()
            } else {
                self.xkey.open(reply, callout.unwrap()).unwrap()
            };
            let claims =
                Claims::<AuthorizationResponse>::decode(std::str::from_utf8(&token).unwrap())
                    .unwrap();
            assert_eq!(claims.subject, self.user_nkey);
            assert_eq!(
                claims.audience.as_deref(),
                Some(self.key.public_key().as_str())
            );
            assert_eq!(claims.issuer, issuer);
            claims.nats
        }
    }

    fn now() -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(1_700_000_000)
    }

    #[test]
    fn answers_a_request_in_clear_with_a_user_jwt() {
        let server = FakeServer::new();
        let issuer = KeyPair::new_account();
        let responder = Responder::new(issuer.clone()).unwrap();
        let payload = server.request(server.claims(now(), false), None);
        let opened = responder.open(&payload, None, now()).unwrap();
        assert!(!opened.is_sealed());
        assert_eq!(
            opened.request().connect_opts.username.as_deref(),
            Some("alice")
        );
        assert_eq!(opened.request().server.name, "A");

        let user = UserClaims::new()
            .name("alice")
            .account("APP")
            .allow_publish("orders.>")
            .deny_publish("orders.secret")
            .allow_subscribe("_INBOX.>")
            .allow_responses(1, Duration::from_secs(2))
            .max_payload(1024)
            .expires_after(Duration::from_secs(60));
        let reply = responder.answer(&opened, Ok(user), now()).unwrap();
        let response = server.read(&reply, None, &issuer.public_key());
        assert_eq!(response.error, None);
        let user = Claims::<User>::decode(&response.jwt.unwrap()).unwrap();
        assert_eq!(user.subject, server.user_nkey);
        assert_eq!(user.issuer, issuer.public_key());
        assert_eq!(user.audience.as_deref(), Some("APP"));
        assert_eq!(user.name.as_deref(), Some("alice"));
        assert_eq!(user.expires, Some(unix_seconds(now()) + 60));
        assert_eq!(user.nats.publish.allow, ["orders.>"]);
        assert_eq!(user.nats.publish.deny, ["orders.secret"]);
        assert_eq!(user.nats.subscribe.allow, ["_INBOX.>"]);
        assert_eq!(user.nats.payload, 1024);
        assert_eq!(user.nats.subs, crate::auth_callout::NO_LIMIT);
        let responses = user.nats.responses.unwrap();
        assert_eq!((responses.max, responses.ttl), (1, Duration::from_secs(2)));
    }

    #[test]
    fn a_refusal_is_a_signed_error_response() {
        let server = FakeServer::new();
        let issuer = KeyPair::new_account();
        let responder = Responder::new(issuer.clone()).unwrap();
        let opened = server.opened_by(&responder);
        let reply = responder
            .answer(&opened, Err("wrong password".into()), now())
            .unwrap();
        let response = server.read(&reply, None, &issuer.public_key());
        assert_eq!(
            (response.jwt, response.error.as_deref()),
            (None, Some("wrong password"))
        );
        // An empty reason still refuses: the server takes an empty error for no answer.
        let reply = responder
            .answer(&opened, Err(String::new()), now())
            .unwrap();
        let response = server.read(&reply, None, &issuer.public_key());
        assert_eq!(response.error.as_deref(), Some(DEFAULT_DENIAL));
    }

    #[test]
    fn a_sealed_request_is_opened_and_answered_sealed() {
        let server = FakeServer::new();
        let issuer = KeyPair::new_account();
        let callout_xkey = XKey::new();
        let responder = Responder::new(issuer.clone())
            .unwrap()
            .with_xkey(callout_xkey.clone())
            .unwrap();
        let callout_public = XKey::from_public_key(&callout_xkey.public_key()).unwrap();
        let payload = server.request(server.claims(now(), true), Some(&callout_public));
        assert!(!payload.starts_with(b"eyJ"));
        let header = server.xkey.public_key();
        let opened = responder.open(&payload, Some(&header), now()).unwrap();
        assert!(opened.is_sealed());
        let reply = responder
            .answer(&opened, Ok(UserClaims::new()), now())
            .unwrap();
        assert!(reply.starts_with(b"xkv1"), "sealed for the server");
        let response = server.read(&reply, Some(&callout_public), &issuer.public_key());
        assert!(response.jwt.is_some());
    }

    #[test]
    fn requests_that_do_not_check_out_are_refused() {
        let server = FakeServer::new();
        let callout_xkey = XKey::new();
        let callout_public = XKey::from_public_key(&callout_xkey.public_key()).unwrap();
        let plain = Responder::new(KeyPair::new_account()).unwrap();
        let sealing = plain.clone().with_xkey(callout_xkey.clone()).unwrap();
        let header = server.xkey.public_key();
        let sealed = server.request(server.claims(now(), true), Some(&callout_public));
        let clear = server.request(server.claims(now(), false), None);

        assert!(matches!(
            plain.open(&sealed, Some(&header), now()),
            Err(CalloutError::Encrypted)
        ));
        assert!(matches!(
            sealing.open(&clear, None, now()),
            Err(CalloutError::NotEncrypted)
        ));
        assert!(matches!(
            sealing.open(&sealed, None, now()),
            Err(CalloutError::NoServerXkey)
        ));
        let stranger = XKey::new().public_key();
        assert!(matches!(
            sealing.open(&sealed, Some(&stranger), now()),
            Err(CalloutError::Decrypt(_))
        ));
        // Sealed by the server, but the signed request names another xkey.
        let mut claims = server.claims(now(), true);
        claims.nats.server.xkey = Some(stranger.clone());
        let mismatched = server.request(claims, Some(&callout_public));
        assert!(matches!(
            sealing.open(&mismatched, Some(&header), now()),
            Err(CalloutError::XkeyMismatch { .. })
        ));

        let mut claims = server.claims(now(), false);
        claims.audience = Some("somebody-else".into());
        assert!(matches!(
            plain.open(&server.request(claims, None), None, now()),
            Err(CalloutError::Audience(_))
        ));
        let mut claims = server.claims(now(), false);
        claims.nats.server.id = KeyPair::new_server().public_key();
        assert!(matches!(
            plain.open(&server.request(claims, None), None, now()),
            Err(CalloutError::NotFromServer { .. })
        ));
        let mut claims = server.claims(now(), false);
        claims.nats.user_nkey = KeyPair::new_account().public_key();
        assert!(matches!(
            plain.open(&server.request(claims, None), None, now()),
            Err(CalloutError::UserNkey(_))
        ));
        assert!(matches!(
            plain.open(b"eyJnot a jwt", None, now()),
            Err(CalloutError::Request(_))
        ));
    }

    #[test]
    fn expiry_allows_for_clock_skew() {
        // The request expires 2 s after `now()`, in whole seconds as the server writes it.
        let server = FakeServer::new();
        let payload = server.request(server.claims(now(), false), None);
        let exp = UNIX_EPOCH + Duration::from_secs(1_700_000_002);
        let skewed = Responder::new(KeyPair::new_account()).unwrap();
        let exact = skewed.clone().with_clock_skew(Duration::ZERO);
        let open = |responder: &Responder, at: SystemTime| responder.open(&payload, None, at);

        // Without allowance: valid through the second `exp` names, expired after it.
        assert!(open(&exact, exp + Duration::from_millis(999)).is_ok());
        assert!(matches!(
            open(&exact, exp + Duration::from_secs(1)),
            Err(CalloutError::Expired)
        ));
        // A callout clock up to 10 s ahead (the default) still reads it.
        assert!(open(&skewed, exp + DEFAULT_CLOCK_SKEW).is_ok());
        assert!(
            open(
                &skewed,
                exp + DEFAULT_CLOCK_SKEW + Duration::from_millis(999)
            )
            .is_ok()
        );
        assert!(matches!(
            open(&skewed, exp + DEFAULT_CLOCK_SKEW + Duration::from_secs(1)),
            Err(CalloutError::Expired)
        ));
        // And its handler has until then.
        let opened = open(&skewed, now()).unwrap();
        assert_eq!(skewed.deadline(&opened, now()), exp + DEFAULT_CLOCK_SKEW);
        assert_eq!(exact.deadline(&opened, now()), exp);
        let mut claims = server.claims(now(), false);
        claims.expires = None;
        let opened = skewed
            .open(&server.request(claims, None), None, now())
            .unwrap();
        assert_eq!(skewed.deadline(&opened, now()), now() + DEFAULT_CLOCK_SKEW);
    }

    #[test]
    fn a_user_without_an_account_is_placed_in_the_default_account() {
        let server = FakeServer::new();
        let issuer = KeyPair::new_account();
        let responder = Responder::new(issuer.clone()).unwrap();
        let opened = server.opened_by(&responder);
        let account_of = |responder: &Responder, user: UserClaims| {
            let reply = responder.answer(&opened, Ok(user), now()).unwrap();
            let response = server.read(&reply, None, &issuer.public_key());
            Claims::<User>::decode(&response.jwt.unwrap())
                .unwrap()
                .audience
        };
        assert_eq!(
            account_of(&responder, UserClaims::new()).as_deref(),
            Some("$G")
        );
        assert_eq!(
            account_of(&responder, UserClaims::new().account("")).as_deref(),
            Some("$G")
        );
        let app = responder.clone().with_default_account("APP");
        assert_eq!(account_of(&app, UserClaims::new()).as_deref(), Some("APP"));
        assert_eq!(
            account_of(&app, UserClaims::new().account("OTHER")).as_deref(),
            Some("OTHER")
        );
    }

    #[test]
    fn a_sealed_request_is_never_answered_in_clear() {
        let server = FakeServer::new();
        let callout_xkey = XKey::new();
        let callout_public = XKey::from_public_key(&callout_xkey.public_key()).unwrap();
        let plain = Responder::new(KeyPair::new_account()).unwrap();
        let sealing = plain.clone().with_xkey(callout_xkey).unwrap();
        let payload = server.request(server.claims(now(), true), Some(&callout_public));
        let opened = sealing
            .open(&payload, Some(&server.xkey.public_key()), now())
            .unwrap();
        // Answered by a responder that cannot seal: refused, not sent with the JWT in clear.
        assert!(matches!(
            plain.answer(&opened, Ok(UserClaims::new()), now()),
            Err(CalloutError::Encrypted)
        ));
        assert!(matches!(
            plain.answer(&opened, Err("no".into()), now()),
            Err(CalloutError::Encrypted)
        ));
    }

    #[test]
    fn an_expiry_at_the_epoch_is_refused() {
        let server = FakeServer::new();
        let responder = Responder::new(KeyPair::new_account()).unwrap();
        let opened = server.opened_by(&responder);
        let at_epoch = UserClaims::new().expires_at(UNIX_EPOCH);
        assert!(matches!(
            responder.answer(&opened, Ok(at_epoch), now()),
            Err(CalloutError::ExpiryBeforeEpoch(time)) if time == UNIX_EPOCH
        ));
    }

    #[test]
    fn keys_that_cannot_serve_are_refused() {
        assert!(matches!(
            Responder::new(KeyPair::new_user()),
            Err(KeyError::IssuerNotAccount(KeyPairType::User))
        ));
        let public = KeyPair::from_public_key(&KeyPair::new_account().public_key()).unwrap();
        assert_eq!(
            Responder::new(public).unwrap_err(),
            KeyError::IssuerWithoutSeed
        );
        let responder = Responder::new(KeyPair::new_account()).unwrap();
        let public_xkey = XKey::from_public_key(&XKey::new().public_key()).unwrap();
        assert_eq!(
            responder.clone().with_xkey(public_xkey).unwrap_err(),
            KeyError::XkeyWithoutSeed
        );
        assert!(matches!(
            responder.clone().with_issuer_account("APP"),
            Err(KeyError::IssuerAccount(_))
        ));
        let account = KeyPair::new_account().public_key();
        let responder = responder.with_issuer_account(account.clone()).unwrap();
        let server = FakeServer::new();
        let opened = server.opened_by(&responder);
        let reply = responder
            .answer(&opened, Ok(UserClaims::new()), now())
            .unwrap();
        let response = server.read(&reply, None, &responder.issuer());
        assert_eq!(response.issuer_account.as_deref(), Some(account.as_str()));
        let user = Claims::<User>::decode(&response.jwt.unwrap()).unwrap();
        assert_eq!(user.nats.issuer_account, Some(account));
    }

    /// The user JWT `responder` answers `opened` with for `user`, and the response's issuer.
    fn user_jwt(
        responder: &Responder,
        server: &FakeServer,
        user: UserClaims,
    ) -> Result<Claims<User>, CalloutError> {
        let opened = server.opened_by(responder);
        let reply = responder.answer(&opened, Ok(user), now())?;
        // The response is the callout's, whoever signed the user.
        let response = server.read(&reply, None, &responder.issuer());
        Ok(Claims::<User>::decode(&response.jwt.unwrap()).unwrap())
    }

    #[test]
    fn an_issuer_account_set_by_hand_follows_the_signing_key() {
        let server = FakeServer::new();
        let callout = KeyPair::new_account();
        let responder = Responder::new(callout.clone()).unwrap();
        let mut claims = UserClaims::new();
        claims.user.issuer_account = Some(KeyPair::new_account().public_key());
        // Signed by the callout's own account key, so no other account is claimed.
        let user = user_jwt(&responder, &server, claims).unwrap();
        assert_eq!(user.issuer, callout.public_key());
        assert_eq!(user.nats.issuer_account, None);
    }

    #[test]
    fn a_user_placed_in_an_account_by_key_is_signed_by_that_account() {
        let server = FakeServer::new();
        let callout = KeyPair::new_account();
        let (target, target_signing) = (KeyPair::new_account(), KeyPair::new_account());
        let other = KeyPair::new_account();
        let responder = Responder::new(callout.clone())
            .unwrap()
            .with_account_signer(target.public_key(), target.clone())
            .unwrap()
            .with_account_signer(other.public_key(), target_signing.clone())
            .unwrap();

        // The account's own key: the user JWT's issuer, no issuer_account.
        let user = user_jwt(
            &responder,
            &server,
            UserClaims::new().account(target.public_key()),
        )
        .unwrap();
        assert_eq!(user.issuer, target.public_key());
        assert_eq!(user.nats.issuer_account, None);
        assert_eq!(user.audience, Some(target.public_key()));

        // A signing key: the issuer, with issuer_account naming the account.
        let user = user_jwt(
            &responder,
            &server,
            UserClaims::new().account(other.public_key()),
        )
        .unwrap();
        assert_eq!(user.issuer, target_signing.public_key());
        assert_eq!(user.nats.issuer_account, Some(other.public_key()));

        // The callout's own account, by key or by name: the issuer signs.
        for account in [callout.public_key(), "APP".to_owned()] {
            let user = user_jwt(&responder, &server, UserClaims::new().account(account)).unwrap();
            assert_eq!(user.issuer, callout.public_key());
            assert_eq!(user.nats.issuer_account, None);
        }

        // An account it holds no key for: refused, not signed with a key the server rejects.
        let stranger = KeyPair::new_account().public_key();
        let error = user_jwt(
            &responder,
            &server,
            UserClaims::new().account(stranger.clone()),
        )
        .unwrap_err();
        assert!(
            matches!(&error, CalloutError::NoAccountSigner(a) if *a == stranger),
            "{error}"
        );
        // So is a default account named by a key without a signer.
        let error = user_jwt(
            &responder.clone().with_default_account(stranger.clone()),
            &server,
            UserClaims::new(),
        )
        .unwrap_err();
        assert!(matches!(error, CalloutError::NoAccountSigner(_)), "{error}");
    }

    #[test]
    fn a_callout_signing_key_places_users_in_its_own_account_by_key() {
        let server = FakeServer::new();
        let (home, home_signing) = (KeyPair::new_account(), KeyPair::new_account());
        let responder = Responder::new(home_signing.clone())
            .unwrap()
            .with_issuer_account(home.public_key())
            .unwrap();
        let user = user_jwt(
            &responder,
            &server,
            UserClaims::new().account(home.public_key()),
        )
        .unwrap();
        assert_eq!(user.issuer, home_signing.public_key());
        assert_eq!(user.nats.issuer_account, Some(home.public_key()));
    }

    #[test]
    fn account_signers_that_cannot_sign_are_refused() {
        let responder = Responder::new(KeyPair::new_account()).unwrap();
        let account = KeyPair::new_account();
        let user_key = KeyPair::new_user().public_key();
        for name in ["APP", user_key.as_str()] {
            assert_eq!(
                responder
                    .clone()
                    .with_account_signer(name, account.clone())
                    .unwrap_err(),
                KeyError::SignerAccount(name.into())
            );
        }
        assert_eq!(
            responder
                .clone()
                .with_account_signer(account.public_key(), KeyPair::new_user())
                .unwrap_err(),
            KeyError::SignerNotAccount {
                account: account.public_key(),
                kind: KeyPairType::User
            }
        );
        let public = KeyPair::from_public_key(&account.public_key()).unwrap();
        assert_eq!(
            responder
                .with_account_signer(account.public_key(), public)
                .unwrap_err(),
            KeyError::SignerWithoutSeed(account.public_key())
        );
    }
}
