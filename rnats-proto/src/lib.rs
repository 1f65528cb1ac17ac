//! Sans-IO core of the rnats NATS client.
//!
//! This crate knows the NATS wire protocol and nothing else: no sockets, no
//! async runtime, no clocks. It provides
//!
//! * names: [`Subject`], [`QueueGroup`], [`HeaderName`], [`HeaderValue`]; those parsed from the
//!   wire are checked (a received subject or reply only for UTF-8: the server relays what
//!   publishers gave it), those built with an infallible `From` are checked where they would
//!   reach the wire (`validate_publish_subject`, [`HeaderMap::check`]);
//! * message headers ([`HeaderMap`], [`StatusCode`], [`HeaderBlock`]) per ADR-4;
//! * the handshake bodies [`ServerInfo`] and [`ConnectInfo`];
//! * an incremental, zero-copy [`Parser`] turning server bytes into [`ServerOp`]s, or, for a
//!   caller that queues messages, into [`MsgFrame`]s to be cut into their parts later;
//! * encoders for client ops ([`Pub`], [`encode_sub`], [`encode_unsub`], [`encode_connect`]).
//!
//! ```
//! use bytes::BytesMut;
//! use rnats_proto::{Parser, ParserLimits, ServerOp};
//!
//! let mut parser = Parser::new(ParserLimits::default());
//! let mut buf = BytesMut::from(&b"PING\r\nMSG greet.joe 1 5\r\nhel"[..]);
//! assert_eq!(parser.decode(&mut buf), Ok(Some(ServerOp::Ping)));
//! assert_eq!(parser.decode(&mut buf), Ok(None)); // payload incomplete
//! buf.extend_from_slice(b"lo\r\n");
//! let Some(ServerOp::Msg(msg)) = parser.decode(&mut buf)? else { unreachable!() };
//! assert_eq!(msg.subject, "greet.joe");
//! assert_eq!(&msg.payload[..], b"hello");
//! # Ok::<(), rnats_proto::DecodeError>(())
//! ```

mod decode;
mod decode_error;
mod encode;
mod headers;
mod info;
mod msg;
mod queue_group;
mod server_error;
mod subject;

pub use decode::{Parser, ParserLimits};
pub use decode_error::DecodeError;
pub use encode::{CRLF, PING, PONG, Pub, encode_connect, encode_sub, encode_unsub};
pub use headers::constants as header_constants;
pub use headers::{
    GetAll, HeaderBlock, HeaderError, HeaderIter, HeaderMap, HeaderName, HeaderValue,
    IntoHeaderName, IntoHeaderValue, InvalidStatusCode, StatusCode, encode_headers, encoded_len,
};
pub use info::{ConnectInfo, Protocol, ServerInfo};
pub use msg::{Msg, MsgFrame, ServerOp};
pub use queue_group::{QueueGroup, QueueGroupError};
pub use server_error::{PermissionOp, ServerError};
pub use subject::{
    Subject, SubjectCause, SubjectError, same_subject, validate_publish_subject, validate_subject,
};
