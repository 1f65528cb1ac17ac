//! Several routed servers on loopback.

use std::time::{Duration, Instant};

use crate::builder::ServerBuilder;
use crate::error::TestServerError;
use crate::info::{InfoStream, connect_urls};
use crate::monitor::{self, str_at};
use crate::route_links::RouteLinks;
use crate::server::NatsServer;

/// Name shared by all nodes' `cluster` blocks of [`Cluster::start`].
const CLUSTER_NAME: &str = "rnats-test";
/// Server name prefix of [`Cluster::start`]'s nodes: `rnats-node-0`, ...
const NODE_PREFIX: &str = "rnats-node";
/// How long [`Cluster::start`] waits for the full mesh once every node is up.
const FORM_TIMEOUT: Duration = Duration::from_secs(10);
/// How long [`Cluster::start`] waits for JetStream's meta group once the mesh is formed: an
/// election on a loaded 2-core machine takes seconds, so this only guards against a hang.
const JETSTREAM_TIMEOUT: Duration = Duration::from_secs(60);

/// `n` servers routed to each other in one cluster, all on `127.0.0.1`.
///
/// Route ports are picked up front. Without route proxies, each node lists the nodes before
/// it (and itself) as routes and the nodes start one after another, each once the route
/// listeners of those before it are open, so every route is dialed once its peer listens.
/// Started together, each node listing all the others, a node's dials to peers not yet
/// listening failed and were retried a second later, when the peer had dialed in
/// meanwhile, and the duplicate routes were closed again: that churn, a second into the
/// cluster's life, fell under the first JetStream calls of a test on a loaded machine, and
/// some of their replies never came. A node restarted with [`NatsServer::restart`] comes
/// back on the same client and route ports: it dials the nodes before it, and the nodes
/// after it dial it again. (Through route proxies the nodes still start together, each
/// listing every other.)
#[derive(Debug)]
pub struct Cluster {
    name: String,
    /// Node `i` is called `{node_prefix}-{i}`.
    node_prefix: String,
    nodes: Vec<NatsServer>,
    /// Whether the nodes run JetStream (and so serve monitoring, to tell its readiness).
    jetstream: bool,
    /// The proxies the routes run through, for a cluster started with
    /// [`ClusterBuilder::route_proxies`].
    route_links: Option<RouteLinks>,
}

/// Options for a [`Cluster`]; [`start`](Self::start) starts it.
pub struct ClusterBuilder {
    nodes: usize,
    route_proxies: bool,
    configure: Box<dyn Fn(usize, ServerBuilder) -> ServerBuilder>,
}

impl std::fmt::Debug for ClusterBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClusterBuilder")
            .field("nodes", &self.nodes)
            .field("route_proxies", &self.route_proxies)
            .finish_non_exhaustive()
    }
}

impl ClusterBuilder {
    /// Runs each node's options through `configure(index, options)` first, as
    /// [`Cluster::start_named`] does. The cluster and route settings are the builder's.
    pub fn configure(
        mut self,
        configure: impl Fn(usize, ServerBuilder) -> ServerBuilder + 'static,
    ) -> Self {
        self.configure = Box::new(configure);
        self
    }

    /// Routes every pair of nodes through a [`Proxy`](crate::Proxy) of its own (default:
    /// no), so that [`Cluster::partition`] and [`Cluster::blackhole_routes`] can split the
    /// servers while clients still reach every node directly. The nodes also serve
    /// monitoring, whose `/routez` tells which routes are up.
    pub fn route_proxies(mut self, on: bool) -> Self {
        self.route_proxies = on;
        self
    }

    /// Starts the nodes and returns once the cluster is formed and, with JetStream, ready,
    /// as [`Cluster::start`] does.
    pub fn start(self) -> Result<Cluster, TestServerError> {
        let configure = |i, node| {
            let node = (self.configure)(i, node);
            if self.route_proxies {
                node.monitoring()
            } else {
                node
            }
        };
        let cluster = Cluster::form(
            CLUSTER_NAME,
            NODE_PREFIX,
            self.nodes,
            self.route_proxies,
            configure,
        )?;
        cluster.wait_jetstream(JETSTREAM_TIMEOUT)?;
        Ok(cluster)
    }
}

impl Cluster {
    /// Options for a cluster of `n` nodes named as [`start`](Self::start)'s are, e.g. with
    /// its routes through proxies a test can cut.
    pub fn builder(n: usize) -> ClusterBuilder {
        ClusterBuilder {
            nodes: n,
            route_proxies: false,
            configure: Box::new(|_, node| node),
        }
    }

    /// Starts `n` nodes and returns once each one announces the client URLs of all the
    /// others in its `INFO`, which it can only have learnt over working routes, and, when the
    /// nodes run JetStream, once it can take API calls (see [`wait_jetstream`](Self::wait_jetstream)).
    pub fn start(n: usize) -> Result<Cluster, TestServerError> {
        Self::start_with(n, |node| node)
    }

    /// Like [`start`](Self::start), with each node's options passed through `configure`
    /// first, e.g. `|node| node.websocket()` for a cluster that also serves WebSocket
    /// clients (and advertises its nodes' WebSocket addresses to them). The cluster and
    /// route settings are the caller's to leave alone.
    pub fn start_with(
        n: usize,
        configure: impl Fn(ServerBuilder) -> ServerBuilder,
    ) -> Result<Cluster, TestServerError> {
        Self::start_named(CLUSTER_NAME, NODE_PREFIX, n, |_, node| configure(node))
    }

    /// Like [`start_with`](Self::start_with) for a cluster called `name` whose nodes are
    /// named `{node_prefix}-0`, `{node_prefix}-1`, ...; `configure` also gets the node's
    /// index, for per-node settings such as a gateway or leaf node listener. A cluster of one
    /// node has no `cluster` block at all, so that its JetStream runs standalone. Nodes with
    /// [`ServerBuilder::jetstream`] on also get [`ServerBuilder::monitoring`], whose `/jsz`
    /// tells when JetStream is ready.
    pub fn start_named(
        name: &str,
        node_prefix: &str,
        n: usize,
        configure: impl Fn(usize, ServerBuilder) -> ServerBuilder,
    ) -> Result<Cluster, TestServerError> {
        let cluster = Self::form(name, node_prefix, n, false, configure)?;
        cluster.wait_jetstream(JETSTREAM_TIMEOUT)?;
        Ok(cluster)
    }

    /// Like [`start_named`](Self::start_named) without waiting for JetStream, for a cluster
    /// whose meta group spans more than its own nodes (one cluster of a supercluster: its
    /// group forms once the gateways are up).
    pub(crate) fn form(
        name: &str,
        node_prefix: &str,
        n: usize,
        route_proxies: bool,
        configure: impl Fn(usize, ServerBuilder) -> ServerBuilder,
    ) -> Result<Cluster, TestServerError> {
        let (nodes, route_links) = crate::error::start_over_when_a_node_goes(|| {
            start_nodes(name, node_prefix, n, route_proxies, &configure)
        })?;
        let cluster = Cluster {
            name: name.to_owned(),
            node_prefix: node_prefix.to_owned(),
            jetstream: nodes.iter().any(|node| node.store_dir().is_some()),
            nodes,
            route_links,
        };
        cluster.wait_formed(FORM_TIMEOUT)?;
        Ok(cluster)
    }

    /// The name of the nodes' `cluster` block.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The nodes, in start order.
    pub fn nodes(&self) -> &[NatsServer] {
        &self.nodes
    }

    /// One node, e.g. to [`restart`](NatsServer::restart) or [`kill`](NatsServer::kill) it.
    ///
    /// # Panics
    ///
    /// Panics if `i` is out of range.
    pub fn node_mut(&mut self, i: usize) -> &mut NatsServer {
        &mut self.nodes[i]
    }

    /// The client URLs of all nodes, in start order.
    pub fn urls(&self) -> Vec<String> {
        self.nodes.iter().map(NatsServer::url).collect()
    }

    /// The WebSocket URLs of all nodes that have a WebSocket listener, in start order.
    pub fn websocket_urls(&self) -> Vec<String> {
        self.nodes
            .iter()
            .filter_map(NatsServer::websocket_url)
            .collect()
    }

    /// Waits until every node announces every other node's client address in its `INFO`
    /// `connect_urls`, e.g. after restarting a node. Killed nodes must not be in the
    /// cluster any more for this to succeed.
    pub fn wait_formed(&self, timeout: Duration) -> Result<(), TestServerError> {
        let deadline = Instant::now() + timeout;
        let addrs: Vec<String> = self
            .nodes
            .iter()
            .map(|node| format!("127.0.0.1:{}", node.port()))
            .collect();
        for (i, node) in self.nodes.iter().enumerate() {
            let peers: Vec<&String> = addrs.iter().filter(|a| **a != addrs[i]).collect();
            wait_for_peers(i, node.port(), &peers, deadline)?;
        }
        Ok(())
    }

    /// Waits until JetStream can take API calls: every node names the same meta leader, and
    /// the leader has every other node as a current peer. Without that a stream create can go
    /// unanswered for as long as an election takes. Does nothing for a cluster without
    /// JetStream or of one node (whose JetStream runs standalone and is ready once it logs
    /// readiness). Every node must be running.
    pub fn wait_jetstream(&self, timeout: Duration) -> Result<(), TestServerError> {
        if !self.jetstream || self.nodes.len() < 2 {
            return Ok(());
        }
        let nodes: Vec<&NatsServer> = self.nodes.iter().collect();
        wait_meta_leader(&nodes, Instant::now() + timeout)
    }

    /// Closes every route between a node of `side_a` and a node of `side_b` and refuses new
    /// ones until [`heal_routes`](Self::heal_routes): each side goes on as a cluster of its
    /// own, as over a failed switch. Clients still reach every node.
    ///
    /// # Errors
    ///
    /// [`TestServerError::NoRouteProxies`] unless the cluster was started with
    /// [`ClusterBuilder::route_proxies`].
    pub fn partition(&self, side_a: &[usize], side_b: &[usize]) -> Result<(), TestServerError> {
        self.route_links()?.partition(side_a, side_b);
        Ok(())
    }

    /// Forwards nothing on the routes between a node of `side_a` and a node of `side_b`
    /// until [`heal_routes`](Self::heal_routes), while their connections stay open: a
    /// black-holed network, noticed by the servers only when pings or replication time out.
    ///
    /// # Errors
    ///
    /// As [`partition`](Self::partition).
    pub fn blackhole_routes(
        &self,
        side_a: &[usize],
        side_b: &[usize],
    ) -> Result<(), TestServerError> {
        self.route_links()?.blackhole(side_a, side_b);
        Ok(())
    }

    /// Undoes every [`partition`](Self::partition) and
    /// [`blackhole_routes`](Self::blackhole_routes): routes are accepted again (the
    /// servers redial them on their own, about once a second) and black-holed ones forward
    /// what they held, as TCP would have retransmitted it.
    ///
    /// # Errors
    ///
    /// As [`partition`](Self::partition).
    pub fn heal_routes(&self) -> Result<(), TestServerError> {
        self.route_links()?.heal();
        Ok(())
    }

    /// Waits until no node of `side_a` lists a route to a node of `side_b` in its `/routez`,
    /// nor the other way round.
    ///
    /// # Errors
    ///
    /// [`TestServerError::NotFormed`] when a route is still up at `timeout`,
    /// [`TestServerError::NoMonitoring`] for nodes without monitoring.
    pub fn wait_partitioned(
        &self,
        side_a: &[usize],
        side_b: &[usize],
        timeout: Duration,
    ) -> Result<(), TestServerError> {
        let what = format!("no routes between nodes {side_a:?} and nodes {side_b:?}");
        monitor::poll_until(Instant::now() + timeout, &what, |last_seen| {
            for (i, node) in self.nodes.iter().enumerate() {
                let other_side = if side_a.contains(&i) {
                    side_b
                } else if side_b.contains(&i) {
                    side_a
                } else {
                    continue;
                };
                let Some(routes) = routes_of(node, last_seen)? else {
                    return Ok(None);
                };
                if let Some(route) = routes
                    .iter()
                    .find(|r| other_side.iter().any(|&j| self.is_node(r, j)))
                {
                    *last_seen = format!("node {i} still has {route}");
                    return Ok(None);
                }
            }
            Ok(Some(()))
        })
    }

    /// Waits until every node has routes to every other node, all through the route
    /// proxies: none goes around them, so a [`partition`](Self::partition) cuts them all.
    /// Every node must be running.
    ///
    /// Each route connection shows in the `/routez` of both its ends, and each one that runs
    /// through a proxy is one of the proxy's connections, so the routes listed add up to
    /// twice the proxies' connections exactly when none bypasses them.
    ///
    /// # Errors
    ///
    /// [`TestServerError::NotFormed`] when a route is missing or goes around the proxies at
    /// `timeout`, [`TestServerError::NoRouteProxies`] as [`partition`](Self::partition).
    pub fn wait_routes_proxied(&self, timeout: Duration) -> Result<(), TestServerError> {
        let links = self.route_links()?;
        let what = "a full mesh of routes, all through the route proxies";
        monitor::poll_until(Instant::now() + timeout, what, |last_seen| {
            let proxied = links.connections();
            let mut listed = 0;
            for (i, node) in self.nodes.iter().enumerate() {
                let Some(routes) = routes_of(node, last_seen)? else {
                    return Ok(None);
                };
                let missing = (0..self.nodes.len())
                    .find(|&j| j != i && !routes.iter().any(|r| self.is_node(r, j)));
                if let Some(j) = missing {
                    *last_seen = format!("node {i} has no route to node {j}");
                    return Ok(None);
                }
                listed += routes.len();
            }
            // Read again: a route that came or went meanwhile makes the counts disagree.
            if listed != 2 * proxied || links.connections() != proxied {
                *last_seen = format!(
                    "{listed} route ends listed, {proxied} connections through the proxies"
                );
                return Ok(None);
            }
            Ok(Some(()))
        })
    }

    /// The route proxies, or the error for a cluster without them.
    fn route_links(&self) -> Result<&RouteLinks, TestServerError> {
        self.route_links
            .as_ref()
            .ok_or(TestServerError::NoRouteProxies)
    }

    /// Whether the `/routez` entry `route` leads to node `j`, by its server name.
    fn is_node(&self, route: &serde_json::Value, j: usize) -> bool {
        str_at(route, "/remote_name") == format!("{}-{j}", self.node_prefix)
    }
}

/// The routes in `node`'s `/routez`, or `None` (with why in `last_seen`) while it cannot
/// be reached.
fn routes_of(
    node: &NatsServer,
    last_seen: &mut String,
) -> Result<Option<Vec<serde_json::Value>>, TestServerError> {
    match node.monitor("/routez") {
        Ok(body) => Ok(Some(
            body.get("routes")
                .and_then(serde_json::Value::as_array)
                .cloned()
                .unwrap_or_default(),
        )),
        Err(TestServerError::Io(e)) => {
            *last_seen = format!("{}: {e}", node.url());
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// Starts `n` nodes, each waiting for its own readiness: one after another, each routed to
/// itself and the nodes before it, or, with their routes through proxies, all together,
/// each routed to every other.
fn start_nodes(
    name: &str,
    node_prefix: &str,
    n: usize,
    route_proxies: bool,
    configure: &impl Fn(usize, ServerBuilder) -> ServerBuilder,
) -> Result<(Vec<NatsServer>, Option<RouteLinks>), TestServerError> {
    let route_ports = crate::free_ports(n)?;
    let route_links = if route_proxies && n > 1 {
        Some(RouteLinks::start(&route_ports)?)
    } else {
        None
    };
    let builders: Vec<ServerBuilder> = (0..n)
        .map(|i| {
            let routes = match &route_links {
                Some(links) => Routes::Proxied {
                    urls: links.routes_of(i),
                    advertise: links.advertise_of(i),
                },
                None => Routes::Direct,
            };
            let node = configure(i, node_builder(name, node_prefix, i, &route_ports, routes));
            if node.has_jetstream() {
                node.monitoring()
            } else {
                node
            }
        })
        .collect();
    // Any failure drops (and so kills) the nodes that did start.
    let nodes = if route_links.is_some() {
        // Through proxies every node lists every other (the proxies listen from the start).
        let results: Vec<Result<NatsServer, TestServerError>> = std::thread::scope(|scope| {
            let handles: Vec<_> = builders
                .into_iter()
                .map(|builder| scope.spawn(move || builder.spawn()))
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
                })
                .collect()
        });
        results.into_iter().collect::<Result<Vec<_>, _>>()?
    } else {
        // In order: a node is spawned once the nodes it dials listen for routes (see
        // `Cluster`). A server opens its route listener just after it says it is ready, so
        // that is waited for apart.
        let mut nodes = Vec::with_capacity(n);
        for builder in builders {
            let node = builder.spawn()?;
            if n > 1 {
                node.wait_for_log("Listening for route connections on", FORM_TIMEOUT)?;
            }
            nodes.push(node);
        }
        nodes
    };
    Ok((nodes, route_links))
}

/// How a node reaches the others.
enum Routes {
    /// Straight to their route listeners.
    Direct,
    /// Through these proxies, advertising an address that refuses every connection so that
    /// no peer opens a route around them.
    Proxied {
        urls: Vec<String>,
        advertise: String,
    },
}

/// Options for node `i`: its name, its route listener and its routes: straight to itself and
/// the nodes before it (see [`Cluster`]), or through the proxies to every other node.
fn node_builder(
    name: &str,
    node_prefix: &str,
    i: usize,
    route_ports: &[u16],
    routes: Routes,
) -> ServerBuilder {
    if route_ports.len() == 1 {
        // A lone node routes nowhere; without a cluster block its JetStream runs standalone
        // instead of waiting for peers that will never come.
        return ServerBuilder::new().append_config(&format!("server_name: {node_prefix}-{i}\n"));
    }
    let (urls, advertise) = match routes {
        Routes::Direct => {
            let urls = route_ports
                .iter()
                // Its own too: clustered JetStream wants routes configured even on the
                // first node, and a server drops a route to itself once it sees it is one.
                .take(i + 1)
                .map(|port| format!("nats://127.0.0.1:{port}"))
                .collect();
            (urls, String::new())
        }
        Routes::Proxied { urls, advertise } => (urls, format!("  advertise: \"{advertise}\"\n")),
    };
    ServerBuilder::new().append_config(&format!(
        "server_name: {node_prefix}-{i}\n\
         cluster {{\n  name: {name}\n  listen: 127.0.0.1:{}\n{advertise}  routes: [{}]\n}}\n",
        route_ports[i],
        urls.join(", "),
    ))
}

/// Reads `INFO` from node `node` (greeting, then topology updates) until its
/// `connect_urls` contains every address in `peers`.
fn wait_for_peers(
    node: usize,
    port: u16,
    peers: &[&String],
    deadline: Instant,
) -> Result<(), TestServerError> {
    let missing = |urls: &[String]| -> Vec<String> {
        peers
            .iter()
            .filter(|p| !urls.contains(p))
            .map(|p| (*p).clone())
            .collect()
    };
    let mut stream = InfoStream::connect(port, deadline)?;
    let mut info = stream.next_info()?;
    stream.subscribe_to_updates()?;
    loop {
        let still_missing = missing(&connect_urls(&info));
        if still_missing.is_empty() {
            return Ok(());
        }
        info = match stream.next_info() {
            Ok(info) => info,
            Err(TestServerError::Io(e))
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock
                ) =>
            {
                return Err(TestServerError::ClusterNotFormed {
                    node,
                    missing: still_missing,
                });
            }
            Err(e) => return Err(e),
        };
    }
}

/// Waits until JetStream in `nodes` (JetStream on, monitoring on) can take API calls: every
/// node names the same meta leader in `/jsz` and counts all of them in the meta group, and the
/// leader sees every other node as a current peer (it has caught up with the leader's log).
///
/// Until then a JetStream request may go unanswered for as long as an election takes, which
/// on a loaded machine is longer than a client's API timeout.
pub(crate) fn wait_meta_leader(
    nodes: &[&NatsServer],
    deadline: Instant,
) -> Result<(), TestServerError> {
    monitor::poll_until(
        deadline,
        "a JetStream meta leader known to every node, with every peer current",
        |last_seen| {
            let mut leader: Option<String> = None;
            for node in nodes {
                let jsz = node.monitor("/jsz")?;
                let named = str_at(&jsz, "/meta_cluster/leader");
                let size = jsz
                    .pointer("/meta_cluster/cluster_size")
                    .and_then(serde_json::Value::as_u64)
                    .unwrap_or(0);
                let meta = || {
                    jsz.get("meta_cluster")
                        .map_or_else(String::new, ToString::to_string)
                };
                if named.is_empty() || size < nodes.len() as u64 {
                    *last_seen = format!("{}: {}", node.url(), meta());
                    return Ok(None);
                }
                match &leader {
                    Some(l) if l != named => {
                        *last_seen = format!("leaders {l} and {named}");
                        return Ok(None);
                    }
                    Some(_) => {}
                    None => leader = Some(named.to_owned()),
                }
                // A follower lists the leader among its replicas; the leader lists the
                // others, and only it knows whether they are current.
                let replicas = jsz
                    .pointer("/meta_cluster/replicas")
                    .and_then(serde_json::Value::as_array)
                    .map_or(&[][..], Vec::as_slice);
                let is_leader = !replicas.iter().any(|r| str_at(r, "/name") == named);
                let current = replicas
                    .iter()
                    .filter(|r| r.get("current").and_then(serde_json::Value::as_bool) == Some(true))
                    .count();
                if is_leader && current + 1 < nodes.len() {
                    *last_seen = format!("leader {named} at {}: {}", node.url(), meta());
                    return Ok(None);
                }
            }
            Ok(Some(()))
        },
    )
}
