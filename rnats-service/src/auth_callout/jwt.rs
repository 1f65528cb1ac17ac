//! NATS JWT v2 framing: the three base64url parts, the ed25519 nkey signature, and the claims
//! every NATS JWT carries (`jti`, `iat`, `iss`, `sub`, `aud`, `exp`, `nats.type`,
//! `nats.version`).
//!
//! Written here rather than taken from a crate: the Rust crates for NATS JWTs either sign
//! only account and user claims and decode nothing (`nats-jwt`), call themselves a work in
//! progress (`nats-io-jwt`), or are barely documented and pull in `anyhow` and
//! `derive_builder` (`nats-jwt-rs`); none knows the authorization request and response
//! claims. The framing is small, and the key handling, which is the part worth sharing, comes
//! from the `nkeys` crate.

use std::time::{SystemTime, UNIX_EPOCH};

use data_encoding::{BASE32_NOPAD, BASE64URL_NOPAD};
use nkeys::{KeyPair, KeyPairType};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha512_256};

use super::error::JwtError;

/// The JOSE header of every NATS JWT v2: `{"typ":"JWT","alg":"ed25519-nkey"}`.
const HEADER_TYPE: &str = "JWT";
/// The signature algorithm of NATS JWT v2 (v1's plain `ed25519` signs the payload alone).
const HEADER_ALGORITHM: &str = "ed25519-nkey";
/// The claims version this module writes and the newest it reads.
pub const CLAIMS_VERSION: u64 = 2;
/// The longest token accepted, as the Go library bounds it.
pub const MAX_TOKEN_SIZE: usize = 1024 * 1024;

/// What the `nats` section of a kind of claims holds, and who may issue it.
///
/// Implemented by [`AuthorizationRequest`](super::AuthorizationRequest),
/// [`AuthorizationResponse`](super::AuthorizationResponse) and [`User`](super::User).
pub trait ClaimType: Serialize + DeserializeOwned {
    /// The `nats.type` value: `user`, `authorization_request`, ...
    const TYPE: &'static str;
    /// The kind of nkey that signs these claims: a server signs requests, an account signs
    /// responses and users.
    const ISSUER: KeyPairType;
}

/// A NATS JWT's claims: the registered ones, then the `nats` section of kind `T`.
///
/// Times are seconds since the Unix epoch, as on the wire.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Claims<T> {
    /// `aud`: who the token is for (an account name, a server id, ...).
    #[serde(rename = "aud", default, skip_serializing_if = "Option::is_none")]
    pub audience: Option<String>,
    /// `exp`: when the token stops being valid.
    #[serde(rename = "exp", default, skip_serializing_if = "Option::is_none")]
    pub expires: Option<i64>,
    /// `jti`: the token's id, a hash of the registered claims (set by [`encode`](Self::encode)).
    #[serde(rename = "jti", default)]
    pub id: String,
    /// `iat`: when the token was issued.
    #[serde(rename = "iat", default)]
    pub issued_at: i64,
    /// `iss`: the public nkey that signed the token (set by [`encode`](Self::encode)).
    #[serde(rename = "iss", default)]
    pub issuer: String,
    /// `name`: a name for people to read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `nbf`: when the token starts being valid.
    #[serde(rename = "nbf", default, skip_serializing_if = "Option::is_none")]
    pub not_before: Option<i64>,
    /// `sub`: what the token is about (a user's public nkey, ...).
    #[serde(rename = "sub", default)]
    pub subject: String,
    /// The NATS-specific section.
    pub nats: T,
}

impl<T: ClaimType> Claims<T> {
    /// Claims about `subject`, issued at `issued_at`; the rest unset.
    pub fn new(subject: impl Into<String>, issued_at: SystemTime, nats: T) -> Claims<T> {
        Claims {
            audience: None,
            expires: None,
            id: String::new(),
            issued_at: unix_seconds(issued_at),
            issuer: String::new(),
            name: None,
            not_before: None,
            subject: subject.into(),
            nats,
        }
    }

    /// Signs the claims with `signer` and returns the token. Sets `iss` to the signer's public
    /// key and `jti` to the hash of the registered claims, as the Go library does; `nats.type`
    /// and `nats.version` are written from [`ClaimType`].
    pub fn encode(&mut self, signer: &KeyPair) -> Result<String, JwtError> {
        if self.subject.is_empty() {
            return Err(JwtError::NoSubject);
        }
        if signer.key_pair_type() != T::ISSUER {
            return Err(JwtError::IssuerKind {
                expected: T::ISSUER,
                found: signer.key_pair_type(),
            });
        }
        self.issuer = signer.public_key();
        self.id = self.hash()?;
        let mut payload = serde_json::to_value(&*self).map_err(JwtError::Json)?;
        // The generic fields (`type`, `version`) live inside `nats` on the wire.
        if let Some(nats) = payload.get_mut("nats").and_then(|n| n.as_object_mut()) {
            nats.insert("type".into(), T::TYPE.into());
            nats.insert("version".into(), CLAIMS_VERSION.into());
        }
        let header = Header {
            typ: HEADER_TYPE.into(),
            alg: HEADER_ALGORITHM.into(),
        };
        let mut token =
            BASE64URL_NOPAD.encode(&serde_json::to_vec(&header).map_err(JwtError::Json)?);
        token.push('.');
        token.push_str(
            &BASE64URL_NOPAD.encode(&serde_json::to_vec(&payload).map_err(JwtError::Json)?),
        );
        let signature = signer.sign(token.as_bytes()).map_err(JwtError::Sign)?;
        token.push('.');
        token.push_str(&BASE64URL_NOPAD.encode(&signature));
        Ok(token)
    }

    /// Decodes a token and checks its signature against its own issuer, which must be a key of
    /// the kind `T` names, and its `nats.type`. Whether that issuer is one to trust, and
    /// whether the token has expired, is the caller's to judge.
    pub fn decode(token: &str) -> Result<Claims<T>, JwtError> {
        if token.len() > MAX_TOKEN_SIZE {
            return Err(JwtError::TooLarge(token.len()));
        }
        let mut parts = token.split('.');
        let (Some(header_part), Some(payload_part), Some(signature_part), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(JwtError::NotThreeParts);
        };
        let header: Header = parse(header_part)?;
        if !header.typ.eq_ignore_ascii_case(HEADER_TYPE)
            || !header.alg.eq_ignore_ascii_case(HEADER_ALGORITHM)
        {
            return Err(JwtError::Header {
                typ: header.typ,
                alg: header.alg,
            });
        }
        let generic: Generic = parse(payload_part)?;
        if generic.nats.version > CLAIMS_VERSION {
            return Err(JwtError::Version(generic.nats.version));
        }
        if generic.nats.kind != T::TYPE {
            return Err(JwtError::ClaimType {
                expected: T::TYPE,
                found: generic.nats.kind,
            });
        }
        let claims: Claims<T> = parse(payload_part)?;
        let issuer = KeyPair::from_public_key(&claims.issuer)
            .map_err(|_| JwtError::Issuer(claims.issuer.clone()))?;
        if issuer.key_pair_type() != T::ISSUER {
            return Err(JwtError::IssuerKind {
                expected: T::ISSUER,
                found: issuer.key_pair_type(),
            });
        }
        let signature = BASE64URL_NOPAD
            .decode(signature_part.as_bytes())
            .map_err(|_| JwtError::Base64)?;
        // v2 signs `header.payload`, exactly the bytes that came in.
        let signed = &token[..header_part.len() + 1 + payload_part.len()];
        issuer
            .verify(signed.as_bytes(), &signature)
            .map_err(|_| JwtError::Signature)?;
        Ok(claims)
    }

    /// Whether the claims have expired at `now` (an unset `exp` never does). To allow for
    /// clock skew, pass a `now` that much earlier, as [`Responder`](super::Responder) does.
    pub fn is_expired(&self, now: SystemTime) -> bool {
        self.expires.is_some_and(|exp| unix_seconds(now) > exp)
    }

    /// The `jti` the Go library gives: SHA-512/256 of the registered claims with `jti` left
    /// out, as Go's `encoding/json` writes them (`<`, `>`, `&`, U+2028 and U+2029 escaped),
    /// in base32 without padding. Nothing checks it; it names the token in tools.
    fn hash(&self) -> Result<String, JwtError> {
        let basis = IdBasis {
            aud: self.audience.as_deref(),
            exp: self.expires,
            iat: self.issued_at,
            iss: &self.issuer,
            name: self.name.as_deref(),
            nbf: self.not_before,
            sub: &self.subject,
        };
        let json = serde_json::to_string(&basis).map_err(JwtError::Json)?;
        Ok(BASE32_NOPAD.encode(&Sha512_256::digest(go_json_escape(&json))))
    }
}

/// Seconds since the Unix epoch; a time before it counts as 0.
pub(crate) fn unix_seconds(time: SystemTime) -> i64 {
    time.duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// A JWT's JOSE header.
#[derive(Serialize, Deserialize)]
struct Header {
    typ: String,
    alg: String,
}

/// Just enough of any claims to tell their kind and version before reading the rest.
#[derive(Deserialize)]
struct Generic {
    #[serde(default)]
    nats: GenericFields,
}

/// `nats.type` and `nats.version`.
#[derive(Deserialize, Default)]
struct GenericFields {
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(default)]
    version: u64,
}

/// The registered claims in the Go library's field order, empty ones left out, for the `jti`.
#[derive(Serialize)]
struct IdBasis<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    aud: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    exp: Option<i64>,
    #[serde(skip_serializing_if = "is_zero")]
    iat: i64,
    #[serde(skip_serializing_if = "str::is_empty")]
    iss: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    nbf: Option<i64>,
    #[serde(skip_serializing_if = "str::is_empty")]
    sub: &'a str,
}

fn is_zero(n: &i64) -> bool {
    *n == 0
}

/// serde_json's output as Go's `json.Marshal` writes the same value: Go also escapes the HTML
/// characters and the two JavaScript line separators. They can only occur inside strings, so
/// replacing them anywhere is safe. (Control characters are escaped alike: `\n`, `\t`, `\r`,
/// `\b`, `\f` short, the rest as `\u00xx`; `\b` and `\f` as Go writes them since 1.22.)
fn go_json_escape(json: &str) -> String {
    let mut escaped = String::with_capacity(json.len());
    for c in json.chars() {
        match c {
            '<' => escaped.push_str("\\u003c"),
            '>' => escaped.push_str("\\u003e"),
            '&' => escaped.push_str("\\u0026"),
            '\u{2028}' => escaped.push_str("\\u2028"),
            '\u{2029}' => escaped.push_str("\\u2029"),
            c => escaped.push(c),
        }
    }
    escaped
}

/// One base64url part, read as JSON.
fn parse<D: DeserializeOwned>(part: &str) -> Result<D, JwtError> {
    let bytes = BASE64URL_NOPAD
        .decode(part.as_bytes())
        .map_err(|_| JwtError::Base64)?;
    serde_json::from_slice(&bytes).map_err(JwtError::Json)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::time::Duration;

    use super::*;
    use crate::auth_callout::{AuthorizationRequest, AuthorizationResponse, User};

    /// A user JWT the Go library signed (nats-server's `server/configs/one.creds`).
    const GO_USER_JWT: &str = "eyJ0eXAiOiJKV1QiLCJhbGciOiJlZDI1NTE5LW5rZXkifQ.eyJqdGkiOiJHRUNQVEpISE1TM01DTUtMVFBHWUdBTzQ1R1E2TjZRUFlXUTRHUExBRUIzM1ZDUkpOUlZRIiwiaWF0IjoxNjE2MjQ3MjMyLCJpc3MiOiJBQlZSWktKNlo3TklNUElZSlJDSEVZRlJVTzdFTk42TldPS1FERkxGREZWUFNNMzZVUFgyVUNQUCIsIm5hbWUiOiJvbmUiLCJzdWIiOiJVRENJQkdHR0hDSkJRUE9PNFNDSkpCSFpEUjM3TlFHR0NJV01ORzJEREFLSjZXTUtCTUFLWElNTyIsIm5hdHMiOnsicHViIjp7fSwic3ViIjp7fSwic3VicyI6LTEsImRhdGEiOi0xLCJwYXlsb2FkIjotMSwidHlwZSI6InVzZXIiLCJ2ZXJzaW9uIjoyfX0.VLhSDtGZEF_jdvgmhgkdISXAt5wFMMZxxwm5w8UrsnlM1hkUvtxBlTe4IP0xJIf4xf8JOR2Bmf73xUGJKUZECQ";

    /// Replaces the payload of `token`, keeping its header and signature.
    fn with_payload(token: &str, edit: impl FnOnce(&mut serde_json::Value)) -> String {
        let parts: Vec<&str> = token.split('.').collect();
        let mut payload: serde_json::Value =
            serde_json::from_slice(&BASE64URL_NOPAD.decode(parts[1].as_bytes()).unwrap()).unwrap();
        edit(&mut payload);
        let payload = BASE64URL_NOPAD.encode(&serde_json::to_vec(&payload).unwrap());
        format!("{}.{payload}.{}", parts[0], parts[2])
    }

    fn at(seconds: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(seconds)
    }

    #[test]
    fn reads_a_user_jwt_the_go_library_signed() {
        let claims = Claims::<User>::decode(GO_USER_JWT).unwrap();
        assert_eq!(
            claims.issuer,
            "ABVRZKJ6Z7NIMPIYJRCHEYFRUO7ENN6NWOKQDFLFDFVPSM36UPX2UCPP"
        );
        assert_eq!(
            claims.subject,
            "UDCIBGGGHCJBQPOO4SCJJBHZDR37NQGGCIWMNG2DDAKJ6WMKBMAKXIMO"
        );
        assert_eq!(claims.name.as_deref(), Some("one"));
        assert_eq!(claims.issued_at, 1_616_247_232);
        assert_eq!(claims.nats, User::default());
        // The same `jti` as the Go library derives from these claims.
        let mut unsigned = claims.clone();
        unsigned.id.clear();
        assert_eq!(unsigned.hash().unwrap(), claims.id);
    }

    #[test]
    fn the_jti_escapes_as_go_does() {
        // The hash Go's `json.Marshal` and SHA-512/256 give for these claims (printed by a Go
        // program; Go writes `\u003c` for `<` and so on).
        let mut claims = Claims::new(
            "UDCIBGGGHCJBQPOO4SCJJBHZDR37NQGGCIWMNG2DDAKJ6WMKBMAKXIMO",
            at(1_700_000_000),
            User::default(),
        );
        claims.audience = Some("A&B".into());
        claims.expires = Some(1_700_003_600);
        claims.issuer = "ABVRZKJ6Z7NIMPIYJRCHEYFRUO7ENN6NWOKQDFLFDFVPSM36UPX2UCPP".into();
        claims.name = Some("<alice> & \"bob\"\u{2028}\u{2029}\n\té\u{1}".into());
        assert_eq!(
            claims.hash().unwrap(),
            "4FDT3HVZWYEQ23U6CJ3EXKAV3HJS2W2HN7TFFMVUZQAWD6BREJQA"
        );
    }

    #[test]
    fn a_tampered_token_does_not_verify() {
        let renamed = with_payload(GO_USER_JWT, |p| p["name"] = "two".into());
        assert!(matches!(
            Claims::<User>::decode(&renamed),
            Err(JwtError::Signature)
        ));
        let widened = with_payload(GO_USER_JWT, |p| {
            p["nats"]["pub"]["allow"] = serde_json::json!([">"])
        });
        assert!(matches!(
            Claims::<User>::decode(&widened),
            Err(JwtError::Signature)
        ));
        // Another signature of the right length.
        let (signed, _) = GO_USER_JWT.rsplit_once('.').unwrap();
        let forged = format!("{signed}.{}", BASE64URL_NOPAD.encode(&[7; 64]));
        assert!(matches!(
            Claims::<User>::decode(&forged),
            Err(JwtError::Signature)
        ));
    }

    #[test]
    fn encode_then_decode_gives_the_same_claims() {
        let account = KeyPair::new_account();
        let user = KeyPair::new_user();
        let mut claims = Claims::new(
            user.public_key(),
            at(1_700_000_000),
            User {
                subs: 10,
                tags: vec!["team:a".into()],
                ..User::default()
            },
        );
        claims.audience = Some("APP".into());
        claims.expires = Some(1_700_003_600);
        claims.name = Some("alice".into());
        let token = claims.encode(&account).unwrap();
        assert_eq!(claims.issuer, account.public_key());
        assert_eq!(claims.id.len(), 52, "base32 of a 256-bit hash");
        assert!(token.starts_with("eyJ0eXAiOiJKV1QiLCJhbGciOiJlZDI1NTE5LW5rZXkifQ."));
        assert_eq!(Claims::<User>::decode(&token).unwrap(), claims);

        let payload = token.split('.').nth(1).unwrap();
        let payload: serde_json::Value =
            serde_json::from_slice(&BASE64URL_NOPAD.decode(payload.as_bytes()).unwrap()).unwrap();
        assert_eq!(payload["nats"]["type"], "user");
        assert_eq!(payload["nats"]["version"], 2);
        assert_eq!(payload["aud"], "APP");
        assert!(!claims.is_expired(at(1_700_003_600)));
        assert!(claims.is_expired(at(1_700_003_601)));
    }

    #[test]
    fn the_same_claims_and_key_sign_to_the_same_token() {
        let account =
            KeyPair::from_seed("SAANDLKMXL6CUS3CP52WIXBEDN6YJ545GDKC65U5JZPPV6WH6ESWUA6YAI")
                .unwrap();
        let sign = || {
            Claims::new(
                "UDCIBGGGHCJBQPOO4SCJJBHZDR37NQGGCIWMNG2DDAKJ6WMKBMAKXIMO",
                at(1_616_247_232),
                AuthorizationResponse::deny("no"),
            )
            .encode(&account)
            .unwrap()
        };
        assert_eq!(sign(), sign(), "ed25519 signatures are deterministic");
    }

    #[test]
    fn claims_of_another_type_or_issuer_are_refused() {
        assert!(matches!(
            Claims::<AuthorizationResponse>::decode(GO_USER_JWT),
            Err(JwtError::ClaimType {
                expected: "authorization_response",
                ..
            })
        ));
        // A user key cannot sign user claims, nor a server key a response.
        let mut claims = Claims::new("U", SystemTime::now(), User::default());
        assert!(matches!(
            claims.encode(&KeyPair::new_user()),
            Err(JwtError::IssuerKind { .. })
        ));
        let server = KeyPair::new_server();
        let mut request = Claims::new("A", SystemTime::now(), AuthorizationRequest::default());
        let token = request.encode(&server).unwrap();
        assert!(matches!(
            Claims::<AuthorizationRequest>::decode(&token),
            Ok(c) if c.issuer == server.public_key()
        ));
        // Claims that say they come from an account but are typed as a request.
        let relabeled = with_payload(&token, |p| {
            p["iss"] = KeyPair::new_account().public_key().into();
        });
        assert!(matches!(
            Claims::<AuthorizationRequest>::decode(&relabeled),
            Err(JwtError::IssuerKind { .. })
        ));
        let newer = with_payload(&token, |p| p["nats"]["version"] = 3.into());
        assert!(matches!(
            Claims::<AuthorizationRequest>::decode(&newer),
            Err(JwtError::Version(3))
        ));
    }

    #[test]
    fn malformed_tokens_are_typed_errors() {
        type Check = fn(&JwtError) -> bool;
        let cases: [(&str, Check); 5] = [
            ("", |e| matches!(e, JwtError::NotThreeParts)),
            ("a.b", |e| matches!(e, JwtError::NotThreeParts)),
            ("a.b.c.d", |e| matches!(e, JwtError::NotThreeParts)),
            ("!!.b.c", |e| matches!(e, JwtError::Base64)),
            // `{"typ":"JWT","alg":"ed25519"}`: a v1 token.
            ("eyJ0eXAiOiJKV1QiLCJhbGciOiJlZDI1NTE5In0.e30.AA", |e| {
                matches!(e, JwtError::Header { .. })
            }),
        ];
        for (token, expected) in cases {
            let error = Claims::<User>::decode(token).unwrap_err();
            assert!(expected(&error), "{token:?}: {error:?}");
        }
        let huge = "a".repeat(MAX_TOKEN_SIZE + 1);
        assert!(matches!(
            Claims::<User>::decode(&huge),
            Err(JwtError::TooLarge(_))
        ));
        let no_subject = Claims::new("", SystemTime::now(), User::default());
        assert!(matches!(
            { no_subject }.encode(&KeyPair::new_account()),
            Err(JwtError::NoSubject)
        ));
        let public_only = KeyPair::from_public_key(&KeyPair::new_account().public_key()).unwrap();
        assert!(matches!(
            Claims::new("U", SystemTime::now(), User::default()).encode(&public_only),
            Err(JwtError::Sign(_))
        ));
    }
}
