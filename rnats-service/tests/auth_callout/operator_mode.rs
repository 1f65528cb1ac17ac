//! Authorization callouts against a real nats-server in operator mode (decentralized auth):
//! the operator, the system account, the callout's account AUTH and the accounts users are
//! placed in are JWTs these tests sign themselves, preloaded into a memory resolver. AUTH
//! enables the callout in its own JWT (`authorization`: the service's user key, the accounts
//! it may place users in, the xkey); clients without credentials come in as the server's
//! `default_sentinel`, a bearer user of AUTH, and so go through the callout.

use std::time::SystemTime;

use futures_util::StreamExt;
use rnats_core::{Client, ConnectErrorKind, ConnectOptions};
use rnats_service::auth_callout::jwt::{ClaimType, Claims};
use rnats_service::auth_callout::nkeys::{KeyPair, KeyPairType, XKey};
use rnats_service::auth_callout::{
    AuthCallout, AuthCalloutBuilder, AuthorizationResponse, CalloutError, User, UserClaims,
};
use rnats_test_server::NatsServer;
use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;

use super::WAIT;

/// The `nats` section of an operator JWT, as much of it as these tests need.
#[derive(Serialize, Deserialize)]
struct Operator {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    system_account: Option<String>,
}

impl ClaimType for Operator {
    const TYPE: &'static str = "operator";
    const ISSUER: KeyPairType = KeyPairType::Operator;
}

/// The `nats` section of an account JWT, as much of it as these tests need.
#[derive(Serialize, Deserialize)]
struct Account {
    limits: AccountLimits,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    signing_keys: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    authorization: Option<ExternalAuthorization>,
}

impl ClaimType for Account {
    const TYPE: &'static str = "account";
    const ISSUER: KeyPairType = KeyPairType::Operator;
}

/// An account's limits. Written out in full: the server reads a limit left out as 0, and an
/// account with `conn` 0 takes no connections.
#[derive(Serialize, Deserialize)]
struct AccountLimits {
    subs: i64,
    data: i64,
    payload: i64,
    imports: i64,
    exports: i64,
    wildcards: bool,
    conn: i64,
    leaf: i64,
}

impl AccountLimits {
    /// No limits, as `nsc` writes them (JetStream left off).
    fn unlimited() -> AccountLimits {
        AccountLimits {
            subs: -1,
            data: -1,
            payload: -1,
            imports: -1,
            exports: -1,
            wildcards: true,
            conn: -1,
            leaf: -1,
        }
    }
}

/// An account JWT's `authorization`: the callout, enabled by naming its service's users.
#[derive(Serialize, Deserialize)]
struct ExternalAuthorization {
    auth_users: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    allowed_accounts: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    xkey: Option<String>,
}

/// The decentralized setup: an operator and its accounts, each with its key pair.
struct Trust {
    operator: KeyPair,
    system: KeyPair,
    /// The callout's account.
    auth: KeyPair,
    /// A signing key of AUTH, listed in its JWT.
    auth_signing: KeyPair,
    /// The user the callout service connects as (AUTH's `auth_users`).
    service: KeyPair,
    /// An account the callout may place users in, signing them with its own key.
    test: KeyPair,
    /// An account the callout may place users in, signing them with a signing key.
    team: KeyPair,
    team_signing: KeyPair,
    /// An account whose key the callout holds but that AUTH does not allow.
    outsider: KeyPair,
}

impl Trust {
    fn new() -> Trust {
        Trust {
            operator: KeyPair::new_operator(),
            system: KeyPair::new_account(),
            auth: KeyPair::new_account(),
            auth_signing: KeyPair::new_account(),
            service: KeyPair::new_user(),
            test: KeyPair::new_account(),
            team: KeyPair::new_account(),
            team_signing: KeyPair::new_account(),
            outsider: KeyPair::new_account(),
        }
    }

    /// A server trusting the operator, with the accounts preloaded. AUTH runs the callout,
    /// sealed for `xkey` when given, and may place users in TEST and TEAM.
    fn server(&self, xkey: Option<&XKey>) -> NatsServer {
        let mut operator = Claims::new(
            self.operator.public_key(),
            SystemTime::now(),
            Operator {
                system_account: Some(self.system.public_key()),
            },
        );
        operator.name = Some("OP".into());
        let operator_jwt = operator.encode(&self.operator).unwrap();
        let authorization = ExternalAuthorization {
            auth_users: vec![self.service.public_key()],
            allowed_accounts: vec![self.test.public_key(), self.team.public_key()],
            xkey: xkey.map(XKey::public_key),
        };
        let accounts = [
            self.account_jwt("SYS", &self.system, vec![], None),
            self.account_jwt(
                "AUTH",
                &self.auth,
                vec![self.auth_signing.public_key()],
                Some(authorization),
            ),
            self.account_jwt("TEST", &self.test, vec![], None),
            self.account_jwt(
                "TEAM",
                &self.team,
                vec![self.team_signing.public_key()],
                None,
            ),
            self.account_jwt("OUTSIDER", &self.outsider, vec![], None),
        ];
        let preload: String = accounts
            .iter()
            .map(|(account, jwt)| format!("    {account}: {jwt}\n"))
            .collect();
        // Clients that bring no JWT come in as this bearer user of AUTH, allowed nothing
        // itself: the callout decides who they become.
        let mut sentinel = User::default();
        sentinel.bearer_token = true;
        sentinel.publish.deny.push(">".into());
        sentinel.subscribe.deny.push(">".into());
        let sentinel = user_jwt(&self.auth, KeyPair::new_user(), "sentinel", sentinel);
        // A long auth timeout, so a busy machine never makes the server give up on an answer
        // that is coming.
        let config = format!(
            r#"
operator: {operator_jwt}
system_account: {system}
resolver: MEMORY
resolver_preload: {{
{preload}}}
default_sentinel: {sentinel}
authorization {{ timeout: 15 }}
"#,
            system = self.system.public_key(),
        );
        NatsServer::builder().config(config).spawn().unwrap()
    }

    /// `account`'s JWT, signed by the operator.
    fn account_jwt(
        &self,
        name: &str,
        account: &KeyPair,
        signing_keys: Vec<String>,
        authorization: Option<ExternalAuthorization>,
    ) -> (String, String) {
        let mut claims = Claims::new(
            account.public_key(),
            SystemTime::now(),
            Account {
                limits: AccountLimits::unlimited(),
                signing_keys,
                authorization,
            },
        );
        claims.name = Some(name.into());
        (account.public_key(), claims.encode(&self.operator).unwrap())
    }

    /// A client of the callout service: AUTH's user in `auth_users`.
    async fn connect_as_callout(&self, server: &NatsServer) -> Client {
        let jwt = user_jwt(
            &self.auth,
            self.service.clone(),
            "auth-service",
            User::default(),
        );
        ConnectOptions::new()
            .jwt_and_seed(jwt, self.service.seed().unwrap())
            .connect(server.url())
            .await
            .unwrap()
    }
}

/// A user JWT for `user`, signed by `account`'s key.
fn user_jwt(account: &KeyPair, user: KeyPair, name: &str, nats: User) -> String {
    let mut claims = Claims::new(user.public_key(), SystemTime::now(), nats);
    claims.name = Some(name.into());
    claims.encode(account).unwrap()
}

/// Connects with `user`'s password (the callout reads the user; the password is not checked).
async fn connect_as(server: &NatsServer, user: &str) -> Result<Client, rnats_core::ConnectError> {
    ConnectOptions::new()
        .user_and_password(user.into(), "pwd".into())
        .connect(server.url())
        .await
}

/// The public key of the account `client` is in, as the server tells it.
async fn account_of(client: &Client) -> String {
    let reply = tokio::time::timeout(WAIT, client.request("$SYS.REQ.USER.INFO", "".into()))
        .await
        .unwrap()
        .unwrap();
    let info: serde_json::Value = serde_json::from_slice(&reply.payload).unwrap();
    info["data"]["account"].as_str().unwrap().to_owned()
}

/// Starts a callout configured by `builder` that places each user in the account its user
/// name names: `home` in the issuer's, `alice` in TEST, `carol` in TEAM, `eve` in OUTSIDER,
/// `mallory` in an account it holds no key for.
async fn start_placing_callout(
    trust: &Trust,
    server: &NatsServer,
    builder: AuthCalloutBuilder,
) -> AuthCallout {
    let accounts = [
        ("alice", trust.test.public_key()),
        ("carol", trust.team.public_key()),
        ("eve", trust.outsider.public_key()),
        ("mallory", KeyPair::new_account().public_key()),
    ];
    builder
        .start(trust.connect_as_callout(server).await, move |request| {
            let user = request.connect_opts.username.unwrap_or_default();
            let account = accounts
                .iter()
                .find(|(name, _)| *name == user)
                .map(|(_, account)| account.clone());
            async move {
                let claims = UserClaims::new().name(user);
                Ok::<_, String>(match account {
                    Some(account) => claims.account(account),
                    None => claims,
                })
            }
        })
        .await
        .unwrap()
}

#[tokio::test]
async fn a_callout_places_users_in_the_accounts_it_holds_keys_for() {
    let trust = Trust::new();
    let server = trust.server(None);
    let (errors, mut reported) = mpsc::unbounded_channel();
    let builder = AuthCallout::builder(trust.auth.clone())
        .account_signer(trust.test.public_key(), trust.test.clone())
        .account_signer(trust.team.public_key(), trust.team_signing.clone())
        .account_signer(trust.outsider.public_key(), trust.outsider.clone())
        .on_error(move |error| {
            let _ = errors.send(error);
        });
    let callout = start_placing_callout(&trust, &server, builder).await;

    // Placed in no account: the issuer's own.
    let home = connect_as(&server, "home").await.unwrap();
    assert_eq!(account_of(&home).await, trust.auth.public_key());
    // Signed by TEST's own key.
    let alice = connect_as(&server, "alice").await.unwrap();
    assert_eq!(account_of(&alice).await, trust.test.public_key());
    // Signed by TEAM's signing key, with TEAM as the issuer account.
    let carol = connect_as(&server, "carol").await.unwrap();
    assert_eq!(account_of(&carol).await, trust.team.public_key());

    // The callout holds OUTSIDER's key, but AUTH's JWT does not allow it: the server refuses.
    let refused = connect_as(&server, "eve").await.unwrap_err();
    assert_eq!(
        refused.kind(),
        ConnectErrorKind::AuthorizationViolation,
        "{refused}"
    );

    // No key for mallory's account: the callout answers with a refusal at once, and says why.
    let monitor = trust.connect_as_callout(&server).await;
    let mut replies = monitor.subscribe("$SYS._INBOX.>").await.unwrap();
    monitor.flush().await.unwrap();
    let refused = connect_as(&server, "mallory").await.unwrap_err();
    assert_eq!(
        refused.kind(),
        ConnectErrorKind::AuthorizationViolation,
        "{refused}"
    );
    let error = tokio::time::timeout(WAIT, reported.recv())
        .await
        .unwrap()
        .unwrap();
    assert!(matches!(error, CalloutError::NoAccountSigner(_)), "{error}");
    let reply = tokio::time::timeout(WAIT, replies.next())
        .await
        .unwrap()
        .unwrap();
    let response =
        Claims::<AuthorizationResponse>::decode(std::str::from_utf8(&reply.payload).unwrap())
            .unwrap();
    assert_eq!(response.nats.jwt, None);
    assert_eq!(response.nats.error, Some(error.to_string()));
    assert!(reported.try_recv().is_err(), "nothing else went wrong");
    callout.stop().await;
}

#[tokio::test]
async fn a_callout_signing_with_a_signing_key_answers_sealed_requests() {
    let trust = Trust::new();
    let xkey = XKey::new();
    let server = trust.server(Some(&xkey));
    // The response is signed by AUTH's signing key; users of AUTH too, and users of TEST by
    // TEST's key.
    let builder = AuthCallout::builder(trust.auth_signing.clone())
        .issuer_account(trust.auth.public_key())
        .xkey(xkey)
        .account_signer(trust.test.public_key(), trust.test.clone());
    let callout = start_placing_callout(&trust, &server, builder).await;

    let home = connect_as(&server, "home").await.unwrap();
    assert_eq!(account_of(&home).await, trust.auth.public_key());
    let alice = connect_as(&server, "alice").await.unwrap();
    assert_eq!(account_of(&alice).await, trust.test.public_key());
    callout.stop().await;
}
