//! A git remote's URL as git-spice reads it to pick a forge: the host (and port) it is matched
//! on, and the repository path that names `owner/name` (git-spice's `giturl` and
//! `forge.SplitRepositoryPath`, v0.31.2).

/// The parts of a remote URL a forge is chosen by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteUrl {
    pub host: String,
    pub port: Option<u16>,
    /// The path after the host, without a leading `/` (`alice/app.git`).
    pub path: String,
}

impl RemoteUrl {
    /// `scheme://[user@]host[:port]/path` (http, https, ssh, git, …) or the scp-like
    /// `[user@]host:path`; None for a local path or `file://` (no forge serves those).
    pub fn parse(url: &str) -> Option<RemoteUrl> {
        let url = url.trim();
        if let Some((scheme, rest)) = url.split_once("://") {
            if scheme.eq_ignore_ascii_case("file") {
                return None;
            }
            let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
            let (host, port) = host_and_port(authority.rsplit('@').next()?)?;
            return Some(RemoteUrl { host, port, path: path.to_owned() });
        }
        // scp-like: a colon before any slash; `./a:b` and `/a:b` are local paths.
        let (authority, path) = url.split_once(':')?;
        if authority.contains('/') || authority.is_empty() {
            return None;
        }
        let host = authority.rsplit('@').next()?.to_owned();
        Some(RemoteUrl { host, port: None, path: path.trim_start_matches('/').to_owned() })
    }

    /// `owner` and `name` from the path, as git-spice splits it: trailing `/` and `.git` dropped,
    /// cut at the first `/`.
    pub fn owner_and_name(&self) -> Option<(String, String)> {
        let path = self.path.trim_start_matches('/').trim_end_matches('/');
        let path = path.strip_suffix(".git").unwrap_or(path);
        let (owner, name) = path.split_once('/')?;
        (!owner.is_empty() && !name.is_empty()).then(|| (owner.to_owned(), name.to_owned()))
    }

    /// Whether this remote belongs to the forge at `base` (its web URL): the same host or one
    /// under it (`ssh.github.com` for `github.com`), and the same port when `base` names one.
    pub fn matches(&self, base: &str) -> bool {
        let Some(base) = RemoteUrl::parse(base).filter(|_| base.contains("://")) else { return false };
        let host = self.host.to_ascii_lowercase();
        let base_host = base.host.to_ascii_lowercase();
        let host_matches = host == base_host || host.ends_with(&format!(".{base_host}"));
        host_matches && (base.port.is_none() || base.port == self.port)
    }
}

/// `host`, `host:port`, `[v6]`, `[v6]:port`.
fn host_and_port(authority: &str) -> Option<(String, Option<u16>)> {
    let (host, port) = match authority.strip_prefix('[') {
        Some(rest) => {
            let (host, after) = rest.split_once(']')?;
            (host, after.strip_prefix(':'))
        }
        None => match authority.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        },
    };
    let port = match port {
        Some(port) if !port.is_empty() => Some(port.parse().ok()?),
        _ => None,
    };
    (!host.is_empty()).then(|| (host.to_owned(), port))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_forms_git_accepts_give_host_port_and_repository() {
        let url = RemoteUrl::parse("http://127.0.0.1:37015/alice/app.git").unwrap();
        assert_eq!((url.host.as_str(), url.port), ("127.0.0.1", Some(37015)));
        assert_eq!(url.owner_and_name(), Some(("alice".into(), "app".into())));
        let scp = RemoteUrl::parse("git@github.com:octo/cat.git").unwrap();
        assert_eq!(
            (scp.host.as_str(), scp.owner_and_name()),
            ("github.com", Some(("octo".into(), "cat".into())))
        );
        let ssh = RemoteUrl::parse("ssh://git@ssh.github.com:443/octo/cat/").unwrap();
        assert_eq!((ssh.host.as_str(), ssh.port), ("ssh.github.com", Some(443)));
        assert_eq!(ssh.owner_and_name(), Some(("octo".into(), "cat".into())));
        for local in ["/srv/repo.git", "../repo", "file:///srv/repo.git", "./a:b"] {
            assert_eq!(RemoteUrl::parse(local), None, "{local}");
        }
        assert_eq!(RemoteUrl::parse("https://github.com/justone").unwrap().owner_and_name(), None);
    }

    #[test]
    fn a_forge_matches_its_host_its_subdomains_and_its_port_when_it_names_one() {
        let remote = |url: &str| RemoteUrl::parse(url).unwrap();
        assert!(remote("git@github.com:o/r").matches("https://github.com"));
        assert!(remote("ssh://git@ssh.github.com:443/o/r").matches("https://github.com"));
        assert!(!remote("https://notgithub.com/o/r").matches("https://github.com"));
        assert!(remote("http://127.0.0.1:37015/a/b.git").matches("http://127.0.0.1:37015"));
        assert!(!remote("http://127.0.0.1:40000/a/b.git").matches("http://127.0.0.1:37015"));
        assert!(!remote("http://127.0.0.1:37015/a/b.git").matches(""));
    }
}
