//! Every Bash escape of the guard corpus (`tests/common/escape_corpus/`), run for real under
//! `wt sandbox` in a real repository laid out as the corpus assumes: what it changes outside the
//! worktree is compared with a snapshot (content, mode, owner, symlink target of every file of
//! the repository, its git folder, its remote and a scratch folder standing in for the home
//! folder, `/tmp`, `/etc` and `/`). A change is the worktree's own git state, new objects, what
//! the check after every task puts back — then the case runs again through `wt run`, which must
//! fail the task and leave everything as it was — or an escape, which fails the test.

#[path = "sandbox_corpus/classify.rs"]
mod classify;
#[path = "common/escape_corpus.rs"]
mod escape_corpus;
#[path = "sandbox_corpus/layout.rs"]
mod layout;
#[path = "sandbox_corpus/production.rs"]
mod production;
#[path = "sandbox_corpus/runner.rs"]
mod runner;
#[path = "common/tree_snapshot.rs"]
mod tree_snapshot;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use classify::{Class, classify};
use layout::Layout;
use runner::{Ending, Ran};
use tree_snapshot::{Change, TreeSnapshot};

/// A case that waits on stdin, the network or a terminal is killed after this.
const LIMIT: Duration = Duration::from_secs(5);
/// Cases run side by side (most of a case's time is spent starting processes).
const THREADS: usize = 4;

/// Escapes the kernel does not stop and the check does not see: modes and owners outside the
/// repository's git state (`chmod` and `chown` are not write rights for Landlock, see
/// src/sandbox/mod.rs, "What Landlock does not cover"; the check puts back the modes of `config`,
/// the hooks and the worktree's links). The guard's policy is the layer that stops them: it
/// denies `chmod`, `chown` and `chgrp` of anything outside the worktree or not known, in every
/// mode (tests/common/escape_corpus). Each entry must still escape the kernel alone, and only by
/// changing modes or owners: a content change still fails the test, and so does an entry that no
/// longer escapes.
const ACCEPTED_ESCAPES: &[(&str, &str)] = &[
    ("chmod 777 /tmp/x", "the mode of a file outside (here the stand-in for /tmp/x)"),
    ("exec 5</tmp; chmod 000 /dev/fd/5/x", "the same, through a descriptor opened on the folder outside"),
    ("chown -R nobody /tmp/x", "the owner of a file outside (the tests run as root here)"),
    (
        "chmod -R 777 $REPO",
        "the modes of every file and folder of the main checkout (`git status` there then shows its \
         files as changed: 100644 -> 100755), of the git folder (objects, refs, reflogs, the worktrees' \
         admin folders; only config and the hooks are put back) and of the sibling worktree",
    ),
];

/// Cases the check fails and puts back, leaving lines in reflogs — accepted for now, to be
/// decided: the task's move of another branch and wt's put-back stay in that branch's reflog,
/// and in HEAD's when the branch is the one the main checkout is on (`git update-ref` logs both).
const ACCEPTED_REFLOG_APPENDS: &[&str] =
    &["git update-ref refs/heads/main HEAD", "git update-ref refs/heads/abc123-task-1-2-other HEAD"];

/// What one case did.
struct Outcome {
    text: &'static str,
    command: String,
    ran: Ran,
    /// Changes outside the worktree, relative to the layout's base folder.
    changes: Vec<(PathBuf, Change, Class)>,
    /// Real paths outside the test's folder that the case named and that changed.
    stray: Vec<String>,
    /// For a case whose most serious change is `Guarded`: the same case through `wt run`.
    confirmation: Option<production::Confirmation>,
}

impl Outcome {
    fn worst(&self) -> Option<Class> {
        let stray = (!self.stray.is_empty()).then_some(Class::Escape);
        self.changes.iter().map(|(_, _, class)| *class).chain(stray).max()
    }

    fn escapes(&self) -> Vec<String> {
        let changes = self.changes.iter().filter(|(_, _, class)| *class == Class::Escape);
        let mut out: Vec<String> =
            changes.map(|(path, change, _)| format!("{change:?} {}", path.display())).collect();
        out.extend(self.stray.iter().map(|path| format!("changed the real {path}")));
        out
    }

    /// Whether its escapes are only mode or owner changes, as `ACCEPTED_ESCAPES` allows.
    fn only_metadata_escapes(&self) -> bool {
        self.stray.is_empty()
            && self
                .changes
                .iter()
                .all(|(_, change, class)| *class != Class::Escape || *change == Change::Meta)
    }
}

/// What a case may change without being seen: outside the layout (its worktree, where it
/// works; the test's own logs).
fn snapshot_outside(layout: &Layout) -> TreeSnapshot {
    let mut snapshot = TreeSnapshot::take(&layout.base, &[layout.root.clone(), layout.logs.clone()]);
    // The worktree's link to the repository is inside it, and watched all the same.
    snapshot.add(&layout.root.join(".git"));
    snapshot
}

/// The real paths a case named (before they were moved to their stand-ins), and /dev/null,
/// which `git config --global` would replace with GIT_CONFIG_GLOBAL=/dev/null.
fn snapshot_real(paths: &[PathBuf]) -> TreeSnapshot {
    let mut snapshot = TreeSnapshot::default();
    for path in paths.iter().map(PathBuf::as_path).chain([Path::new("/dev/null")]) {
        snapshot.add(path);
    }
    snapshot
}

/// Everything in a layout but the test's logs, the worktree included.
fn snapshot_all(layout: &Layout) -> TreeSnapshot {
    TreeSnapshot::take(&layout.base, std::slice::from_ref(&layout.logs))
}

/// A copy of the template no case has changed, and its snapshot.
struct Pristine(Layout, TreeSnapshot);

impl Pristine {
    fn copy(template: &Layout) -> Pristine {
        let layout = Layout::copy_of(template);
        let snapshot = snapshot_all(&layout);
        Pristine(layout, snapshot)
    }

    /// The layout again when a case left it exactly as it was (content, mode, owner and symlink
    /// target of every file, worktree included): as good as a new copy, and copying is most of
    /// a case's time on a slow disk.
    fn reuse(self) -> Option<Pristine> {
        (snapshot_all(&self.0) == self.1).then_some(self)
    }
}

/// Runs one case in `pristine`; returns what it did, and the layout when it is still pristine.
fn run_case(
    template: &Layout,
    pristine: Pristine,
    index: usize,
    text: &'static str,
) -> (Outcome, Option<Pristine>) {
    let layout = &pristine.0;
    let stand_in = layout.case_text(text, &layout.root);
    let (before, real_before) = (snapshot_outside(layout), snapshot_real(&stand_in.real));
    let cmd = layout.sandbox(&["bash", "-c", &stand_in.text]);
    let ran = runner::run_limited(cmd, &layout.logs, &format!("case-{index}"), LIMIT);
    let changes = before
        .diff(&snapshot_outside(layout))
        .into_iter()
        .map(|(path, change)| {
            let relative = path.strip_prefix(&layout.base).unwrap().to_owned();
            let class = classify(&relative, change);
            (relative, change, class)
        })
        .collect();
    let stray = real_before.changes(&snapshot_real(&stand_in.real));
    let mut outcome = Outcome { text, command: stand_in.text, ran, changes, stray, confirmation: None };
    if outcome.worst() == Some(Class::Guarded) {
        outcome.confirmation = Some(production::confirm(template, text));
    }
    (outcome, pristine.reuse())
}

/// Runs every case on `THREADS` threads, each in a copy of the template as it was built.
fn run_all(template: &Layout, cases: &[&'static str]) -> (Vec<Outcome>, usize) {
    let (next, copies) = (AtomicUsize::new(0), AtomicUsize::new(0));
    let outcomes = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..THREADS {
            scope.spawn(|| {
                let mut spare = None;
                loop {
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    let Some(text) = cases.get(index) else { break };
                    let pristine = spare.take().unwrap_or_else(|| {
                        copies.fetch_add(1, Ordering::Relaxed);
                        Pristine::copy(template)
                    });
                    let (outcome, left) = run_case(template, pristine, index, text);
                    spare = left;
                    outcomes.lock().unwrap().push((index, outcome));
                }
            });
        }
    });
    let mut outcomes = outcomes.into_inner().unwrap();
    outcomes.sort_by_key(|(index, _)| *index);
    (outcomes.into_iter().map(|(_, outcome)| outcome).collect(), copies.into_inner())
}

/// How the command itself ended, for the summary: the kernel's refusal, another failure, or
/// success (with nothing outside changed, the command did its work inside or nothing at all).
fn ending_kind(ran: &Ran) -> &'static str {
    match ran.ending {
        Ending::Hung => "hung (killed)",
        Ending::Lingered(_) => "left a process running (killed)",
        Ending::Exited(0) => "exited 0",
        Ending::Exited(127) => "command not found (127)",
        Ending::Exited(_) if ran.stderr.contains("Permission denied") => "failed: Permission denied",
        Ending::Exited(_) if ran.stderr.contains("Invalid cross-device link") => "failed: cross-device link",
        Ending::Exited(_) => "failed otherwise",
    }
}

/// What `outcome` changed outside, one line (and for a `Guarded` case what `wt run` put back).
fn changed_lines(outcome: &Outcome) -> String {
    let Some(class) = outcome.worst() else { return String::new() };
    let paths: Vec<String> =
        outcome.changes.iter().map(|(path, change, _)| format!("{change:?} {}", path.display())).collect();
    let more = match paths.len() {
        0..=4 => String::new(),
        n => format!(" and {} more", n - 4),
    };
    let mut out =
        format!("  {class:?}: {:?}: {}{more}\n", outcome.text, paths[..paths.len().min(4)].join(", "));
    if let Some(confirmation) = &outcome.confirmation {
        let error = confirmation.task_error.as_deref().unwrap_or("none");
        let put_back = error.split(" where it could: ").nth(1).and_then(|e| e.split(". Work only").next());
        out.push_str(&format!("    wt run: the task failed: {}\n", put_back.unwrap_or(error)));
    }
    out
}

fn summary(outcomes: &[Outcome], copies: usize, elapsed: Duration) -> String {
    let mut by_class: BTreeMap<String, usize> = BTreeMap::new();
    let mut by_ending: BTreeMap<&str, usize> = BTreeMap::new();
    for outcome in outcomes {
        let class =
            outcome.worst().map_or("nothing changed outside".to_owned(), |class| format!("{class:?}"));
        *by_class.entry(class).or_default() += 1;
        *by_ending.entry(ending_kind(&outcome.ran)).or_default() += 1;
    }
    let confirmed =
        outcomes.iter().filter(|o| o.confirmation.as_ref().is_some_and(|c| c.holds(true))).count();
    let mut out = format!(
        "{} cases in {:.1} s, in {copies} copies of the layout (one a case left as it was is used again)\n\
         by the most serious change outside:\n",
        outcomes.len(),
        elapsed.as_secs_f64()
    );
    by_class.iter().for_each(|(class, n)| out.push_str(&format!("  {class}: {n}\n")));
    out.push_str(&format!("  (Guarded cases the check failed and put back through wt run: {confirmed})\n"));
    out.push_str("by how the command ended:\n");
    by_ending.iter().for_each(|(kind, n)| out.push_str(&format!("  {kind}: {n}\n")));
    for outcome in outcomes.iter().filter(|o| !matches!(o.ran.ending, Ending::Exited(_))) {
        out.push_str(&format!("  {:?}: {:?}\n", outcome.ran.ending, outcome.text));
    }
    // A program missing on this machine: the case proves nothing here.
    let missing: Vec<&str> =
        outcomes.iter().filter(|o| o.ran.ending == Ending::Exited(127)).map(|o| o.text).collect();
    out.push_str(&format!("  not found here: {missing:?}\nwhat changed outside:\n"));
    outcomes.iter().for_each(|outcome| out.push_str(&changed_lines(outcome)));
    out
}

/// Why `outcome` fails the test, if it does.
fn failures_of(outcome: &Outcome) -> Vec<String> {
    let accepted = ACCEPTED_ESCAPES.iter().any(|(text, _)| *text == outcome.text);
    let appends_accepted = ACCEPTED_REFLOG_APPENDS.contains(&outcome.text);
    let mut failures = Vec::new();
    match (outcome.worst(), &outcome.confirmation) {
        (Some(Class::Escape), _) if accepted && outcome.only_metadata_escapes() => {}
        (Some(Class::Escape), _) => failures.push(format!(
            "ESCAPE {:?}\n  ran: {:?}\n  {}\n  stderr: {}",
            outcome.text,
            outcome.command,
            outcome.escapes().join("\n  "),
            outcome.ran.stderr.trim()
        )),
        (Some(Class::Guarded), Some(confirmation)) if !confirmation.holds(appends_accepted) => {
            failures.push(format!(
                "NOT PUT BACK by wt run {:?}\n  under wt sandbox: {:?}\n  wt run: {:?}, task error {:?}\n  \
             left: {:?}\n  reflogs appended to: {:?}",
                outcome.text,
                outcome.changes,
                confirmation.ending,
                confirmation.task_error,
                confirmation.left,
                confirmation.reflog_appends
            ))
        }
        _ => {}
    }
    if accepted && outcome.worst() != Some(Class::Escape) {
        failures.push(format!("{:?} is in ACCEPTED_ESCAPES but no longer escapes: remove it", outcome.text));
    }
    if appends_accepted && outcome.confirmation.as_ref().is_none_or(|c| c.reflog_appends.is_empty()) {
        failures
            .push(format!("{:?} is in ACCEPTED_REFLOG_APPENDS but appends nothing: remove it", outcome.text));
    }
    failures
}

#[test]
fn no_bash_escape_of_the_corpus_changes_anything_outside_the_worktree_under_wt_sandbox() {
    runner::become_subreaper();
    let started = Instant::now();
    let template = Layout::template();
    let cases = escape_corpus::bash_escapes();
    let (outcomes, copies) = run_all(&template, &cases);
    let failures: Vec<String> = outcomes.iter().flat_map(failures_of).collect();
    let report = summary(&outcomes, copies, started.elapsed());
    println!("{report}");
    assert!(cases.len() >= 250, "{} cases", cases.len());
    assert!(failures.is_empty(), "{} failures:\n{}\n\n{report}", failures.len(), failures.join("\n"));
}

/// The harness must see what it is there to see: the same kind of commands, run without the
/// sandbox, are classed as escapes or as what the check puts back.
#[test]
fn the_comparison_sees_writes_modes_refs_and_the_worktree_link_outside() {
    runner::become_subreaper();
    let template = Layout::template();
    let cases: [(&str, Class); 6] = [
        ("echo x > /tmp/x", Class::Escape),
        ("chmod 600 $REPO/README.md", Class::Escape),
        ("touch ../abc123-task-1-10/new", Class::Escape),
        ("git update-ref refs/heads/main HEAD", Class::Guarded),
        ("echo 'gitdir: /elsewhere' > .git", Class::Guarded),
        ("git commit -q --allow-empty -m more", Class::Objects),
    ];
    for (text, class) in cases {
        let layout = Layout::copy_of(&template);
        let before = snapshot_outside(&layout);
        let command = layout.case_text(text, &layout.root).text;
        let out = layout.command("bash", &layout.root).args(["-c", &command]).output().unwrap();
        assert!(out.status.success(), "{text}: {}", String::from_utf8_lossy(&out.stderr));
        let worst = before
            .diff(&snapshot_outside(&layout))
            .into_iter()
            .map(|(path, change)| classify(path.strip_prefix(&layout.base).unwrap(), change));
        assert_eq!(worst.max(), Some(class), "{text}");
    }
}

#[test]
fn a_task_that_changes_nothing_leaves_only_what_wt_run_keeps() {
    runner::become_subreaper();
    let template = Layout::template();
    let layout = Layout::copy_of(&template);
    let root = layout.repo.join(".worktrees/5a9d01-main");
    let confirmation = production::confirm_task(&layout, &root, "true", true);
    assert_eq!(confirmation.ending, Ending::Exited(0), "{confirmation:?}");
    assert_eq!(confirmation.task_error, None);
    assert!(confirmation.left.is_empty() && confirmation.reflog_appends.is_empty(), "{confirmation:?}");
}

#[test]
fn paths_outside_the_test_folder_move_to_their_stand_ins() {
    let moved = |text: &str| layout::stand_in(text, "/S");
    assert_eq!(moved("echo x > /tmp/out").text, "echo x > /S/tmp/out");
    assert_eq!(moved("echo x > /tmp/out").real, [PathBuf::from("/tmp/out")]);
    assert_eq!(moved("cp -t/tmp src/lib.rs").text, "cp -t/S/tmp src/lib.rs");
    assert_eq!(moved("sort -uo/tmp/x src/lib.rs").text, "sort -uo/S/tmp/x src/lib.rs");
    assert_eq!(moved("dd if=/dev/zero of=/tmp/disk").text, "dd if=/dev/zero of=/S/tmp/disk");
    assert_eq!(moved("ls 2> /var/tmp/err").text, "ls 2> /S/var/tmp/err");
    assert_eq!(moved("sed -n 'w /tmp/x' a").text, "sed -n 'w /S/tmp/x' a");
    assert_eq!(moved("sed -i.bak -e 's/a/b/' /etc/hosts").text, "sed -i.bak -e 's/a/b/' /S/etc/hosts");
    assert_eq!(moved("sh -c \"cd / && rm -rf tmp\"").text, "sh -c \"cd /S/root && rm -rf tmp\"");
    assert_eq!(moved("rm -rf /").text, "rm -rf /S/root");
    assert_eq!(moved("typeset GIT_WORK_TREE=/; git add .").text, "typeset GIT_WORK_TREE=/S/root; git add .");
    assert_eq!(moved("echo x > $'\\057tmp\\057x'").text, "echo x > $'/S/tmp\\057x'");
    assert_eq!(moved("echo x > $'\\057tmp\\057x'").real, [PathBuf::from("/tmp/x")]);
    for unchanged in [
        "echo x > etc-link/../tmp/x",
        "/usr/bin/git push",
        "curl -o out https://example.com/tmp",
        "git -c includeIf.gitdir:/.path=x status",
        "rm -rf $'\\x2e\\x2e'/abc123-task-1-10",
        "sed 's/a/b/w out' src/lib.rs",
        "GIT_COMMON_DIR=/x git status",
    ] {
        assert_eq!(moved(unchanged).text, unchanged);
    }
}

/// A case's background job is waited for (its change would otherwise come after the
/// comparison), and what still runs at the limit is killed, the whole process group.
#[test]
fn the_runner_waits_for_background_jobs_and_kills_what_outlives_the_limit() {
    runner::become_subreaper();
    let temp = tempfile::tempdir().unwrap();
    let run = |script: &str| {
        let mut cmd = std::process::Command::new("bash");
        cmd.args(["-c", script]).current_dir(temp.path());
        runner::run_limited(cmd, temp.path(), "run", Duration::from_secs(1)).ending
    };
    assert_eq!(run("(sleep 0.3; touch late) & exit 3"), Ending::Exited(3));
    assert!(temp.path().join("late").exists(), "the background job ran to its end");
    assert_eq!(run("sleep 30"), Ending::Hung);
    assert_eq!(run("nohup sleep 30 >/dev/null 2>&1 &"), Ending::Lingered(0));
}
