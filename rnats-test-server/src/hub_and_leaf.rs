//! A hub cluster with its own JetStream domain and leaf nodes connected to it through
//! [`Proxy`] links a test can cut.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::builder::ServerBuilder;
use crate::cluster::{self, Cluster};
use crate::error::TestServerError;
use crate::monitor;
use crate::proxy::Proxy;
use crate::server::NatsServer;

/// The hub's JetStream domain.
pub const HUB_DOMAIN: &str = "hub";
/// The JetStream leaf node's domain.
pub const LEAF_DOMAIN: &str = "leaf";
/// How long starting or restoring waits for the cluster, the leaf links and JetStream.
/// Only a guard against a hang: elections on a loaded 2-core machine take seconds.
const FORM_TIMEOUT: Duration = Duration::from_secs(60);

/// What [`HubAndLeafBuilder::configure`] takes: the role of the server and its options.
type Configure = Arc<dyn Fn(Role, ServerBuilder) -> ServerBuilder + Send + Sync>;

/// Which server of a [`HubAndLeaf`] some options are for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Role {
    /// Hub node `i`.
    Hub(usize),
    /// The leaf node with JetStream domain [`LEAF_DOMAIN`].
    Leaf,
    /// The leaf node without JetStream.
    PlainLeaf,
}

/// A hub cluster whose JetStream domain is [`HUB_DOMAIN`], a leaf node with JetStream in its
/// own domain [`LEAF_DOMAIN`], and optionally a second leaf node without JetStream, whose
/// clients use the hub's: the edge deployments of NATS.
///
/// Each hub node has a leaf node listener with a [`Proxy`] in front of it, and advertises the
/// proxy's address to leaf nodes (`leafnodes { advertise }`); the leaves' remotes list the
/// proxies, so every leaf connection goes through one: [`cut_leaf_links`](Self::cut_leaf_links)
/// separates both leaves from the hub and [`restore_leaf_links`](Self::restore_leaf_links)
/// joins them again. All accounts are the global one. Every server serves its monitoring
/// endpoints, which is what readiness is read from.
///
/// Dropping it kills every server and stops every proxy.
#[derive(Debug)]
pub struct HubAndLeaf {
    hub: Cluster,
    leaf: NatsServer,
    plain_leaf: Option<NatsServer>,
    /// One per hub node, in front of its leaf node listener.
    leaf_links: Vec<Proxy>,
}

/// Options for a [`HubAndLeaf`]; [`start`](Self::start) starts it.
#[derive(Clone)]
pub struct HubAndLeafBuilder {
    hub_nodes: usize,
    plain_leaf: bool,
    configure: Option<Configure>,
}

impl HubAndLeaf {
    /// Options: a 3-node hub and the JetStream leaf only.
    pub fn builder() -> HubAndLeafBuilder {
        HubAndLeafBuilder {
            hub_nodes: 3,
            plain_leaf: false,
            configure: None,
        }
    }

    /// The hub cluster (domain [`HUB_DOMAIN`]).
    pub fn hub(&self) -> &Cluster {
        &self.hub
    }

    /// The leaf node with JetStream (domain [`LEAF_DOMAIN`]).
    pub fn leaf(&self) -> &NatsServer {
        &self.leaf
    }

    /// The leaf node without JetStream, if the builder asked for one.
    pub fn plain_leaf(&self) -> Option<&NatsServer> {
        self.plain_leaf.as_ref()
    }

    /// Closes every leaf node connection and refuses new ones until
    /// [`restore_leaf_links`](Self::restore_leaf_links): the leaves go on alone, as an edge
    /// site does when its uplink fails.
    pub fn cut_leaf_links(&self) {
        for link in &self.leaf_links {
            link.refuse(true);
            link.cut();
        }
    }

    /// Accepts leaf node connections again and waits until every leaf is connected to the
    /// hub again, as both sides' `/leafz` tell (leaves retry on their own, about once a
    /// second).
    pub fn restore_leaf_links(&self) -> Result<(), TestServerError> {
        for link in &self.leaf_links {
            link.refuse(false);
        }
        self.wait_leaf_links(Instant::now() + FORM_TIMEOUT)
    }

    /// Waits until each leaf reports its connection to the hub and the hub counts one
    /// connection per leaf.
    pub fn wait_leaf_links(&self, deadline: Instant) -> Result<(), TestServerError> {
        let leaves: Vec<&NatsServer> = std::iter::once(&self.leaf)
            .chain(self.plain_leaf.as_ref())
            .collect();
        monitor::poll_until(deadline, "leaf node links to the hub", |last_seen| {
            for leaf in &leaves {
                if leafnodes(leaf)? < 1 {
                    *last_seen = format!("{} has no leaf node connection", leaf.url());
                    return Ok(None);
                }
            }
            let mut at_hub = 0;
            for node in self.hub.nodes() {
                at_hub += leafnodes(node)?;
            }
            if at_hub < leaves.len() {
                *last_seen = format!("the hub has {at_hub} leaf node connections");
                return Ok(None);
            }
            Ok(Some(()))
        })
    }
}

impl HubAndLeafBuilder {
    /// Nodes in the hub cluster (default 3); with 1, the hub is a lone server whose
    /// JetStream runs standalone.
    pub fn hub_nodes(mut self, n: usize) -> Self {
        self.hub_nodes = n;
        self
    }

    /// Also starts a leaf node without JetStream (default: no).
    pub fn plain_leaf(mut self, on: bool) -> Self {
        self.plain_leaf = on;
        self
    }

    /// Passes each server's options through `configure(role, options)`. The `cluster`,
    /// `leafnodes` and `jetstream` settings are the builder's.
    pub fn configure(
        mut self,
        configure: impl Fn(Role, ServerBuilder) -> ServerBuilder + Send + Sync + 'static,
    ) -> Self {
        self.configure = Some(Arc::new(configure));
        self
    }

    /// Starts the hub, then the leaves, and returns once the hub's JetStream has a meta
    /// leader and every leaf is connected, as the servers' monitoring endpoints tell.
    pub fn start(self) -> Result<HubAndLeaf, TestServerError> {
        crate::error::start_over_when_a_node_goes(|| self.try_start())
    }

    /// One attempt at [`start`](Self::start).
    fn try_start(&self) -> Result<HubAndLeaf, TestServerError> {
        let n = self.hub_nodes;
        let leafnode_ports = crate::free_ports(n)?;
        let leaf_links = leafnode_ports
            .iter()
            .map(|port| Proxy::start(&format!("127.0.0.1:{port}")))
            .collect::<Result<Vec<_>, _>>()?;
        let configure = |role: Role, node: ServerBuilder| match &self.configure {
            Some(configure) => configure(role, node),
            None => node,
        };
        let hub = Cluster::start_named(HUB_DOMAIN, HUB_DOMAIN, n, |i, node| {
            let node = node.monitoring().jetstream(true).append_config(&format!(
                "jetstream {{ domain: {HUB_DOMAIN} }}\n\
                 leafnodes {{\n  listen: \"127.0.0.1:{}\"\n  advertise: \"127.0.0.1:{}\"\n}}\n",
                leafnode_ports[i],
                leaf_links[i].port(),
            ));
            configure(Role::Hub(i), node)
        })?;
        let deadline = Instant::now() + FORM_TIMEOUT;
        if n > 1 {
            let nodes: Vec<&NatsServer> = hub.nodes().iter().collect();
            cluster::wait_meta_leader(&nodes, deadline)?;
        }

        let remotes: Vec<String> = leaf_links
            .iter()
            .map(|p| format!("\"nats-leaf://127.0.0.1:{}\"", p.port()))
            .collect();
        let remotes = format!(
            "leafnodes {{ remotes: [ {{ urls: [{}] }} ] }}\n",
            remotes.join(", ")
        );
        let leaf = configure(
            Role::Leaf,
            ServerBuilder::new()
                .monitoring()
                .jetstream(true)
                .append_config(&format!(
                    "server_name: {LEAF_DOMAIN}\njetstream {{ domain: {LEAF_DOMAIN} }}\n{remotes}"
                )),
        )
        .spawn()?;
        let plain_leaf = if self.plain_leaf {
            let options = ServerBuilder::new()
                .monitoring()
                .append_config(&format!("server_name: plain-leaf\n{remotes}"));
            Some(configure(Role::PlainLeaf, options).spawn()?)
        } else {
            None
        };
        let topology = HubAndLeaf {
            hub,
            leaf,
            plain_leaf,
            leaf_links,
        };
        topology.wait_leaf_links(deadline)?;
        Ok(topology)
    }
}

impl std::fmt::Debug for HubAndLeafBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HubAndLeafBuilder")
            .field("hub_nodes", &self.hub_nodes)
            .field("plain_leaf", &self.plain_leaf)
            .field("configure", &self.configure.is_some())
            .finish()
    }
}

/// How many leaf node connections `server`'s `/leafz` counts.
fn leafnodes(server: &NatsServer) -> Result<usize, TestServerError> {
    let leafz = server.monitor("/leafz")?;
    Ok(leafz
        .get("leafnodes")
        .and_then(serde_json::Value::as_u64)
        .map_or(0, |n| n as usize))
}
