use std::fmt;
use std::path::PathBuf;

use super::model::Location;

/// A plan that cannot run: where, what is wrong, and what to write instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanError {
    pub place: Place,
    pub message: String,
    pub fix: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    File(PathBuf),
    At(Location),
    /// The message starts with its place (file:line:column) already: a project file's error
    /// from the module that reads it.
    InMessage,
}

impl PlanError {
    pub fn at(location: Location, message: impl Into<String>, fix: impl Into<String>) -> Self {
        PlanError { place: Place::At(location), message: message.into(), fix: fix.into() }
    }

    pub fn file(file: PathBuf, message: impl Into<String>, fix: impl Into<String>) -> Self {
        PlanError { place: Place::File(file), message: message.into(), fix: fix.into() }
    }

    /// An error whose message names its place itself.
    pub fn placed(message: impl Into<String>, fix: impl Into<String>) -> Self {
        PlanError { place: Place::InMessage, message: message.into(), fix: fix.into() }
    }
}

impl fmt::Display for PlanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.place {
            Place::File(file) => write!(f, "{}: {}", file.display(), self.message),
            Place::At(location) => write!(f, "{location}: {}", self.message),
            Place::InMessage => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for PlanError {}
