//! Links (ADR-20): objects without data of their own that point to an object (in this
//! bucket or another) or to a whole bucket. [`ObjectStore::get`] follows them.

use std::collections::HashMap;

use super::ObjectStore;
use super::errors::{AddLinkError, AddLinkErrorKind, InfoError, InfoErrorKind};
use super::info::{AsObjectInfo, ObjectInfo, ObjectLink, ObjectOptions};

impl ObjectStore {
    /// Adds `name`, a link to the object `object` (an [`ObjectInfo`] or an
    /// [`Object`](super::Object), from this bucket or another). An existing link of that
    /// name is replaced; an existing object is not.
    ///
    /// ```no_run
    /// # async fn run(bucket: rnats_jetstream::object_store::ObjectStore) -> Result<(), rnats_core::Error> {
    /// let target = bucket.info("reports/2024.pdf").await?;
    /// bucket.add_link("reports/latest.pdf", &target).await?;
    /// # Ok(()) }
    /// ```
    pub async fn add_link<T, O>(&self, name: T, object: O) -> Result<ObjectInfo, AddLinkError>
    where
        T: ToString,
        O: AsObjectInfo,
    {
        let name = name.to_string();
        let object = object.as_info();
        let link = object_link(&name, object)?;
        self.store_link(name, link).await
    }

    /// Adds `name`, a link to the whole bucket `bucket`. An existing link of that name is
    /// replaced; an existing object is not.
    pub async fn add_bucket_link<T: ToString, U: ToString>(
        &self,
        name: T,
        bucket: U,
    ) -> Result<ObjectInfo, AddLinkError> {
        let name = name.to_string();
        let link = bucket_link(&name, bucket.to_string())?;
        self.store_link(name, link).await
    }

    /// Stores the link `name` unless a live object (not a link) has that name.
    async fn store_link(&self, name: String, link: ObjectLink) -> Result<ObjectInfo, AddLinkError> {
        may_link_over(self.info(&name).await)?;
        let info = link_info(name, self.name.clone(), link);
        self.publish_meta(&info)
            .await
            .map_err(|error| AddLinkError::with_source(AddLinkErrorKind::PublishMetadata, error))?;
        Ok(info)
    }
}

/// Whether a link may take a name whose current metadata is `existing`: not over a live
/// object that is not a link. For the async and blocking stores alike.
pub(crate) fn may_link_over(existing: Result<ObjectInfo, InfoError>) -> Result<(), AddLinkError> {
    match existing {
        Ok(existing) if !existing.deleted && !existing.is_link() => {
            Err(AddLinkError::new(AddLinkErrorKind::AlreadyExists))
        }
        Ok(_) => Ok(()),
        Err(error) if error.kind() == InfoErrorKind::NotFound => Ok(()),
        Err(error) => Err(AddLinkError::with_source(AddLinkErrorKind::Other, error)),
    }
}

/// The metadata of the link `name` in `bucket`, pointing at `link`.
pub(crate) fn link_info(name: String, bucket: String, link: ObjectLink) -> ObjectInfo {
    ObjectInfo {
        name,
        description: None,
        metadata: HashMap::new(),
        headers: None,
        options: Some(ObjectOptions {
            link: Some(link),
            max_chunk_size: None,
        }),
        bucket,
        nuid: rnats_core::id::next(),
        size: 0,
        chunks: 0,
        modified: Some(rnats_core::datetime::now()),
        digest: None,
        deleted: false,
    }
}

/// The link a new link `name` holds to `object`, which must be a live object, not a link.
pub(crate) fn object_link(name: &str, object: &ObjectInfo) -> Result<ObjectLink, AddLinkError> {
    if name.is_empty() {
        return Err(AddLinkError::new(AddLinkErrorKind::EmptyName));
    }
    if object.name.is_empty() {
        return Err(AddLinkError::new(AddLinkErrorKind::ObjectRequired));
    }
    if object.deleted {
        return Err(AddLinkError::new(AddLinkErrorKind::Deleted));
    }
    if object.is_link() {
        return Err(AddLinkError::new(AddLinkErrorKind::LinkToLink));
    }
    Ok(ObjectLink {
        name: Some(object.name.clone()),
        bucket: object.bucket.clone(),
    })
}

/// The link a new link `name` holds to the whole bucket `bucket`.
pub(crate) fn bucket_link(name: &str, bucket: String) -> Result<ObjectLink, AddLinkError> {
    if name.is_empty() {
        return Err(AddLinkError::new(AddLinkErrorKind::EmptyName));
    }
    Ok(ObjectLink { name: None, bucket })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::object_store::deletion_marker;
    use crate::object_store::put::Sent;

    /// A live object `name` in the bucket `b`.
    fn object(name: &str) -> ObjectInfo {
        Sent::default().into_info(name.into(), "b".to_owned(), "n".to_owned(), 1)
    }

    #[test]
    fn a_link_points_at_a_live_object_not_at_a_deleted_one_or_a_link() {
        let link = object_link("l", &object("a")).unwrap();
        assert_eq!(
            (link.name.as_deref(), link.bucket.as_str()),
            (Some("a"), "b")
        );
        let deleted = object_link("l", &deletion_marker(object("a"))).unwrap_err();
        assert_eq!(deleted.kind(), AddLinkErrorKind::Deleted);
        let to_link = link_info("m".to_owned(), "b".to_owned(), link);
        let twice = object_link("l", &to_link).unwrap_err();
        assert_eq!(twice.kind(), AddLinkErrorKind::LinkToLink);
        let unnamed = object_link("", &object("a")).unwrap_err();
        assert_eq!(unnamed.kind(), AddLinkErrorKind::EmptyName);
    }

    #[test]
    fn a_bucket_link_needs_a_name_and_names_no_object() {
        let link = bucket_link("l", "other".to_owned()).unwrap();
        assert_eq!((link.name, link.bucket.as_str()), (None, "other"));
        let unnamed = bucket_link("", "other".to_owned()).unwrap_err();
        assert_eq!(unnamed.kind(), AddLinkErrorKind::EmptyName);
    }

    #[test]
    fn a_link_replaces_a_link_or_a_deleted_object_but_not_a_live_one() {
        let taken = may_link_over(Ok(object("a"))).unwrap_err();
        assert_eq!(taken.kind(), AddLinkErrorKind::AlreadyExists);
        assert!(may_link_over(Ok(deletion_marker(object("a")))).is_ok());
        let link = link_info(
            "l".to_owned(),
            "b".to_owned(),
            bucket_link("l", "c".into()).unwrap(),
        );
        assert!(may_link_over(Ok(link)).is_ok());
        assert!(may_link_over(Err(InfoError::new(InfoErrorKind::NotFound))).is_ok());
    }
}
