//! A JetStream [`Message`] delivered to a blocking consumer, with its acks (ADR-15).

use std::time::Duration;

use bytes::Bytes;
use rnats_core::Subject;

use super::context::Context;
use crate::message::{AckKind, Info};

/// A message a consumer delivered: the Core message (`Deref`s to it) and the context to
/// acknowledge it through.
#[derive(Debug, Clone)]
pub struct Message {
    /// The Core message; its `reply` is the ack subject.
    pub message: rnats_core::Message,
    /// The context the message came through.
    pub context: Context,
}

impl std::ops::Deref for Message {
    type Target = rnats_core::Message;

    fn deref(&self) -> &rnats_core::Message {
        &self.message
    }
}

impl From<Message> for rnats_core::Message {
    fn from(message: Message) -> rnats_core::Message {
        message.message
    }
}

impl Message {
    /// Acknowledges the message (`+ACK`) without waiting for the server.
    pub fn ack(&self) -> Result<(), rnats_core::Error> {
        self.ack_with(AckKind::Ack)
    }

    /// Sends an acknowledgement of `kind` without waiting for the server.
    pub fn ack_with(&self, kind: AckKind) -> Result<(), rnats_core::Error> {
        self.send_ack(kind.into())
    }

    /// Acknowledges the message and waits until the server confirms it recorded the ack,
    /// up to the context's timeout.
    pub fn double_ack(&self) -> Result<(), rnats_core::Error> {
        self.double_ack_with(AckKind::Ack)
    }

    /// Sends an acknowledgement of `kind` and waits for the server's confirmation.
    pub fn double_ack_with(&self, kind: AckKind) -> Result<(), rnats_core::Error> {
        let reply = self.ack_subject()?;
        self.context.client.request_with_timeout(
            reply.as_str(),
            kind.into(),
            Some(self.context.ack_timeout()),
        )?;
        Ok(())
    }

    /// Asks for redelivery now (`-NAK`).
    pub fn nak(&self) -> Result<(), rnats_core::Error> {
        self.ack_with(AckKind::Nak(None))
    }

    /// Asks for redelivery after `delay`.
    pub fn nak_with_delay(&self, delay: Duration) -> Result<(), rnats_core::Error> {
        self.ack_with(AckKind::Nak(Some(delay)))
    }

    /// Tells the server the message is still being worked on (`+WPI`): its ack wait
    /// starts again.
    pub fn in_progress(&self) -> Result<(), rnats_core::Error> {
        self.ack_with(AckKind::Progress)
    }

    /// Tells the server never to deliver the message again (`+TERM`).
    pub fn term(&self) -> Result<(), rnats_core::Error> {
        self.ack_with(AckKind::Term)
    }

    /// [`Message::term`] with a reason the server records in its advisory.
    pub fn term_with_reason(&self, reason: &str) -> Result<(), rnats_core::Error> {
        self.send_ack(Bytes::from(format!("+TERM {reason}")))
    }

    /// The delivery's metadata, read from the ack subject (no server call).
    pub fn info(&self) -> Result<Info<'_>, rnats_core::Error> {
        crate::message::info_of(&self.message)
    }

    fn send_ack(&self, payload: Bytes) -> Result<(), rnats_core::Error> {
        let reply = self.ack_subject()?;
        self.context.client.publish(reply.as_str(), payload)?;
        Ok(())
    }

    fn ack_subject(&self) -> Result<&Subject, rnats_core::Error> {
        Ok(self
            .message
            .reply
            .as_ref()
            .ok_or("no reply subject: not a JetStream message")?)
    }
}
