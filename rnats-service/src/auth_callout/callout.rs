//! [`AuthCallout`]: the service that answers a server's authorization requests, driving a
//! [`Responder`] over a queue subscription to `$SYS.REQ.USER.AUTH`.

use std::fmt;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use futures_util::stream::FuturesUnordered;
use futures_util::{FutureExt, StreamExt};
use nkeys::KeyPair;
use nkeys::XKey;
use rnats_core::runtime::{JoinError, JoinHandle};
use rnats_core::{Client, Message, Subscriber};
use tokio::sync::oneshot;

use super::error::{CalloutError, KeyError, StartError};
use super::responder::{DEFAULT_CLOCK_SKEW, OpenedRequest, Responder};
use super::{
    AUTH_CALLOUT_SUBJECT, AuthorizationRequest, GLOBAL_ACCOUNT, SERVER_XKEY_HEADER, Verdict,
};
use crate::DEFAULT_QUEUE_GROUP;

/// What a request that could not be answered is reported to.
type ErrorCallback = Arc<dyn Fn(CalloutError) + Send + Sync>;

/// How many requests are answered at once unless
/// [`AuthCalloutBuilder::max_concurrent_requests`] says otherwise.
pub const DEFAULT_MAX_CONCURRENT_REQUESTS: usize = 1024;

/// A running authorization callout service (ADR-26): it receives the server's authorization
/// requests on `$SYS.REQ.USER.AUTH`, checks them, asks the handler about each client, and
/// replies with a signed user JWT or a refusal.
///
/// Instances join one queue group (default `q`), so several of them share the requests.
/// Each request is handled in a task of its own: a slow handler (a directory lookup, a token
/// introspection call) holds up only its own client. A handler gets until the request
/// expires, [clock skew](AuthCalloutBuilder::clock_skew) allowed for; past that its future is
/// dropped, as the server no longer waits. At most
/// [`max_concurrent_requests`](AuthCalloutBuilder::max_concurrent_requests) are handled at
/// once; requests beyond that are dropped.
///
/// A request that cannot be answered (malformed, not signed by the server it names, sealed
/// when no xkey was given, expired, its handler too slow, ...) is not replied to: the server
/// refuses that client when its auth timeout passes. The [`CalloutError`] goes to the
/// callback given to [`AuthCalloutBuilder::on_error`], or to a `tracing` warning without one.
/// A handler's refusal is not an error: it is answered, and the client gets an authorization
/// violation; nor is its [`Verdict::Abort`]. A user the handler places in an account the
/// callout holds no key for (operator mode) is refused at once and reported as
/// [`CalloutError::NoAccountSigner`].
///
/// Dropping the handle stops the service as [`stop`](Self::stop) does, without waiting.
///
/// ```no_run
/// use rnats_service::auth_callout::{AuthCallout, UserClaims, nkeys::KeyPair};
///
/// # async fn run(client: rnats_core::Client) -> Result<(), Box<dyn std::error::Error>> {
/// let issuer = KeyPair::from_seed(&std::env::var("CALLOUT_ISSUER_SEED")?)?;
/// let callout = AuthCallout::new(client, issuer, |request| async move {
///     let opts = request.connect_opts;
///     match (opts.username.as_deref(), opts.password.as_deref()) {
///         (Some("alice"), Some("secret")) => Ok(UserClaims::new()
///             .account("APP")
///             .allow_publish("orders.>")
///             .allow_subscribe("_INBOX.>")),
///         _ => Err("unknown user or wrong password".to_string()),
///     }
/// })
/// .await?;
/// # callout.stop().await;
/// # Ok(()) }
/// ```
#[must_use = "dropping an AuthCallout stops it"]
pub struct AuthCallout {
    stop: Option<oneshot::Sender<()>>,
    done: Option<JoinHandle<()>>,
}

/// Configures and starts an [`AuthCallout`]; from [`AuthCallout::builder`].
pub struct AuthCalloutBuilder {
    issuer: KeyPair,
    xkey: Option<XKey>,
    issuer_account: Option<String>,
    account_signers: Vec<(String, KeyPair)>,
    queue_group: String,
    on_error: Option<ErrorCallback>,
    clock_skew: Duration,
    default_account: String,
    max_concurrent_requests: usize,
}

impl AuthCallout {
    /// Starts a callout that signs with `issuer` and asks `handler` about each client, with
    /// the defaults: requests in clear, queue group `q`, errors logged.
    ///
    /// `issuer` is an account key pair with its seed; in a server configured with accounts
    /// its public key is the `auth_callout` block's `issuer`. `handler` gets each request and
    /// returns the user to let in, or the reason to refuse (`Result<UserClaims, String>`), or
    /// a [`Verdict`].
    pub async fn new<F, Fut>(
        client: Client,
        issuer: KeyPair,
        handler: F,
    ) -> Result<AuthCallout, StartError>
    where
        F: Fn(AuthorizationRequest) -> Fut + Send + Sync + 'static,
        Fut: Future + Send + 'static,
        Fut::Output: Into<Verdict>,
    {
        AuthCallout::builder(issuer).start(client, handler).await
    }

    /// A builder for a callout that signs with `issuer`, for an xkey, a queue group, an error
    /// callback and the rest.
    pub fn builder(issuer: KeyPair) -> AuthCalloutBuilder {
        AuthCalloutBuilder {
            issuer,
            xkey: None,
            issuer_account: None,
            account_signers: Vec::new(),
            queue_group: DEFAULT_QUEUE_GROUP.to_owned(),
            on_error: None,
            clock_skew: DEFAULT_CLOCK_SKEW,
            default_account: GLOBAL_ACCOUNT.to_owned(),
            max_concurrent_requests: DEFAULT_MAX_CONCURRENT_REQUESTS,
        }
    }

    /// Stops taking requests and returns once every request already received has been
    /// answered or reported, which takes at most until the last of them expires (clock skew
    /// allowed for): a handler still running then is dropped and reported as
    /// [`CalloutError::Timeout`]. Other instances in the queue group take the next ones.
    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            // Fails only if the task already ended (the client closed): nothing to stop then.
            let _ = stop.send(());
        }
        if let Some(done) = self.done.take()
            && let Err(error) = done.await
        {
            tracing::debug!(%error, "auth callout task ended abnormally");
        }
    }
}

impl fmt::Debug for AuthCallout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuthCallout")
            .field("running", &self.stop.is_some())
            .finish()
    }
}

impl AuthCalloutBuilder {
    /// Opens sealed requests with `xkey` and seals the answers: the curve key pair (seed
    /// `SX...`) whose public key is the `auth_callout` block's `xkey`. With one set, requests
    /// in clear are refused, and without one, sealed requests are.
    pub fn xkey(mut self, xkey: XKey) -> AuthCalloutBuilder {
        self.xkey = Some(xkey);
        self
    }

    /// Names the account the issuer signs for, when the issuer is one of its signing keys
    /// (operator mode).
    pub fn issuer_account(mut self, account: impl Into<String>) -> AuthCalloutBuilder {
        self.issuer_account = Some(account.into());
        self
    }

    /// Lets the callout place users in `account` (operator mode): the handler names it by its
    /// public key with [`UserClaims::account`](super::UserClaims::account), and the user JWT
    /// is signed by `signer`, the account's key pair or one of its signing keys (then named
    /// in the JWT's `issuer_account`), while the response stays signed by the issuer. The
    /// callout's account JWT must list `account` in `authorization.allowed_accounts`. Without
    /// a signer for the account a handler names, the client is refused and
    /// [`CalloutError::NoAccountSigner`] reported. Checked by [`start`](Self::start)
    /// ([`KeyError`]).
    pub fn account_signer(
        mut self,
        account: impl Into<String>,
        signer: KeyPair,
    ) -> AuthCalloutBuilder {
        self.account_signers.push((account.into(), signer));
        self
    }

    /// The queue group to join (default `q`, as the Service API's endpoints).
    pub fn queue_group(mut self, queue_group: impl Into<String>) -> AuthCalloutBuilder {
        self.queue_group = queue_group.into();
        self
    }

    /// The account a user is placed in when the handler's [`UserClaims`](super::UserClaims)
    /// name none (default `$G`, the global account, which a server configured with accounts
    /// always has; a user JWT without an account is refused). In operator mode a name is
    /// ignored and the user joins the issuer's account; an account public key places the
    /// user there, as [`UserClaims::account`](super::UserClaims::account) does.
    pub fn default_account(mut self, account: impl Into<String>) -> AuthCalloutBuilder {
        self.default_account = account.into();
        self
    }

    /// How far this host's clock may be ahead of the server's (default 10 s). The server
    /// gives each request its auth timeout (2 s unless configured) in whole seconds; the
    /// callout reads a request as expired, and cuts its handler off, only this long after.
    /// Replay is no concern: each answer is bound to one connection's `user_nkey`.
    pub fn clock_skew(mut self, skew: Duration) -> AuthCalloutBuilder {
        self.clock_skew = skew;
        self
    }

    /// How many requests are handled at once (default 1024, at least 1). One more is
    /// dropped and reported as [`CalloutError::Busy`]; the server refuses that client when
    /// its auth timeout passes.
    pub fn max_concurrent_requests(mut self, max: usize) -> AuthCalloutBuilder {
        self.max_concurrent_requests = max.max(1);
        self
    }

    /// Calls `callback` with each request that could not be answered, instead of logging it.
    /// A callback that panics is logged and does not stop the callout.
    pub fn on_error<F>(mut self, callback: F) -> AuthCalloutBuilder
    where
        F: Fn(CalloutError) + Send + Sync + 'static,
    {
        self.on_error = Some(Arc::new(callback));
        self
    }

    /// Checks the keys, subscribes to `$SYS.REQ.USER.AUTH` and starts answering. Returns once
    /// the server has the subscription, so a client connecting afterwards is asked about.
    pub async fn start<F, Fut>(self, client: Client, handler: F) -> Result<AuthCallout, StartError>
    where
        F: Fn(AuthorizationRequest) -> Fut + Send + Sync + 'static,
        Fut: Future + Send + 'static,
        Fut::Output: Into<Verdict>,
    {
        let responder = self.responder()?;
        let subscriber = client
            .queue_subscribe(AUTH_CALLOUT_SUBJECT, self.queue_group.clone())
            .await
            .map_err(|error| match error.kind() {
                rnats_core::SubscribeErrorKind::InvalidQueueName => {
                    StartError::QueueGroup(self.queue_group.clone())
                }
                _ => StartError::Subscribe(error),
            })?;
        client.flush().await.map_err(StartError::Flush)?;
        let on_error = self.on_error.unwrap_or_else(|| {
            Arc::new(|error| tracing::warn!(%error, "auth callout request not answered"))
        });
        let context = Arc::new(Context {
            client,
            responder,
            handler,
            on_error,
            max_concurrent_requests: self.max_concurrent_requests,
        });
        let (stop, stopped) = oneshot::channel();
        let done = rnats_core::runtime::spawn(serve(subscriber, context, stopped));
        Ok(AuthCallout {
            stop: Some(stop),
            done: Some(done),
        })
    }

    fn responder(&self) -> Result<Responder, KeyError> {
        let mut responder = Responder::new(self.issuer.clone())?
            .with_clock_skew(self.clock_skew)
            .with_default_account(self.default_account.clone());
        if let Some(xkey) = &self.xkey {
            responder = responder.with_xkey(xkey.clone())?;
        }
        if let Some(account) = &self.issuer_account {
            responder = responder.with_issuer_account(account.clone())?;
        }
        for (account, signer) in &self.account_signers {
            responder = responder.with_account_signer(account.clone(), signer.clone())?;
        }
        Ok(responder)
    }
}

impl fmt::Debug for AuthCalloutBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuthCalloutBuilder")
            .field("issuer", &self.issuer.public_key())
            .field("xkey", &self.xkey.as_ref().map(XKey::public_key))
            .field("issuer_account", &self.issuer_account)
            .field(
                "account_signers",
                &self
                    .account_signers
                    .iter()
                    .map(|(account, signer)| (account, signer.public_key()))
                    .collect::<Vec<_>>(),
            )
            .field("queue_group", &self.queue_group)
            .field("clock_skew", &self.clock_skew)
            .field("default_account", &self.default_account)
            .field("max_concurrent_requests", &self.max_concurrent_requests)
            .finish_non_exhaustive()
    }
}

/// What every request's task shares.
struct Context<F> {
    client: Client,
    responder: Responder,
    handler: F,
    on_error: ErrorCallback,
    max_concurrent_requests: usize,
}

impl<F> Context<F> {
    /// Hands `error` to the callback. A callback that panics must not take the serving task
    /// down with it: the panic is caught and logged.
    fn report(&self, error: CalloutError) {
        let text = error.to_string();
        let on_error = &self.on_error;
        if std::panic::catch_unwind(AssertUnwindSafe(|| on_error(error))).is_err() {
            tracing::error!(error = %text, "the auth callout's on_error callback panicked");
        }
    }

    /// A handler that panicked left its request unanswered: say so.
    fn report_panic(&self, joined: Result<(), JoinError>) {
        if let Err(error) = joined
            && error.is_panic()
        {
            self.report(CalloutError::HandlerPanicked);
        }
    }
}

/// The service's task: one answering task per request (up to the cap), until stopped; then
/// drains the subscription, answers what was already on its way, and waits for every answer.
/// Each answering task ends by its request's deadline, so the wait is bounded.
async fn serve<F, Fut>(
    mut subscriber: Subscriber,
    context: Arc<Context<F>>,
    mut stopped: oneshot::Receiver<()>,
) where
    F: Fn(AuthorizationRequest) -> Fut + Send + Sync + 'static,
    Fut: Future + Send + 'static,
    Fut::Output: Into<Verdict>,
{
    // The answering tasks, each on the caller's runtime (tokio's, or the runtime-neutral one).
    let mut answering = FuturesUnordered::new();
    let mut draining = false;
    loop {
        tokio::select! {
            message = subscriber.next() => match message {
                Some(message) => {
                    // Count only the requests still in progress.
                    while let Some(Some(joined)) = answering.next().now_or_never() {
                        context.report_panic(joined);
                    }
                    if answering.len() >= context.max_concurrent_requests {
                        context.report(CalloutError::Busy(context.max_concurrent_requests));
                    } else {
                        answering.push(rnats_core::runtime::spawn(answer(
                            Arc::clone(&context),
                            message,
                        )));
                    }
                }
                None => break,
            },
            Some(joined) = answering.next(), if !answering.is_empty() => {
                context.report_panic(joined);
            }
            // A stop, or the handle dropped.
            _ = &mut stopped, if !draining => {
                draining = true;
                if let Err(error) = subscriber.drain().await {
                    // The connection is gone: nothing more is on its way.
                    tracing::debug!(%error, "auth callout subscription did not drain");
                    break;
                }
            }
        }
    }
    while let Some(joined) = answering.next().await {
        context.report_panic(joined);
    }
    tracing::debug!("auth callout stopped");
}

/// Answers one request, or reports why not.
async fn answer<F, Fut>(context: Arc<Context<F>>, message: Message)
where
    F: Fn(AuthorizationRequest) -> Fut + Send + Sync + 'static,
    Fut: Future + Send + 'static,
    Fut::Output: Into<Verdict>,
{
    if let Err(error) = try_answer(&context, message).await {
        context.report(error);
    }
}

/// Opens the request, then decides and replies by its deadline.
async fn try_answer<F, Fut>(context: &Context<F>, message: Message) -> Result<(), CalloutError>
where
    F: Fn(AuthorizationRequest) -> Fut + Send + Sync + 'static,
    Fut: Future + Send + 'static,
    Fut::Output: Into<Verdict>,
{
    let reply = message.reply.ok_or(CalloutError::NoReply)?;
    let server_xkey = message
        .headers
        .as_ref()
        .and_then(|headers| headers.get(SERVER_XKEY_HEADER))
        .map(|value| value.as_str());
    let now = SystemTime::now();
    let request = context.responder.open(&message.payload, server_xkey, now)?;
    // Past the deadline the server has refused the client: stop waiting for the handler.
    let time_left = context
        .responder
        .deadline(&request, now)
        .duration_since(now)
        .unwrap_or(Duration::ZERO);
    rnats_core::runtime::timeout(time_left, decide_and_reply(context, &request, reply))
        .await
        .map_err(|_| CalloutError::Timeout)?
}

/// Asks the handler about an opened request and sends its verdict, unless it aborts.
async fn decide_and_reply<F, Fut>(
    context: &Context<F>,
    request: &OpenedRequest,
    reply: rnats_core::Subject,
) -> Result<(), CalloutError>
where
    F: Fn(AuthorizationRequest) -> Fut + Send + Sync + 'static,
    Fut: Future + Send + 'static,
    Fut::Output: Into<Verdict>,
{
    let user_nkey = &request.request().user_nkey;
    let verdict = match (context.handler)(request.request().clone()).await.into() {
        Verdict::Allow(user) => Ok(user),
        Verdict::Deny(reason) => {
            tracing::debug!(%user_nkey, %reason, "auth callout refused a client");
            Err(reason)
        }
        Verdict::Abort => {
            tracing::debug!(%user_nkey, "auth callout left a request unanswered");
            return Ok(());
        }
    };
    let payload = match context
        .responder
        .answer(request, verdict, SystemTime::now())
    {
        // The server would refuse a user JWT signed by any other key: refuse the client now
        // rather than leave it waiting for its auth timeout.
        Err(error @ CalloutError::NoAccountSigner(_)) => {
            let refusal =
                context
                    .responder
                    .answer(request, Err(error.to_string()), SystemTime::now())?;
            context.report(error);
            refusal
        }
        answer => answer?,
    };
    context
        .client
        .publish(reply, payload)
        .await
        .map_err(CalloutError::Publish)
}
