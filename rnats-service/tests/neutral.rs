//! The Service API and authorization callouts with the client on the runtime-neutral
//! backend, under smol, with no tokio runtime in the process: the tasks they start (a
//! service's monitoring verbs, a callout's answering tasks) and the timers they arm (a
//! discovery's collecting window, a callout's deadline) come from the runtime the caller runs
//! under. Before, starting a service outside tokio panicked.
#![allow(clippy::unwrap_used, missing_docs)]

use std::future::Future;
use std::time::Duration;

use futures_util::StreamExt;
use rnats_service::ServiceExt;
use rnats_test_server::NatsServer;

/// How long any single wait may take before the test fails.
const WAIT: Duration = Duration::from_secs(20);

/// Runs `test` under smol's `block_on`, after checking that no tokio runtime is around.
fn on_smol<F: Future<Output = ()>>(test: F) {
    smol::block_on(async {
        assert!(
            tokio::runtime::Handle::try_current().is_err(),
            "a tokio runtime is current"
        );
        test.await;
    });
}

/// `work`, or a failed test after [`WAIT`].
async fn within<T>(work: impl Future<Output = T>) -> T {
    smol::future::or(async { Some(work.await) }, async {
        smol::Timer::after(WAIT).await;
        None
    })
    .await
    .expect("timed out")
}

#[test]
fn a_service_answers_is_found_and_stops_under_smol() {
    let server = NatsServer::start();
    on_smol(async {
        let client = within(rnats_core::connect(server.url())).await.unwrap();
        let service = within(client.service_builder().start("adder", "1.0.0"))
            .await
            .unwrap();
        let mut sum = within(service.endpoint("math.sum")).await.unwrap();
        let answering = smol::spawn(async move {
            while let Some(request) = sum.next().await {
                let total: u32 = std::str::from_utf8(&request.message.payload)
                    .unwrap()
                    .split(',')
                    .map(|n| n.parse::<u32>().unwrap())
                    .sum();
                request.respond(Ok(total.to_string().into())).await.unwrap();
            }
        });

        let caller = within(rnats_core::connect(server.url())).await.unwrap();
        let discovery = caller
            .service_discovery()
            .timeout(Duration::from_millis(300));
        let answer = within(discovery.call("math.sum", "1,2,3".into()))
            .await
            .unwrap();
        assert_eq!(answer.payload, "6");
        // A ping gathers replies for its window (async-io's timer), then returns them.
        let found = within(discovery.ping(Some("adder"))).await.unwrap();
        assert_eq!(found.len(), 1);
        let stats = within(discovery.stats_instance("adder", &found[0].id))
            .await
            .unwrap();
        assert_eq!(stats.endpoints[0].requests, 1);

        // Stopping waits for the monitoring task (spawned on rnats' task thread) to end; the
        // endpoint's stream ends after it.
        within(service.stop()).await.unwrap();
        within(answering).await;
        assert!(
            within(discovery.ping(Some("adder")))
                .await
                .unwrap()
                .is_empty()
        );
    });
}

#[cfg(feature = "auth-callout")]
mod callout {
    use super::*;
    use rnats_core::{Client, ConnectOptions};
    use rnats_service::auth_callout::nkeys::KeyPair;
    use rnats_service::auth_callout::{AuthCallout, CalloutError, UserClaims};

    /// A server whose callout, signed by `issuer`, is the `auth` user of account AUTH.
    fn server(issuer: &KeyPair) -> NatsServer {
        let config = format!(
            r#"
accounts {{
  AUTH {{ users: [ {{ user: auth, password: pwd }} ] }}
  APP {{}}
}}
authorization {{
  timeout: 15
  auth_callout {{ issuer: {issuer}, auth_users: [ auth ], account: AUTH }}
}}
"#,
            issuer = issuer.public_key(),
        );
        NatsServer::builder().config(config).spawn().unwrap()
    }

    async fn connect_as(
        server: &NatsServer,
        user: &str,
    ) -> Result<Client, rnats_core::ConnectError> {
        ConnectOptions::new()
            .user_and_password(user.into(), "any".into())
            .connect(server.url())
            .await
    }

    /// A handler that panics is reported and its request left unanswered; the callout (and
    /// every client's engine beside it on rnats' task thread) goes on answering.
    #[test]
    fn a_callout_lets_clients_in_and_survives_a_panicking_handler_under_smol() {
        let issuer = KeyPair::new_account();
        let server = server(&issuer);
        on_smol(async {
            let (errors, reported) = smol::channel::unbounded();
            let callout_client = within(
                ConnectOptions::new()
                    .user_and_password("auth".into(), "pwd".into())
                    .connect(server.url()),
            )
            .await
            .unwrap();
            let callout = within(
                AuthCallout::builder(issuer)
                    .on_error(move |error| {
                        let _ = errors.try_send(error);
                    })
                    .start(callout_client, |request| async move {
                        assert_ne!(
                            request.connect_opts.username.as_deref(),
                            Some("boom"),
                            "the handler panics"
                        );
                        Ok(UserClaims::new().account("APP"))
                    }),
            )
            .await
            .unwrap();
            // Refused only when the server gives up on the answer: left to run, then dropped.
            let boom = smol::spawn({
                let url = server.url();
                async move {
                    ConnectOptions::new()
                        .user_and_password("boom".into(), "any".into())
                        .connect(url)
                        .await
                }
            });
            let error = within(reported.recv()).await.unwrap();
            assert!(matches!(error, CalloutError::HandlerPanicked), "{error}");

            let alice = within(connect_as(&server, "alice")).await.unwrap();
            let mut echo = within(alice.subscribe("echo")).await.unwrap();
            within(alice.publish("echo", "hi".into())).await.unwrap();
            assert_eq!(within(echo.next()).await.unwrap().payload, "hi");
            drop(boom);
            within(callout.stop()).await;
        });
    }
}
