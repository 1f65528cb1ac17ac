//! The server pool: the servers given at connect plus those the cluster advertised, with what
//! the client has learnt about each (failed attempts, last error), as
//! [`Client::server_pool`](crate::Client::server_pool) reports it. The reconnect policy and
//! the plan of each attempt over the pool are in [`super::plan`].

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rnats_proto::ServerInfo;

use super::attempts::{Attempt, Attempts, LastLink};
use super::backoff::shuffle;
use super::sync::{lock, try_lock};
use crate::error::{
    ConnectCause, ConnectError, ConnectErrorKind, SetServerPoolError, SetServerPoolErrorKind,
};
use crate::server_addr::{ServerAddr, ToServerAddrs};

/// One server of the pool and what the client knows of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Server {
    /// The server's address.
    pub addr: ServerAddr,
    /// Failed connection attempts in a row; back to zero after a successful connect.
    pub failed_attempts: usize,
    /// Whether the client ever connected to it.
    pub did_connect: bool,
    /// Whether a cluster advertised it (INFO `connect_urls`) rather than the user naming it.
    pub is_discovered: bool,
    /// Why the last attempt failed, if it did.
    pub last_error: Option<String>,
}

impl Server {
    fn new(addr: ServerAddr, is_discovered: bool) -> Server {
        Server {
            addr,
            failed_attempts: 0,
            did_connect: false,
            is_discovered,
            last_error: None,
        }
    }
}

impl fmt::Display for Server {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} ({} failed attempts)",
            self.addr, self.failed_attempts
        )
    }
}

/// What a `reconnect_to_server_callback` chooses: the server to try next, and how long to
/// wait first (`None`: the usual backoff).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReconnectToServer {
    /// The server; it must be one of the pool's.
    pub addr: ServerAddr,
    /// The wait before connecting; `None` for the reconnect delay policy, `Some(ZERO)` for
    /// at once.
    pub delay: Option<Duration>,
}

/// The servers to try: those given at connect plus those the cluster advertised.
#[derive(Debug)]
pub(crate) struct ServerPool {
    servers: Vec<Server>,
    next: usize,
    /// The server of the last successful connect: never pruned, even if discovered.
    current: Option<ServerAddr>,
    /// The attempts since the last connection (or the last replacement of the pool).
    pub(crate) attempts: Attempts,
    /// When the last link came up, for the backoff after it ends.
    last_link: LastLink,
    /// The names the TLS certificates of discovered servers announced by IP address are
    /// checked against (see [`ServerPool::add_discovered`]).
    tls_names: HashMap<ServerKey, Arc<str>>,
    /// The name the certificate of the server of the last connection was checked against.
    current_tls_name: Option<Arc<str>>,
    /// The newest list of servers the cluster announced, taken in by
    /// [`ServerPool::take_announced`] (its new servers reported).
    announced: Option<Arc<ServerInfo>>,
    /// Whether [`ServerPool::announced`] is still to be merged into `servers`: done when
    /// the pool is next used ([`ServerPool::settle`]), not when the INFO comes.
    unmerged: bool,
    /// URLs parsed in full so far, for the tests of what taking in an announcement costs.
    #[cfg(test)]
    parsed: usize,
}

impl ServerPool {
    /// The pool a client starts with: the servers of `addrs`, once the options are known to
    /// be usable (at least one server, an `inbox_prefix` that makes valid subjects), shuffled
    /// unless `retain_order`. Both the async and the blocking client connect through here.
    pub(crate) fn for_connect(
        addrs: impl ToServerAddrs,
        inbox_prefix: &str,
        retain_order: bool,
    ) -> Result<ServerPool, ConnectError> {
        let servers: Vec<ServerAddr> = addrs
            .to_server_addrs()
            .map_err(|e| ConnectError::with_source(ConnectErrorKind::ServerParse, e))?
            .collect();
        if servers.is_empty() {
            return Err(ConnectCause::NoServers.into());
        }
        // Inboxes are `<prefix>.<nuid>...`: the prefix must make them valid literal subjects.
        rnats_proto::validate_publish_subject(format!("{inbox_prefix}.x").as_bytes())
            .map_err(|e| ConnectError::from(ConnectCause::InvalidInboxPrefix(e)))?;
        Ok(ServerPool::new(servers, retain_order))
    }

    /// A pool of `servers`, shuffled unless `retain_order`.
    pub(crate) fn new(mut servers: Vec<ServerAddr>, retain_order: bool) -> ServerPool {
        if !retain_order {
            shuffle(&mut servers);
        }
        ServerPool {
            servers: servers
                .into_iter()
                .map(|addr| Server::new(addr, false))
                .collect(),
            next: 0,
            current: None,
            attempts: Attempts::default(),
            last_link: LastLink::default(),
            tls_names: HashMap::new(),
            current_tls_name: None,
            announced: None,
            unmerged: false,
            #[cfg(test)]
            parsed: 0,
        }
    }

    /// The servers of a `set_server_pool` call, checked as both clients take them: they
    /// parse, there is at least one, and WebSocket and plain addresses are not mixed.
    pub(crate) fn replacement(
        addrs: impl ToServerAddrs,
    ) -> Result<Vec<ServerAddr>, SetServerPoolError> {
        let servers: Vec<ServerAddr> = addrs
            .to_server_addrs()
            .map_err(|e| {
                SetServerPoolError::with_source(SetServerPoolErrorKind::InvalidAddress, e)
            })?
            .collect();
        let Some(first) = servers.first() else {
            return Err(SetServerPoolError::new(SetServerPoolErrorKind::EmptyPool));
        };
        if servers
            .iter()
            .any(|s| s.is_websocket() != first.is_websocket())
        {
            return Err(SetServerPoolError::new(
                SetServerPoolErrorKind::MixedSchemes,
            ));
        }
        Ok(servers)
    }

    /// Number of servers.
    pub(crate) fn len(&mut self) -> usize {
        self.settle();
        self.servers.len()
    }

    /// The next server to try, round robin.
    pub(crate) fn next_server(&mut self) -> Option<ServerAddr> {
        self.settle();
        let server = self.servers.get(self.next % self.servers.len().max(1))?;
        let addr = server.addr.clone();
        self.next = (self.next + 1) % self.servers.len();
        Some(addr)
    }

    /// Steps the round robin past the server of the last connection when it is next, so that
    /// a pass tries it last: the server just lost is the least likely to take the client
    /// back, and a dead host can hold an attempt for the whole connection timeout (nats.go,
    /// too, moves it to the end of its list). This happens when the pool grew by discovery
    /// after the connect, or was replaced with that server first.
    pub(crate) fn start_pass_after_current(&mut self) {
        self.settle();
        let Some(current) = &self.current else {
            return;
        };
        let is_next = self
            .servers
            .get(self.next)
            .is_some_and(|s| s.addr.same_server(current));
        if is_next && self.servers.len() > 1 {
            self.next = (self.next + 1) % self.servers.len();
        }
    }

    /// Whether `addr` is one of the pool's servers.
    pub(crate) fn contains(&mut self, addr: &ServerAddr) -> bool {
        self.settle();
        self.servers.iter().any(|s| s.addr.same_server(addr))
    }

    /// `attempt` made the link, which came up at `now`.
    pub(crate) fn connected(&mut self, attempt: &Attempt, now: Instant) {
        self.last_link.connected(now, self.attempts.tries);
        self.current_tls_name = Some(Arc::from(attempt.tls_name()));
        self.record(&attempt.addr, Ok(()));
        // The address dialled, even one the pool no longer holds (replaced meanwhile).
        self.current = Some(attempt.addr.clone());
    }

    /// The link ended at `now`; `planned`: the client left it (a planned move). After a
    /// link lost soon after it came up, the default backoff goes on from the try that made
    /// it ([`LastLink`]).
    pub(crate) fn link_ended(&mut self, now: Instant, planned: bool) {
        self.attempts.tries = self.last_link.ended(now, planned);
    }

    /// The server of the last successful connect.
    pub(crate) fn current(&self) -> Option<&ServerAddr> {
        self.current.as_ref()
    }

    /// The name `addr`'s TLS certificate is checked against when that is not its host (see
    /// [`ServerPool::add_discovered`]).
    pub(super) fn tls_name_of(&self, addr: &ServerAddr) -> Option<Arc<str>> {
        self.tls_names.get(&key(addr)).cloned()
    }

    /// Notes how an attempt on `addr` went.
    pub(super) fn record(&mut self, addr: &ServerAddr, outcome: Result<(), String>) {
        self.settle();
        let Some(server) = self.servers.iter_mut().find(|s| s.addr.same_server(addr)) else {
            return;
        };
        match outcome {
            Ok(()) => {
                self.attempts = Attempts::default();
                self.current = Some(server.addr.clone());
                server.failed_attempts = 0;
                server.did_connect = true;
                server.last_error = None;
            }
            Err(error) => {
                server.failed_attempts += 1;
                server.last_error = Some(error);
            }
        }
    }

    /// The pool as it is now.
    pub(crate) fn snapshot(&mut self) -> Vec<Server> {
        self.settle();
        self.servers.clone()
    }

    /// Replaces the servers, keeping what is known of those that stay. Every server of the
    /// new pool counts as named by the user, even one the cluster advertised before (as in
    /// async-nats): the caller chose it.
    pub(crate) fn replace(&mut self, addrs: Vec<ServerAddr>) {
        self.settle();
        // Looked up by (host, port) as in `add_discovered`: linear in the pool's size.
        let mut old: HashMap<ServerKey, Server> = std::mem::take(&mut self.servers)
            .into_iter()
            .map(|s| (key(&s.addr), s))
            .collect();
        self.servers = addrs
            .into_iter()
            .map(|addr| match old.remove(&key(&addr)) {
                Some(known) => Server {
                    addr,
                    is_discovered: false,
                    ..known
                },
                None => Server::new(addr, false),
            })
            .collect();
        self.next = 0;
        // Servers the user names are checked against their own names (the link's name
        // stays, for the servers the cluster announces next).
        self.tls_names.clear();
        // The attempts start afresh, as in async-nats: `max_reconnects` counts from here.
        self.attempts = Attempts::default();
        // The cluster's next announcement is compared with this pool, not with the last
        // announcement: its servers are new to the pool again.
        self.announced = None;
    }

    /// Takes in the servers an INFO announces; with `report`, returns those new to the
    /// pool, as announced, for `DiscoveredServers` (without, nobody listens for it). They
    /// join the pool when it is next used ([`ServerPool::settle`]).
    ///
    /// Merging parses every announced URL (milliseconds for a cluster of thousands), and
    /// the pool is needed only to reconnect or when the user asks for it, so only what the
    /// event needs is done here: the URLs this list has and the last one had not (a
    /// cluster re-announces every member whenever one comes or goes, so these are few),
    /// checked against the pool's servers by host and port, without parsing (issue 22).
    pub(crate) fn take_announced(&mut self, info: Arc<ServerInfo>, report: bool) -> Vec<String> {
        let added = if report {
            self.new_in(&info)
        } else {
            Vec::new()
        };
        self.announced = Some(info);
        self.unmerged = true;
        added
    }

    /// The URLs of `info` naming servers that neither the last announcement nor the pool
    /// has, each once.
    fn new_in(&self, info: &ServerInfo) -> Vec<String> {
        let announced = self.announced_urls(info);
        let before: FastSet<&str> = match &self.announced {
            Some(last) => self.announced_urls(last).urls.into_iter().collect(),
            None => FastSet::default(),
        };
        let mut fresh = announced
            .urls
            .iter()
            .filter(|url| !before.contains(*url))
            .peekable();
        if fresh.peek().is_none() {
            return Vec::new();
        }
        let mut seen: FastSet<(Cow<'_, str>, u16)> = self
            .servers
            .iter()
            .map(|s| (Cow::Borrowed(s.addr.host()), s.addr.port()))
            .collect();
        let implied_scheme = announced.implied_scheme;
        let websocket = is_websocket(implied_scheme);
        fresh
            .filter(|url| {
                announced_key(url, implied_scheme, websocket).is_some_and(|key| seen.insert(key))
            })
            .map(|url| (*url).to_owned())
            .collect()
    }

    /// Merges the newest announced servers into the pool if that is not done yet. Each
    /// announcement lists the whole cluster, so merging the newest alone is enough.
    fn settle(&mut self) {
        if !std::mem::take(&mut self.unmerged) {
            return;
        }
        if let Some(info) = self.announced.clone() {
            self.add_discovered(&info);
        }
    }

    /// The URLs of `info` a pool like this one learns servers from, up to
    /// [`MAX_ANNOUNCED`] servers, and the scheme they take when announced bare (see
    /// [`ServerPool::add_discovered`]).
    ///
    /// A list no longer than the limit is taken whole (its duplicates and unusable URLs are
    /// skipped where it is used). A longer one is cut here, before anything is parsed or
    /// stored per URL: each server once, by host and port as [`announced_key`] finds them
    /// without parsing the usual `host:port`, and the user's own servers do not count
    /// against the limit. What is past it costs no more than that look.
    fn announced_urls<'a>(&self, info: &'a ServerInfo) -> Announced<'a> {
        let websocket_scheme = self
            .servers
            .first()
            .filter(|s| s.addr.is_websocket())
            .map(|s| {
                if s.addr.scheme() == "wss" {
                    "wss"
                } else {
                    "ws"
                }
            });
        let secure = self.servers.iter().any(|s| s.addr.scheme() == "tls");
        let implied_scheme = match websocket_scheme {
            Some(scheme) => Some(scheme),
            None if secure => Some("tls"),
            None => None,
        };
        let urls = match websocket_scheme {
            Some(_) if !info.ws_connect_urls.is_empty() => &info.ws_connect_urls,
            _ => &info.connect_urls,
        };
        let mut announced = Announced {
            urls: Vec::new(),
            implied_scheme,
            left_out: 0,
        };
        if urls.len() <= MAX_ANNOUNCED {
            announced.urls = urls.iter().map(String::as_str).collect();
            return announced;
        }
        let websocket = is_websocket(implied_scheme);
        let named: FastSet<(Cow<'_, str>, u16)> = self
            .servers
            .iter()
            .filter(|s| !s.is_discovered)
            .map(|s| (Cow::Borrowed(s.addr.host()), s.addr.port()))
            .collect();
        let mut seen = FastSet::default();
        let mut counted = 0;
        for (at, url) in urls.iter().enumerate() {
            let Some(server) = announced_key(url, implied_scheme, websocket) else {
                continue;
            };
            if seen.contains(&server) {
                continue;
            }
            if !named.contains(&server) {
                if counted == MAX_ANNOUNCED {
                    announced.left_out = urls.len() - at;
                    break;
                }
                counted += 1;
            }
            seen.insert(server);
            announced.urls.push(url);
        }
        announced
    }

    /// Adds the servers `info` advertises that the pool does not know yet; returns them
    /// as advertised.
    ///
    /// A pool of WebSocket servers learns WebSocket addresses: `ws_connect_urls` when the
    /// INFO has them, else `connect_urls`, which is where nats-server puts its cluster's
    /// WebSocket addresses for a WebSocket client (it leaves `ws_connect_urls` out then).
    /// Advertised addresses are bare `host:port`, so they get the pool's scheme (`ws` or
    /// `wss`); parsed on their own they would mean `nats://`. Likewise, when any server of
    /// the pool is `tls://`, advertised addresses are `tls://` too, as nats.go does (its
    /// `connScheme`): a cluster reached over TLS is never left in the clear, with the
    /// credentials going along.
    ///
    /// A discovered server the cluster no longer advertises leaves the pool (as in nats.go),
    /// so the pool does not only grow; servers the user named, and the one connected to,
    /// always stay. An announcement gives the pool at most [`MAX_ANNOUNCED`] servers.
    ///
    /// A server announced by IP address while the client's link was checked against a host
    /// name (the one it dialled, or the one a server announced by IP took on) has its TLS
    /// certificate checked against that host name, as nats.go does: a cluster's certificates
    /// name its hosts, while nats-server announces the addresses its nodes listen on, and a
    /// Kubernetes pod's address is in no certificate.
    pub(crate) fn add_discovered(&mut self, info: &ServerInfo) -> Vec<String> {
        let Announced {
            urls,
            implied_scheme,
            left_out,
        } = self.announced_urls(info);
        if left_out > 0 {
            tracing::debug!(
                taken = MAX_ANNOUNCED,
                left_out,
                "an INFO announced more servers than the pool takes from one announcement; \
                 the URLs past the limit are left out"
            );
        }
        let websocket = is_websocket(implied_scheme);
        let name_for_ips = self.current_tls_name.clone().filter(|name| !is_ip(name));
        // Sets of (host, port), as `same_server` compares: a cluster may announce thousands
        // of servers, and this runs on the connection's engine, so it must stay linear.
        let mut known: HashSet<ServerKey> = self.servers.iter().map(|s| key(&s.addr)).collect();
        let mut added = Vec::new();
        let mut advertised = HashSet::new();
        for url in urls {
            #[cfg(test)]
            {
                self.parsed += 1;
            }
            let Some(addr) = parse_announced(url, implied_scheme, websocket) else {
                continue;
            };
            let server = key(&addr);
            if known.insert(server.clone()) {
                added.push(url.to_owned());
                if let Some(name) = name_for_ips.as_ref().filter(|_| is_ip(addr.host())) {
                    self.tls_names.insert(server.clone(), Arc::clone(name));
                }
                self.servers.push(Server::new(addr, true));
            }
            advertised.insert(server);
        }
        if !advertised.is_empty() {
            let current = self.current.as_ref().map(key);
            self.servers.retain(|s| {
                if !s.is_discovered {
                    return true;
                }
                let server = key(&s.addr);
                advertised.contains(&server) || current.as_ref() == Some(&server)
            });
            self.tls_names.retain(|server, _| {
                advertised.contains(server) || current.as_ref() == Some(server)
            });
            self.next %= self.servers.len().max(1);
        }
        added
    }
}

/// The most servers one announcement gives the pool, besides those the user named.
///
/// nats-server's `connect_urls` (and `ws_connect_urls`) list the client addresses of the
/// servers of its own cluster: one per server that sets `client_advertise`, else one per
/// address of each server's interfaces when it listens on all of them. The clusters of a
/// supercluster, reached through gateways, and leaf nodes are not in it. Routes make a
/// full mesh (each server holds a route to every other), which keeps clusters to tens of
/// servers, announcing at most a few hundred URLs; 4,096 leaves ten times that. What it
/// bounds is an INFO of up to 8 MiB (`max_info_line`), which a misbehaving server, or anyone
/// in between on a plaintext link, can fill with 700,000 short URLs: merged whole, they held
/// some 40 times the INFO's size (a parsed `ServerAddr`, a `Server` and hash set entries
/// each), again after every reconnect. The decoder keeps the first 16,384 URLs of each
/// list (see `rnats_proto::ServerInfo`), leaving room for repeats before the servers taken
/// here. nats.go (`processInfo`) and nats.js (`Servers.update`) take every URL.
const MAX_ANNOUNCED: usize = 4096;

/// The part of an announcement a pool takes in ([`ServerPool::announced_urls`]).
struct Announced<'a> {
    /// The URLs, in the announcement's order.
    urls: Vec<&'a str>,
    /// The scheme they take when announced bare.
    implied_scheme: Option<&'static str>,
    /// The URLs past [`MAX_ANNOUNCED`] servers, left out.
    left_out: usize,
}

/// INFO updates whose servers are still to be taken into the pool, newest last.
///
/// Taking an update in ([`ServerPool::take_announced`]) hashes every announced URL, so for a
/// cluster of thousands it is still work per URL; the connection's engine only notes the
/// update here and goes on reading, and a task off its path takes it in
/// ([`Announcements::offer`], then [`Announcements::next`] until `None`).
/// Only the newest update matters (each one announces the whole cluster), so one that comes
/// while another waits replaces it, and one whose lists equal the last merged is skipped.
#[derive(Debug, Default)]
pub(crate) struct Announcements {
    waiting: Option<Arc<ServerInfo>>,
    merging: bool,
    merged: Option<Arc<ServerInfo>>,
}

impl Announcements {
    /// Notes `info` as the newest update; true when no merge is running, so the caller must
    /// start one.
    pub(crate) fn offer(&mut self, info: Arc<ServerInfo>) -> bool {
        self.waiting = Some(info);
        !std::mem::replace(&mut self.merging, true)
    }

    /// Whether an update waits to be merged.
    pub(crate) fn waiting(&self) -> bool {
        self.waiting.is_some()
    }

    /// The update to merge next, or `None` when none is left (the merge then ends, and the
    /// next [`Announcements::offer`] starts another).
    pub(crate) fn next(&mut self) -> Option<Arc<ServerInfo>> {
        while let Some(info) = self.waiting.take() {
            let same = self.merged.as_ref().is_some_and(|merged| {
                merged.connect_urls == info.connect_urls
                    && merged.ws_connect_urls == info.ws_connect_urls
            });
            self.merged = Some(Arc::clone(&info));
            if !same {
                return Some(info);
            }
        }
        self.merging = false;
        None
    }
}

/// A server's identity in the pool: host and port, as [`ServerAddr::same_server`] compares.
///
/// Its equality is written out so that the tests can count comparisons: the merge of a
/// cluster's announcement must cost a few per URL, not one per URL and known server.
#[derive(Debug, Clone)]
struct ServerKey {
    host: String,
    port: u16,
}

impl PartialEq for ServerKey {
    fn eq(&self, other: &ServerKey) -> bool {
        #[cfg(test)]
        crate::server_addr::note_comparison();
        self.port == other.port && self.host == other.host
    }
}

impl Eq for ServerKey {}

/// Hashes what [`ServerKey::eq`] compares, so that equal keys hash alike.
impl std::hash::Hash for ServerKey {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.host.hash(state);
        self.port.hash(state);
    }
}

/// Whether `host` is an IP address (IPv6 without its brackets, as [`ServerAddr::host`]
/// gives it).
fn is_ip(host: &str) -> bool {
    host.parse::<core::net::IpAddr>().is_ok()
}

fn key(addr: &ServerAddr) -> ServerKey {
    ServerKey {
        host: addr.host().to_owned(),
        port: addr.port(),
    }
}

/// Takes the INFO updates waiting in `announcements` into the pool without reporting them
/// (nobody listens for `DiscoveredServers`): only the newest is kept, to merge when the
/// pool is used, so this costs nothing per URL and the thread that read the INFO may do it.
/// False when the pool is busy (a `server_pool()` call may be merging it): then the caller
/// leaves the updates to another thread.
pub(crate) fn take_announced_quietly(
    pool: &Mutex<ServerPool>,
    announcements: &Mutex<Announcements>,
) -> bool {
    let Some(mut pool) = try_lock(pool) else {
        return false;
    };
    while let Some(info) = lock(announcements).next() {
        pool.take_announced(info, false);
    }
    true
}

/// The host and port of an announced URL, as its [`ServerAddr`] would have them, or `None`
/// where [`ServerPool::add_discovered`] would skip it (it does not parse, or is a
/// WebSocket address for a plain pool or the other way round).
///
/// What servers announce is `host:port` with an IPv4 address or a plain host name; those
/// are split by hand, as `Url` would give them back. Anything else (a scheme, IPv6,
/// credentials, upper case, IDNA) goes through the full parse.
fn announced_key<'a>(
    url: &'a str,
    implied_scheme: Option<&str>,
    websocket: bool,
) -> Option<(Cow<'a, str>, u16)> {
    if let Some((host, port)) = plain_host_port(url) {
        return Some((Cow::Borrowed(host), port));
    }
    let ServerKey { host, port } = key(&parse_announced(url, implied_scheme, websocket)?);
    Some((Cow::Owned(host), port))
}

/// An announced URL as the pool takes it, or `None` where it does not parse or is a
/// WebSocket address for a plain pool or the other way round (see
/// [`ServerPool::add_discovered`]).
fn parse_announced(url: &str, implied_scheme: Option<&str>, websocket: bool) -> Option<ServerAddr> {
    let parsed = match (implied_scheme, url.split_once("://")) {
        (Some(scheme), None) => format!("{scheme}://{url}").parse(),
        // A pool reached over TLS takes no server in the clear whatever the announcement
        // names (the INFO that names it is read before the upgrade, where anyone in between
        // may have written it): its scheme is the pool's.
        (Some(scheme @ ("tls" | "wss")), Some((_, rest))) => format!("{scheme}://{rest}").parse(),
        _ => url.parse::<ServerAddr>(),
    };
    parsed.ok().filter(|addr| addr.is_websocket() == websocket)
}

/// Whether a pool whose announced URLs take `implied_scheme` is one of WebSocket servers.
fn is_websocket(implied_scheme: Option<&str>) -> bool {
    matches!(implied_scheme, Some("ws" | "wss"))
}

/// `host:port` with an explicit port and a host that `Url` keeps as it is: a canonical
/// IPv4 address, or lower-case ASCII labels whose last one is not numeric and none of
/// which is IDNA (`xn--`).
fn plain_host_port(url: &str) -> Option<(&str, u16)> {
    let (host, port) = url.rsplit_once(':')?;
    if port.is_empty() || port.len() > 5 || !port.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let port: u16 = port.parse().ok()?;
    let plain = host.parse::<core::net::Ipv4Addr>().is_ok() || {
        let labels_ok = host.split('.').all(|label| {
            !label.is_empty()
                && !label.starts_with("xn--")
                && label
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        });
        let last_numeric = host
            .rsplit('.')
            .next()
            .is_some_and(|label| label.bytes().all(|b| b.is_ascii_digit()));
        labels_ok && !last_numeric
    };
    plain.then_some((host, port))
}

/// A hash set for the short strings of an announcement: FNV-1a, several times cheaper
/// than the default SipHash on a few dozen bytes, and the input comes from the server the
/// client chose to trust, not from anyone who could aim collisions at it.
type FastSet<T> = HashSet<T, BuildHasherDefault<Fnv>>;

/// The FNV-1a hash (64 bits).
struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for byte in bytes {
            self.0 = (self.0 ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn comparisons() -> u64 {
        crate::server_addr::comparisons()
    }

    #[test]
    fn announcements_merge_the_newest_once_and_skip_repeats() {
        let info = |urls: &[&str]| {
            Arc::new(ServerInfo {
                connect_urls: urls.iter().map(|u| (*u).to_owned()).collect(),
                ..ServerInfo::default()
            })
        };
        let mut waiting = Announcements::default();
        assert!(
            waiting.offer(info(&["a:1"])),
            "the first offer starts a merge"
        );
        assert!(!waiting.offer(info(&["b:2"])), "one is running already");
        assert_eq!(waiting.next().unwrap().connect_urls, ["b:2"]);
        assert!(
            !waiting.offer(info(&["b:2"])),
            "still running until next() says none"
        );
        assert!(waiting.next().is_none(), "the same lists again are skipped");
        assert!(waiting.offer(info(&["c:3"])), "a new merge starts");
        assert_eq!(waiting.next().unwrap().connect_urls, ["c:3"]);
        assert!(waiting.next().is_none());
    }

    #[test]
    fn pool_round_robins_and_learns_new_servers_once() {
        let servers = vec![
            "a:1".parse::<ServerAddr>().unwrap(),
            "b:2".parse::<ServerAddr>().unwrap(),
        ];
        let mut pool = ServerPool::new(servers, true);
        assert_eq!(pool.next_server().unwrap().host(), "a");
        assert_eq!(pool.next_server().unwrap().host(), "b");
        assert_eq!(pool.next_server().unwrap().host(), "a");
        let added = pool.add_discovered(&advertising(
            &["b:2", "c:3", "not a url:x"],
            &["b:8080", "d:8080"],
        ));
        assert_eq!(added, ["c:3"]);
        assert_eq!(pool.len(), 3);
        assert_eq!(pool.servers[2].addr.scheme(), "nats");
    }

    #[test]
    fn servers_discovered_from_a_tls_pool_use_tls() {
        let mut pool = ServerPool::new(vec!["tls://a:4222".parse().unwrap()], true);
        pool.add_discovered(&advertising(&["a:4222", "b:4222"], &[]));
        assert_eq!(pool.len(), 2);
        assert_eq!(pool.servers[1].addr.scheme(), "tls", "never in the clear");
        // Nor when the announcement names a scheme in the clear.
        pool.add_discovered(&advertising(&["b:4222", "nats://c:4222"], &[]));
        assert_eq!(pool.len(), 3);
        assert_eq!(pool.servers[2].addr.host(), "c");
        assert_eq!(pool.servers[2].addr.scheme(), "tls", "never in the clear");
    }

    #[test]
    fn discovered_servers_the_cluster_stops_advertising_leave_the_pool() {
        let mut pool = ServerPool::new(vec!["a:1".parse().unwrap()], true);
        pool.add_discovered(&advertising(&["b:2", "c:3"], &[]));
        assert_eq!(pool.len(), 3);
        pool.add_discovered(&advertising(&["c:3", "d:4"], &[]));
        let hosts: Vec<_> = pool
            .snapshot()
            .iter()
            .map(|s| s.addr.host().to_owned())
            .collect();
        assert_eq!(
            hosts,
            ["a", "c", "d"],
            "b went; a, named by the user, stays"
        );
        // The server connected to stays even when it is no longer advertised.
        pool.record(&"c:3".parse().unwrap(), Ok(()));
        pool.add_discovered(&advertising(&["d:4"], &[]));
        let hosts: Vec<_> = pool
            .snapshot()
            .iter()
            .map(|s| s.addr.host().to_owned())
            .collect();
        assert_eq!(hosts, ["a", "c", "d"]);
    }

    #[test]
    fn websocket_pools_learn_websocket_servers() {
        let servers = vec!["wss://a:443".parse::<ServerAddr>().unwrap()];
        let mut pool = ServerPool::new(servers, true);
        // What nats-server sends a WebSocket client: its WebSocket peers in connect_urls.
        let added = pool.add_discovered(&advertising(&["a:443", "b:8443"], &[]));
        assert_eq!(added, ["b:8443"]);
        let learnt = &pool.servers[1].addr;
        assert_eq!(
            (learnt.scheme(), learnt.host(), learnt.port()),
            ("wss", "b", 8443)
        );
        // Where ws_connect_urls is present it wins over connect_urls (and b, no longer
        // advertised, leaves the pool).
        let added = pool.add_discovered(&advertising(&["c:4222"], &["d:8443"]));
        assert_eq!(added, ["d:8443"]);
        assert_eq!(pool.servers[1].addr.scheme(), "wss");
        assert_eq!(pool.servers[1].addr.host(), "d");
        assert_eq!(pool.len(), 2);

        let mut pool = ServerPool::new(vec!["ws://a:80".parse().unwrap()], true);
        pool.add_discovered(&advertising(&["b:8080", "nats://c:4222"], &[]));
        assert_eq!(pool.len(), 2, "a nats:// address is no WebSocket server");
        assert_eq!(pool.servers[1].addr.scheme(), "ws");
    }

    #[test]
    fn a_cluster_announcing_thousands_of_servers_is_merged_in_linear_time() {
        // Guards the complexity by counting what a quadratic merge would multiply, not by
        // timing it (a busy machine stretches one size's time and not the other's): the merge
        // used to compare every announced URL with every known server, 4 x 10^8 comparisons
        // for 20,000 URLs. Hashed, it makes about one per URL and set it goes through. The
        // larger size is the most servers an announcement gives the pool.
        let merge = |servers: usize| {
            let urls: Vec<String> = (0..servers)
                .map(|i| format!("10.{}.{}.{}:4222", i / 65536, (i / 256) % 256, i % 256))
                .collect();
            let urls: Vec<&str> = urls.iter().map(String::as_str).collect();
            let mut pool = ServerPool::new(vec!["nats://seed:4222".parse().unwrap()], true);
            let before = comparisons();
            assert_eq!(pool.add_discovered(&advertising(&urls, &[])).len(), servers);
            // The same INFO again (what a cluster change re-sends): nothing new, nothing pruned.
            assert!(pool.add_discovered(&advertising(&urls, &[])).is_empty());
            // Half of them leave the cluster.
            let half = &urls[..servers / 2];
            assert!(pool.add_discovered(&advertising(half, &[])).is_empty());
            assert_eq!(pool.len(), servers / 2 + 1);
            // Each announced URL is parsed once per merge: 2.5 times the servers in all.
            assert_eq!(pool.parsed, servers * 5 / 2);
            comparisons() - before
        };
        for servers in [MAX_ANNOUNCED / 8, MAX_ANNOUNCED] {
            let compared = merge(servers);
            // Per URL of the three announcements, a hit costs one comparison in each set
            // it meets (known, advertised, then the pruning's lookup), a miss a rare false
            // match of the hash tag; a quadratic merge would make thousands.
            let urls = u64::try_from(servers * 5 / 2).unwrap();
            assert!(
                compared <= 4 * urls,
                "{servers} servers: {compared} comparisons for {urls} announced URLs"
            );
        }
    }

    #[test]
    fn announced_servers_are_reported_at_once_and_join_the_pool_when_it_is_used() {
        let mut pool = ServerPool::new(vec!["nats://a:1".parse().unwrap()], true);
        let take = |pool: &mut ServerPool, urls: &[&str]| {
            pool.take_announced(Arc::new(advertising(urls, &[])), true)
        };
        // The server connected to is announced too: it is no news.
        assert_eq!(take(&mut pool, &["a:1", "b:2", "c:3"]), ["b:2", "c:3"]);
        assert_eq!(
            take(&mut pool, &["a:1", "b:2", "c:3"]),
            Vec::<String>::new()
        );
        assert_eq!(take(&mut pool, &["a:1", "c:3", "d:4", "d:4"]), ["d:4"]);
        let hosts: Vec<_> = pool
            .snapshot()
            .iter()
            .map(|s| s.addr.host().to_owned())
            .collect();
        assert_eq!(hosts, ["a", "c", "d"], "b left the cluster");
        // A replaced pool learns the announced servers again, and hears of them.
        pool.replace(vec!["nats://a:1".parse().unwrap()]);
        assert_eq!(take(&mut pool, &["a:1", "c:3"]), ["c:3"]);
        assert_eq!(pool.len(), 2);
    }

    #[test]
    fn an_announcement_is_taken_in_without_parsing_its_urls() {
        // A cluster of thousands re-announces every member whenever one joins: taking that
        // in used to parse every URL on every update (milliseconds of CPU next to the
        // traffic behind the INFO, issue 22). Now nothing is parsed until the pool is used,
        // and then only the newest announcement.
        let urls: Vec<String> = (0..4_000)
            .map(|i| format!("10.0.{}.{}:4222", i / 256, i % 256))
            .collect();
        let mut pool = ServerPool::new(vec!["nats://seed:4222".parse().unwrap()], true);
        let mut announce = |urls: &[String]| {
            let urls: Vec<&str> = urls.iter().map(String::as_str).collect();
            pool.take_announced(Arc::new(advertising(&urls, &[])), true)
                .len()
        };
        assert_eq!(announce(&urls), 4_000);
        let mut grown = urls.clone();
        grown.push("10.1.0.0:4222".to_owned());
        assert_eq!(announce(&grown), 1);
        assert_eq!(announce(&urls), 0);
        assert_eq!(pool.parsed, 0, "taking in announcements parses nothing");
        assert_eq!(pool.len(), 4_001);
        assert_eq!(pool.parsed, 4_000, "the newest announcement, once");
        assert_eq!(pool.len(), 4_001);
        assert_eq!(pool.parsed, 4_000);
    }

    #[test]
    fn an_announcement_gives_the_pool_at_most_max_announced_servers() {
        // An INFO of 8 MiB holds some 700,000 short URLs; merged whole, they held about 40
        // times its size. The pool takes MAX_ANNOUNCED servers of it, cut before anything
        // is parsed, and the user's servers and repeats do not count against the limit.
        let user =
            |pool: &mut ServerPool| pool.snapshot().iter().filter(|s| !s.is_discovered).count();
        let announcing = |generation: usize| {
            (0..100_000).flat_map(move |i| {
                let url = format!("g{generation}-{i}.example:4222");
                [url.clone(), url]
            })
        };
        let mut pool = ServerPool::new(vec!["a:1".parse().unwrap(), "b:2".parse().unwrap()], true);
        let urls: Vec<String> = ["a:1".to_owned(), "b:2".to_owned()]
            .into_iter()
            .chain(announcing(1))
            .collect();
        let urls: Vec<&str> = urls.iter().map(String::as_str).collect();
        let reported = pool.take_announced(Arc::new(advertising(&urls, &[])), true);
        assert_eq!(reported.len(), MAX_ANNOUNCED, "reported as taken");
        assert_eq!(
            reported.first().map(String::as_str),
            Some("g1-0.example:4222")
        );
        assert_eq!(pool.len(), MAX_ANNOUNCED + 2);
        assert_eq!(user(&mut pool), 2);
        assert_eq!(
            pool.parsed,
            MAX_ANNOUNCED + 2,
            "nothing past the limit is parsed"
        );
        let last = &pool.snapshot()[MAX_ANNOUNCED + 1];
        assert_eq!(
            last.addr.host(),
            format!("g1-{}.example", MAX_ANNOUNCED - 1)
        );

        // Servers the pool holds count too: another announcement does not add to them.
        let urls: Vec<String> = announcing(2).chain(announcing(1)).collect();
        let urls: Vec<&str> = urls.iter().map(String::as_str).collect();
        pool.add_discovered(&advertising(&urls, &[]));
        assert_eq!(pool.len(), MAX_ANNOUNCED + 2);
        assert!(
            pool.snapshot()
                .iter()
                .all(|s| !s.is_discovered || s.addr.host().starts_with("g2-")),
            "the newest announcement's first servers"
        );

        // A cluster's announcement merges as it always did.
        let added = pool.add_discovered(&advertising(&["b:2", "c:3", "d:4", "e:5"], &[]));
        assert_eq!(added, ["c:3", "d:4", "e:5"]);
        let hosts: Vec<_> = pool
            .snapshot()
            .iter()
            .map(|s| s.addr.host().to_owned())
            .collect();
        assert_eq!(hosts, ["a", "b", "c", "d", "e"]);

        // Cut or not, a TLS pool's discovered servers are TLS.
        let mut pool = ServerPool::new(vec!["tls://a:1".parse().unwrap()], true);
        let urls: Vec<String> = (0..2 * MAX_ANNOUNCED)
            .map(|i| format!("nats://10.0.{}.{}:4222", i / 256, i % 256))
            .collect();
        let urls: Vec<&str> = urls.iter().map(String::as_str).collect();
        pool.add_discovered(&advertising(&urls, &[]));
        assert_eq!(pool.len(), MAX_ANNOUNCED + 1);
        assert!(pool.snapshot().iter().all(|s| s.addr.scheme() == "tls"));
    }

    #[test]
    fn plain_host_ports_split_as_url_parses_them() {
        for url in [
            "10.0.0.1:4222",
            "127.0.0.1:1",
            "nats-1.example.com:4222",
            "host:65535",
            "a-b.c-d:80",
        ] {
            let parsed: ServerAddr = url.parse().unwrap();
            let ServerKey { host, port } = key(&parsed);
            assert_eq!(plain_host_port(url), Some((host.as_str(), port)), "{url}");
        }
        // Left to the full parse: forms `Url` rewrites or rejects, and no port.
        for url in [
            "010.0.0.1:4222",
            "1.2.3:4222",
            "Host:4222",
            "[::1]:4222",
            "host.123:4222",
            "xn--bcher-kva.example:4222",
            "user@host:4222",
            "nats://host:4222",
            "host",
            "host:65536",
            "host:",
        ] {
            assert_eq!(plain_host_port(url), None, "{url}");
        }
    }

    pub(super) fn advertising(connect_urls: &[&str], ws_connect_urls: &[&str]) -> ServerInfo {
        let owned = |urls: &[&str]| urls.iter().map(|u| (*u).to_owned()).collect();
        ServerInfo {
            connect_urls: owned(connect_urls),
            ws_connect_urls: owned(ws_connect_urls),
            ..ServerInfo::default()
        }
    }

    #[test]
    fn attempts_are_recorded_and_replacing_keeps_what_is_known() {
        let a: ServerAddr = "a:1".parse().unwrap();
        let b: ServerAddr = "b:2".parse().unwrap();
        let mut pool = ServerPool::new(vec![a.clone(), b.clone()], true);
        pool.record(&a, Err("refused".to_owned()));
        pool.record(&a, Err("refused again".to_owned()));
        pool.record(&b, Ok(()));
        let snapshot = pool.snapshot();
        assert_eq!(snapshot[0].failed_attempts, 2);
        assert_eq!(snapshot[0].last_error.as_deref(), Some("refused again"));
        assert!(snapshot[1].did_connect && snapshot[1].last_error.is_none());

        let c: ServerAddr = "c:3".parse().unwrap();
        pool.replace(vec![c.clone(), a.clone()]);
        let snapshot = pool.snapshot();
        assert_eq!(snapshot.len(), 2);
        assert_eq!(snapshot[0].addr, c);
        assert_eq!(snapshot[1].failed_attempts, 2);
        assert!(!pool.contains(&b));
        assert_eq!(pool.next_server(), Some(c));
    }

    #[test]
    fn a_replaced_pool_holds_no_discovered_server() {
        let mut pool = ServerPool::new(vec!["a:1".parse().unwrap()], true);
        pool.add_discovered(&advertising(&["b:2"], &[]));
        let b = pool.snapshot()[1].clone();
        assert!(b.is_discovered);
        pool.replace(vec![b.addr.clone()]);
        assert!(
            !pool.snapshot()[0].is_discovered,
            "named by set_server_pool now"
        );
    }
}

#[cfg(test)]
mod attempt_tests {
    use super::tests::advertising;
    use super::*;
    use crate::events::{ClientError, ConnectionEvent};
    use crate::floor::attempts::{Plan, SETTLED};
    use crate::floor::plan::ReconnectPolicy;

    fn pool(servers: &[&str]) -> ServerPool {
        ServerPool::new(servers.iter().map(|s| s.parse().unwrap()).collect(), true)
    }

    fn dial(plan: Option<Plan>) -> Attempt {
        match plan {
            Some(Plan::Dial(attempt)) => attempt,
            other => panic!("an attempt expected, not {other:?}"),
        }
    }

    fn refused() -> ConnectError {
        ConnectError::from(std::io::Error::from(std::io::ErrorKind::ConnectionRefused))
    }

    #[test]
    fn the_same_login_refused_twice_in_a_row_gives_up_when_asked() {
        let refused_login =
            || ConnectError::from(crate::error::ConnectCause::AuthorizationViolation);
        let asked = ReconnectPolicy {
            close_on_repeated_auth_error: true,
            ..ReconnectPolicy::default()
        };
        for policy in [ReconnectPolicy::default(), asked] {
            let mut once = pool(&["a:1"]);
            // Refused, then another error, then refused: not twice in a row.
            for error in [refused_login(), refused(), refused_login()] {
                let attempt = dial(once.plan_attempt(&policy, None, true, drop));
                once.note_failure(&attempt, &error);
            }
            let attempt = dial(once.plan_attempt(&policy, None, true, drop));
            once.note_failure(&attempt, &refused_login());
            let next = once.plan_attempt(&policy, None, true, drop);
            if !policy.close_on_repeated_auth_error {
                // async-nats' way: dial on.
                dial(next);
                continue;
            }
            let Some(Plan::GiveUp(ClientError::Other(why))) = next else {
                panic!("given up expected, not {next:?}");
            };
            assert!(why.contains("nats://a:1") && why.contains("twice"), "{why}");
            // A connect in between starts the count again, the other servers' too: `a`
            // refuses, `b` takes the client, then `a` refuses once more.
            let mut again = pool(&["a:1", "b:2"]);
            let first = dial(again.plan_attempt(&policy, None, true, drop));
            assert_eq!(first.addr.port(), 1);
            again.note_failure(&first, &refused_login());
            let second = dial(again.plan_attempt(&policy, None, true, drop));
            assert_eq!(second.addr.port(), 2);
            again.connected(&second, Instant::now());
            again.note_failure(&first, &refused_login());
            dial(again.plan_attempt(&policy, None, true, drop));
        }
    }

    #[test]
    fn a_delay_callback_is_asked_before_every_attempt_by_its_number() {
        let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
        let policy = ReconnectPolicy {
            delay: Some(Arc::new({
                let seen = Arc::clone(&seen);
                move |n| {
                    seen.lock().unwrap().push(n);
                    Duration::from_millis(n as u64)
                }
            })),
            max_reconnects: Some(3),
            ..ReconnectPolicy::default()
        };
        let mut pool = pool(&["a:1", "b:2"]);
        for n in 1..=3 {
            let attempt = dial(pool.plan_attempt(&policy, None, true, drop));
            assert_eq!(
                (attempt.number, attempt.delay),
                (n, Duration::from_millis(n as u64))
            );
            // Once per pass over the two servers, the callback hears of the failure.
            let told = pool.note_failure(&attempt, &refused());
            assert_eq!(told.is_some(), n % 2 == 0, "attempt {n}");
        }
        assert!(matches!(
            pool.plan_attempt(&policy, None, true, drop),
            Some(Plan::GiveUp(ClientError::MaxReconnects))
        ));
        // Given up before asking for a fourth delay.
        assert_eq!(*seen.lock().unwrap(), [1, 2, 3]);
        // A new pool counts from 1 again, as does a connection.
        pool.replace(vec!["c:3".parse().unwrap()]);
        assert_eq!(dial(pool.plan_attempt(&policy, None, true, drop)).number, 1);
        pool.record(&"c:3".parse().unwrap(), Ok(()));
        assert_eq!(dial(pool.plan_attempt(&policy, None, true, drop)).number, 1);
    }

    #[test]
    fn a_pass_tries_the_server_just_lost_last() {
        let policy = ReconnectPolicy::default();
        // Connected to the only server given; the cluster then advertised two more.
        let mut pool = pool(&["a:1"]);
        let first = dial(pool.plan_attempt(&policy, None, false, drop));
        pool.record(&first.addr, Ok(()));
        pool.add_discovered(&ServerInfo {
            connect_urls: vec!["b:2".into(), "c:3".into()],
            ..ServerInfo::default()
        });
        let mut hosts = Vec::new();
        for _ in 0..3 {
            let attempt = dial(pool.plan_attempt(&policy, None, true, drop));
            hosts.push(attempt.addr.host().to_owned());
            pool.note_failure(&attempt, &refused());
        }
        assert_eq!(hosts, ["b", "c", "a"]);
    }

    #[test]
    fn the_default_waits_only_before_passes_after_the_first() {
        let policy = ReconnectPolicy::default();
        let mut pool = pool(&["a:1", "b:2"]);
        let mut delays = Vec::new();
        for _ in 0..4 {
            let attempt = dial(pool.plan_attempt(&policy, None, true, drop));
            delays.push(attempt.delay);
            pool.note_failure(&attempt, &refused());
        }
        // The first pass at once, the second after a wait, none between its servers.
        assert_eq!(delays[..2], [Duration::ZERO; 2]);
        assert!(delays[2] >= Duration::from_millis(100));
        assert_eq!(delays[3], Duration::ZERO);
    }

    /// The TLS name of each server of a pass over `pool`, by host.
    fn tls_names(pool: &mut ServerPool) -> Vec<(String, String)> {
        let policy = ReconnectPolicy::default();
        let mut names = Vec::new();
        for _ in 0..pool.len() {
            let attempt = dial(pool.plan_attempt(&policy, None, true, drop));
            names.push((
                attempt.addr.host().to_owned(),
                attempt.tls_name().to_owned(),
            ));
            pool.note_failure(&attempt, &refused());
        }
        names.sort();
        names
    }

    /// An attempt on `addr` checked against `tls_name`.
    fn attempt_on(addr: &ServerAddr, tls_name: &str) -> Attempt {
        Attempt {
            addr: addr.clone(),
            tls_name: Some(Arc::from(tls_name)),
            delay: Duration::ZERO,
            number: 1,
            ends_try: true,
        }
    }

    #[test]
    fn servers_announced_by_ip_are_checked_against_the_host_name_the_client_is_on() {
        let named = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
            pairs
                .iter()
                .map(|(h, n)| ((*h).to_owned(), (*n).to_owned()))
                .collect()
        };
        let mut pool = pool(&["tls://nats.example:4222"]);
        let first = dial(pool.plan_attempt(&ReconnectPolicy::default(), None, false, drop));
        pool.connected(&first, Instant::now());
        pool.add_discovered(&advertising(
            &["10.0.0.2:4222", "other.example:4222", "[fd00::3]:4222"],
            &[],
        ));
        assert_eq!(
            tls_names(&mut pool),
            named(&[
                ("10.0.0.2", "nats.example"),
                ("fd00::3", "nats.example"),
                ("nats.example", "nats.example"),
                ("other.example", "other.example"),
            ])
        );
        // On a server reached by IP under a name, that name goes on to the next ones; a
        // server no longer announced takes its name with it.
        let on_ip: ServerAddr = "tls://10.0.0.2:4222".parse().unwrap();
        pool.connected(&attempt_on(&on_ip, "nats.example"), Instant::now());
        pool.add_discovered(&advertising(&["10.0.0.2:4222", "10.0.0.4:4222"], &[]));
        assert_eq!(
            tls_names(&mut pool),
            named(&[
                ("10.0.0.2", "nats.example"),
                ("10.0.0.4", "nats.example"),
                ("nats.example", "nats.example"),
            ])
        );
        assert_eq!(pool.tls_names.len(), 2);
        // Servers the user names are checked against their own names, while the link's
        // name still goes to those the cluster announces next.
        pool.replace(vec![on_ip.clone()]);
        assert_eq!(tls_names(&mut pool), named(&[("10.0.0.2", "10.0.0.2")]));
        pool.add_discovered(&advertising(&["10.0.0.2:4222", "10.0.0.6:4222"], &[]));
        assert_eq!(
            tls_names(&mut pool),
            named(&[("10.0.0.2", "10.0.0.2"), ("10.0.0.6", "nats.example")])
        );
        // On a link checked against an IP address, announced IPs keep their own names.
        pool.connected(&attempt_on(&on_ip, "10.0.0.2"), Instant::now());
        pool.add_discovered(&advertising(&["10.0.0.2:4222", "10.0.0.5:4222"], &[]));
        assert_eq!(
            tls_names(&mut pool),
            named(&[("10.0.0.2", "10.0.0.2"), ("10.0.0.5", "10.0.0.5")])
        );
    }

    #[test]
    fn a_chosen_server_is_a_try_of_its_own() {
        let policy = ReconnectPolicy::default();
        let mut pool = pool(&["a:1", "b:2"]);
        assert!(pool.attempts.starts_try());
        let choice = ReconnectToServer {
            addr: "b:2".parse().unwrap(),
            delay: Some(Duration::from_millis(7)),
        };
        let attempt = dial(pool.plan_attempt(&policy, Some(choice), true, drop));
        assert_eq!(attempt.addr.host(), "b");
        assert_eq!(attempt.delay, Duration::from_millis(7));
        assert!(pool.note_failure(&attempt, &refused()).is_some());
        assert!(pool.attempts.starts_try(), "the callback is asked again");
        // A server outside the pool is reported, and a pass follows.
        let mut reported = None;
        let stranger = ReconnectToServer {
            addr: "z:9".parse().unwrap(),
            delay: None,
        };
        let attempt = dial(pool.plan_attempt(&policy, Some(stranger), true, |e| {
            reported = Some(e);
        }));
        assert_eq!(
            reported,
            Some(ConnectionEvent::ClientError(ClientError::ServerNotInPool))
        );
        assert!(pool.note_failure(&attempt, &refused()).is_none());
        assert!(!pool.attempts.starts_try(), "mid-pass");
    }

    /// The attempt after `attempt`'s link, which came up at `start` and ended `after` it.
    fn after_link(
        pool: &mut ServerPool,
        policy: &ReconnectPolicy,
        attempt: &Attempt,
        (start, after): (Instant, Duration),
        planned: bool,
    ) -> Attempt {
        pool.connected(attempt, start);
        pool.link_ended(start + after, planned);
        dial(pool.plan_attempt(policy, None, true, drop))
    }

    #[test]
    fn links_lost_soon_after_they_came_up_back_off() {
        let policy = ReconnectPolicy::default();
        let mut pool = pool(&["a:1"]);
        let quick = (Instant::now(), Duration::from_millis(10));
        let mut attempt = dial(pool.plan_attempt(&policy, None, false, drop));
        // The first link came from the first try: the next waits as a second try would,
        // and each quick loss after that doubles the wait, as failed tries do.
        let mut waits = Vec::new();
        for _ in 0..4 {
            attempt = after_link(&mut pool, &policy, &attempt, quick, false);
            waits.push(attempt.delay);
        }
        for (wait, floor) in waits.iter().zip([100, 200, 400, 800]) {
            let floor = Duration::from_millis(floor);
            assert!(*wait >= floor && *wait <= floor * 3 / 2, "{waits:?}");
        }
        // A link that lasted is followed by an attempt at once, and the count starts over.
        let lasted = (quick.0, SETTLED);
        attempt = after_link(&mut pool, &policy, &attempt, lasted, false);
        assert_eq!(attempt.delay, Duration::ZERO);
        attempt = after_link(&mut pool, &policy, &attempt, quick, false);
        let wait = attempt.delay;
        assert!(wait >= Duration::from_millis(100) && wait <= Duration::from_millis(150));
    }

    #[test]
    fn a_planned_move_or_a_delay_callback_is_not_held_back_by_a_short_link() {
        let quick = (Instant::now(), Duration::from_millis(10));
        let policy = ReconnectPolicy::default();
        let mut pool = pool(&["a:1"]);
        let first = dial(pool.plan_attempt(&policy, None, false, drop));
        let moved = after_link(&mut pool, &policy, &first, quick, true);
        assert_eq!(moved.delay, Duration::ZERO);
        // The callback numbers its attempts from 1 after every connect, as in async-nats.
        let policy = ReconnectPolicy {
            delay: Some(Arc::new(|n| Duration::from_millis(n as u64))),
            ..ReconnectPolicy::default()
        };
        let next = after_link(&mut pool, &policy, &moved, quick, false);
        assert_eq!((next.number, next.delay), (1, Duration::from_millis(1)));
    }
}
