//! A worktree's git files as its agent may have left them, checked before wt runs git there.
//!
//! A team agent's sandbox lets it write its worktree (the `.git` link too), its admin folder
//! `<common>/worktrees/<id>` (HEAD, index, logs, a rebase's state), `refs/heads` and
//! `logs/refs/heads`, since a commit writes them. wt's git and git-spice run outside the sandbox,
//! in that worktree, for `wt push`, `pr`, `rebase`, and for the lead's `rebase`, `sync` and
//! `cleanup` of the branches around it. Left unchecked:
//!
//! - a `.git` link (or the admin folder's `commondir`) leading to a repository the agent made
//!   gives them that repository's config, and with it programs of the agent's choice
//!   (`remote.<name>.uploadpack`, `core.sshCommand`, filter drivers);
//! - a symlink in those folders has git write through it (a reflog is appended to), a fifo
//!   stops it for ever;
//! - a rebase's to-do list with an `exec` line is run by `git rebase --continue`.
//!
//! So before wt runs git in such a worktree: `.git` is a file naming `<common>/worktrees/<id>`,
//! whose `commondir` leads back to the repository and whose `gitdir` to that `.git`, with no
//! `config.worktree`; the admin folder, `refs/heads` and `logs/refs/heads` hold only plain files
//! and folders; and a rebase under way rebases the worktree's own branch, picking commits with
//! git's own merge strategy and doing nothing else (a rebase git-spice starts never does more).
//! Anything else refuses the command, naming what was found. wt repairs nothing there: the
//! agent's work may be in the worktree, and the lead decides.

use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

use super::TeamError;

/// Refuses (`TeamError::Tampered`) when the git files of `worktree`, which has `branch` checked
/// out (or is rebasing it), are not as git and git-spice leave them; `common` is the
/// repository's git folder.
pub fn check(common: &Path, worktree: &Path, branch: &str) -> Result<(), TeamError> {
    match problem(common, worktree, branch) {
        Some(found) => Err(TeamError::Tampered { worktree: worktree.to_owned(), found }),
        None => Ok(()),
    }
}

fn problem(common: &Path, worktree: &Path, branch: &str) -> Option<String> {
    let common = match common.canonicalize() {
        Ok(common) => common,
        Err(err) => return Some(format!("the repository's git folder {}: {err}", common.display())),
    };
    let admin = match linked_admin(&common, worktree) {
        Ok(admin) => admin,
        Err(found) => return Some(found),
    };
    let worktree_config = admin.join("config.worktree");
    if std::fs::symlink_metadata(&worktree_config).is_ok() {
        return Some(format!("{} exists (git reads it as the worktree's config)", worktree_config.display()));
    }
    let folders =
        [admin.clone(), common.join("refs").join("heads"), common.join("logs").join("refs").join("heads")];
    folders.iter().find_map(|folder| special_file(folder)).or_else(|| rebase_problem(&admin, branch))
}

/// The admin folder `<common>/worktrees/<id>` the worktree's `.git` file names, when the links
/// both ways are intact; else what is wrong.
fn linked_admin(common: &Path, worktree: &Path) -> Result<PathBuf, String> {
    let dot_git = worktree.join(".git");
    let link = plain_text(&dot_git)?;
    let named = link
        .trim()
        .strip_prefix("gitdir:")
        .map(|path| worktree.join(path.trim()))
        .ok_or_else(|| format!("{} does not start with `gitdir:`", dot_git.display()))?;
    let admin = named
        .canonicalize()
        .map_err(|err| format!("{} names {}: {err}", dot_git.display(), named.display()))?;
    if admin.parent() != Some(common.join("worktrees").as_path()) {
        return Err(format!(
            "{} names {}, which is not a worktree's folder of the repository ({}/worktrees/…)",
            dot_git.display(),
            admin.display(),
            common.display()
        ));
    }
    let commondir = admin.join("commondir");
    let back = plain_text(&commondir)?;
    if admin.join(back.trim()).canonicalize().ok().as_deref() != Some(common) {
        return Err(format!(
            "{} names {}, not the repository's git folder",
            commondir.display(),
            back.trim()
        ));
    }
    let gitdir = admin.join("gitdir");
    let registered = plain_text(&gitdir)?;
    if Path::new(registered.trim()).canonicalize().ok() != dot_git.canonicalize().ok() {
        return Err(format!("{} names {}, not {}", gitdir.display(), registered.trim(), dot_git.display()));
    }
    Ok(admin)
}

/// The text of the regular file at `path` (a symlink, fifo or folder there is an error: reading
/// a fifo would wait for ever).
fn plain_text(path: &Path) -> Result<String, String> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.is_file() => {
            std::fs::read_to_string(path).map_err(|err| format!("{}: {err}", path.display()))
        }
        Ok(_) => Err(format!("{} is not a plain file", path.display())),
        Err(err) => Err(format!("{}: {err}", path.display())),
    }
}

/// The first symlink, fifo, socket or device below `folder`, described.
fn special_file(folder: &Path) -> Option<String> {
    let mut pending = vec![folder.to_owned()];
    while let Some(folder) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else { continue };
        for entry in entries.flatten() {
            let Ok(kind) = entry.file_type() else { continue };
            let what = if kind.is_dir() {
                pending.push(entry.path());
                continue;
            } else if kind.is_symlink() {
                "symlink"
            } else if kind.is_fifo() {
                "fifo"
            } else if kind.is_socket() {
                "socket"
            } else if kind.is_block_device() || kind.is_char_device() {
                "device"
            } else {
                continue;
            };
            return Some(format!(
                "{} is a {what}, which git would write through or wait on",
                entry.path().display()
            ));
        }
    }
    None
}

/// What is wrong with a rebase under way in the admin folder, if one is: git-spice rebases a
/// worktree's own branch, by git's merge strategy, picking its commits.
fn rebase_problem(admin: &Path, branch: &str) -> Option<String> {
    for state in ["rebase-merge", "rebase-apply"].map(|name| admin.join(name)) {
        if std::fs::symlink_metadata(&state).is_err() {
            continue;
        }
        let head_name = state.join("head-name");
        let head = plain_text(&head_name).unwrap_or_default();
        if head.trim() != format!("refs/heads/{branch}") {
            return Some(format!(
                "{} says the rebase is of `{}`, not of {branch}",
                head_name.display(),
                head.trim()
            ));
        }
        let todo_file = state.join("git-rebase-todo");
        let todo = match std::fs::symlink_metadata(&todo_file) {
            Ok(_) => match plain_text(&todo_file) {
                Ok(todo) => todo,
                Err(found) => return Some(found),
            },
            Err(_) => String::new(),
        };
        let step = todo.lines().map(str::trim).find(|line| {
            !line.is_empty()
                && !line.starts_with('#')
                && !matches!(line.split_whitespace().next(), Some("pick" | "p"))
        });
        if let Some(step) = step {
            return Some(format!(
                "{} holds `{step}`: a rebase git-spice starts only picks commits",
                todo_file.display()
            ));
        }
        let strategy_file = state.join("strategy");
        if let Ok(strategy) = plain_text(&strategy_file)
            && !matches!(strategy.trim(), "ort" | "recursive")
        {
            return Some(format!(
                "{} names the merge strategy `{}`, a program git would look for",
                strategy_file.display(),
                strategy.trim()
            ));
        }
    }
    None
}
