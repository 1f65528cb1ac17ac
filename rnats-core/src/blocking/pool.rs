//! The server pool as the blocking client uses it: the server of each connection attempt
//! between links, which the user's `reconnect_to_server_callback` may choose, and the
//! servers the cluster announces.

use std::sync::Arc;

use rnats_proto::ServerInfo;

use super::executor::block_on;
use super::state::Inner;
use crate::events::ConnectionEvent;
use crate::floor::attempts::Plan;
use crate::floor::sync::lock;

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
    /// [`ServerPool::plan_attempt`]: crate::floor::server_pool::ServerPool::plan_attempt
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

    /// Takes in the INFO updates waiting in `announcements` on this thread where that costs
    /// nothing per URL (see `reconnect::take_announced_here`); false when the background
    /// thread must.
    pub(super) fn take_announced_here(&self) -> bool {
        !self.events.has_listeners()
            && crate::floor::server_pool::take_announced_quietly(&self.pool, &self.announcements)
    }

    /// Merges the servers of the INFO updates [`Inner::handle_info`] left, if any; run by
    /// the background thread.
    pub(super) fn merge_announced(&self) {
        while let Some(info) = lock(&self.announcements).next() {
            self.merge_discovered(info);
        }
    }

    /// Gives the pool the servers `info` announces, and reports the new ones.
    pub(super) fn merge_discovered(&self, info: Arc<ServerInfo>) {
        // Worked out only for a listener: nobody else hears of them.
        let report = self.events.has_listeners();
        let added = lock(&self.pool).take_announced(info, report);
        if !added.is_empty() {
            self.events.emit(ConnectionEvent::DiscoveredServers(added));
        }
    }
}
