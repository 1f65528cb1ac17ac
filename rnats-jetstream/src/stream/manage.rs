//! Managing streams from a [`Context`]: create, get, update, delete, and finding them by name
//! or subject, over the `STREAM.*` API.

use std::borrow::{Borrow, Cow};

use futures_util::StreamExt;

use super::config::{Config, External, Source};
use super::info::{DeleteStatus, Info};
use super::list::{StreamNames, Streams};
use super::overlap::SubjectOverlap;
use super::{Stream, is_valid_subject};
use crate::context::Context;
use crate::errors::ErrorCode;
use crate::is_valid_name;
use crate::response::Response;
use crate::stream_errors::{
    CreateStreamError, CreateStreamErrorKind, DeleteStreamError, GetStreamByNameError,
    GetStreamByNameErrorKind, GetStreamError, GetStreamErrorKind, UpdateStreamError,
    create_request_error, get_stream_server_error,
};

impl Context {
    /// Creates a stream and returns a handle with its info. Creating a stream that exists
    /// with the same config succeeds; with another config the server refuses
    /// (`ErrorCode::STREAM_NAME_EXIST`). Subjects that overlap another stream's are refused
    /// (`ErrorCode::STREAM_SUBJECT_OVERLAP`), and the error names that stream: see
    /// [`SubjectOverlap`].
    ///
    /// ```no_run
    /// # async fn run(jetstream: rnats_jetstream::Context) -> Result<(), rnats_core::Error> {
    /// use rnats_jetstream::stream::Config;
    /// let stream = jetstream
    ///     .create_stream(Config {
    ///         name: "ORDERS".to_string(),
    ///         subjects: vec!["orders.>".to_string()],
    ///         ..Default::default()
    ///     })
    ///     .await?;
    /// # drop(stream); Ok(()) }
    /// ```
    pub async fn create_stream<S>(
        &self,
        stream_config: S,
    ) -> Result<Stream<Info>, CreateStreamError>
    where
        Config: From<S>,
    {
        let config = Config::from(stream_config);
        let config = checked_config(&config)?;
        self.require_stream_features(&config)?;
        let subject = format!("STREAM.CREATE.{}", config.name);
        let response: Response<Info> = self
            .request(subject, &*config)
            .await
            .map_err(create_request_error)?;
        let info = match response.into_result() {
            Ok(info) => info,
            Err(refusal) => return Err(self.refusal_error(&config, refusal).await),
        };
        Ok(Stream {
            info,
            context: self.clone(),
            name: config.name.clone(),
        })
    }

    /// A handle to the stream `stream` without asking the server anything: for calls that
    /// need only the name.
    pub async fn get_stream_no_info<T: AsRef<str>>(
        &self,
        stream: T,
    ) -> Result<Stream<()>, GetStreamError> {
        let name = checked_name(stream.as_ref())?;
        Ok(Stream {
            info: (),
            context: self.clone(),
            name: name.to_owned(),
        })
    }

    /// A handle to the stream `stream`, with its info.
    pub async fn get_stream<T: AsRef<str>>(&self, stream: T) -> Result<Stream, GetStreamError> {
        let name = checked_name(stream.as_ref())?;
        let response: Response<Info> = self
            .request(format!("STREAM.INFO.{name}"), &())
            .await
            .map_err(|e| GetStreamError::with_source(GetStreamErrorKind::Request, e))?;
        let info = response.into_result().map_err(get_stream_server_error)?;
        Ok(Stream {
            info,
            context: self.clone(),
            name: name.to_owned(),
        })
    }

    /// The stream named in `stream_config` if it exists (its config left as it is),
    /// otherwise a new one with this config. Callers racing to make the same stream all get
    /// it: the one the server creates first, whatever config each asked for.
    pub async fn get_or_create_stream<S>(
        &self,
        stream_config: S,
    ) -> Result<Stream, CreateStreamError>
    where
        S: Into<Config>,
    {
        let config: Config = stream_config.into();
        checked_config(&config)?;
        if let Some(stream) = self.existing_stream(&config.name).await? {
            return Ok(stream);
        }
        // Racing callers with the same config all succeed here (a create of an identical
        // stream is no error); one that asked for another config is refused as the name
        // exists, and takes the stream that won.
        let name = config.name.clone();
        match self.create_stream(config).await {
            Err(error) if name_exists(&error) => self
                .existing_stream(&name)
                .await?
                .ok_or_else(|| CreateStreamError::new(CreateStreamErrorKind::NotFound)),
            result => result,
        }
    }

    /// The stream `name` with its info, or `None` when the server has no such stream.
    async fn existing_stream(&self, name: &str) -> Result<Option<Stream>, CreateStreamError> {
        let response: Response<Info> = self
            .request(format!("STREAM.INFO.{name}"), &())
            .await
            .map_err(create_request_error)?;
        match response {
            Response::Ok(info) => Ok(Some(Stream {
                info,
                context: self.clone(),
                name: name.to_owned(),
            })),
            Response::Err { error } if error.error_code() == ErrorCode::STREAM_NOT_FOUND => {
                Ok(None)
            }
            Response::Err { error } => Err(error.into()),
        }
    }

    /// Deletes the stream `stream` with all its messages and consumers.
    pub async fn delete_stream<T: AsRef<str>>(
        &self,
        stream: T,
    ) -> Result<DeleteStatus, DeleteStreamError> {
        let name = checked_name(stream.as_ref())?;
        let response: Response<DeleteStatus> = self
            .request(format!("STREAM.DELETE.{name}"), &())
            .await
            .map_err(|e| DeleteStreamError::with_source(GetStreamErrorKind::Request, e))?;
        response.into_result().map_err(get_stream_server_error)
    }

    /// Changes the config of an existing stream; a missing one fails with
    /// `CreateStreamErrorKind::NotFound`. The server refuses changes it does not allow
    /// (storage, retention to or from work queue, ...), and subjects that overlap another
    /// stream's, as [`Context::create_stream`] does.
    pub async fn update_stream<S>(&self, config: S) -> Result<Info, UpdateStreamError>
    where
        S: Borrow<Config>,
    {
        let config = checked_config(config.borrow())?;
        self.require_stream_features(&config)?;
        let response: Response<Info> = self
            .request(format!("STREAM.UPDATE.{}", config.name), &*config)
            .await
            .map_err(create_request_error)?;
        match response.into_result() {
            Ok(info) => Ok(info),
            Err(refusal) => Err(self.refusal_error(&config, refusal).await),
        }
    }

    /// Updates the stream, creating it when it does not exist.
    pub async fn create_or_update_stream(&self, config: Config) -> Result<Info, CreateStreamError> {
        match self.update_stream(&config).await {
            Err(error) if error.kind() == CreateStreamErrorKind::NotFound => {
                Ok(self.create_stream(config).await?.info)
            }
            result => result,
        }
    }

    /// The name of the stream that stores `subject`.
    pub async fn stream_by_subject<T: Into<String>>(
        &self,
        subject: T,
    ) -> Result<String, GetStreamByNameError> {
        let subject = subject.into();
        if !is_valid_subject(&subject) {
            return Err(GetStreamByNameError::new(
                GetStreamByNameErrorKind::InvalidSubject,
            ));
        }
        match StreamNames::new(self.clone(), Some(subject)).next().await {
            Some(Ok(name)) => Ok(name),
            Some(Err(error)) => Err(match error.downcast_source::<crate::Error>() {
                Some(refusal) => GetStreamByNameError::with_source(
                    GetStreamByNameErrorKind::JetStream(refusal.clone()),
                    refusal.clone(),
                ),
                None => GetStreamByNameError::with_source(GetStreamByNameErrorKind::Request, error),
            }),
            None => Err(GetStreamByNameError::new(
                GetStreamByNameErrorKind::NotFound,
            )),
        }
    }

    /// The names of all streams of the account, fetched page by page as they are read.
    ///
    /// ```no_run
    /// # async fn run(jetstream: rnats_jetstream::Context) -> Result<(), rnats_core::Error> {
    /// use futures_util::TryStreamExt;
    /// let mut names = jetstream.stream_names();
    /// while let Some(name) = names.try_next().await? {
    ///     println!("{name}");
    /// }
    /// # Ok(()) }
    /// ```
    pub fn stream_names(&self) -> StreamNames {
        StreamNames::new(self.clone(), None)
    }

    /// The infos of all streams of the account, fetched page by page as they are read.
    pub fn streams(&self) -> Streams {
        Streams::new(self.clone())
    }
}

/// Whether the server refused a create as a stream of that name exists with another config.
pub(crate) fn name_exists(error: &CreateStreamError) -> bool {
    matches!(error.kind(), CreateStreamErrorKind::JetStream(refusal)
        if refusal.error_code() == ErrorCode::STREAM_NAME_EXIST)
}

/// `name` if it can name a stream.
pub(crate) fn checked_name(name: &str) -> Result<&str, GetStreamError> {
    if name.is_empty() {
        return Err(GetStreamError::new(GetStreamErrorKind::EmptyName));
    }
    if !is_valid_name(name) {
        return Err(GetStreamError::new(GetStreamErrorKind::InvalidStreamName));
    }
    Ok(name)
}

impl Context {
    /// The server's refusal of `config` as a create or update error. One for overlapping
    /// subjects has a [`SubjectOverlap`] naming the streams they overlap as its source, and
    /// the refusal itself as the kind, as any other.
    async fn refusal_error(&self, config: &Config, refusal: crate::Error) -> CreateStreamError {
        if refusal.error_code() != ErrorCode::STREAM_SUBJECT_OVERLAP {
            return refusal.into();
        }
        let overlap = SubjectOverlap::look_up(self, config, refusal.clone()).await;
        CreateStreamError::with_source(CreateStreamErrorKind::JetStream(refusal), overlap)
    }

    /// Refuses a configuration whose features the connected server would drop (ADR-44).
    fn require_stream_features(&self, config: &Config) -> Result<(), CreateStreamError> {
        self.require(crate::features::stream_features(config))
            .map_err(|e| CreateStreamError::with_source(CreateStreamErrorKind::Response, e))
    }
}

/// `config` checked, with each mirror or source `domain` turned into the `external` API
/// prefix the server reads (`$JS.<domain>.API`); copied only when there is one.
pub(crate) fn checked_config(config: &Config) -> Result<Cow<'_, Config>, CreateStreamError> {
    if config.name.is_empty() {
        return Err(CreateStreamError::new(
            CreateStreamErrorKind::EmptyStreamName,
        ));
    }
    if !is_valid_name(&config.name) {
        return Err(CreateStreamError::new(
            CreateStreamErrorKind::InvalidStreamName,
        ));
    }
    let sources = config.mirror.iter().chain(config.sources.iter().flatten());
    let mut has_domain = false;
    for source in sources {
        match (&source.domain, &source.external) {
            (Some(_), Some(_)) => {
                return Err(CreateStreamError::new(
                    CreateStreamErrorKind::DomainAndExternalSet,
                ));
            }
            (Some(_), None) => has_domain = true,
            _ => {}
        }
    }
    if !has_domain {
        return Ok(Cow::Borrowed(config));
    }
    let mut config = config.clone();
    let sources = config
        .mirror
        .iter_mut()
        .chain(config.sources.iter_mut().flatten());
    sources.for_each(domain_to_external);
    Ok(Cow::Owned(config))
}

/// The server knows no `domain` field and refuses a config that has one (async-nats sends it:
/// nats.rs issue 1541), so it is taken out and sent as the prefix it stands for.
fn domain_to_external(source: &mut Source) {
    if let Some(domain) = source.domain.take() {
        source.external = Some(External {
            api_prefix: format!("$JS.{domain}.API"),
            delivery_prefix: None,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_source_domain_becomes_its_api_prefix() {
        let source = |domain: Option<&str>| Source {
            name: "UP".into(),
            domain: domain.map(str::to_owned),
            ..Default::default()
        };
        let config = Config {
            name: "DOWN".into(),
            mirror: Some(source(Some("hub"))),
            sources: Some(vec![source(None), source(Some("leaf"))]),
            ..Default::default()
        };
        let checked = checked_config(&config).unwrap();
        let api = |source: &Source| source.external.as_ref().map(|e| e.api_prefix.clone());
        assert_eq!(
            api(checked.mirror.as_ref().unwrap()).unwrap(),
            "$JS.hub.API"
        );
        let sources = checked.sources.as_ref().unwrap();
        assert_eq!(api(&sources[0]), None);
        assert_eq!(api(&sources[1]).unwrap(), "$JS.leaf.API");
        // What the server reads: no `domain` field left.
        let json = serde_json::to_string(&*checked).unwrap();
        assert!(!json.contains("\"domain\""), "{json}");

        let plain = Config::from("PLAIN");
        assert!(matches!(checked_config(&plain).unwrap(), Cow::Borrowed(_)));

        let mut both = source(Some("hub"));
        both.external = Some(External::default());
        let config = Config {
            name: "BAD".into(),
            sources: Some(vec![both]),
            ..Default::default()
        };
        let error = checked_config(&config).unwrap_err();
        assert_eq!(error.kind(), CreateStreamErrorKind::DomainAndExternalSet);
    }
}
