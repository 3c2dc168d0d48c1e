//! A case again through the production path: `wt run` of a one-task plan whose task runs it
//! (the script agent, inside `wt sandbox`, then the check after the task). The task's worktree
//! is then `.worktrees/<runId>-main` on `<runId>-task-1-1-feature`.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use super::layout::{Layout, WORKTREE};
use super::runner::{Ending, run_limited};
use super::tree_snapshot::{Change, Entry, TreeSnapshot};

const RUN_ID: &str = "5a9d01";
const TASK_BRANCH: &str = "5a9d01-task-1-1-feature";
/// Far above a task of the corpus: wt, git-spice, one short command.
const LIMIT: Duration = Duration::from_secs(60);

/// What `wt run` writes by design, besides objects and the task's branch and its reflog: the
/// run's state and the repo lock, the run's worktree and its admin folder (whose link files are
/// checked apart), the pool of recycled worktrees' state (the index wt trusts for that worktree),
/// git-spice's state ref, and the record that git-spice was accepted.
fn kept_by_wt_run(path: &str) -> bool {
    let folders = [
        format!("repo/.git/spectacular/runs/{RUN_ID}"),
        format!("repo/.git/worktrees/{RUN_ID}-main"),
        format!("repo/.worktrees/{RUN_ID}-main"),
        "repo/.git/spectacular/pool".to_owned(),
        "repo/.git/refs/spice".to_owned(),
        "repo/.git/logs/refs/spice".to_owned(),
    ];
    let files = [
        "repo/.git/spectacular/runs",
        "repo/.git/spectacular/repo.lock",
        "scratch/home/.cache",
        "scratch/home/.cache/spectacular",
        "scratch/home/.cache/spectacular/git-spice.accepted",
    ];
    files.contains(&path) || folders.iter().any(|kept| path == kept || path.starts_with(&format!("{kept}/")))
}

fn own(path: &str) -> bool {
    [format!("repo/.git/refs/heads/{TASK_BRANCH}"), format!("repo/.git/logs/refs/heads/{TASK_BRANCH}")]
        .contains(&path.to_owned())
}

/// How the run went: whether the check after the task failed it, and what stayed changed.
#[derive(Debug)]
pub struct Confirmation {
    pub ending: Ending,
    /// The task's error, when it failed.
    pub task_error: Option<String>,
    /// Changes outside that neither the kernel nor the check undid.
    pub left: Vec<String>,
    /// Reflogs outside that only gained lines: the task's move of a branch and wt's put-back
    /// (git appends to a branch's reflog, and to HEAD's when the branch is the main checkout's).
    pub reflog_appends: Vec<String>,
}

impl Confirmation {
    /// The check failed the task and everything outside is as it was (but for lines appended to
    /// reflogs, when `appends_accepted`).
    pub fn holds(&self, appends_accepted: bool) -> bool {
        self.check_failed_the_task()
            && self.left.is_empty()
            && (appends_accepted || self.reflog_appends.is_empty())
    }

    pub fn check_failed_the_task(&self) -> bool {
        self.task_error.as_deref().is_some_and(|error| error.contains("the task changed what it may not"))
    }
}

/// Runs `text` (a corpus case, its placeholders not yet filled) as the task of a `wt run` in a
/// copy of `template`.
pub fn confirm(template: &Layout, text: &str) -> Confirmation {
    let layout = Layout::copy_of(template);
    let root = layout.repo.join(".worktrees").join(format!("{RUN_ID}-main"));
    let command = layout.case_text(text, &root).text;
    // As in the layout's task worktree: the files the corpus expects beside it, and a branch one
    // commit ahead of main (`git update-ref refs/heads/main HEAD` must move something).
    let files =
        ["etc-link", "fix.patch", "vendor.tgz", "x.zip"].map(|f| format!("../{WORKTREE}/{f}")).join(" ");
    let setup = format!("cp -a {files} . && git commit -q --allow-empty -m 'task work'");
    let run = format!("{setup} && bash -c '{}'", command.replace('\'', r"'\''"));
    confirm_task(&layout, &root, &run, false)
}

/// Runs `run` as the task of a `wt run` in `layout`, the run's worktree being `root`.
pub fn confirm_task(layout: &Layout, root: &Path, run: &str, allow_empty: bool) -> Confirmation {
    let plan = layout.logs.join("plan.toml");
    let run = toml::Value::String(run.to_owned());
    let text = format!(
        "[run]\nid = \"{RUN_ID}\"\n[[phase]]\nstrategy = \"sequential\"\n[[phase.task]]\nname = \"feature\"\n\
         timeout = 20\nallow_empty = {allow_empty}\nrun = {run}\n"
    );
    std::fs::write(&plan, text).unwrap();
    let snapshot = || TreeSnapshot::take(&layout.base, std::slice::from_ref(&layout.logs));
    let before = snapshot();
    let mut cmd = layout.command(env!("CARGO_BIN_EXE_wt"), &layout.repo);
    cmd.arg("run").arg(&plan).arg("--json");
    let ran = run_limited(cmd, &layout.logs, "wt-run", LIMIT);
    let task_error = ran
        .stdout
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .find(|event| event["event"] == "task_finished")
        .and_then(|event| (event["ok"] == false).then(|| event["error"].as_str().unwrap_or("").to_owned()));
    let (mut left, mut reflog_appends) = (Vec::new(), Vec::new());
    let after = snapshot();
    for (path, change) in before.diff(&after) {
        let relative = path.strip_prefix(&layout.base).unwrap().to_str().unwrap().to_owned();
        let objects = relative.starts_with("repo/.git/objects/") && change == Change::Added;
        if objects || own(&relative) || kept_by_wt_run(&relative) {
            continue;
        }
        let appended = match (before.get(&path), after.get(&path)) {
            (Some((Entry::File(old), meta)), Some((Entry::File(new), now))) => {
                meta == now && new.starts_with(old)
            }
            _ => false,
        };
        match relative.starts_with("repo/.git/logs/") && appended {
            true => reflog_appends.push(relative),
            false => left.push(format!("{change:?} {relative}")),
        }
    }
    left.extend(link_files_changed(layout, root));
    if task_error.is_none() && ran.stdout.is_empty() {
        left.push(format!("wt run printed nothing: {}", ran.stderr));
    }
    Confirmation { ending: ran.ending, task_error, left, reflog_appends }
}

/// The run's worktree must still be linked to the repository and on its branch, as git wrote
/// them (they are new, so the snapshot has no "before" for them): the content git writes, and the
/// mode git gave the same files of the layout's task worktree.
fn link_files_changed(layout: &Layout, root: &Path) -> Vec<String> {
    let admin = layout.repo.join(".git/worktrees").join(format!("{RUN_ID}-main"));
    let model = layout.repo.join(".git/worktrees").join(WORKTREE);
    let expected: [(PathBuf, PathBuf, String); 4] = [
        (root.join(".git"), layout.root.join(".git"), format!("gitdir: {}\n", admin.display())),
        (admin.join("HEAD"), model.join("HEAD"), format!("ref: refs/heads/{TASK_BRANCH}\n")),
        (admin.join("gitdir"), model.join("gitdir"), format!("{}\n", root.join(".git").display())),
        (admin.join("commondir"), model.join("commondir"), "../..\n".to_owned()),
    ];
    let mode = |path: &Path| std::fs::symlink_metadata(path).map(|m| m.mode()).ok();
    let mut out = Vec::new();
    for (path, model, text) in expected {
        if std::fs::read(&path).ok() != Some(text.into_bytes()) || mode(&path) != mode(&model) {
            out.push(format!("{} is not as git wrote it", path.display()));
        }
    }
    out
}
