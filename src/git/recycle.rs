//! What recycling a used worktree asks of git: make its tracked files exactly a commit's, remove
//! what is untracked (but the ignored paths it keeps), check out another commit, and list what is
//! untracked there that its ignore rules do not account for. These run in a worktree a task has
//! written, so each gets wt's safe configuration and stat checks that trust nothing the task
//! could set: ctime (which no unprivileged process can set back) is compared, and the
//! repository's own `core.trustctime`, `core.checkStat` or `core.ignoreStat` cannot weaken that.

use std::path::Path;

use super::{GitError, with_config};
use crate::process::Cmd;

/// Stat checks that notice every change a process can make to a file.
const STRICT_STAT: [(&str, &str); 3] =
    [("core.trustctime", "true"), ("core.checkStat", "default"), ("core.ignoreStat", "false")];

fn strict(dir: &Path) -> Cmd {
    with_config(Cmd::new("git").dir(dir), &STRICT_STAT)
}

/// `git update-index --refresh`: re-reads every file whose stat data differs from the index and
/// records it as unchanged when its content is the same. Files whose content differs stay
/// changed (git exits 1 for them; that is expected here).
pub fn refresh_index(dir: &Path) -> Result<(), GitError> {
    strict(dir).args(["update-index", "-q", "--refresh"]).read_unchecked()?;
    Ok(())
}

/// `git checkout --force --detach HEAD`: HEAD detached at its commit (a branch checked out there is
/// free for others), every tracked file and the index as that commit has them (what `git reset
/// --hard` does), what the index had that the commit has not removed.
pub fn detach_hard(dir: &Path) -> Result<(), GitError> {
    strict(dir)
        .args(["checkout", "--quiet", "--force", "--detach", "--no-recurse-submodules", "HEAD", "--"])
        .read()?;
    Ok(())
}

/// `git clean -ff -d -x -e <keep>…`: removes every untracked file and folder, ignored or not,
/// repositories nested in them too, except what a `keep` pattern matches. Fails when anything it
/// should remove is still there (git exits 1 when an unlink fails).
pub fn clean_except(dir: &Path, keep: &[String]) -> Result<(), GitError> {
    let mut cmd = strict(dir).args(["clean", "-f", "-f", "-d", "-x", "-q"]);
    for pattern in keep {
        cmd = cmd.arg("-e").arg(pattern);
    }
    cmd.read()?;
    Ok(())
}

/// `git checkout --detach --force <commitish>`: HEAD detached at it, the files that differ
/// written; the index becomes the commit's.
pub fn checkout_detached(dir: &Path, commitish: &str) -> Result<(), GitError> {
    strict(dir)
        .args(["checkout", "--quiet", "--detach", "--force", "--no-recurse-submodules", commitish, "--"])
        .read()?;
    Ok(())
}

/// What the worktree `dir` holds untracked that the ignore rules of its commit do not account
/// for: paths git does not ignore (a folder of them once), and `.gitignore` files git read that
/// are untracked themselves, which make their own folder look ignored. A folder ignored as a
/// whole is one path to git, which never looks inside: the files of kept build output are not
/// listed.
pub fn unaccounted_untracked(dir: &Path) -> Result<Vec<String>, GitError> {
    let list = |extra: &str| -> Result<Vec<String>, GitError> {
        let out = strict(dir)
            .args(["ls-files", "-z", "--others", "--exclude-standard", "--directory", extra])
            .read()?;
        Ok(out.stdout.split('\0').filter(|path| !path.is_empty()).map(str::to_owned).collect())
    };
    let mut found = list("--no-empty-directory")?;
    let ignore_files = list("--ignored")?.into_iter().filter(|path| {
        Path::new(path).file_name().is_some_and(|name| name == ".gitignore") && !path.ends_with('/')
    });
    found.extend(ignore_files);
    Ok(found)
}
