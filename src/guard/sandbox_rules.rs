//! The `[sandbox]` table of guard.toml: whether Landlock is required, the folders a project's
//! tools must write beyond the built-in set (caches such as `~/.gradle`), the network, and Unix
//! sockets.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SandboxConfig {
    /// `false`: on a kernel without Landlock, run the command contained by policy only (the
    /// guard hook) instead of refusing to start. Default: required.
    pub required: Option<bool>,
    /// More folders the command may write beneath: `~/…` is in the home folder, a relative path
    /// is against the repository root (the main checkout).
    #[serde(default)]
    pub allow_write: Vec<String>,
    /// `false`: the usual package caches (cargo, npm, pip, Go) are not writable, so a task cannot
    /// leave code there that your later builds run; list the ones a build needs in
    /// `allow_write`. Default: writable.
    pub caches: Option<bool>,
    /// `deny`: no TCP connections or listening sockets (Landlock ABI 4 and newer). Default: allow.
    pub network: Option<Network>,
    /// `deny` (the default): no new Unix socket (`socket(AF_UNIX, …)`), so a command cannot ask a
    /// daemon outside the sandbox (tmux, D-Bus, docker, ssh-agent) to act for it. `allow`: it may.
    pub unix_sockets: Option<UnixSockets>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Network {
    Allow,
    Deny,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum UnixSockets {
    Allow,
    Deny,
}

impl SandboxConfig {
    /// `self` with `other`'s folders added; `other`'s `required` wins when it says anything.
    pub fn merge(mut self, other: SandboxConfig) -> SandboxConfig {
        self.required = other.required.or(self.required);
        self.allow_write.extend(other.allow_write);
        self.caches = other.caches.or(self.caches);
        self.network = other.network.or(self.network);
        self.unix_sockets = other.unix_sockets.or(self.unix_sockets);
        self
    }

    /// Whether the usual package caches are writable (the default).
    pub fn grants_caches(&self) -> bool {
        self.caches.unwrap_or(true)
    }

    /// Whether commands may not open TCP connections.
    pub fn denies_network(&self) -> bool {
        self.network == Some(Network::Deny)
    }

    /// Whether commands may not create Unix sockets (the default).
    pub fn denies_unix_sockets(&self) -> bool {
        self.unix_sockets != Some(UnixSockets::Allow)
    }

    /// Whether a kernel without Landlock must stop the command (the default).
    pub fn is_required(&self) -> bool {
        self.required.unwrap_or(true)
    }

    /// The `allow_write` entries as absolute paths; an entry naming `~` without a known home
    /// folder is left out (it cannot name anything).
    pub fn allow_write_paths(&self, repo_root: &Path, home: Option<&Path>) -> Vec<PathBuf> {
        self.allow_write.iter().filter_map(|entry| resolve(entry, repo_root, home)).collect()
    }
}

fn resolve(entry: &str, repo_root: &Path, home: Option<&Path>) -> Option<PathBuf> {
    if entry == "~" {
        return home.map(Path::to_owned);
    }
    if let Some(rest) = entry.strip_prefix("~/") {
        return home.map(|home| home.join(rest));
    }
    Some(repo_root.join(entry))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn later_required_wins_and_folders_add_up() {
        let project = SandboxConfig {
            required: Some(false),
            allow_write: vec!["~/.gradle".into()],
            unix_sockets: Some(UnixSockets::Allow),
            ..Default::default()
        };
        let plan = SandboxConfig {
            allow_write: vec!["build-cache".into()],
            network: Some(Network::Deny),
            ..Default::default()
        };
        let merged = project.clone().merge(plan);
        assert_eq!(merged.required, Some(false));
        assert_eq!(merged.allow_write, ["~/.gradle", "build-cache"]);
        assert!(!merged.denies_unix_sockets(), "the project's allow stands when the plan says nothing");
        let strict = SandboxConfig { required: Some(true), ..Default::default() };
        assert!(project.merge(strict).is_required());
        assert!(SandboxConfig::default().is_required());
        assert!(SandboxConfig::default().denies_unix_sockets());
    }

    #[test]
    fn home_and_repository_relative_entries_resolve() {
        let config = SandboxConfig {
            allow_write: vec!["~/.gradle".into(), "~".into(), "cache".into(), "/abs".into()],
            ..Default::default()
        };
        let paths = config.allow_write_paths(Path::new("/repo"), Some(Path::new("/home/u")));
        let expected = ["/home/u/.gradle", "/home/u", "/repo/cache", "/abs"];
        assert_eq!(paths, expected.map(PathBuf::from));
        assert_eq!(
            config.allow_write_paths(Path::new("/repo"), None),
            ["/repo/cache", "/abs"].map(PathBuf::from)
        );
    }

    #[test]
    fn guard_rules_written_for_a_run_read_back_with_their_sandbox_table() {
        // The engine writes the merged rules of a run with toml::to_string; they must load again.
        for sandbox in [
            SandboxConfig::default(),
            SandboxConfig {
                required: Some(false),
                allow_write: vec!["~/.m2".into()],
                caches: Some(false),
                network: Some(Network::Deny),
                unix_sockets: Some(UnixSockets::Allow),
            },
        ] {
            let config = super::super::GuardConfig { sandbox, ..Default::default() };
            let text = toml::to_string(&config).unwrap();
            assert_eq!(toml::from_str::<crate::guard::GuardConfig>(&text).unwrap(), config, "{text}");
        }
    }

    #[test]
    fn unknown_keys_are_refused() {
        assert!(toml::from_str::<SandboxConfig>("requird = false").is_err());
        let config: SandboxConfig = toml::from_str("required = false").unwrap();
        assert_eq!(config.required, Some(false));
        assert!(toml::from_str::<SandboxConfig>("unix_sockets = \"none\"").is_err());
        let config: SandboxConfig = toml::from_str("unix_sockets = \"allow\"").unwrap();
        assert!(!config.denies_unix_sockets());
    }
}
