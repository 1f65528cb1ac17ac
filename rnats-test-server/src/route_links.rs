//! Cuttable links between the nodes of a [`Cluster`](crate::Cluster): one [`Proxy`] per
//! ordered pair of nodes, so a test can partition the servers from each other while their
//! client ports stay reachable.

use std::collections::BTreeMap;

use crate::error::TestServerError;
use crate::proxy::Proxy;

/// The proxies that carry a cluster's routes.
///
/// Node `i` lists, as its routes, the proxy `(i, j)` in front of node `j`'s route port for
/// every other node `j`: every route connection, whichever side opened it, runs through
/// one of them.
///
/// A server also connects to route URLs it hears of from its peers (implicit routes),
/// which would bypass the proxies. Each node therefore advertises, as its route URL, a port
/// of its own that refuses every connection: what is gossiped about it leads nowhere, and
/// only the configured routes (the proxies) ever connect.
#[derive(Debug)]
pub(crate) struct RouteLinks {
    /// `(from, to)`: the proxy node `from` dials to reach node `to`.
    links: BTreeMap<(usize, usize), Proxy>,
    /// Per node, the refusing listener whose address it advertises to its peers.
    advertised: Vec<Proxy>,
}

impl RouteLinks {
    /// A proxy for every ordered pair of the nodes whose route listeners are on
    /// `route_ports`, and a refusing address per node to advertise.
    pub(crate) fn start(route_ports: &[u16]) -> Result<RouteLinks, TestServerError> {
        let mut links = BTreeMap::new();
        for from in 0..route_ports.len() {
            for (to, port) in route_ports.iter().enumerate() {
                if from != to {
                    links.insert((from, to), Proxy::start(&format!("127.0.0.1:{port}"))?);
                }
            }
        }
        let advertised = route_ports
            .iter()
            .map(|port| {
                // The upstream is never dialled: every connection is refused on accept.
                let proxy = Proxy::start(&format!("127.0.0.1:{port}"))?;
                proxy.refuse(true);
                Ok(proxy)
            })
            .collect::<Result<Vec<_>, TestServerError>>()?;
        Ok(RouteLinks { links, advertised })
    }

    /// The route URLs node `from` is configured with: one proxy per other node.
    pub(crate) fn routes_of(&self, from: usize) -> Vec<String> {
        self.links
            .iter()
            .filter(|((f, _), _)| *f == from)
            .map(|(_, proxy)| proxy.url())
            .collect()
    }

    /// The `host:port` node `i` advertises as its route address.
    pub(crate) fn advertise_of(&self, i: usize) -> String {
        format!("127.0.0.1:{}", self.advertised[i].port())
    }

    /// How many route connections run through the proxies now.
    pub(crate) fn connections(&self) -> usize {
        self.links.values().map(Proxy::connections).sum()
    }

    /// The proxies between any node of `side_a` and any node of `side_b`, both ways.
    fn between<'a>(
        &'a self,
        side_a: &'a [usize],
        side_b: &'a [usize],
    ) -> impl Iterator<Item = &'a Proxy> + 'a {
        self.links.iter().filter_map(move |((from, to), proxy)| {
            let across = (side_a.contains(from) && side_b.contains(to))
                || (side_b.contains(from) && side_a.contains(to));
            across.then_some(proxy)
        })
    }

    /// Closes every route between the two sides and refuses new ones.
    pub(crate) fn partition(&self, side_a: &[usize], side_b: &[usize]) {
        for proxy in self.between(side_a, side_b) {
            proxy.refuse(true);
            proxy.cut();
        }
    }

    /// Forwards nothing between the two sides, keeping every route connection open.
    pub(crate) fn blackhole(&self, side_a: &[usize], side_b: &[usize]) {
        for proxy in self.between(side_a, side_b) {
            proxy.stall();
        }
    }

    /// Undoes every [`partition`](Self::partition) and [`blackhole`](Self::blackhole):
    /// new routes are accepted, and stalled ones forward what they held.
    pub(crate) fn heal(&self) {
        for proxy in self.links.values() {
            proxy.refuse(false);
            proxy.resume();
        }
    }
}
