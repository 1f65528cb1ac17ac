//! The envelope of every JetStream API reply: the value asked for, or an error.

use serde::Deserialize;

use crate::errors::Error;

/// A JetStream API reply: `{"error": {..}}` or the value itself.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum Response<T> {
    /// The server refused, with its error.
    Err {
        /// What the server said.
        error: Error,
    },
    /// The value asked for.
    Ok(T),
}

impl<T> Response<T> {
    /// The value, or the server's error.
    pub fn into_result(self) -> Result<T, Error> {
        match self {
            Response::Ok(value) => Ok(value),
            Response::Err { error } => Err(error),
        }
    }
}
