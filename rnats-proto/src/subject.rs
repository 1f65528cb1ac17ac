//! NATS subjects: dot-separated tokens, optionally containing wildcards.

use std::borrow::Borrow;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Deref;
use std::str::FromStr;

use bytes::Bytes;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A NATS subject such as `orders.eu.created` or `orders.*.>`.
///
/// A valid subject is UTF-8, non-empty, made of non-empty `.`-separated tokens, free of ASCII
/// whitespace and control characters, and has the full wildcard `>` (if any) as its last token.
///
/// # When the text is checked
///
/// async-nats converts text into a subject infallibly (`Subject::from("a.b")`, `"a.b".into()`),
/// and rnats keeps that shape, so a `Subject` does **not** by itself prove the text is valid:
/// `From<&str>`, `From<String>`, [`Subject::from_static`] and [`Subject::from_utf8`] only
/// guarantee UTF-8. Every place a subject can reach the wire checks it again (one cheap pass):
/// the client's publish, request and subscribe calls refuse an invalid subject with a typed
/// error. Those built by [`FromStr`], [`Subject::validated`], [`Subject::from_bytes`],
/// `TryFrom<Bytes>`, [`Subject::from_static_validated`] and `Deserialize` are checked when
/// built. The subject and reply of a received message are only checked to be UTF-8: the
/// server relays a reply as its publisher gave it (`a..b` included), and the message is
/// delivered so, as async-nats delivers it.
///
/// The bytes live in a [`Bytes`], so subjects cut out of a received frame share that frame's
/// buffer instead of being copied.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Subject(Bytes);

impl Subject {
    /// Returns the subject as text.
    #[allow(unsafe_code)]
    pub fn as_str(&self) -> &str {
        // SAFETY: every constructor either takes a `str`/`String` or is given bytes checked
        // to be UTF-8 (`from_utf8`; `validate_subject` in `from_bytes`; `check_received` for
        // `from_checked`, whose callers are `MsgFrame`'s, on the spans checked when the frame
        // was decoded, or copied exactly by `MsgFrame::detach`), or is `unsafe` with that as
        // its contract, and the inner `Bytes` is never mutated.
        unsafe { std::str::from_utf8_unchecked(&self.0) }
    }

    /// Returns the subject's raw bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// Returns the subject as an owned `String`.
    pub fn into_string(self) -> String {
        match String::from_utf8(Vec::from(self.0)) {
            Ok(s) => s,
            // Not reachable (the bytes are UTF-8 by construction), but never worth a panic.
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        }
    }

    /// Returns `true` if the text follows the subject rules (wildcards allowed).
    pub fn is_valid(&self) -> bool {
        validate_subject(&self.0).is_ok()
    }

    /// Returns `true` if the subject is valid and any token is exactly `*` or `>`.
    ///
    /// A token such as `a*` is a literal, not a wildcard, as on the server.
    pub fn has_wildcards(&self) -> bool {
        scan(&self.0).unwrap_or(false)
    }

    /// Builds a subject from a string constant without copying or checking it; usable in
    /// `const` items. See [`Subject::from_static_validated`] for a checked constant.
    pub const fn from_static(s: &'static str) -> Subject {
        Subject(Bytes::from_static(s.as_bytes()))
    }

    /// Builds a subject from a string constant without copying it, after checking it.
    ///
    /// # Panics
    ///
    /// Panics if `s` is not a valid subject, which in a `const` item is a compile error.
    /// Meant for literals; use [`Subject::validated`] or [`FromStr`] for anything else.
    pub const fn from_static_validated(s: &'static str) -> Subject {
        match check_static(s.as_bytes()) {
            None => Subject::from_static(s),
            Some(SubjectCause::Empty) => panic!("invalid static subject: empty"),
            Some(SubjectCause::EmptyToken) => panic!("invalid static subject: empty token"),
            Some(SubjectCause::MisplacedFullWildcard) => {
                panic!("invalid static subject: `>` must be the last token")
            }
            Some(_) => panic!("invalid static subject: whitespace or control character"),
        }
    }

    /// Builds a subject from `s` after checking it against the subject rules.
    ///
    /// Its error is async-nats' single [`SubjectError::InvalidFormat`]; parse with [`FromStr`]
    /// (`s.parse::<Subject>()`) to learn which rule the text breaks ([`SubjectCause`]).
    pub fn validated(s: impl AsRef<str>) -> Result<Subject, SubjectError> {
        Ok(s.as_ref().parse::<Subject>()?)
    }

    /// Builds a subject from bytes without copying them, checking only that they are UTF-8
    /// (like `From<&str>`, the subject rules are checked where it is used).
    pub fn from_utf8(bytes: impl Into<Bytes>) -> Result<Subject, std::str::Utf8Error> {
        let bytes = bytes.into();
        std::str::from_utf8(&bytes)?;
        Ok(Subject(bytes))
    }

    /// Builds a subject from bytes without copying them, after checking the subject rules.
    pub fn from_bytes(bytes: Bytes) -> Result<Subject, SubjectCause> {
        validate_subject(&bytes)?;
        Ok(Subject(bytes))
    }

    /// Builds a subject from bytes without checking anything, as async-nats allows.
    ///
    /// # Safety
    ///
    /// `bytes` must be valid UTF-8: [`Subject::as_str`] relies on it. The subject rules are
    /// still checked where the subject is used, as for `From<&str>`.
    #[allow(unsafe_code)]
    pub const unsafe fn from_bytes_unchecked(bytes: Bytes) -> Subject {
        Subject(bytes)
    }

    /// Gives back the underlying bytes.
    pub fn into_bytes(self) -> Bytes {
        self.0
    }

    /// A subject from bytes [`check_received`] has passed (which [`Subject::as_str`] relies
    /// on: each caller must keep to it).
    #[inline(always)]
    pub(crate) fn from_checked(bytes: Bytes) -> Subject {
        debug_assert!(std::str::from_utf8(&bytes).is_ok(), "unchecked subject");
        Subject(bytes)
    }
}

/// What a subject or reply read from a server frame (already split on blanks) must be. The
/// server relays a reply (and, to a wildcard subscription, a subject) as its publisher gave
/// it, whatever the subject rules say, so only what [`Subject::as_str`] relies on is required
/// here: UTF-8. async-nats takes such messages too; answering on such a reply is refused by
/// the publish check.
#[inline(always)]
pub(crate) fn check_received(bytes: &[u8]) -> Result<(), SubjectCause> {
    if ascii(bytes) || std::str::from_utf8(bytes).is_ok() {
        Ok(())
    } else {
        Err(SubjectCause::NotUtf8)
    }
}

/// Whether `s` is ASCII: one of 8 to 16 bytes in two words (its first eight bytes and its last
/// eight), where `is_ascii` is a call with its own setup.
#[inline(always)]
fn ascii(s: &[u8]) -> bool {
    if (8..=16).contains(&s.len())
        && let (Some(first), Some(last)) = (word_at(s, 0), word_at(s, s.len() - 8))
    {
        return (first | last) & HIGH_BITS == 0;
    }
    s.is_ascii()
}

/// The eight bytes of `s` from `at` as one little-endian word, if there are eight.
#[inline(always)]
fn word_at(s: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(
        s.get(at..at.checked_add(8)?)?.try_into().ok()?,
    ))
}

/// Whether two subjects are the same bytes. For the hot paths that remember the last subject
/// they checked, to skip checking it again: one of 8 to 16 bytes is compared as two words
/// (its first eight bytes and its last eight, overlapping below 16), where comparing slices
/// is a call.
#[inline(always)]
pub fn same_subject(a: &[u8], b: &[u8]) -> bool {
    let len = a.len();
    if len != b.len() {
        return false;
    }
    if (8..=16).contains(&len) {
        return word_at(a, 0) == word_at(b, 0) && word_at(a, len - 8) == word_at(b, len - 8);
    }
    a == b
}

/// Checks `s` against the subject rules in a single pass.
///
/// This is the check behind every [`Subject`] constructor. Wildcard tokens
/// (`*` anywhere, `>` last) are accepted; use [`validate_publish_subject`]
/// where they are not.
pub fn validate_subject(s: &[u8]) -> Result<(), SubjectCause> {
    scan(s).map(|_| ())
}

/// Checks `s` as a subject to publish to: a valid subject with no wildcard
/// tokens. One pass, for the publish hot path.
pub fn validate_publish_subject(s: &[u8]) -> Result<(), SubjectCause> {
    match scan(s)? {
        false => Ok(()),
        true => Err(SubjectCause::Wildcard),
    }
}

/// Byte classes for [`scan`], as bits so one pass can OR them together.
const INVALID: u8 = 1;
const NON_ASCII: u8 = 2;
const WILDCARD: u8 = 4;

const CLASSES: [u8; 256] = {
    let mut table = [0; 256];
    let mut b = 0;
    while b < 256 {
        table[b] = match b as u8 {
            // Space, tabs, CR/LF and the other control bytes would break the
            // whitespace-delimited wire protocol.
            0..=b' ' | 0x7f => INVALID,
            0x80.. => NON_ASCII,
            b'*' | b'>' => WILDCARD,
            _ => 0,
        };
        b += 1;
    }
    table
};

/// Validates `s`; returns whether any token is a wildcard.
///
/// This runs on every publish and on both subjects of every received message, and JetStream
/// ack subjects are 60 to 100 bytes long, so the common case (plain ASCII, no `*`/`>`) looks at
/// eight bytes per step ([`scan_word`]); the few bytes past the last full word, and the rare
/// subjects with non-ASCII bytes or wildcards, take the byte-wise path.
#[inline]
fn scan(s: &[u8]) -> Result<bool, SubjectCause> {
    match scan_short(s) {
        Some(found) => found,
        None => scan_long(s),
    }
}

/// [`scan`] of a subject of 8 to 16 bytes (`bench.pub`, `orders.new`) in two words, the first
/// eight bytes and the last eight, which overlap when it is shorter than 16: no loop and no
/// tail, where the general path's setup costs more than such a subject's bytes. Only plain
/// subjects are decided here, printable ASCII without `*` and `>`, where the dots alone break
/// a rule; `None` leaves anything else to [`scan_long`], which tells the causes apart.
#[inline(always)]
fn scan_short(s: &[u8]) -> Option<Result<bool, SubjectCause>> {
    if s.len() > 16 {
        return None;
    }
    let first = word_at(s, 0)?;
    let last = word_at(s, s.len() - 8)?;
    if not_plain(first) | not_plain(last) != 0 {
        return None;
    }
    // Every two neighbouring bytes lie within one of the words, but for the pair across
    // them at 16 bytes: the byte before the last word stands in as its previous byte.
    let prev_dot = match s.len() {
        9.. if s[s.len() - 9] == b'.' => HIGH_BIT,
        _ => 0,
    };
    let first_dots = bytes_equal(first, b'.');
    let last_dots = bytes_equal(last, b'.');
    // A leading dot counts as one after a dot; a trailing one is the last word's top byte.
    let empty_token = (first_dots & ((first_dots << 8) | HIGH_BIT))
        | (last_dots & ((last_dots << 8) | prev_dot))
        | (last_dots >> 63);
    Some(match empty_token {
        0 => Ok(false),
        _ => Err(SubjectCause::EmptyToken),
    })
}

/// [`scan`] of a plain subject of 8 bytes or more (inboxes, JetStream ack subjects: 30 to 100
/// bytes), as [`scan_short`] does it for 8 to 16: a word a step, asking only whether some byte
/// is not plain, and the last eight bytes as one word overlapping the one before, instead of
/// a step per byte past the last full word. `None` leaves anything not plain, and anything
/// shorter, to the exact path, which tells the causes apart.
#[inline(always)]
fn scan_plain(s: &[u8]) -> Option<Result<bool, SubjectCause>> {
    let word = |at: usize| word_at(s, at);
    let len = s.len();
    if len < 8 {
        return None;
    }
    let mut odd = 0;
    let mut empty_token = 0;
    // A leading dot makes an empty first token, so start as if after one.
    let mut prev_dot = HIGH_BIT;
    let mut at = 0;
    while at + 8 <= len {
        let w = word(at)?;
        odd |= not_plain(w);
        let dots = bytes_equal(w, b'.');
        empty_token |= dots & ((dots << 8) | prev_dot);
        prev_dot = dots >> 56;
        at += 8;
    }
    if at < len {
        // Every pair of neighbours before the last eight bytes was seen above; those within
        // them are seen here, some again, which changes nothing.
        let w = word(len.checked_sub(8)?)?;
        odd |= not_plain(w);
        let dots = bytes_equal(w, b'.');
        empty_token |= dots & (dots << 8);
        prev_dot = dots >> 56;
    }
    if odd != 0 {
        return None;
    }
    // `prev_dot` is now the last byte's: a trailing dot ends in an empty token.
    Some(match empty_token | prev_dot {
        0 => Ok(false),
        _ => Err(SubjectCause::EmptyToken),
    })
}

/// Non-zero when some byte of `word` is not plain: a control byte or space, DEL, a byte with
/// the high bit set, `*` or `>`. Only whether it is zero means anything: the borrow tests
/// below answer "is there such a byte" exactly but may mark bytes above a true one, and the
/// short path needs no more than the answer, in fewer operations than an exact mask.
#[inline(always)]
fn not_plain(word: u64) -> u64 {
    // Subtracting 0x21 from each byte borrows out of one that is below it (ASCII only: a byte
    // with its high bit set is excluded by `!word`, and caught by `high` instead).
    let below = word.wrapping_sub(ONES * 0x21) & !word;
    // The low seven bits plus one reach the high bit only from 0x7f; OR in the bytes at or
    // above 0x80.
    let high = ((word & LOW_BITS) + ONES) | word;
    ((below | high) & HIGH_BITS) | has_byte(word, b'*') | has_byte(word, b'>')
}

/// Non-zero when some byte of `word` equals `byte` (the classic borrow test; exact as an
/// answer, not as a mask).
#[inline(always)]
fn has_byte(word: u64, byte: u8) -> u64 {
    let x = word ^ (ONES * u64::from(byte));
    x.wrapping_sub(ONES) & !x & HIGH_BITS
}

/// [`scan`] of any subject: a plain one of 8 bytes or more by [`scan_plain`], any other
/// eight bytes a step through the exact rules, then the bytes past the last full word.
#[inline(never)]
fn scan_long(s: &[u8]) -> Result<bool, SubjectCause> {
    if let Some(found) = scan_plain(s) {
        return found;
    }
    if s.is_empty() {
        return Err(SubjectCause::Empty);
    }
    let mut words = s.chunks_exact(8);
    let mut flags = WordFlags {
        // A leading dot makes an empty first token, so start as if after one.
        prev_dot: HIGH_BIT,
        ..WordFlags::default()
    };
    for word in &mut words {
        let word = u64::from_le_bytes([
            word[0], word[1], word[2], word[3], word[4], word[5], word[6], word[7],
        ]);
        scan_word(word, &mut flags);
    }
    let mut classes = 0;
    let mut prev = if flags.prev_dot != 0 { b'.' } else { b'a' };
    let mut empty_token = flags.empty_token != 0;
    for &b in words.remainder() {
        classes |= CLASSES[b as usize];
        empty_token |= (b == b'.') & (prev == b'.');
        prev = b;
    }
    if classes & INVALID != 0 || flags.invalid != 0 {
        return Err(SubjectCause::InvalidCharacter);
    }
    if empty_token || prev == b'.' {
        return Err(SubjectCause::EmptyToken);
    }
    if (classes & (NON_ASCII | WILDCARD)) == 0 && (flags.non_ascii | flags.wildcard) == 0 {
        return Ok(false);
    }
    scan_rare(s)
}

/// The rest of [`scan`] for the rare subjects with non-ASCII bytes (checked as UTF-8) or
/// `*`/`>` bytes (wildcards only as whole tokens: `a*` is literal). Out of line, so the common
/// case's code stays small.
#[cold]
#[inline(never)]
fn scan_rare(s: &[u8]) -> Result<bool, SubjectCause> {
    if std::str::from_utf8(s).is_err() {
        return Err(SubjectCause::NotUtf8);
    }
    let mut wildcard = false;
    let mut tokens = s.split(|&b| b == b'.').peekable();
    while let Some(token) = tokens.next() {
        match token {
            b">" if tokens.peek().is_some() => return Err(SubjectCause::MisplacedFullWildcard),
            b"*" | b">" => wildcard = true,
            _ => {}
        }
    }
    Ok(wildcard)
}

/// What [`scan_word`] found so far; each field is a mask of byte high bits, zero for "none".
#[derive(Default)]
struct WordFlags {
    invalid: u64,
    non_ascii: u64,
    wildcard: u64,
    empty_token: u64,
    /// `HIGH_BIT` when the byte before the current word was a dot.
    prev_dot: u64,
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH_BITS: u64 = ONES * 0x80;
const LOW_BITS: u64 = ONES * 0x7f;
/// The high bit of the lowest byte: where the previous word's last dot lands.
const HIGH_BIT: u64 = 0x80;

/// The high bit of each byte of `word` that equals `byte`, exactly (no borrow crosses bytes:
/// `(x & 0x7f) + 0x7f` stays within its byte).
pub(crate) fn bytes_equal(word: u64, byte: u8) -> u64 {
    let x = word ^ (ONES * u64::from(byte));
    !(((x & LOW_BITS) + LOW_BITS) | x) & HIGH_BITS
}

/// Classifies the eight bytes of `word` (first byte lowest) the way [`CLASSES`] and the
/// empty-token check do byte by byte.
fn scan_word(word: u64, flags: &mut WordFlags) {
    flags.non_ascii |= word & HIGH_BITS;
    // An ASCII byte is below 0x21 when adding 0x5f to it leaves its high bit clear; bytes with
    // the high bit set are left to the UTF-8 check.
    let control = !((word & LOW_BITS) + ONES * 0x5f) & !word & HIGH_BITS;
    flags.invalid |= control | bytes_equal(word, 0x7f);
    flags.wildcard |= bytes_equal(word, b'*') | bytes_equal(word, b'>');
    let dots = bytes_equal(word, b'.');
    flags.empty_token |= dots & ((dots << 8) | flags.prev_dot);
    flags.prev_dot = dots >> 56;
}

/// The subject rules of [`scan`] as a `const fn`, for literals checked at compile time. The
/// input comes from a `str`, so UTF-8 is not checked.
const fn check_static(s: &[u8]) -> Option<SubjectCause> {
    if s.is_empty() {
        return Some(SubjectCause::Empty);
    }
    let mut token_start = 0;
    let mut i = 0;
    while i <= s.len() {
        if i == s.len() || s[i] == b'.' {
            if i == token_start {
                return Some(SubjectCause::EmptyToken);
            }
            if i < s.len() && i - token_start == 1 && s[token_start] == b'>' {
                return Some(SubjectCause::MisplacedFullWildcard);
            }
            token_start = i + 1;
        } else if s[i] <= b' ' || s[i] == 0x7f {
            return Some(SubjectCause::InvalidCharacter);
        }
        i += 1;
    }
    None
}

/// Why a text is not a valid [`Subject`], as async-nats reports it: one variant for every
/// broken rule. [`SubjectCause`] tells the rules apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SubjectError {
    /// The text breaks a subject rule: it is empty, has an empty token, white space or a
    /// control character, or a `>` before its last token.
    #[error("invalid subject format")]
    InvalidFormat,
}

impl From<SubjectCause> for SubjectError {
    fn from(_: SubjectCause) -> Self {
        SubjectError::InvalidFormat
    }
}

/// Which subject rule a byte string breaks (rnats' detail behind [`SubjectError`]).
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SubjectCause {
    /// The subject has no characters at all.
    #[error("subject is empty")]
    Empty,
    /// The subject starts or ends with `.`, or contains `..`.
    #[error("subject contains an empty token")]
    EmptyToken,
    /// The subject contains ASCII whitespace or a control character.
    #[error("subject contains whitespace or a control character")]
    InvalidCharacter,
    /// The full wildcard `>` appears before the last token.
    #[error("full wildcard `>` must be the last token of a subject")]
    MisplacedFullWildcard,
    /// The subject bytes are not valid UTF-8.
    #[error("subject is not valid UTF-8")]
    NotUtf8,
    /// A wildcard token (`*`, `>`) where only a literal subject may go, as in a publish.
    #[error("wildcards may be subscribed to but not published to")]
    Wildcard,
}

impl FromStr for Subject {
    type Err = SubjectCause;

    /// Checked, unlike `From<&str>`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        validate_subject(s.as_bytes())?;
        Ok(Subject(Bytes::copy_from_slice(s.as_bytes())))
    }
}

/// Unchecked (see [`Subject`]): the subject rules are checked where the subject is used.
/// This also makes `TryFrom<&str>` infallible; use [`FromStr`] or [`Subject::validated`] to
/// check at once.
impl From<&str> for Subject {
    fn from(s: &str) -> Self {
        Subject(Bytes::copy_from_slice(s.as_bytes()))
    }
}

/// Unchecked, like `From<&str>`; reuses the string's buffer.
impl From<String> for Subject {
    fn from(s: String) -> Self {
        Subject(Bytes::from(s))
    }
}

/// Unchecked, like `From<&str>`.
impl From<&String> for Subject {
    fn from(s: &String) -> Self {
        Subject::from(s.as_str())
    }
}

/// Checked, like [`Subject::from_bytes`].
impl TryFrom<Bytes> for Subject {
    type Error = SubjectCause;

    fn try_from(bytes: Bytes) -> Result<Self, Self::Error> {
        Subject::from_bytes(bytes)
    }
}

impl fmt::Display for Subject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Debug for Subject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

// Hash as a `str` so that `Borrow<str>` is coherent: a `HashMap<Subject, _>`
// can then be queried with a plain `&str`.
impl Hash for Subject {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl Borrow<str> for Subject {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for Subject {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl Deref for Subject {
    type Target = str;

    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl PartialEq<str> for Subject {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Subject {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<String> for Subject {
    fn eq(&self, other: &String) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<Subject> for str {
    fn eq(&self, other: &Subject) -> bool {
        self == other.as_str()
    }
}

impl PartialEq<Subject> for &str {
    fn eq(&self, other: &Subject) -> bool {
        *self == other.as_str()
    }
}

impl PartialEq<Subject> for String {
    fn eq(&self, other: &Subject) -> bool {
        self == other.as_str()
    }
}

impl Serialize for Subject {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// Checked: an invalid subject is a deserialization error.
impl<'de> Deserialize<'de> for Subject {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let s = String::deserialize(deserializer)?;
        validate_subject(s.as_bytes()).map_err(serde::de::Error::custom)?;
        Ok(Subject::from(s))
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    /// The byte-wise rules [`scan`] must agree with.
    fn scan_bytewise(s: &[u8]) -> Result<bool, SubjectCause> {
        if s.is_empty() {
            return Err(SubjectCause::Empty);
        }
        let mut classes = 0;
        let mut prev = b'.';
        let mut empty_token = false;
        for &b in s {
            classes |= CLASSES[b as usize];
            empty_token |= (b == b'.') & (prev == b'.');
            prev = b;
        }
        if classes & INVALID != 0 {
            return Err(SubjectCause::InvalidCharacter);
        }
        if empty_token || prev == b'.' {
            return Err(SubjectCause::EmptyToken);
        }
        if classes & NON_ASCII != 0 && std::str::from_utf8(s).is_err() {
            return Err(SubjectCause::NotUtf8);
        }
        let mut wildcard = false;
        let mut tokens = s.split(|&b| b == b'.').peekable();
        while let Some(token) = tokens.next() {
            match token {
                b">" if tokens.peek().is_some() => {
                    return Err(SubjectCause::MisplacedFullWildcard);
                }
                b"*" | b">" => wildcard = true,
                _ => {}
            }
        }
        Ok(wildcard)
    }

    proptest! {
        #[test]
        fn word_scan_agrees_with_the_bytewise_rules(
            s in proptest::collection::vec(
                prop_oneof![
                    4 => Just(b'a'),
                    3 => Just(b'.'),
                    1 => Just(b'*'),
                    1 => Just(b'>'),
                    1 => Just(b' '),
                    1 => Just(0x7f_u8),
                    1 => Just(0x20_u8),
                    1 => Just(0x21_u8),
                    1 => any::<u8>(),
                ],
                0..40,
            )
        ) {
            prop_assert_eq!(scan(&s), scan_bytewise(&s));
        }
    }

    #[test]
    fn short_scan_sees_every_dot_rule() {
        // 8 bytes: one word, read twice.
        assert_eq!(scan(b"abcd.efg"), Ok(false));
        assert_eq!(scan(b".abcdefg"), Err(SubjectCause::EmptyToken));
        assert_eq!(scan(b"abcdefg."), Err(SubjectCause::EmptyToken));
        assert_eq!(scan(b"abc..efg"), Err(SubjectCause::EmptyToken));
        // 16 bytes: the words meet between bytes 7 and 8.
        assert_eq!(scan(b"abcdefg..bcdefgh"), Err(SubjectCause::EmptyToken));
        assert_eq!(scan(b"abcdefg.abcdefgh"), Ok(false));
        assert_eq!(scan(b"abcdefgh.bcdefgh"), Ok(false));
        assert_eq!(scan(b"abcdefghabcdefg."), Err(SubjectCause::EmptyToken));
        // Overlapping words, 9 to 15 bytes.
        assert_eq!(scan(b"bench.pub"), Ok(false));
        assert_eq!(scan(b"bench..ub"), Err(SubjectCause::EmptyToken));
        assert_eq!(scan(b"abcdefgh."), Err(SubjectCause::EmptyToken));
        assert_eq!(scan(b"a.c.e.g.i.k.m.o"), Ok(false));
        // Anything not plain is decided by the general path, cause for cause.
        assert_eq!(scan(b"bench.*"), Ok(true));
        assert_eq!(scan(b"bench.*.x"), Ok(true));
        assert_eq!(scan(b"bench.>.x"), Err(SubjectCause::MisplacedFullWildcard));
        assert_eq!(scan(b"bench. ..x"), Err(SubjectCause::InvalidCharacter));
        assert_eq!(scan(b"bench.\xffx"), Err(SubjectCause::NotUtf8));
        assert_eq!(scan("bench.\u{e9}t\u{e9}".as_bytes()), Ok(false));
    }

    proptest! {
        /// The word paths against the byte-wise rules, at the lengths they take.
        #[test]
        fn word_scans_agree_with_the_bytewise_rules(
            s in proptest::collection::vec(
                prop_oneof![
                    6 => Just(b'a'),
                    4 => Just(b'.'),
                    1 => Just(b'*'),
                    1 => Just(b'>'),
                    1 => Just(b' '),
                    1 => any::<u8>(),
                ],
                7..50,
            )
        ) {
            prop_assert_eq!(scan(&s), scan_bytewise(&s));
        }
    }

    #[test]
    fn word_scans_see_every_byte_value_at_every_position() {
        // The word paths only ask whether some byte is not plain; each value at each place
        // of each length they take (two words to 16 bytes, the long path past it, with and
        // without a last word that overlaps) must still be decided as the byte-wise rules say.
        for len in 8..=41 {
            for at in 0..len {
                for b in 0..=255u8 {
                    let mut s = vec![b'a'; len];
                    s[at] = b;
                    assert_eq!(scan(&s), scan_bytewise(&s), "{s:?}");
                    // The byte as a token of its own, where `*` and `>` are wildcards.
                    if at >= 2 {
                        s[at - 1] = b'.';
                    }
                    if at + 2 < len {
                        s[at + 1] = b'.';
                    }
                    assert_eq!(scan(&s), scan_bytewise(&s), "{s:?}");
                }
            }
        }
    }

    #[test]
    fn long_scan_sees_every_dot_pair_and_both_ends() {
        // Lengths past 16 with and without an overlapping last word: a pair of dots at each
        // place, and a dot at either end.
        for len in 17..=41 {
            let plain: Vec<u8> = (0..len).map(|i| b'a' + (i % 26) as u8).collect();
            assert_eq!(scan(&plain), Ok(false), "{plain:?}");
            for at in 0..len - 1 {
                let mut s = plain.clone();
                s[at] = b'.';
                s[at + 1] = b'.';
                assert_eq!(scan(&s), Err(SubjectCause::EmptyToken), "{s:?}");
                assert_eq!(scan(&s), scan_bytewise(&s), "{s:?}");
            }
            for at in [0, len - 1] {
                let mut s = plain.clone();
                s[at] = b'.';
                assert_eq!(scan(&s), Err(SubjectCause::EmptyToken), "{s:?}");
            }
        }
        let ack = b"$JS.ACK.ORDERS.workers.1.42.42.1733370000000000000.0";
        assert_eq!(scan(ack), Ok(false));
        assert_eq!(scan(b"_INBOX.Abcdefghijklmnopqrstuv.12345"), Ok(false));
    }

    #[test]
    fn word_scan_sees_a_dot_pair_across_words() {
        assert_eq!(scan(b"abcdefg..bc"), Err(SubjectCause::EmptyToken));
        assert_eq!(scan(b"abcdefgh.abcdefg."), Err(SubjectCause::EmptyToken));
        assert_eq!(scan(b".abcdefghi"), Err(SubjectCause::EmptyToken));
        assert_eq!(scan(b"abcdefg.hijklmn.x"), Ok(false));
        assert_eq!(
            scan(b"abcdefg\x7fhijk"),
            Err(SubjectCause::InvalidCharacter)
        );
    }

    use super::*;

    #[test]
    fn publish_subjects_must_be_literal() {
        for s in ["a", "foo.bar", "a*.b>", "*a", "foo.>x", "ü.ß"] {
            assert_eq!(validate_publish_subject(s.as_bytes()), Ok(()), "{s}");
        }
        for s in ["*", ">", "foo.*", "foo.>", "*.bar", "a.*.b"] {
            assert_eq!(
                validate_publish_subject(s.as_bytes()),
                Err(SubjectCause::Wildcard),
                "{s}"
            );
        }
        assert_eq!(
            validate_publish_subject(b"a..b"),
            Err(SubjectCause::EmptyToken)
        );
        assert_eq!(
            validate_publish_subject(b">.a"),
            Err(SubjectCause::MisplacedFullWildcard)
        );
    }

    #[test]
    fn accepts_plain_and_wildcard_subjects() {
        for s in [
            "a",
            "foo.bar",
            "foo.*.baz",
            "foo.>",
            ">",
            "*",
            "a*.b>",
            "ü.ß",
        ] {
            assert!(s.parse::<Subject>().is_ok(), "{s}");
        }
    }

    #[test]
    fn rejects_each_rule() {
        let cases: &[(&[u8], SubjectCause)] = &[
            (b"", SubjectCause::Empty),
            (b".", SubjectCause::EmptyToken),
            (b".a", SubjectCause::EmptyToken),
            (b"a.", SubjectCause::EmptyToken),
            (b"a..b", SubjectCause::EmptyToken),
            (b"a b", SubjectCause::InvalidCharacter),
            (b"a\tb", SubjectCause::InvalidCharacter),
            (b"a\r\n", SubjectCause::InvalidCharacter),
            (b"a\x7f", SubjectCause::InvalidCharacter),
            (b">.a", SubjectCause::MisplacedFullWildcard),
            (b"a.>.b", SubjectCause::MisplacedFullWildcard),
            (b"a.\xff", SubjectCause::NotUtf8),
        ];
        for (input, err) in cases {
            assert_eq!(validate_subject(input).as_ref(), Err(err), "{input:?}");
        }
    }

    #[test]
    fn wildcard_detection_is_per_token() {
        assert!(Subject::from_static("a.*").has_wildcards());
        assert!(Subject::from_static("a.>").has_wildcards());
        assert!(!Subject::from_static("a*.b>").has_wildcards());
        // An invalid subject has no wildcards to speak of.
        assert!(!Subject::from("a b.*").has_wildcards());
    }

    #[test]
    fn infallible_conversions_keep_text_and_report_validity() {
        for text in ["a.b", "a b", "", "a..b", "x\r\nPUB y 0"] {
            let from_str = Subject::from(text);
            let from_string = Subject::from(text.to_owned());
            let into: Subject = text.into();
            assert_eq!(from_str.as_str(), text);
            assert_eq!(from_string, from_str);
            assert_eq!(into, from_str);
            assert_eq!(
                from_str.is_valid(),
                validate_subject(text.as_bytes()).is_ok()
            );
            assert_eq!(from_str.clone().into_string(), text);
        }
        assert!(Subject::from("orders.>").is_valid());
        assert!(!Subject::from("a b").is_valid());
    }

    #[test]
    fn checked_constructors_refuse_invalid_text() {
        assert_eq!(Subject::validated("a.b").unwrap(), "a.b");
        // async-nats' one variant for every rule; the cause through `FromStr`.
        assert_eq!(Subject::validated("a b"), Err(SubjectError::InvalidFormat));
        assert_eq!(Subject::validated(""), Err(SubjectError::InvalidFormat));
        assert_eq!(
            "a b".parse::<Subject>(),
            Err(SubjectCause::InvalidCharacter)
        );
        assert_eq!("a..b".parse::<Subject>(), Err(SubjectCause::EmptyToken));
        assert_eq!(
            Subject::try_from(Bytes::from_static(b"a\r\n")),
            Err(SubjectCause::InvalidCharacter)
        );
        assert_eq!(
            Subject::try_from(Bytes::from_static(b"a.b")).unwrap(),
            "a.b"
        );
        assert!(Subject::from_utf8(&b"\xff"[..]).is_err());
        assert_eq!(Subject::from_utf8("a b").unwrap(), "a b");
    }

    #[test]
    fn static_constructors_are_const() {
        const PLAIN: Subject = Subject::from_static("events.data");
        const CHECKED: Subject = Subject::from_static_validated("foo.*.>");
        assert_eq!(PLAIN.as_str(), "events.data");
        assert_eq!(CHECKED, "foo.*.>");
    }

    #[test]
    fn static_check_matches_runtime_rules() {
        let cases = [
            "a", "a.b", "*", ">", "a.>", "a.*.b", "a*.b>", "ü.ß", "", ".", ".a", "a.", "a..b",
            "a b", "a\tb", "a\r\n", "a\x7f", ">.a", "a.>.b", ">>.a",
        ];
        for s in cases {
            assert_eq!(
                check_static(s.as_bytes()),
                validate_subject(s.as_bytes()).err(),
                "{s:?}"
            );
        }
    }

    #[test]
    fn compares_with_strings_both_ways() {
        let s = Subject::from("a.b");
        let owned = String::from("a.b");
        assert!(s == "a.b" && s == *"a.b" && s == owned);
        assert!("a.b" == s && *"a.b" == s && owned == s);
        assert_eq!(s.as_ref() as &str, "a.b");
        assert_eq!(&*s, "a.b");
    }

    #[test]
    fn compares_hashes_and_borrows_like_str() {
        use std::collections::HashSet;
        let s = Subject::from_static("foo.bar");
        assert_eq!(s, "foo.bar");
        assert_eq!(format!("{s} {s:?}"), "foo.bar \"foo.bar\"");
        let set: HashSet<Subject> = [s.clone()].into_iter().collect();
        assert!(set.contains("foo.bar"));
        assert_eq!(s.len(), 7);
    }

    #[test]
    fn serde_round_trip_validates() {
        let s = Subject::from_static("a.b");
        let json = serde_json::to_string(&s).unwrap();
        assert_eq!(json, "\"a.b\"");
        assert_eq!(serde_json::from_str::<Subject>(&json).unwrap(), s);
        assert!(serde_json::from_str::<Subject>("\"a..b\"").is_err());
    }

    #[test]
    #[should_panic(expected = "invalid static subject")]
    fn from_static_validated_panics_on_invalid() {
        let _ = Subject::from_static_validated("a b");
    }

    #[test]
    fn same_subject_is_equality_at_every_length_and_position() {
        for len in 0..=40usize {
            let a: Vec<u8> = (0..len).map(|i| b'a' + (i % 26) as u8).collect();
            assert!(same_subject(&a, &a.clone()), "{len}");
            for at in 0..len {
                let mut b = a.clone();
                b[at] ^= 0x01;
                assert!(!same_subject(&a, &b), "{len} at {at}");
            }
            let mut longer = a.clone();
            longer.push(b'z');
            assert!(
                !same_subject(&a, &longer) && !same_subject(&longer, &a),
                "{len}"
            );
        }
    }

    #[test]
    fn ascii_at_every_length_and_position() {
        for len in 0..=40usize {
            let plain: Vec<u8> = (0..len).map(|i| b'a' + (i % 26) as u8).collect();
            assert!(ascii(&plain), "{len}");
            for at in 0..len {
                let mut high = plain.clone();
                high[at] |= 0x80;
                assert!(!ascii(&high), "{len} at {at}");
            }
        }
    }
}
