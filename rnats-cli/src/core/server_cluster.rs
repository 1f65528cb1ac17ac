//! `rnats server cluster`: the JetStream meta group, the servers that place streams and
//! consumers: moving its leader, and removing a server that is gone for good (both need a
//! system account user, as in natscli).

use clap::{Args, Subcommand};
use futures_util::StreamExt;
use rnats::jetstream::stream::LeaderPlacement;
use serde_json::{Value, json};

use rnats::system::System;

use super::server_ping::system_failed;
use crate::conn::{ConnArgs, Settings};
use crate::error::CliError;
use crate::jetstream::leader::ELECTION_WAIT;
use crate::out::{self, Fields};

/// Where the system account hears of every meta leader election.
const META_ELECTED: &str = "$JS.EVENT.ADVISORY.DOMAIN.LEADER_ELECTED";

/// Options of `server cluster`.
#[derive(Debug, Args)]
pub(crate) struct ClusterArgs {
    /// What to do with the meta group.
    #[command(subcommand)]
    command: ClusterCommand,
}

/// The `server cluster` commands.
#[derive(Debug, Subcommand)]
enum ClusterCommand {
    /// Makes the JetStream meta leader step down, so that another server leads the group.
    ///
    /// Example: rnats server cluster step-down --host n2 --user sys --password pass
    #[command(
        alias = "stepdown",
        alias = "sd",
        alias = "elect",
        alias = "down",
        alias = "d"
    )]
    StepDown {
        /// Lead next from this cluster.
        #[arg(long)]
        cluster: Option<String>,
        /// Lead next from a server with these tags (repeat for several).
        #[arg(long)]
        tags: Vec<String>,
        /// Lead next from this server, by name (nats-server 2.11+).
        #[arg(long, value_name = "SERVER")]
        host: Option<String>,
        /// Step down even when no server reports a meta leader.
        #[arg(long, short = 'f')]
        force: bool,
        /// The leaders before and after as JSON.
        #[arg(long, short = 'j')]
        json: bool,
    },
    /// Removes a server from the JetStream meta group for good: for a server that will not
    /// come back (its streams' replicas are placed elsewhere; the data of R1 streams on it
    /// is lost).
    ///
    /// Example: rnats server cluster peer-remove n3 --force --user sys --password pass
    #[command(alias = "rm", alias = "pr")]
    PeerRemove {
        /// The server to remove, by name.
        name: String,
        /// Do not ask for confirmation.
        #[arg(long, short = 'f')]
        force: bool,
        /// The outcome as JSON.
        #[arg(long, short = 'j')]
        json: bool,
    },
}

/// Runs `server cluster ...`.
pub(crate) async fn run(args: ClusterArgs, conn: &ConnArgs) -> Result<(), CliError> {
    let settings = conn.settings()?;
    // A domain would send the request to a domain's API, which the system account does not
    // answer: refused rather than risk moving another group (natscli refuses it too).
    if settings.js_domain().is_some() {
        return Err(CliError::Usage(
            "--js-domain cannot be used with server cluster: JetStream domains do not apply to \
             the system account",
        ));
    }
    match args.command {
        ClusterCommand::StepDown {
            cluster,
            tags,
            host,
            force,
            json,
        } => {
            let placement = (cluster.is_some() || !tags.is_empty() || host.is_some()).then_some(
                LeaderPlacement {
                    cluster,
                    tags,
                    preferred: host,
                },
            );
            step_down(&settings, placement, force, json).await
        }
        ClusterCommand::PeerRemove { name, force, json } => {
            remove(&settings, &name, force, json).await
        }
    }
}

/// `server cluster step-down`: asks, waits for the election, and names the new leader.
async fn step_down(
    settings: &Settings,
    placement: Option<LeaderPlacement>,
    force: bool,
    json: bool,
) -> Result<(), CliError> {
    let client = settings.connect().await?;
    let old = meta_group(&client, settings)
        .await?
        .map(|(leader, _)| leader);
    if old.is_none() && !force {
        return Err(CliError::JetStream {
            action: "cannot move the meta leader".to_owned(),
            source: "no server reports a meta leader now (--force to ask anyway)".into(),
        });
    }
    if !json {
        eprintln!(
            "Requesting meta leader step down of {:?}",
            old.as_deref().unwrap_or("<unknown>")
        );
    }
    let mut elections = client.subscribe(META_ELECTED).await?;
    // The server must know of the interest before the step-down goes out.
    client.flush().await?;
    let js = settings.jetstream(client.clone());
    js.step_down_meta_leader(placement)
        .await
        .map_err(CliError::js("cannot move the meta leader"))?;
    // The advisory may not come (a server that publishes none); the JSZ afterwards decides.
    let wait = ELECTION_WAIT.max(settings.timeout);
    let _ = tokio::time::timeout(wait, async {
        while let Some(message) = elections.next().await {
            let elected: Value = serde_json::from_slice(&message.payload).unwrap_or_default();
            let leader = elected["leader"].as_str().unwrap_or_default();
            if !leader.is_empty() && Some(leader) != old.as_deref() {
                return;
            }
        }
    })
    .await;
    let new = meta_group(&client, settings)
        .await?
        .map(|(leader, _)| leader);
    if json {
        return out::json_pretty(&json!({ "previous": old, "leader": new }));
    }
    match new {
        Some(new) if Some(&new) != old.as_ref() => {
            out::print(&format!("New meta leader elected: {new:?}\n"))
        }
        _ => Err(CliError::JetStream {
            action: "cannot move the meta leader".to_owned(),
            source: format!("no new leader was elected within {wait:?}").into(),
        }),
    }
}

/// `server cluster peer-remove`.
async fn remove(settings: &Settings, name: &str, force: bool, json: bool) -> Result<(), CliError> {
    let client = settings.connect().await?;
    let Some((_, members)) = meta_group(&client, settings).await? else {
        return Err(CliError::JetStream {
            action: format!("cannot remove {name}"),
            source: "no server reports a meta leader: the group cannot change now".into(),
        });
    };
    let Some(member) = members.iter().find(|m| m.name == name) else {
        return Err(CliError::JetStream {
            action: format!("cannot remove {name}"),
            source: "no such server in the meta group".into(),
        });
    };
    let state = if member.offline { "offline" } else { "online" };
    out::confirm(
        &format!("Really remove {state} server {name} from the JetStream cluster for good"),
        force,
    )?;
    let js = settings.jetstream(client);
    js.remove_server(name)
        .await
        .map_err(CliError::js(format!("cannot remove {name}")))?;
    if json {
        return out::json_pretty(&json!({ "removed": name, "was": state }));
    }
    let mut fields = Fields::new();
    fields.add("Removed", name);
    fields.add("Was", state);
    out::print(&format!("{}\n", fields.render()))
}

/// A server of the meta group, as the meta leader's JSZ names it.
struct Member {
    name: String,
    offline: bool,
}

/// The meta leader and the group's servers, from the JSZ of the server that leads it;
/// `None` when no server says it leads.
async fn meta_group(
    client: &rnats::Client,
    settings: &Settings,
) -> Result<Option<(String, Vec<Member>)>, CliError> {
    // No count to wait for: a server that just went away (the one `peer-remove` is for)
    // is still counted active for a while, and waiting for its answer would take the whole
    // timeout. The library's census waits only for the servers that answer a ping.
    let system = System::new(client.clone()).timeout(settings.timeout);
    let answers = (system.request_raw("JSZ", Value::Null).await)
        .map_err(|e| system_failed(e, "$SYS.REQ.SERVER.PING.JSZ", settings.timeout))?;
    for answer in &answers {
        let name = answer.server.name.as_str();
        let Some(data) = &answer.data else {
            continue;
        };
        let meta = &data["meta_cluster"];
        if name.is_empty() || meta["leader"].as_str() != Some(name) {
            continue;
        }
        let replicas = meta["replicas"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        let mut members = vec![Member {
            name: name.to_owned(),
            offline: false,
        }];
        members.extend(replicas.iter().filter_map(|peer| {
            Some(Member {
                name: peer["name"].as_str()?.to_owned(),
                offline: peer["offline"].as_bool().unwrap_or(false),
            })
        }));
        return Ok(Some((name.to_owned(), members)));
    }
    Ok(None)
}
