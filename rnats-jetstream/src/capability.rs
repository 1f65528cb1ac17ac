//! What the connected server can do, by JetStream API level (ADR-44) as well as by version.
//!
//! nats-server 2.12 and later announce the API level they speak in `INFO` (`api_lvl`) and in
//! `$JS.API.INFO`. A level is firmer than a version string (development builds, and levels
//! that move within a release), so where the server announced one, the publishing features
//! of this crate (atomic batches, counters, schedules, fast ingest) check it as well as the
//! version before sending anything: a server that does not know a feature's headers would
//! store the messages as if they were ordinary ones, which is worse than refusing.

use std::fmt;

use crate::context::{AccountError, Context};
use crate::features::{Feature, Unsupported};

impl Feature {
    /// The JetStream API level a server speaks once it has the feature (ADR-44): 0 before
    /// 2.11, 1 for 2.11, 2 for 2.12, 4 for 2.14.
    pub const fn api_level(self) -> u32 {
        let version = self.min_version();
        match (version.major, version.minor) {
            (2, 0..=10) => 0,
            (2, 11) => 1,
            (2, 12) => 2,
            (2, 13) => 3,
            _ => 4,
        }
    }
}

/// A feature the connected server's API level is too low for; nothing was sent. Reach it
/// with `err.downcast_source::<ApiLevelTooLow>()` on the operation's error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiLevelTooLow {
    /// What the request needed.
    pub feature: Feature,
    /// The level the server announced.
    pub level: u32,
}

impl fmt::Display for ApiLevelTooLow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} needs JetStream API level {}; the connected server speaks level {}",
            self.feature,
            self.feature.api_level(),
            self.level
        )
    }
}

impl std::error::Error for ApiLevelTooLow {}

/// Why a server lacks a feature: too old a version, or too low an API level.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Lacking {
    Version(Unsupported),
    Level(ApiLevelTooLow),
}

impl From<Lacking> for rnats_core::Error {
    fn from(lacking: Lacking) -> rnats_core::Error {
        match lacking {
            Lacking::Version(error) => error.into(),
            Lacking::Level(error) => error.into(),
        }
    }
}

impl Context {
    /// The JetStream API level the connected server announced in `INFO` (nats-server 2.12
    /// and later); `None` when it announced none. An rnats extension.
    pub fn api_level(&self) -> Option<u32> {
        let level = self.client.server_info().api_level;
        (level > 0).then_some(level)
    }

    /// The API level of the JetStream answering this context's requests, from
    /// `$JS.API.INFO` (which may be another server than the connected one, in a cluster or
    /// through a domain). An rnats extension.
    pub async fn jetstream_api_level(&self) -> Result<u32, AccountError> {
        let account = self.query_account().await?;
        Ok(u32::try_from(account.requests.level).unwrap_or(u32::MAX))
    }

    /// Whether the connected server has `feature`, by its announced API level when it has
    /// one and by its version. An rnats extension.
    pub fn has_capability(&self, feature: Feature) -> bool {
        self.require_capability([feature]).is_ok()
    }

    /// Fails when the connected server lacks one of `needed`, by version or API level.
    pub(crate) fn require_capability(
        &self,
        needed: impl IntoIterator<Item = Feature> + Clone,
    ) -> Result<(), Lacking> {
        self.require(needed.clone()).map_err(Lacking::Version)?;
        let Some(level) = self.api_level() else {
            return Ok(());
        };
        match needed.into_iter().find(|f| f.api_level() > level) {
            Some(feature) => Err(Lacking::Level(ApiLevelTooLow { feature, level })),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn features_map_to_the_api_level_of_their_release() {
        assert_eq!(Feature::Metadata.api_level(), 0);
        assert_eq!(Feature::MessageTtl.api_level(), 1);
        assert_eq!(Feature::AtomicPublish.api_level(), 2);
        assert_eq!(Feature::MessageCounters.api_level(), 2);
        assert_eq!(Feature::MessageSchedules.api_level(), 2);
        assert_eq!(Feature::BatchPublish.api_level(), 4);
        assert_eq!(Feature::ScheduleTimeZones.api_level(), 4);
        let low = ApiLevelTooLow {
            feature: Feature::BatchPublish,
            level: 2,
        };
        assert_eq!(
            low.to_string(),
            "fast batch publishing needs JetStream API level 4; the connected server speaks level 2"
        );
    }
}
