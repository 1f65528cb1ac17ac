//! The server pool as the blocking client uses it between links: the server of each
//! connection attempt, which the user's `reconnect_to_server_callback` may choose.

use std::sync::Arc;

use rnats_proto::ServerInfo;

use super::executor::block_on;
use super::state::Inner;
use crate::reconnect::Plan;
use crate::shared::lock;

impl Inner {
    /// The next attempt, as [`ServerPool::plan_attempt`] decides it; at the start of a try
    /// the `reconnect_to_server_callback`, if one is set, chooses first. `limited`: whether
    /// `max_reconnects` applies. `None`: the pool is empty.
    ///
    /// The callback is async in the shared options; it runs here, on the calling thread (the
    /// background thread when reconnecting, which has nothing else to do while the link is
    /// down). A callback that never finishes stops the reconnects (and keeps this thread
    /// after a close) until it does.
    ///
    /// [`ServerPool::plan_attempt`]: crate::server_pool::ServerPool::plan_attempt
    pub(super) fn next_attempt(&self, limited: bool) -> Option<Plan> {
        let policy = &self.options.reconnect;
        let mut choice = None;
        if let Some(choose) = &policy.choose_server {
            let servers = {
                let mut pool = lock(&self.pool);
                pool.attempts.starts_try().then(|| pool.snapshot())
            };
            if let Some(servers) = servers {
                let info = Arc::clone(self.core().session.info());
                choice = block_on(choose(servers, ServerInfo::clone(&info)));
            }
        }
        lock(&self.pool).plan_attempt(policy, choice, limited, |event| self.events.emit(event))
    }
}
