//! Queue group names used by `SUB` to load-balance subscribers.

use std::fmt;
use std::str::FromStr;

/// A validated queue group name: non-empty, with no whitespace or control
/// characters (it travels as one space-separated `SUB` argument).
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct QueueGroup(String);

impl QueueGroup {
    /// Returns the queue group name as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Why a string is not a valid [`QueueGroup`].
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QueueGroupError {
    /// The name has no characters at all.
    #[error("queue group name is empty")]
    Empty,
    /// The name contains whitespace or a control character.
    #[error("queue group name contains whitespace or a control character")]
    InvalidCharacter,
}

fn validate(s: &str) -> Result<(), QueueGroupError> {
    if s.is_empty() {
        return Err(QueueGroupError::Empty);
    }
    if s.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(QueueGroupError::InvalidCharacter);
    }
    Ok(())
}

impl FromStr for QueueGroup {
    type Err = QueueGroupError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        validate(s)?;
        Ok(QueueGroup(s.to_owned()))
    }
}

impl TryFrom<&str> for QueueGroup {
    type Error = QueueGroupError;

    fn try_from(s: &str) -> Result<Self, Self::Error> {
        s.parse()
    }
}

impl TryFrom<String> for QueueGroup {
    type Error = QueueGroupError;

    fn try_from(s: String) -> Result<Self, Self::Error> {
        validate(&s)?;
        Ok(QueueGroup(s))
    }
}

impl AsRef<str> for QueueGroup {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for QueueGroup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for QueueGroup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validates() {
        assert_eq!("workers".parse::<QueueGroup>().unwrap().as_str(), "workers");
        assert_eq!(QueueGroup::try_from(""), Err(QueueGroupError::Empty));
        assert_eq!(
            QueueGroup::try_from("a b".to_owned()),
            Err(QueueGroupError::InvalidCharacter)
        );
        assert_eq!(
            QueueGroup::try_from("a\r\n"),
            Err(QueueGroupError::InvalidCharacter)
        );
    }
}
