//! Where the usual tools keep their caches (writable under the sandbox) and their toolchains
//! (readable when reads are denied outside), found from the environment and the home folder the
//! way each tool finds them, without starting any tool.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::PathBuf;

/// A folder and why it is in the set, for debug lines.
pub type Named = (PathBuf, &'static str);

/// The variables that decide where caches and toolchains are (a snapshot, for tests).
#[derive(Debug, Clone, Default)]
pub struct HostEnv {
    vars: BTreeMap<String, OsString>,
}

impl HostEnv {
    pub fn current() -> HostEnv {
        HostEnv::from_vars(
            std::env::vars_os().filter_map(|(key, value)| Some((key.into_string().ok()?, value))),
        )
    }

    pub fn from_vars(vars: impl IntoIterator<Item = (String, OsString)>) -> HostEnv {
        HostEnv { vars: vars.into_iter().collect() }
    }

    /// A variable holding an absolute path; empty or relative values are ignored, as the tools
    /// themselves ignore them.
    pub fn path(&self, key: &str) -> Option<PathBuf> {
        let value = PathBuf::from(self.vars.get(key)?);
        value.is_absolute().then_some(value)
    }

    pub fn home(&self) -> Option<PathBuf> {
        self.path("HOME")
    }

    fn in_home(&self, relative: &str) -> Option<PathBuf> {
        self.home().map(|home| home.join(relative))
    }

    fn var_or_home(&self, key: &str, relative: &str) -> Option<PathBuf> {
        self.path(key).or_else(|| self.in_home(relative))
    }

    fn cargo_home(&self) -> Option<PathBuf> {
        self.var_or_home("CARGO_HOME", ".cargo")
    }

    /// `$XDG_CACHE_HOME`, else `~/.cache`.
    fn cache_home(&self) -> Option<PathBuf> {
        self.var_or_home("XDG_CACHE_HOME", ".cache")
    }

    /// The first entry of `$GOPATH`, else `~/go`.
    fn go_path(&self) -> Option<PathBuf> {
        let first = self.vars.get("GOPATH").and_then(|list| std::env::split_paths(list).next());
        first.filter(|path| path.is_absolute()).or_else(|| self.in_home("go"))
    }
}

/// The package caches builds write: cargo's registry, git checkouts and lock files (not `bin`,
/// which is on PATH, nor `config.toml`, which could point cargo at another compiler; its
/// `.global-cache` database needs journal files beside it, and cargo goes on without it), npm's,
/// pip's, and Go's build and module caches.
pub fn cache_folders(env: &HostEnv) -> Vec<Named> {
    let cargo = env.cargo_home();
    let candidates = [
        (cargo.as_ref().map(|c| c.join("registry")), "cargo's registry cache"),
        (cargo.as_ref().map(|c| c.join("git")), "cargo's git cache"),
        // Empty lock files: without them cargo still builds, but unlocked against a parallel task.
        (cargo.as_ref().map(|c| c.join(".package-cache")), "cargo's lock between concurrent builds"),
        (cargo.as_ref().map(|c| c.join(".package-cache-mutate")), "cargo's lock between concurrent builds"),
        (env.path("npm_config_cache").or_else(|| env.in_home(".npm")), "npm's cache"),
        (env.cache_home().map(|c| c.join("pip")), "pip's cache"),
        (env.path("GOCACHE").or_else(|| env.cache_home().map(|c| c.join("go-build"))), "Go's build cache"),
        (env.path("GOMODCACHE").or_else(|| env.go_path().map(|g| g.join("pkg/mod"))), "Go's module cache"),
    ];
    candidates.into_iter().filter_map(|(path, why)| Some((path?, why))).collect()
}

/// What compilers, interpreters and git read from the home folder: toolchains, package
/// installs and git's own configuration (git stops when it cannot read it).
pub fn toolchain_folders(env: &HostEnv) -> Vec<Named> {
    let xdg_config = env.var_or_home("XDG_CONFIG_HOME", ".config");
    let candidates = [
        (env.var_or_home("RUSTUP_HOME", ".rustup"), "rustup's toolchains"),
        (env.cargo_home(), "cargo's home"),
        (env.path("GOROOT"), "the Go root"),
        (env.go_path(), "the Go path"),
        (env.var_or_home("NVM_DIR", ".nvm"), "nvm's Node versions"),
        (env.var_or_home("VOLTA_HOME", ".volta"), "Volta's Node versions"),
        (env.var_or_home("PYENV_ROOT", ".pyenv"), "pyenv's Python versions"),
        (env.path("VIRTUAL_ENV"), "the active Python virtualenv"),
        (env.in_home(".local"), "user-installed programs and packages"),
        (env.in_home(".gitconfig"), "git's global configuration"),
        (xdg_config.map(|c| c.join("git")), "git's global configuration"),
        (env.path("GIT_CONFIG_GLOBAL"), "git's global configuration"),
    ];
    candidates.into_iter().filter_map(|(path, why)| Some((path?, why))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(vars: &[(&str, &str)]) -> HostEnv {
        HostEnv::from_vars(vars.iter().map(|(k, v)| (k.to_string(), OsString::from(v))))
    }

    fn paths(named: Vec<Named>) -> Vec<PathBuf> {
        named.into_iter().map(|(path, _)| path).collect()
    }

    #[test]
    fn defaults_are_in_the_home_folder() {
        let caches = paths(cache_folders(&env(&[("HOME", "/h")])));
        let expected = [
            "/h/.cargo/registry",
            "/h/.cargo/git",
            "/h/.cargo/.package-cache",
            "/h/.cargo/.package-cache-mutate",
            "/h/.npm",
            "/h/.cache/pip",
            "/h/.cache/go-build",
            "/h/go/pkg/mod",
        ];
        assert_eq!(caches, expected.map(PathBuf::from));
    }

    #[test]
    fn variables_move_the_caches() {
        let caches = paths(cache_folders(&env(&[
            ("HOME", "/h"),
            ("CARGO_HOME", "/c"),
            ("XDG_CACHE_HOME", "/x"),
            ("GOPATH", "/g1:/g2"),
            ("npm_config_cache", "/n"),
        ])));
        let expected = [
            "/c/registry",
            "/c/git",
            "/c/.package-cache",
            "/c/.package-cache-mutate",
            "/n",
            "/x/pip",
            "/x/go-build",
            "/g1/pkg/mod",
        ];
        assert_eq!(caches, expected.map(PathBuf::from));
        let go = paths(cache_folders(&env(&[("GOCACHE", "/gc"), ("GOMODCACHE", "/gm")])));
        assert_eq!(go, ["/gc", "/gm"].map(PathBuf::from));
    }

    #[test]
    fn relative_or_empty_variables_are_ignored() {
        let caches = paths(cache_folders(&env(&[("HOME", "/h"), ("CARGO_HOME", "rel"), ("GOCACHE", "")])));
        assert!(caches.contains(&PathBuf::from("/h/.cargo/registry")), "{caches:?}");
        assert!(caches.contains(&PathBuf::from("/h/.cache/go-build")), "{caches:?}");
        assert!(cache_folders(&env(&[])).is_empty());
    }

    #[test]
    fn toolchains_include_git_configuration() {
        let toolchains = paths(toolchain_folders(&env(&[("HOME", "/h"), ("GOROOT", "/usr/local/go")])));
        for expected in ["/h/.rustup", "/h/.cargo", "/usr/local/go", "/h/.gitconfig", "/h/.config/git"] {
            assert!(toolchains.contains(&PathBuf::from(expected)), "{expected} in {toolchains:?}");
        }
    }
}
