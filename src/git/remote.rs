//! One branch against a remote: what the remote holds now (`git ls-remote`, which fetches
//! nothing), fetching one branch into its remote-tracking ref, pushing one branch with its
//! `--porcelain` answer parsed, and moving or deleting a local branch whose old value is known.
//! A push is never a blind force: it is leased on one exact commit, or on the branch being
//! absent.

use std::path::Path;

use super::{GitError, git};

/// What a push may replace on the remote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lease<'a> {
    /// The remote branch must not exist (`--force-with-lease=<ref>:`).
    Absent,
    /// The remote branch must be exactly this commit (`--force-with-lease=<ref>:<sha>`).
    Exactly(&'a str),
}

/// What the remote did with a push, from its `--porcelain` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pushed {
    /// `*`: the branch was made on the remote.
    New,
    /// ` `: a fast-forward.
    FastForward,
    /// `+`: a forced update the lease allowed.
    Forced,
    /// `=`: the remote already had it.
    UpToDate,
    /// `!` with `[rejected] (stale info | fetch first | non-fast-forward)`: the remote branch is
    /// not what this push expected: someone else pushed.
    RemoteMoved { summary: String },
    /// `!` for any other reason (`[remote rejected] (hook declined)`, …).
    Rejected { summary: String },
}

/// The commit `branch` is at on `remote` now (None: the remote has no such branch). Asks the
/// remote; changes nothing here.
pub fn remote_branch(dir: &Path, remote: &str, branch: &str) -> Result<Option<String>, GitError> {
    let reference = format!("refs/heads/{branch}");
    let out = git(dir).args(["ls-remote", "--heads", remote, &reference]).read()?;
    // ls-remote matches patterns by their tail: keep the exact name only.
    Ok(out.stdout.lines().find_map(|line| {
        let (sha, name) = line.split_once('\t')?;
        (name == reference).then(|| sha.to_owned())
    }))
}

/// Fetches `branch` of `remote` into `refs/remotes/<remote>/<branch>` (and nothing else: no
/// tags, no other branch, no local branch).
pub fn fetch_branch(dir: &Path, remote: &str, branch: &str) -> Result<(), GitError> {
    let refspec = format!("+refs/heads/{branch}:refs/remotes/{remote}/{branch}");
    git(dir).args(["fetch", "--quiet", "--no-tags", "--no-write-fetch-head", remote, &refspec]).read()?;
    Ok(())
}

/// Pushes the local `branch` to the same name on `remote` with `lease`, and records the remote
/// as its upstream (`branch.<b>.remote`, `branch.<b>.merge`). A refused push is an answer
/// ([`Pushed::RemoteMoved`], [`Pushed::Rejected`]), not an error; an error is a push
/// that never reached a verdict (no such remote, no network).
pub fn push_branch(dir: &Path, remote: &str, branch: &str, lease: Lease) -> Result<Pushed, GitError> {
    let reference = format!("refs/heads/{branch}");
    let mut cmd = git(dir).args(["push", "--porcelain", "--set-upstream"]);
    match lease {
        Lease::Absent => cmd = cmd.arg(format!("--force-with-lease={reference}:")),
        Lease::Exactly(sha) => cmd = cmd.arg(format!("--force-with-lease={reference}:{sha}")),
    }
    cmd = cmd.args([remote, &format!("{reference}:{reference}")]);
    let out = cmd.read_unchecked()?;
    match parse_porcelain(&out.stdout, &reference) {
        Some(pushed) => Ok(pushed),
        None => Err(crate::process::ProcessError::Failed {
            command: cmd.display(),
            status: out.status,
            stderr: out.stderr,
        }
        .into()),
    }
}

/// The verdict on `reference` in `git push --porcelain` output: `<flag>\t<from>:<to>\t<summary>`.
fn parse_porcelain(stdout: &str, reference: &str) -> Option<Pushed> {
    let wanted = format!("{reference}:{reference}");
    stdout.lines().find_map(|line| {
        let mut fields = line.splitn(3, '\t');
        let (flag, refs, summary) = (fields.next()?, fields.next()?, fields.next().unwrap_or(""));
        if refs != wanted {
            return None;
        }
        let summary = summary.trim().to_owned();
        Some(match flag {
            "*" => Pushed::New,
            " " => Pushed::FastForward,
            "+" => Pushed::Forced,
            "=" => Pushed::UpToDate,
            "!" if is_someone_elses(&summary) => Pushed::RemoteMoved { summary },
            _ => Pushed::Rejected { summary },
        })
    })
}

/// The reasons git gives when the remote branch is not what the push expected (git's
/// `transport.c`, `print_ref_status`): a lease that no longer holds, or commits there that the
/// push lacks.
fn is_someone_elses(summary: &str) -> bool {
    ["[rejected] (stale info)", "[rejected] (fetch first)", "[rejected] (non-fast-forward)"]
        .iter()
        .any(|reason| summary.starts_with(reason))
}

/// Points the local `branch` at `new` only if it is still at `old` (a fast-forward decided by
/// the caller), with `message` in its reflog. Never for a branch checked out somewhere: its
/// worktree's files would no longer match it.
pub fn move_branch(root: &Path, branch: &str, new: &str, old: &str, message: &str) -> Result<(), GitError> {
    git(root).args(["update-ref", "-m", message, &format!("refs/heads/{branch}"), new, old]).read()?;
    Ok(())
}

/// Deletes the local `branch` (`git branch -D`, which refuses one checked out anywhere, and
/// drops its upstream settings with it).
pub fn delete_branch(root: &Path, branch: &str) -> Result<(), GitError> {
    git(root).args(["branch", "--quiet", "-D", branch]).read()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const B: &str = "refs/heads/b";

    #[test]
    fn porcelain_verdicts_are_read_for_the_pushed_ref_only() {
        let stale = "To /r/o.git\n!\trefs/heads/b:refs/heads/b\t[rejected] (stale info)\nDone\n";
        assert!(matches!(parse_porcelain(stale, B), Some(Pushed::RemoteMoved { .. })));
        let fetch_first = "!\trefs/heads/b:refs/heads/b\t[rejected] (fetch first)\n";
        assert!(matches!(parse_porcelain(fetch_first, B), Some(Pushed::RemoteMoved { .. })));
        let hook = "!\trefs/heads/b:refs/heads/b\t[remote rejected] (pre-receive hook declined)\n";
        assert_eq!(
            parse_porcelain(hook, B),
            Some(Pushed::Rejected { summary: "[remote rejected] (pre-receive hook declined)".into() })
        );
        let forced = "+\trefs/heads/b:refs/heads/b\t61d4fa5...7213099 (forced update)\n";
        assert_eq!(parse_porcelain(forced, B), Some(Pushed::Forced));
        assert_eq!(
            parse_porcelain(" \trefs/heads/b:refs/heads/b\t8db6ed9..ed62e08\n", B),
            Some(Pushed::FastForward)
        );
        assert_eq!(parse_porcelain("*\trefs/heads/b:refs/heads/b\t[new branch]\n", B), Some(Pushed::New));
        assert_eq!(
            parse_porcelain("=\trefs/heads/b:refs/heads/b\t[up to date]\n", B),
            Some(Pushed::UpToDate)
        );
        assert_eq!(parse_porcelain("*\trefs/heads/bb:refs/heads/bb\t[new branch]\n", B), None);
        assert_eq!(parse_porcelain("", B), None);
    }
}
