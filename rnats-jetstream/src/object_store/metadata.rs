//! Updating an object's metadata in place, renaming it when the name changes: the data stays
//! where it is, only the meta subject changes.

use super::errors::{
    InfoError, InfoErrorKind, UpdateMetadataError, UpdateMetadataErrorKind, update_metadata_error,
};
use super::info::{ObjectInfo, UpdateMetadata};
use super::{ObjectStore, is_valid_object_name};

impl ObjectStore {
    /// Replaces the name, description, metadata and headers of the object `object`; a new
    /// name renames it (and fails if a live object has that name).
    ///
    /// ```no_run
    /// # async fn run(bucket: rnats_jetstream::object_store::ObjectStore) -> Result<(), rnats_core::Error> {
    /// use rnats_jetstream::object_store::UpdateMetadata;
    /// bucket
    ///     .update_metadata(
    ///         "draft.txt",
    ///         UpdateMetadata {
    ///             name: "final.txt".to_string(),
    ///             description: Some("the final version".to_string()),
    ///             ..Default::default()
    ///         },
    ///     )
    ///     .await?;
    /// # Ok(()) }
    /// ```
    pub async fn update_metadata<A: AsRef<str>>(
        &self,
        object: A,
        metadata: UpdateMetadata,
    ) -> Result<ObjectInfo, UpdateMetadataError> {
        let info = self
            .info(object.as_ref())
            .await
            .map_err(update_metadata_error)?;
        let renamed = check_update(&info, &metadata)?;
        if renamed {
            may_rename_over(self.info(&metadata.name).await)?;
        }
        let old_name = info.name.clone();
        let info = updated_info(info, metadata);
        self.publish_meta(&info).await.map_err(|error| {
            UpdateMetadataError::with_source(UpdateMetadataErrorKind::PublishMetadata, error)
        })?;
        // The new name is stored first, so a failure here leaves the object reachable.
        if renamed {
            self.stream
                .purge()
                .filter(self.meta_subject(&old_name))
                .await
                .map_err(|error| {
                    UpdateMetadataError::with_source(UpdateMetadataErrorKind::Purge, error)
                })?;
        }
        Ok(info)
    }
}

/// Checks that `metadata` may replace the metadata of the object `info`: the object is live,
/// and a new name is valid. Whether it renames the object. For the async and blocking stores
/// alike.
pub(crate) fn check_update(
    info: &ObjectInfo,
    metadata: &UpdateMetadata,
) -> Result<bool, UpdateMetadataError> {
    if info.deleted {
        return Err(UpdateMetadataError::new(UpdateMetadataErrorKind::NotFound));
    }
    let renamed = metadata.name != info.name;
    if renamed && !is_valid_object_name(&metadata.name) {
        return Err(UpdateMetadataError::new(
            UpdateMetadataErrorKind::InvalidName,
        ));
    }
    Ok(renamed)
}

/// Whether a rename may take a name whose current metadata is `existing`: not a live
/// object's (a deleted one's, or none at all).
pub(crate) fn may_rename_over(
    existing: Result<ObjectInfo, InfoError>,
) -> Result<(), UpdateMetadataError> {
    match existing {
        Ok(existing) if !existing.deleted => Err(UpdateMetadataError::new(
            UpdateMetadataErrorKind::NameAlreadyInUse,
        )),
        Ok(_) => Ok(()),
        Err(error) if error.kind() == InfoErrorKind::NotFound => Ok(()),
        Err(error) => Err(update_metadata_error(error)),
    }
}

/// `info` with the name, description, metadata and headers of `metadata`, as a new version;
/// the data, its NUID and its digest stay.
pub(crate) fn updated_info(info: ObjectInfo, metadata: UpdateMetadata) -> ObjectInfo {
    ObjectInfo {
        name: metadata.name,
        description: metadata.description,
        metadata: metadata.metadata,
        headers: metadata.headers,
        // A new version of the metadata: the time read back was the old one's.
        modified: Some(rnats_core::datetime::now()),
        ..info
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::object_store::deletion_marker;
    use crate::object_store::put::Sent;

    /// A live object `name` holding "data".
    fn object(name: &str) -> ObjectInfo {
        let mut sent = Sent::default();
        sent.count(b"data");
        sent.into_info(name.into(), "b".to_owned(), "n".to_owned(), 4)
    }

    fn renaming_to(name: &str) -> UpdateMetadata {
        UpdateMetadata {
            name: name.to_owned(),
            ..Default::default()
        }
    }

    #[test]
    fn only_a_live_object_is_updated_and_only_to_a_valid_name() {
        let kept = check_update(&object("a"), &renaming_to("a")).unwrap();
        assert!(!kept, "the same name is no rename");
        let renamed = check_update(&object("a"), &renaming_to("b")).unwrap();
        assert!(renamed);
        let invalid = check_update(&object("a"), &renaming_to("")).unwrap_err();
        assert_eq!(invalid.kind(), UpdateMetadataErrorKind::InvalidName);
        let deleted = deletion_marker(object("a"));
        let gone = check_update(&deleted, &renaming_to("a")).unwrap_err();
        assert_eq!(gone.kind(), UpdateMetadataErrorKind::NotFound);
    }

    #[test]
    fn a_rename_takes_a_free_or_deleted_name_but_not_a_live_one() {
        let taken = may_rename_over(Ok(object("b"))).unwrap_err();
        assert_eq!(taken.kind(), UpdateMetadataErrorKind::NameAlreadyInUse);
        assert!(may_rename_over(Ok(deletion_marker(object("b")))).is_ok());
        assert!(may_rename_over(Err(InfoError::new(InfoErrorKind::NotFound))).is_ok());
        let unknown = may_rename_over(Err(InfoError::new(InfoErrorKind::TimedOut))).unwrap_err();
        assert_eq!(unknown.kind(), UpdateMetadataErrorKind::TimedOut);
    }

    #[test]
    fn an_update_changes_the_description_but_not_the_data() {
        let before = object("a");
        let after = updated_info(
            before.clone(),
            UpdateMetadata {
                name: "b".to_owned(),
                description: Some("new".to_owned()),
                ..Default::default()
            },
        );
        assert_eq!(
            (after.name.as_str(), after.description.as_deref()),
            ("b", Some("new"))
        );
        assert_eq!((after.nuid, after.size, after.chunks), (before.nuid, 4, 1));
        assert_eq!(after.digest, before.digest);
    }
}
