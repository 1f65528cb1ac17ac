//! Two clusters joined by gateways, every gateway connection through a [`Proxy`] a test can
//! cut.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::builder::ServerBuilder;
use crate::cluster::Cluster;
use crate::error::TestServerError;
use crate::monitor::{self, keys_at};
use crate::proxy::Proxy;
use crate::server::NatsServer;

/// The clusters' names, in index order; their nodes are `east-0`, ..., `west-0`, ...
pub const SUPERCLUSTER_NAMES: [&str; 2] = ["east", "west"];
/// How long starting or restoring waits for routes, gateways and the JetStream meta leader.
/// Only a guard against a hang: elections on a loaded 2-core machine take seconds.
const FORM_TIMEOUT: Duration = Duration::from_secs(60);

/// What [`SuperclusterBuilder::configure`] takes: cluster index, node index, the node's
/// options.
type Configure = Arc<dyn Fn(usize, usize, ServerBuilder) -> ServerBuilder + Send + Sync>;

/// Two clusters, `east` and `west`, of routed nodes on `127.0.0.1`, joined by gateways: a
/// supercluster, as two regions of one deployment are.
///
/// Every node has a gateway listener and a [`Proxy`] in front of it, and advertises the
/// proxy's address as its gateway URL (`gateway { advertise }`), so every gateway
/// connection, configured or discovered, goes through a proxy:
/// [`cut_gateways`](Self::cut_gateways) splits the regions and
/// [`restore_gateways`](Self::restore_gateways) joins them again. Routes inside a cluster are
/// direct. Every node serves its monitoring endpoints, which is what readiness is read from.
///
/// Dropping it kills every node and stops every proxy.
#[derive(Debug)]
pub struct Supercluster {
    clusters: [Cluster; 2],
    /// One per node, in front of its gateway listener: east's nodes, then west's.
    gateway_links: Vec<Proxy>,
    jetstream: bool,
}

/// Options for a [`Supercluster`]; [`start`](Self::start) starts it.
#[derive(Clone)]
pub struct SuperclusterBuilder {
    nodes: usize,
    jetstream: bool,
    configure: Option<Configure>,
}

impl Supercluster {
    /// Options: 3 nodes a cluster, no JetStream.
    pub fn builder() -> SuperclusterBuilder {
        SuperclusterBuilder {
            nodes: 3,
            jetstream: false,
            configure: None,
        }
    }

    /// Cluster `i`: 0 is `east`, 1 is `west`.
    ///
    /// # Panics
    ///
    /// Panics if `i` is not 0 or 1.
    pub fn cluster(&self, i: usize) -> &Cluster {
        &self.clusters[i]
    }

    /// Cluster `i`, e.g. to kill or restart one of its nodes.
    ///
    /// # Panics
    ///
    /// Panics if `i` is not 0 or 1.
    pub fn cluster_mut(&mut self, i: usize) -> &mut Cluster {
        &mut self.clusters[i]
    }

    /// Every node, east's first.
    pub fn nodes(&self) -> impl Iterator<Item = &NatsServer> {
        self.clusters.iter().flat_map(Cluster::nodes)
    }

    /// Closes every gateway connection and refuses new ones until
    /// [`restore_gateways`](Self::restore_gateways): each region goes on alone, as when the
    /// link between two data centres fails.
    pub fn cut_gateways(&self) {
        for link in &self.gateway_links {
            link.refuse(true);
            link.cut();
        }
    }

    /// Accepts gateway connections again and waits until the servers have reconnected them
    /// in both directions (the servers retry on their own, about once a second).
    pub fn restore_gateways(&self) -> Result<(), TestServerError> {
        for link in &self.gateway_links {
            link.refuse(false);
        }
        self.wait_gateways(Instant::now() + FORM_TIMEOUT)
    }

    /// Waits until every node of each cluster has its outbound gateway to the other, and
    /// each cluster has one inbound gateway from every node of the other. Every node must be
    /// running: a killed one fails this at once (its monitoring port refuses).
    pub fn wait_gateways(&self, deadline: Instant) -> Result<(), TestServerError> {
        for (here, there) in [(0, 1), (1, 0)] {
            let remote = SUPERCLUSTER_NAMES[there];
            let expected_inbound = self.clusters[there].nodes().len();
            let what = format!("gateways between {} and {remote}", SUPERCLUSTER_NAMES[here]);
            monitor::poll_until(deadline, &what, |last_seen| {
                let mut inbound = 0;
                for node in self.clusters[here].nodes() {
                    let gatewayz = node.monitor("/gatewayz")?;
                    if !keys_at(&gatewayz, "/outbound_gateways")
                        .iter()
                        .any(|g| g == remote)
                    {
                        *last_seen = format!("{} has no outbound gateway to {remote}", node.url());
                        return Ok(None);
                    }
                    inbound += gatewayz
                        .pointer(&format!("/inbound_gateways/{remote}"))
                        .and_then(serde_json::Value::as_array)
                        .map_or(0, Vec::len);
                }
                if inbound < expected_inbound {
                    *last_seen = format!("{inbound} inbound gateways from {remote}");
                    return Ok(None);
                }
                Ok(Some(()))
            })?;
        }
        Ok(())
    }

    /// Waits until every node agrees on a JetStream meta leader for the whole supercluster;
    /// does nothing without JetStream.
    pub fn wait_jetstream(&self, deadline: Instant) -> Result<(), TestServerError> {
        if !self.jetstream {
            return Ok(());
        }
        let nodes: Vec<&NatsServer> = self.nodes().collect();
        crate::cluster::wait_meta_leader(&nodes, deadline)
    }
}

impl SuperclusterBuilder {
    /// Nodes in each cluster (default 3).
    pub fn nodes(mut self, n: usize) -> Self {
        self.nodes = n;
        self
    }

    /// Enables JetStream on every node; [`start`](Self::start) then also waits for the meta
    /// leader. Add `server_tags` through [`configure`](Self::configure) for placement by tag.
    pub fn jetstream(mut self, on: bool) -> Self {
        self.jetstream = on;
        self
    }

    /// Passes each node's options through `configure(cluster, node, options)` (cluster 0
    /// is `east`), e.g. to add accounts or `server_tags`. The `cluster` and `gateway`
    /// blocks are the builder's.
    pub fn configure(
        mut self,
        configure: impl Fn(usize, usize, ServerBuilder) -> ServerBuilder + Send + Sync + 'static,
    ) -> Self {
        self.configure = Some(Arc::new(configure));
        self
    }

    /// Starts both clusters and returns once routes, gateways in both directions and (with
    /// JetStream) the meta leader are in place, as the nodes' monitoring endpoints tell.
    pub fn start(self) -> Result<Supercluster, TestServerError> {
        crate::error::start_over_when_a_node_goes(|| self.try_start())
    }

    /// One attempt at [`start`](Self::start).
    fn try_start(&self) -> Result<Supercluster, TestServerError> {
        let n = self.nodes;
        let gateway_ports = crate::free_ports(2 * n)?;
        let gateway_links = gateway_ports
            .iter()
            .map(|port| Proxy::start(&format!("127.0.0.1:{port}")))
            .collect::<Result<Vec<_>, _>>()?;
        let proxy_urls = |cluster: usize| -> Vec<String> {
            gateway_links[cluster * n..(cluster + 1) * n]
                .iter()
                .map(|p| format!("\"nats://127.0.0.1:{}\"", p.port()))
                .collect()
        };
        let remote_urls = [proxy_urls(1).join(", "), proxy_urls(0).join(", ")];
        let advertised: Vec<u16> = gateway_links.iter().map(Proxy::port).collect();
        let jetstream = self.jetstream;
        let node_options = |cluster: usize, i: usize, node: ServerBuilder| {
            let slot = cluster * n + i;
            let gateway = format!(
                "gateway {{\n  name: {}\n  listen: \"127.0.0.1:{}\"\n  advertise: \"127.0.0.1:{}\"\n  \
                 gateways: [ {{ name: {}, urls: [{}] }} ]\n}}\n",
                SUPERCLUSTER_NAMES[cluster],
                gateway_ports[slot],
                advertised[slot],
                SUPERCLUSTER_NAMES[1 - cluster],
                remote_urls[cluster],
            );
            let node = node
                .monitoring()
                .jetstream(jetstream)
                .append_config(&gateway);
            match &self.configure {
                Some(configure) => configure(cluster, i, node),
                None => node,
            }
        };
        let start = |cluster: usize| {
            let name = SUPERCLUSTER_NAMES[cluster];
            Cluster::form(name, name, n, false, |i, node| {
                node_options(cluster, i, node)
            })
        };
        let (east, west) = std::thread::scope(|scope| {
            let east = scope.spawn(|| start(0));
            let west = start(1);
            let east = east
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            (east, west)
        });
        let supercluster = Supercluster {
            clusters: [east?, west?],
            gateway_links,
            jetstream,
        };
        let deadline = Instant::now() + FORM_TIMEOUT;
        supercluster.wait_gateways(deadline)?;
        supercluster.wait_jetstream(deadline)?;
        Ok(supercluster)
    }
}

impl std::fmt::Debug for SuperclusterBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SuperclusterBuilder")
            .field("nodes", &self.nodes)
            .field("jetstream", &self.jetstream)
            .field("configure", &self.configure.is_some())
            .finish()
    }
}
