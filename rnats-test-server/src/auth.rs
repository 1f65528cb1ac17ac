//! Identities for authentication tests: an operator-mode trust chain (operator, accounts,
//! users, each with an nkey and a JWT signed by its parent) and plain nkey users.
//!
//! The JWTs follow nats-io/jwt v2: `base64url(header).base64url(claims).base64url(sig)`,
//! unpadded, with header `{"typ":"JWT","alg":"ed25519-nkey"}` and the ed25519 signature of
//! the issuer over the first two parts. The claims carry `jti`, `iat`, `iss`, `name`, `sub`
//! and a `nats` object whose `type` is `operator`, `account` or `user` and whose `version`
//! is 2. Nothing expires but an account made by [`Operator::account_expiring`], whose JWT
//! carries `exp`.

use data_encoding::{BASE32_NOPAD, BASE64URL_NOPAD};
use nkeys::KeyPair;
use serde::Serialize;
use serde_json::{Value, json};
use sha2::{Digest, Sha512_256};

/// JWT header of every token, as nats-io/jwt v2 writes it.
const JWT_HEADER: &str = r#"{"typ":"JWT","alg":"ed25519-nkey"}"#;

/// Name of the system account every [`Operator`] creates.
pub const SYSTEM_ACCOUNT_NAME: &str = "SYS";

/// The root of an operator-mode trust chain; it signs [`Account`]s.
///
/// Every operator comes with a system account ([`system_account`](Self::system_account)),
/// named in its JWT and in [`server_config`](Self::server_config), so the server does not
/// have to make one up.
#[derive(Debug, Clone)]
pub struct Operator {
    key: KeyPair,
    jwt: String,
    system: Account,
}

/// An account signed by an [`Operator`]; it signs [`User`]s.
///
/// Its limits are all unlimited (`-1`), JetStream included, so the same account works on
/// servers with and without JetStream. The system account has JetStream disabled, as the
/// server requires.
#[derive(Debug, Clone)]
pub struct Account {
    key: KeyPair,
    name: String,
    jwt: String,
}

/// A user signed by an [`Account`], with no permission or limit restrictions.
#[derive(Debug, Clone)]
pub struct User {
    key: KeyPair,
    jwt: String,
}

impl Operator {
    /// A new operator with a fresh key, and its system account.
    pub fn new() -> Operator {
        let key = KeyPair::new_operator();
        let system = Account::signed_by(&key, SYSTEM_ACCOUNT_NAME, false, None);
        let nats = json!({
            "system_account": system.public_key(),
            "type": "operator",
            "version": 2,
        });
        // Operators sign their own JWT: the server trusts it because its config says so.
        let jwt = encode_jwt(&key, "rnats-test-operator", &key.public_key(), nats, None);
        Operator { key, jwt, system }
    }

    /// A new account named `name`, signed by this operator.
    pub fn account(&self, name: &str) -> Account {
        Account::signed_by(&self.key, name, true, None)
    }

    /// A new account named `name` whose JWT expires `after` from now (rounded up to the
    /// next whole second, the JWT's resolution): the server then ends its clients'
    /// connections with `Account Authentication Expired`, and refuses new ones.
    pub fn account_expiring(&self, name: &str, after: std::time::Duration) -> Account {
        let at = std::time::SystemTime::now() + after;
        let secs = at
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() + u64::from(d.subsec_nanos() > 0));
        Account::signed_by(&self.key, name, true, Some(secs))
    }

    /// The system account (named [`SYSTEM_ACCOUNT_NAME`]).
    pub fn system_account(&self) -> &Account {
        &self.system
    }

    /// The operator's public key (`O...`).
    pub fn public_key(&self) -> String {
        self.key.public_key()
    }

    /// The operator JWT.
    pub fn jwt(&self) -> &str {
        &self.jwt
    }

    /// Server configuration text for operator mode that trusts this operator and knows
    /// `accounts` and the system account through a memory resolver:
    ///
    /// ```text
    /// operator: <operator JWT>
    /// system_account: <system account public key>
    /// resolver: MEMORY
    /// resolver_preload: {
    ///   <system account public key>: <system account JWT>
    ///   <account public key>: <account JWT>
    /// }
    /// ```
    ///
    /// Pass it to [`ServerBuilder::config`](crate::ServerBuilder::config). Accounts signed
    /// by another operator are listed too, and the server rejects them at start-up.
    pub fn server_config(&self, accounts: &[&Account]) -> String {
        let system_key = self.system.public_key();
        let mut text = format!(
            "operator: {}\nsystem_account: {system_key}\nresolver: MEMORY\nresolver_preload: {{\n  {system_key}: {}\n",
            self.jwt, self.system.jwt,
        );
        for account in accounts {
            let key = account.public_key();
            if key != system_key {
                text.push_str(&format!("  {key}: {}\n", account.jwt));
            }
        }
        text.push_str("}\n");
        text
    }
}

impl Default for Operator {
    fn default() -> Self {
        Self::new()
    }
}

impl Account {
    /// A new user named `name`, signed by this account.
    pub fn user(&self, name: &str) -> User {
        let key = KeyPair::new_user();
        let nats = json!({
            "pub": {},
            "sub": {},
            "subs": -1,
            "data": -1,
            "payload": -1,
            "type": "user",
            "version": 2,
        });
        let jwt = encode_jwt(&self.key, name, &key.public_key(), nats, None);
        User { key, jwt }
    }

    /// The account's public key (`A...`).
    pub fn public_key(&self) -> String {
        self.key.public_key()
    }

    /// The name given at creation.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The account JWT.
    pub fn jwt(&self) -> &str {
        &self.jwt
    }

    /// A new account key and its JWT signed by `operator`, with or without JetStream,
    /// expiring at the unix time `expires` if one is given.
    fn signed_by(operator: &KeyPair, name: &str, jetstream: bool, expires: Option<u64>) -> Account {
        let key = KeyPair::new_account();
        // Without explicit limits the server would read zeros, and a zero connection limit
        // lets nobody in. Zero JetStream storage means JetStream is off for the account.
        let js = if jetstream { -1 } else { 0 };
        let nats = json!({
            "limits": {
                "subs": -1,
                "data": -1,
                "payload": -1,
                "imports": -1,
                "exports": -1,
                "wildcards": true,
                "conn": -1,
                "leaf": -1,
                "mem_storage": js,
                "disk_storage": js,
                "streams": js,
                "consumer": js,
            },
            "default_permissions": { "pub": {}, "sub": {} },
            "type": "account",
            "version": 2,
        });
        let jwt = encode_jwt(operator, name, &key.public_key(), nats, expires);
        Account {
            key,
            name: name.to_owned(),
            jwt,
        }
    }
}

impl User {
    /// The user JWT, sent as `jwt` in `CONNECT`.
    pub fn jwt(&self) -> &str {
        &self.jwt
    }

    /// The user's seed (`SU...`), which signs the server nonce.
    pub fn seed(&self) -> String {
        seed_of(&self.key)
    }

    /// The user's public key (`U...`), the subject of its JWT.
    pub fn public_key(&self) -> String {
        self.key.public_key()
    }

    /// The signature of `nonce` as `CONNECT` expects it in `sig`; see [`sign_nonce`].
    pub fn sign_nonce(&self, nonce: &str) -> String {
        sign_with(&self.key, nonce)
    }

    /// The text of a `.creds` file holding the JWT and the seed, laid out as `nsc`
    /// writes it (clients find both by their dashed `BEGIN`/`END` lines).
    pub fn creds(&self) -> String {
        format!(
            "-----BEGIN NATS USER JWT-----\n{}\n------END NATS USER JWT------\n\n\
             ************************* IMPORTANT *************************\n\
             NKEY Seed printed below can be used to sign and prove identity.\n\
             NKEYs are sensitive and should be treated as secrets.\n\n\
             -----BEGIN USER NKEY SEED-----\n{}\n------END USER NKEY SEED------\n\n\
             *************************************************************\n",
            self.jwt,
            self.seed(),
        )
    }
}

/// A fresh user nkey, without JWT, for
/// [`ServerBuilder::nkey_users`](crate::ServerBuilder::nkey_users): returns
/// `(seed, public_key)`, `SU...` and `U...`.
pub fn nkey_user() -> (String, String) {
    let key = KeyPair::new_user();
    (seed_of(&key), key.public_key())
}

/// Signs the `nonce` of a server `INFO` with an nkey seed, giving the `sig` field of
/// `CONNECT`: the ed25519 signature of the nonce's bytes, base64url without padding.
///
/// # Panics
///
/// Panics if `seed` is not a valid nkey seed.
pub fn sign_nonce(seed: &str, nonce: &str) -> String {
    let key = KeyPair::from_seed(seed).unwrap_or_else(|e| panic!("not an nkey seed: {e}"));
    sign_with(&key, nonce)
}

/// The claims of a JWT, in the field order of nats-io/jwt's `ClaimsData`, which matters
/// for `jti`.
#[derive(Serialize)]
struct Claims<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    exp: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    jti: Option<String>,
    iat: u64,
    iss: &'a str,
    name: &'a str,
    sub: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    nats: Option<Value>,
}

/// A JWT for `subject` signed by `issuer`, carrying the `nats` object, valid until the
/// unix time `expires` if one is given.
fn encode_jwt(
    issuer: &KeyPair,
    name: &str,
    subject: &str,
    nats: Value,
    expires: Option<u64>,
) -> String {
    let iss = issuer.public_key();
    let iat = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let mut claims = Claims {
        exp: expires,
        jti: None,
        iat,
        iss: &iss,
        name,
        sub: subject,
        nats: None,
    };
    // As in nats-io/jwt: `jti` is the unpadded base32 of the SHA-512/256 of the generic
    // claims alone, serialised without `jti` and without `nats`.
    let generic = serde_json::to_vec(&claims).expect("claims serialise");
    claims.jti = Some(BASE32_NOPAD.encode(&Sha512_256::digest(&generic)));
    claims.nats = Some(nats);
    let body = serde_json::to_vec(&claims).expect("claims serialise");

    let signing_input = format!(
        "{}.{}",
        BASE64URL_NOPAD.encode(JWT_HEADER.as_bytes()),
        BASE64URL_NOPAD.encode(&body)
    );
    let sig = sign_with(issuer, &signing_input);
    format!("{signing_input}.{sig}")
}

/// Signs `text` with `key`, unpadded base64url.
fn sign_with(key: &KeyPair, text: &str) -> String {
    let sig = key
        .sign(text.as_bytes())
        .unwrap_or_else(|e| panic!("a generated key pair lost its seed: {e}"));
    BASE64URL_NOPAD.encode(&sig)
}

/// The seed of a generated key pair.
fn seed_of(key: &KeyPair) -> String {
    key.seed()
        .unwrap_or_else(|e| panic!("a generated key pair lost its seed: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The JSON of one part of a JWT.
    fn part(jwt: &str, i: usize) -> Value {
        let text = jwt.split('.').nth(i).expect("three parts");
        serde_json::from_slice(&BASE64URL_NOPAD.decode(text.as_bytes()).expect("base64url"))
            .expect("json")
    }

    #[test]
    fn a_user_jwt_is_signed_by_its_account_and_chains_to_the_operator() {
        let operator = Operator::new();
        let account = operator.account("APP");
        let user = account.user("alice");

        let header = part(user.jwt(), 0);
        assert_eq!(header, json!({"typ": "JWT", "alg": "ed25519-nkey"}));
        let claims = part(user.jwt(), 1);
        assert_eq!(claims["iss"], account.public_key());
        assert_eq!(claims["sub"], user.public_key());
        assert_eq!(claims["name"], "alice");
        assert_eq!(claims["nats"]["type"], "user");
        assert_eq!(claims["nats"]["version"], 2);

        let (input, sig) = user.jwt().rsplit_once('.').expect("a signature");
        let sig = BASE64URL_NOPAD.decode(sig.as_bytes()).expect("base64url");
        let account_key = KeyPair::from_public_key(&account.public_key()).expect("public key");
        account_key
            .verify(input.as_bytes(), &sig)
            .expect("signed by the account");

        let account_claims = part(account.jwt(), 1);
        assert_eq!(account_claims["iss"], operator.public_key());
        assert_eq!(account_claims["nats"]["type"], "account");
        let operator_claims = part(operator.jwt(), 1);
        assert_eq!(operator_claims["iss"], operator.public_key());
        assert_eq!(operator_claims["sub"], operator.public_key());
        assert_eq!(
            operator_claims["nats"]["system_account"],
            operator.system_account().public_key()
        );
    }

    #[test]
    fn jti_hashes_the_generic_claims_without_jti() {
        let account = Operator::new().account("APP");
        let claims = part(account.jwt(), 1);
        let generic = format!(
            r#"{{"iat":{},"iss":"{}","name":"APP","sub":"{}"}}"#,
            claims["iat"],
            claims["iss"].as_str().expect("iss"),
            account.public_key()
        );
        let expected = BASE32_NOPAD.encode(&Sha512_256::digest(generic.as_bytes()));
        assert_eq!(claims["jti"], expected);
    }

    #[test]
    fn creds_hold_the_jwt_and_the_seed_between_dashed_lines() {
        let user = Operator::new().account("APP").user("bob");
        let creds = user.creds();
        let lines: Vec<&str> = creds.lines().collect();
        assert_eq!(lines[0], "-----BEGIN NATS USER JWT-----");
        assert_eq!(lines[1], user.jwt());
        assert_eq!(lines[2], "------END NATS USER JWT------");
        let seed_at = lines
            .iter()
            .position(|l| *l == "-----BEGIN USER NKEY SEED-----")
            .expect("seed block");
        assert_eq!(lines[seed_at + 1], user.seed());
        assert_eq!(lines[seed_at + 2], "------END USER NKEY SEED------");
    }

    #[test]
    fn a_nonce_signature_verifies_with_the_public_key() {
        let (seed, public) = nkey_user();
        assert!(seed.starts_with("SU") && public.starts_with('U'));
        let sig = sign_nonce(&seed, "nonce-123");
        let sig = BASE64URL_NOPAD.decode(sig.as_bytes()).expect("base64url");
        KeyPair::from_public_key(&public)
            .expect("public key")
            .verify(b"nonce-123", &sig)
            .expect("valid signature");
    }

    #[test]
    fn server_config_preloads_every_account_once() {
        let operator = Operator::new();
        let app = operator.account("APP");
        let text = operator.server_config(&[&app, operator.system_account()]);
        let sys = operator.system_account().public_key();
        assert!(text.starts_with(&format!("operator: {}\n", operator.jwt())));
        assert!(text.contains(&format!("system_account: {sys}\n")));
        assert!(text.contains("resolver: MEMORY\n"));
        assert_eq!(text.matches(&format!("  {sys}: ")).count(), 1);
        assert!(text.contains(&format!("  {}: {}\n", app.public_key(), app.jwt())));
    }
}
