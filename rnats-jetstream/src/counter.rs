//! Distributed counters (ADR-49): streams with `allow_message_counter`, where every subject
//! is a counter the server adds to.
//!
//! A publish carries a delta in `Nats-Incr`; the server loads the subject's last value, adds
//! the delta, stores `{"val":"<total>"}` and answers with the total. Values are big integers
//! (the server uses Go's `big.Int`), so they can pass `i64` and even `i128`: rnats keeps them
//! as [`CounterValue`], an exact decimal.
//!
//! Why a decimal of our own rather than a big-integer crate: the server does the arithmetic
//! (ADR-49), the client only carries values to and from it, and a checked decimal string is
//! exact at any size without a dependency. [`CounterValue`] still adds exactly (for summing
//! sources, say), converts to the machine integers when the value fits, and parses from and
//! prints to the decimal text any big-integer crate (`num-bigint`'s `BigInt::from_str`) reads.
//!
//! ```no_run
//! # async fn run(js: rnats_jetstream::Context) -> Result<(), rnats_jetstream::counter::CounterError> {
//! let hits = js.counter("HITS").await?;
//! let total = hits.add("hits.home", 1).await?;
//! let entry = hits.get("hits.home").await?;
//! assert_eq!(entry.value, total);
//! # Ok(()) }
//! ```

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::fmt;
use std::ops::{Add, Neg};
use std::str::FromStr;

use bytes::Bytes;
use futures_util::stream::{self, BoxStream, StreamExt};
use rnats_core::error::Error;
use rnats_core::subject::ToSubject;
use rnats_core::{HeaderMap, Message, StatusCode};
use serde::{Deserialize, Serialize};

use crate::context::{Context, Publish, PublishErrorKind};
use crate::errors::ErrorCode;
use crate::features::Feature;
use crate::stream::Stream;

/// The header with a counter publish's delta.
pub const NATS_INCR: &str = "Nats-Incr";
/// The header with a sourced counter's last seen value per source stream and subject.
pub const NATS_COUNTER_SOURCES: &str = "Nats-Counter-Sources";

/// The most subjects one multi-get may match; nats-server refuses more (ADR-31).
pub const MAX_MULTI_GET: usize = 1024;

/// An integer of any size, exactly as the server stores it: a sign and decimal digits.
#[derive(Clone, PartialEq, Eq, Hash, Default)]
pub struct CounterValue {
    negative: bool,
    /// Most significant first, no leading zeros; empty for zero.
    digits: Vec<u8>,
}

impl CounterValue {
    /// Zero.
    pub const fn zero() -> CounterValue {
        CounterValue {
            negative: false,
            digits: Vec::new(),
        }
    }

    /// Whether the value is zero.
    pub fn is_zero(&self) -> bool {
        self.digits.is_empty()
    }

    /// Whether the value is below zero.
    pub fn is_negative(&self) -> bool {
        self.negative
    }

    /// The value as an `i64`, when it fits.
    pub fn to_i64(&self) -> Option<i64> {
        self.to_i128().and_then(|v| i64::try_from(v).ok())
    }

    /// The value as an `i128`, when it fits.
    pub fn to_i128(&self) -> Option<i128> {
        let mut value: i128 = 0;
        for &digit in &self.digits {
            let digit = i128::from(digit);
            value = value.checked_mul(10)?;
            value = if self.negative {
                value.checked_sub(digit)?
            } else {
                value.checked_add(digit)?
            };
        }
        Some(value)
    }

    /// The header text of a delta: always signed (`+5`, `-3`, `+0`), as ADR-49 writes them.
    fn to_delta(&self) -> String {
        if self.negative {
            self.to_string()
        } else {
            format!("+{self}")
        }
    }

    fn from_parts(negative: bool, mut digits: Vec<u8>) -> CounterValue {
        let zeros = digits.iter().take_while(|&&d| d == 0).count();
        digits.drain(..zeros);
        CounterValue {
            negative: negative && !digits.is_empty(),
            digits,
        }
    }
}

/// Compares digit strings without signs.
fn compare_magnitude(a: &[u8], b: &[u8]) -> Ordering {
    a.len().cmp(&b.len()).then_with(|| a.cmp(b))
}

/// `a + b` on magnitudes.
fn add_magnitude(a: &[u8], b: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(a.len().max(b.len()) + 1);
    let (mut i, mut j, mut carry) = (a.len(), b.len(), 0u8);
    while i > 0 || j > 0 || carry > 0 {
        let mut sum = carry;
        if i > 0 {
            i -= 1;
            sum += a[i];
        }
        if j > 0 {
            j -= 1;
            sum += b[j];
        }
        out.push(sum % 10);
        carry = sum / 10;
    }
    out.reverse();
    out
}

/// `a - b` on magnitudes, with `a >= b`.
fn sub_magnitude(a: &[u8], b: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(a.len());
    let (mut j, mut borrow) = (b.len(), 0i8);
    for i in (0..a.len()).rev() {
        let mut digit = a[i] as i8 - borrow;
        if j > 0 {
            j -= 1;
            digit -= b[j] as i8;
        }
        borrow = i8::from(digit < 0);
        out.push(if digit < 0 { digit + 10 } else { digit } as u8);
    }
    out.reverse();
    out
}

impl Add for &CounterValue {
    type Output = CounterValue;

    /// Exact: big integers do not overflow.
    fn add(self, other: &CounterValue) -> CounterValue {
        if self.negative == other.negative {
            return CounterValue::from_parts(
                self.negative,
                add_magnitude(&self.digits, &other.digits),
            );
        }
        match compare_magnitude(&self.digits, &other.digits) {
            Ordering::Less => {
                CounterValue::from_parts(other.negative, sub_magnitude(&other.digits, &self.digits))
            }
            _ => {
                CounterValue::from_parts(self.negative, sub_magnitude(&self.digits, &other.digits))
            }
        }
    }
}

impl Add for CounterValue {
    type Output = CounterValue;

    fn add(self, other: CounterValue) -> CounterValue {
        &self + &other
    }
}

impl Neg for CounterValue {
    type Output = CounterValue;

    fn neg(self) -> CounterValue {
        CounterValue::from_parts(!self.negative, self.digits)
    }
}

impl Ord for CounterValue {
    fn cmp(&self, other: &CounterValue) -> Ordering {
        match (self.negative, other.negative) {
            (false, true) => Ordering::Greater,
            (true, false) => Ordering::Less,
            (false, false) => compare_magnitude(&self.digits, &other.digits),
            (true, true) => compare_magnitude(&other.digits, &self.digits),
        }
    }
}

impl PartialOrd for CounterValue {
    fn partial_cmp(&self, other: &CounterValue) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for CounterValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.digits.is_empty() {
            return f.write_str("0");
        }
        let text: String = self.digits.iter().map(|d| char::from(b'0' + d)).collect();
        f.pad_integral(!self.negative, "", &text)
    }
}

impl fmt::Debug for CounterValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// Text that is not an integer: an optional sign, then decimal digits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseCounterValueError(String);

impl fmt::Display for ParseCounterValueError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "not an integer: {:?}", self.0)
    }
}

impl std::error::Error for ParseCounterValueError {}

impl FromStr for CounterValue {
    type Err = ParseCounterValueError;

    /// Reads `^[+-]?[0-9]+$`, what Go's `big.Int` writes and the server reads.
    fn from_str(text: &str) -> Result<CounterValue, ParseCounterValueError> {
        let (negative, digits) = match text.as_bytes() {
            [b'-', rest @ ..] => (true, rest),
            [b'+', rest @ ..] => (false, rest),
            rest => (false, rest),
        };
        if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
            return Err(ParseCounterValueError(text.to_owned()));
        }
        Ok(CounterValue::from_parts(
            negative,
            digits.iter().map(|d| d - b'0').collect(),
        ))
    }
}

macro_rules! from_integer {
    ($($t:ty),*) => {$(
        impl From<$t> for CounterValue {
            fn from(value: $t) -> CounterValue {
                // Exact by construction: an integer's decimal text always parses.
                let text = value.to_string();
                let negative = text.starts_with('-');
                let digits = text.bytes().filter(u8::is_ascii_digit).map(|d| d - b'0').collect();
                CounterValue::from_parts(negative, digits)
            }
        }
    )*};
}

from_integer!(
    i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize
);

impl Serialize for CounterValue {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for CounterValue {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// One counter's state, as the last message on its subject holds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CounterEntry {
    /// The counter's subject.
    pub subject: String,
    /// The total.
    pub value: CounterValue,
    /// The delta the last update added (`Nats-Incr`), for audits and recounts.
    pub increment: Option<CounterValue>,
    /// For a counter fed by sourced streams: the last value seen from each source stream,
    /// per source subject (`Nats-Counter-Sources`).
    pub sources: BTreeMap<String, BTreeMap<String, CounterValue>>,
    /// The stream sequence of the message holding this state.
    pub sequence: u64,
}

/// The counters of one stream. Made by [`Context::counter`].
#[derive(Clone, Debug)]
pub struct Counter {
    stream: Stream,
}

impl Context {
    /// The counters of `stream`, which must have `allow_message_counter` and `allow_direct`
    /// set (ADR-49; nats-server 2.12 or later). An rnats extension.
    pub async fn counter<T: AsRef<str>>(&self, stream: T) -> Result<Counter, CounterError> {
        self.require_capability([Feature::MessageCounters])
            .map_err(|e| CounterError::with_source(CounterErrorKind::Unsupported, e))?;
        let stream = self.get_stream(stream.as_ref()).await.map_err(|e| {
            let kind = match e.kind() {
                crate::context::GetStreamErrorKind::JetStream(error)
                    if error.error_code() == ErrorCode::STREAM_NOT_FOUND =>
                {
                    CounterErrorKind::StreamNotFound
                }
                _ => CounterErrorKind::Request,
            };
            CounterError::with_source(kind, e)
        })?;
        let config = &stream.cached_info().config;
        if !config.allow_message_counter {
            return Err(CounterError::with_source(
                CounterErrorKind::NotCounterStream,
                format!("stream {} does not allow counters", config.name),
            ));
        }
        if !config.allow_direct {
            return Err(CounterError::with_source(
                CounterErrorKind::DirectGetDisabled,
                format!("stream {} does not allow direct gets", config.name),
            ));
        }
        Ok(Counter { stream })
    }
}

impl Counter {
    /// The stream holding the counters.
    pub fn stream(&self) -> &Stream {
        &self.stream
    }

    /// Adds `delta` (negative to subtract) to the counter on `subject` and returns its new
    /// total.
    pub async fn add<S, V>(&self, subject: S, delta: V) -> Result<CounterValue, CounterError>
    where
        S: ToSubject,
        V: Into<CounterValue>,
    {
        let delta = delta.into();
        let context = &self.stream.context;
        let ack = context
            .send_publish(
                subject,
                Publish::build().header(NATS_INCR, delta.to_delta()),
            )
            .await
            .map_err(publish_failure)?
            .await
            .map_err(publish_failure)?;
        let Some(value) = ack.value else {
            return Err(CounterError::with_source(
                CounterErrorKind::NotCounterStream,
                format!("stream {} acked without a counter value", ack.stream),
            ));
        };
        value
            .parse()
            .map_err(|e| CounterError::with_source(CounterErrorKind::Broken, e))
    }

    /// The counter on `subject`: its total, last delta and sources.
    pub async fn get<S: AsRef<str>>(&self, subject: S) -> Result<CounterEntry, CounterError> {
        let message = self
            .stream
            .direct_get_last_for_subject(subject.as_ref())
            .await
            .map_err(|e| {
                use crate::stream::DirectGetErrorKind;
                let kind = match e.kind() {
                    DirectGetErrorKind::NotFound => CounterErrorKind::NotFound,
                    DirectGetErrorKind::InvalidSubject => CounterErrorKind::InvalidSubject,
                    DirectGetErrorKind::TimedOut => CounterErrorKind::TimedOut,
                    _ => CounterErrorKind::Request,
                };
                CounterError::with_source(kind, e)
            })?;
        entry(
            message.subject.to_string(),
            message.sequence,
            &message.headers,
            &message.payload,
        )
    }

    /// The value on `subject`, zero when the counter was never written.
    pub async fn value<S: AsRef<str>>(&self, subject: S) -> Result<CounterValue, CounterError> {
        match self.get(subject).await {
            Ok(entry) => Ok(entry.value),
            Err(e) if e.kind() == CounterErrorKind::NotFound => Ok(CounterValue::zero()),
            Err(e) => Err(e),
        }
    }

    /// Every counter matching `subjects` (wildcards allowed), in stream order, read as one
    /// consistent snapshot by multi-get (ADR-31); an answer the server splits (its byte
    /// limit per reply) is read on in further pages up to the same sequence. Nothing
    /// matching ends the stream at once. The server answers at most [`MAX_MULTI_GET`]
    /// subjects: more is a [`CounterErrorKind::TooManyResults`] error (read those with a
    /// consumer delivering the last message per subject).
    pub fn get_many<I, S>(
        &self,
        subjects: I,
    ) -> BoxStream<'static, Result<CounterEntry, CounterError>>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let request = MultiGet {
            context: self.stream.context.clone(),
            stream: self.stream.name.clone(),
            subjects: subjects.into_iter().map(Into::into).collect(),
            page: None,
            start: 0,
            up_to: 0,
            on_page: 0,
            done: false,
        };
        stream::unfold(request, |mut request| async move {
            if request.done {
                return None;
            }
            let next = request.next().await;
            if next.is_err() {
                request.done = true;
            }
            match next {
                Ok(Some(entry)) => Some((Ok(entry), request)),
                Ok(None) => None,
                Err(e) => Some((Err(e), request)),
            }
        })
        .boxed()
    }
}

/// A multi-get in progress: one page's subscription at a time.
struct MultiGet {
    context: Context,
    stream: String,
    subjects: Vec<String>,
    page: Option<rnats_core::Subscriber>,
    /// The sequence the next page starts at.
    start: u64,
    /// The stream's last sequence when the first page was read, so pages agree.
    up_to: u64,
    /// Entries the page being read has brought so far.
    on_page: usize,
    done: bool,
}

/// The body of a multi-get request.
#[derive(Serialize)]
struct MultiGetRequest<'a> {
    multi_last: &'a [String],
    batch: usize,
    #[serde(skip_serializing_if = "is_zero")]
    seq: u64,
    #[serde(skip_serializing_if = "is_zero")]
    up_to_seq: u64,
}

fn is_zero(value: &u64) -> bool {
    *value == 0
}

impl MultiGet {
    /// The next entry; `None` at the end.
    async fn next(&mut self) -> Result<Option<CounterEntry>, CounterError> {
        loop {
            if self.page.is_none() {
                self.page = Some(self.request_page().await?);
            }
            let timeout = self.context.timeout_or_default();
            let Some(page) = self.page.as_mut() else {
                continue;
            };
            let message = rnats_core::runtime::timeout(timeout, page.next())
                .await
                .map_err(|e| CounterError::with_source(CounterErrorKind::TimedOut, e))?
                .ok_or_else(|| CounterError::new(CounterErrorKind::Request))?;
            match message.status {
                None => return self.read(message).map(Some),
                Some(StatusCode::NOT_FOUND) => {
                    self.done = true;
                    return Ok(None);
                }
                Some(status) if status.as_u16() == 204 => {
                    if self.end_page(&message.headers)? {
                        return Ok(None);
                    }
                }
                Some(status) if status.as_u16() == 413 => {
                    return Err(CounterError::with_source(
                        CounterErrorKind::TooManyResults,
                        format!("more than {MAX_MULTI_GET} subjects match"),
                    ));
                }
                Some(status) => {
                    let description = message.description.clone().unwrap_or_default();
                    return Err(CounterError::with_source(
                        CounterErrorKind::Request,
                        format!("multi-get refused: {} {description}", status.as_u16()),
                    ));
                }
            }
        }
    }

    /// Reads the end of a page: true when nothing more is pending, else the next page is
    /// to be asked for. A page that brought nothing while entries are pending is an error:
    /// asking again would bring the same, for ever.
    fn end_page(&mut self, headers: &Option<HeaderMap>) -> Result<bool, CounterError> {
        self.page = None;
        let pending = header_u64(headers, "Nats-Num-Pending").unwrap_or(0);
        if let Some(up_to) = header_u64(headers, "Nats-UpTo-Sequence") {
            self.up_to = up_to;
        }
        if pending == 0 {
            self.done = true;
            return Ok(true);
        }
        if std::mem::take(&mut self.on_page) == 0 {
            return Err(CounterError::with_source(
                CounterErrorKind::Request,
                format!("multi-get: an empty page with {pending} entries pending"),
            ));
        }
        Ok(false)
    }

    fn read(&mut self, message: Message) -> Result<CounterEntry, CounterError> {
        self.on_page += 1;
        let entry = page_entry(message)?;
        // The server's sequence: at the top of its range the next page starts there again.
        self.start = entry.sequence.saturating_add(1);
        Ok(entry)
    }

    async fn request_page(&mut self) -> Result<rnats_core::Subscriber, CounterError> {
        let client = &self.context.client;
        let inbox = client.new_inbox();
        let page = client
            .subscribe(inbox.clone())
            .await
            .map_err(|e| CounterError::with_source(CounterErrorKind::Request, e))?;
        let body = serde_json::to_vec(&MultiGetRequest {
            multi_last: &self.subjects,
            batch: MAX_MULTI_GET,
            seq: self.start,
            up_to_seq: self.up_to,
        })
        .map_err(|e| CounterError::with_source(CounterErrorKind::Request, e))?;
        let subject = format!("{}.DIRECT.GET.{}", self.context.prefix(), self.stream);
        client
            .publish_with_reply(subject, inbox, Bytes::from(body))
            .await
            .map_err(|e| CounterError::with_source(CounterErrorKind::Request, e))?;
        Ok(page)
    }
}

/// The counter a multi-get's message holds.
fn page_entry(message: Message) -> Result<CounterEntry, CounterError> {
    let headers = message.headers.unwrap_or_default();
    let missing = |name: &str| {
        CounterError::with_source(CounterErrorKind::Broken, format!("no {name} header"))
    };
    let subject = headers
        .get("Nats-Subject")
        .ok_or_else(|| missing("Nats-Subject"))?
        .as_str()
        .to_owned();
    let sequence = header_u64(&Some(headers.clone()), "Nats-Sequence")
        .ok_or_else(|| missing("Nats-Sequence"))?;
    entry(subject, sequence, &headers, &message.payload)
}

fn header_u64(headers: &Option<HeaderMap>, name: &str) -> Option<u64> {
    headers.as_ref()?.get(name)?.as_str().parse().ok()
}

/// The body of a counter message.
#[derive(Deserialize)]
struct Body {
    val: CounterValue,
}

/// Reads a counter's state from its last message.
pub(crate) fn entry(
    subject: String,
    sequence: u64,
    headers: &HeaderMap,
    payload: &[u8],
) -> Result<CounterEntry, CounterError> {
    let broken = |e: &dyn fmt::Display| {
        CounterError::with_source(
            CounterErrorKind::Broken,
            format!("counter {subject} at {sequence}: {e}"),
        )
    };
    let body: Body = serde_json::from_slice(payload).map_err(|e| broken(&e))?;
    let increment = match headers.get(NATS_INCR) {
        Some(text) => Some(text.as_str().parse().map_err(|e| broken(&e))?),
        None => None,
    };
    let sources = match headers.get(NATS_COUNTER_SOURCES) {
        Some(text) => serde_json::from_str(text.as_str()).map_err(|e| broken(&e))?,
        None => BTreeMap::new(),
    };
    Ok(CounterEntry {
        subject,
        value: body.val,
        increment,
        sources,
        sequence,
    })
}

/// The kinds of [`CounterError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CounterErrorKind {
    /// The stream does not exist.
    StreamNotFound,
    /// The stream is not a counter stream (`allow_message_counter` off; 10168).
    NotCounterStream,
    /// The stream does not allow direct gets, which reading counters needs.
    DirectGetDisabled,
    /// No counter on the subject.
    NotFound,
    /// The subject is not valid, or no stream stores it.
    InvalidSubject,
    /// The server refused the delta or a header with it (10169, 10170, 10171).
    InvalidIncrement,
    /// A stored counter could not be read (10172, or a body that is not a counter).
    Broken,
    /// More subjects match a multi-get than the server answers at once.
    TooManyResults,
    /// The connected server is too old for counters.
    Unsupported,
    /// No answer within the timeout.
    TimedOut,
    /// The request failed otherwise; the source says how.
    Request,
}

impl fmt::Display for CounterErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CounterErrorKind::StreamNotFound => "stream not found",
            CounterErrorKind::NotCounterStream => "not a counter stream",
            CounterErrorKind::DirectGetDisabled => "direct get is disabled on the stream",
            CounterErrorKind::NotFound => "counter not found",
            CounterErrorKind::InvalidSubject => "invalid counter subject",
            CounterErrorKind::InvalidIncrement => "invalid increment",
            CounterErrorKind::Broken => "broken counter",
            CounterErrorKind::TooManyResults => "too many counters match",
            CounterErrorKind::Unsupported => "the server does not support counters",
            CounterErrorKind::TimedOut => "timed out",
            CounterErrorKind::Request => "counter request failed",
        })
    }
}

/// Why a counter operation failed; a server refusal has the [`crate::Error`] as its source.
pub type CounterError = Error<CounterErrorKind>;

fn publish_failure(error: crate::context::PublishError) -> CounterError {
    let code = error
        .downcast_source::<crate::Error>()
        .map(crate::Error::error_code);
    let kind = match (error.kind(), code) {
        (_, Some(ErrorCode::MESSAGE_INCR_DISABLED)) => CounterErrorKind::NotCounterStream,
        (
            _,
            Some(
                ErrorCode::MESSAGE_INCR_MISSING
                | ErrorCode::MESSAGE_INCR_PAYLOAD
                | ErrorCode::MESSAGE_INCR_INVALID,
            ),
        ) => CounterErrorKind::InvalidIncrement,
        (_, Some(ErrorCode::MESSAGE_COUNTER_BROKEN)) => CounterErrorKind::Broken,
        (PublishErrorKind::StreamNotFound, _) => CounterErrorKind::InvalidSubject,
        (PublishErrorKind::TimedOut, _) => CounterErrorKind::TimedOut,
        _ => CounterErrorKind::Request,
    };
    CounterError::with_source(kind, error)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn value(text: &str) -> CounterValue {
        text.parse().unwrap()
    }

    #[test]
    fn values_parse_and_print_exactly_past_machine_integers() {
        let huge = "-123456789012345678901234567890123456789012345678901234567890";
        assert_eq!(value(huge).to_string(), huge);
        assert_eq!(value(huge).to_i128(), None);
        assert_eq!(value("+007").to_string(), "7");
        assert_eq!(value("-0").to_string(), "0");
        assert!(!value("-0").is_negative());
        assert_eq!(value("9223372036854775808").to_i64(), None);
        assert_eq!(value("-9223372036854775808").to_i64(), Some(i64::MIN));
        for bad in ["", "+", "-", "1.5", " 1", "1e3", "--1", "0x10"] {
            assert!(bad.parse::<CounterValue>().is_err(), "{bad:?}");
        }
        assert_eq!(CounterValue::from(5).to_delta(), "+5");
        assert_eq!(CounterValue::from(-5).to_delta(), "-5");
        assert_eq!(CounterValue::zero().to_delta(), "+0");
        let max = CounterValue::from(i64::MAX);
        assert_eq!(
            (&max + &CounterValue::from(1)).to_string(),
            "9223372036854775808"
        );
    }

    #[test]
    fn entries_read_values_deltas_and_sources() {
        let mut headers = HeaderMap::new();
        headers.insert(NATS_INCR, "+18446744073709551616");
        headers.insert(
            NATS_COUNTER_SOURCES,
            r#"{"EU":{"hits.eu":"5"},"US":{"hits.us":"-2"}}"#,
        );
        let entry = entry(
            "hits".into(),
            9,
            &headers,
            br#"{"val":"18446744073709551619"}"#,
        )
        .unwrap();
        assert_eq!(entry.value.to_string(), "18446744073709551619");
        assert_eq!(entry.increment, Some(value("18446744073709551616")));
        assert_eq!(entry.sources["US"]["hits.us"], value("-2"));
        let broken = super::entry("x".into(), 1, &HeaderMap::new(), b"7").unwrap_err();
        assert_eq!(broken.kind(), CounterErrorKind::Broken);
    }

    /// A multi-get's answer for `subject` at stream sequence `sequence`.
    fn answer(subject: &str, sequence: &str) -> Message {
        let mut headers = HeaderMap::new();
        headers.insert("Nats-Subject", subject);
        headers.insert("Nats-Sequence", sequence);
        let payload = Bytes::from_static(br#"{"val":"3"}"#);
        Message {
            subject: "_INBOX.x".into(),
            reply: None,
            length: payload.len(),
            payload,
            headers: Some(headers),
            status: None,
            description: None,
        }
    }

    #[test]
    fn a_page_entry_carries_its_subject_and_sequence() {
        let entry = page_entry(answer("hits", "12")).unwrap();
        assert_eq!((entry.subject.as_str(), entry.sequence), ("hits", 12));
        assert_eq!(entry.value, value("3"));
        for bad in ["", "-1", "18446744073709551616"] {
            let error = page_entry(answer("hits", bad)).unwrap_err();
            assert_eq!(error.kind(), CounterErrorKind::Broken, "{bad:?}");
        }
    }

    /// A multi-get whose client never reaches a server: reading pages sends nothing.
    async fn multi_get() -> MultiGet {
        MultiGet {
            context: crate::new(crate::test_support::unconnected_client().await),
            stream: "KV_c".into(),
            subjects: vec![">".into()],
            page: None,
            start: 0,
            up_to: 0,
            on_page: 0,
            done: false,
        }
    }

    fn end_of_page(pending: &str) -> Option<HeaderMap> {
        let mut headers = HeaderMap::new();
        headers.insert("Nats-Num-Pending", pending);
        Some(headers)
    }

    #[tokio::test]
    async fn a_page_that_brings_nothing_while_entries_are_pending_fails() {
        let mut get = multi_get().await;
        get.read(answer("a", "1")).unwrap();
        assert!(!get.end_page(&end_of_page("3")).unwrap(), "the next page");
        let error = get.end_page(&end_of_page("3")).unwrap_err();
        assert_eq!(error.kind(), CounterErrorKind::Request);
        let mut get = multi_get().await;
        assert!(get.end_page(&end_of_page("0")).unwrap(), "nothing pending");
        assert!(get.done);
    }

    #[tokio::test]
    async fn the_next_page_starts_after_the_entry_read_without_overflowing() {
        let mut get = multi_get().await;
        get.read(answer("hits", "41")).unwrap();
        assert_eq!(get.start, 42);
        // The last sequence a stream can hold, as the server's header says it.
        let entry = get.read(answer("hits", "18446744073709551615")).unwrap();
        assert_eq!(entry.sequence, u64::MAX);
        assert_eq!(get.start, u64::MAX);
    }

    proptest! {
        #[test]
        fn addition_agrees_with_i128(a in any::<i64>(), b in any::<i64>()) {
            let sum = CounterValue::from(a) + CounterValue::from(b);
            prop_assert_eq!(sum.to_i128(), Some(i128::from(a) + i128::from(b)));
            prop_assert_eq!(sum.to_string(), (i128::from(a) + i128::from(b)).to_string());
        }

        #[test]
        fn order_agrees_with_i128(a in any::<i128>(), b in any::<i128>()) {
            prop_assert_eq!(CounterValue::from(a).cmp(&CounterValue::from(b)), a.cmp(&b));
            prop_assert_eq!(CounterValue::from(a).to_i128(), Some(a));
        }
    }
}
