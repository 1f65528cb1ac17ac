//! Asking a clustered consumer's leader to step down, with the stream step-down's placement
//! and errors (`stream/cluster.rs`).

use super::{Consumer, IntoConsumerConfig};
use crate::context::Context;
use crate::stream::cluster::{StepDownError, checked_name, step_down};
use crate::stream::{LeaderPlacement, Stream};

impl Context {
    /// Asks the leader of the clustered consumer `consumer` of `stream` to step down, so that
    /// another replica leads: the one `placement` prefers, or any with none. A server without
    /// clustering answers [`StepDownErrorKind::NotClustered`](crate::stream::StepDownErrorKind::NotClustered).
    pub async fn step_down_consumer_leader<S: AsRef<str>, C: AsRef<str>>(
        &self,
        stream: S,
        consumer: C,
        placement: Option<LeaderPlacement>,
    ) -> Result<(), StepDownError> {
        let stream = checked_name(stream.as_ref())?;
        let consumer = checked_name(consumer.as_ref())?;
        let subject = format!("CONSUMER.LEADER.STEPDOWN.{stream}.{consumer}");
        step_down(self, subject, placement.as_ref()).await
    }
}

impl<I> Stream<I> {
    /// Asks the leader of this stream's consumer `name` to step down (see
    /// [`Context::step_down_consumer_leader`]).
    pub async fn step_down_consumer_leader(
        &self,
        name: &str,
        placement: Option<LeaderPlacement>,
    ) -> Result<(), StepDownError> {
        self.context
            .step_down_consumer_leader(&self.name, name, placement)
            .await
    }
}

impl<T: IntoConsumerConfig> Consumer<T> {
    /// Asks this consumer's leader to step down (see [`Context::step_down_consumer_leader`]).
    pub async fn step_down_leader(
        &self,
        placement: Option<LeaderPlacement>,
    ) -> Result<(), StepDownError> {
        self.context
            .step_down_consumer_leader(&self.info.stream_name, &self.info.name, placement)
            .await
    }
}
