//! Updating an object's metadata in place, renaming it when the name changes: the data stays
//! where it is, only the meta subject changes.

use super::errors::{
    InfoErrorKind, UpdateMetadataError, UpdateMetadataErrorKind, update_metadata_error,
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
        let mut info = self
            .info(object.as_ref())
            .await
            .map_err(update_metadata_error)?;
        if info.deleted {
            return Err(UpdateMetadataError::new(UpdateMetadataErrorKind::NotFound));
        }
        let old_name = info.name.clone();
        let renamed = metadata.name != old_name;
        if renamed {
            if !is_valid_object_name(&metadata.name) {
                return Err(UpdateMetadataError::new(
                    UpdateMetadataErrorKind::InvalidName,
                ));
            }
            match self.info(&metadata.name).await {
                Ok(existing) if !existing.deleted => {
                    return Err(UpdateMetadataError::new(
                        UpdateMetadataErrorKind::NameAlreadyInUse,
                    ));
                }
                Ok(_) => {}
                Err(error) if error.kind() == InfoErrorKind::NotFound => {}
                Err(error) => return Err(update_metadata_error(error)),
            }
        }
        info.name = metadata.name;
        info.description = metadata.description;
        info.metadata = metadata.metadata;
        info.headers = metadata.headers;
        // A new version of the metadata: the time read back was the old one's.
        info.modified = Some(rnats_core::datetime::now());
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
