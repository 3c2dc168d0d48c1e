//! The pool against real git: what a recycled worktree keeps and loses, what keeps one out, and
//! what a killed move leaves for the next look.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::*;
use crate::process::Cmd;
use crate::store::EventLog;

struct Fixture {
    _temp: tempfile::TempDir,
    repo: Repo,
    layout: StateLayout,
    journal: Journal,
    policy: PoolPolicy,
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Cmd::new("git")
        .args(args)
        .dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .read()
        .unwrap_or_else(|err| panic!("git {args:?}: {err}"));
    out.stdout
}

/// A repository whose `main` has `a.txt`, `lib/b.txt`, `lib/c.txt`, `lib/d.txt` and a `.gitignore`
/// of `target/`, `.env`, `*.log`; `next` changes `a.txt` and adds `c.txt`.
fn fixture() -> Fixture {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path().canonicalize().unwrap().join("repo");
    std::fs::create_dir_all(dir.join("lib")).unwrap();
    git(&dir, &["init", "--quiet", "--initial-branch=main"]);
    git(&dir, &["config", "user.name", "t"]);
    git(&dir, &["config", "user.email", "t@example.com"]);
    std::fs::write(dir.join(".gitignore"), "target/\n.env\n*.log\n").unwrap();
    std::fs::write(dir.join("a.txt"), "a\n").unwrap();
    for name in ["b", "c", "d"] {
        std::fs::write(dir.join(format!("lib/{name}.txt")), format!("{name} as committed\n")).unwrap();
    }
    git(&dir, &["add", "--all"]);
    git(&dir, &["commit", "--quiet", "-m", "main"]);
    git(&dir, &["checkout", "--quiet", "-b", "next"]);
    std::fs::write(dir.join("a.txt"), "a on next\n").unwrap();
    std::fs::write(dir.join("c.txt"), "c\n").unwrap();
    git(&dir, &["add", "--all"]);
    git(&dir, &["commit", "--quiet", "-m", "next"]);
    git(&dir, &["checkout", "--quiet", "main"]);
    git::ensure_excluded(&dir.join(".git"), git::WT_EXCLUDES).unwrap();
    let repo = Repo::discover(&dir).unwrap();
    let layout = StateLayout::new(repo.common_dir());
    let journal = Journal::new(EventLog::new(&temp.path().join("events.jsonl")));
    let policy = PoolPolicy::new(&WorktreeConfig::default(), 4);
    Fixture { _temp: temp, repo, layout, journal, policy }
}

impl Fixture {
    fn pool(&self) -> Pool<'_> {
        Pool { repo: &self.repo, layout: &self.layout, journal: &self.journal, policy: &self.policy }
    }

    /// A run's worktree as wt makes one: detached at `main`, locked, its index trusted.
    fn worktree(&self, name: &str) -> PathBuf {
        let path = self.repo.root().join(WORKTREES_DIR).join(name);
        git::add_detached(self.repo.root(), &path, "main", "test run").unwrap();
        trust_fresh(&self.layout, &path);
        path
    }

    fn record(&self) -> PoolRecord {
        PoolRecord::load(&self.layout.pool_record()).unwrap()
    }

    fn registered(&self) -> Vec<PathBuf> {
        self.repo.worktree_paths().unwrap()
    }
}

/// What a task leaves behind that git's usual look does not show: a change under skip-worktree,
/// one under assume-unchanged, and one whose index entry was rewritten to match its new stat data.
fn hide_changes(worktree: &Path) {
    std::fs::write(worktree.join("lib/b.txt"), "b changed, skip-worktree\n").unwrap();
    git(worktree, &["update-index", "--skip-worktree", "lib/b.txt"]);
    std::fs::write(worktree.join("lib/c.txt"), "c changed, assume-unchanged\n").unwrap();
    git(worktree, &["update-index", "--assume-unchanged", "lib/c.txt"]);
    forge_stat(worktree, "lib/d.txt", "d changed, stat forged\n");
    assert_eq!(git(worktree, &["status", "--porcelain"]), "", "git sees none of the hidden changes");
}

/// Changes `path` and writes its new stat data into the index under the old content's id: git's
/// stat check then takes the file for unchanged.
fn forge_stat(worktree: &Path, path: &str, content: &str) {
    let repo = git2::Repository::open(worktree).unwrap();
    let mut index = repo.index().unwrap();
    let mut entry = index.get_path(Path::new(path), 0).unwrap();
    std::fs::write(worktree.join(path), content).unwrap();
    let meta = std::fs::metadata(worktree.join(path)).unwrap();
    entry.ctime = git2::IndexTime::new(meta.ctime() as i32, meta.ctime_nsec() as u32);
    entry.mtime = git2::IndexTime::new(meta.mtime() as i32, meta.mtime_nsec() as u32);
    entry.dev = meta.dev() as u32;
    entry.ino = meta.ino() as u32;
    entry.file_size = meta.len() as u32;
    // An index written in the same second as the file would make git compare contents.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    index.add(&entry).unwrap();
    index.write().unwrap();
}

#[test]
fn a_recycled_worktree_comes_out_at_its_commit_with_only_kept_build_output() {
    let f = fixture();
    let used = f.worktree("c0ffee-task-1-1");
    git(&used, &["checkout", "--quiet", "-b", "c0ffee-task-1-1-one"]);
    std::fs::write(used.join("a.txt"), "the task's a\n").unwrap();
    std::fs::write(used.join("committed.txt"), "the task's file\n").unwrap();
    git(&used, &["add", "--all"]);
    git(&used, &["commit", "--quiet", "-m", "task"]);
    for (path, content) in [
        ("target/debug/app", "build output"),
        ("sub/target/lib.rlib", "nested build output"),
        (".env", "SECRET=1"),
        ("logs/build.log", "a log"),
        (".claude/agents/wt-c0ffee-task-1-1.md", "the task's agent"),
    ] {
        std::fs::create_dir_all(used.join(path).parent().unwrap()).unwrap();
        std::fs::write(used.join(path), content).unwrap();
    }
    std::fs::create_dir_all(used.join("cache.log")).unwrap();
    git(&used.join("cache.log"), &["init", "--quiet"]);
    hide_changes(&used);

    let retired = f.pool().retire(&used, "1.1", Uncommitted::NoneSeen).unwrap();
    let Retired::Parked { slot } = retired else { panic!("not parked: {retired:?}") };
    assert!(!used.exists() && slot.exists());
    assert!(git(f.repo.root(), &["branch", "--list", "c0ffee-task-1-1-one"]).contains("one"));

    let next = f.repo.root().join(WORKTREES_DIR).join("beef00-task-1-1");
    assert!(f.pool().take(&next, "next", "1.1", "test run 2").unwrap());
    assert!(!slot.exists() && f.record().worktrees.is_empty());
    assert_eq!(git(&next, &["rev-parse", "HEAD"]), git(f.repo.root(), &["rev-parse", "next"]));
    assert_eq!(git::current_branch(&next).unwrap(), None, "detached");
    let read = |path: &str| std::fs::read_to_string(next.join(path)).unwrap_or_else(|_| "<missing>".into());
    assert_eq!(read("a.txt"), "a on next\n");
    assert_eq!(read("c.txt"), "c\n");
    assert_eq!(read("committed.txt"), "<missing>", "the task's commit is on its branch only");
    for name in ["b", "c", "d"] {
        assert_eq!(
            read(&format!("lib/{name}.txt")),
            format!("{name} as committed\n"),
            "a hidden change leaked"
        );
    }
    assert_eq!(read("target/debug/app"), "build output");
    assert_eq!(read("sub/target/lib.rlib"), "nested build output");
    for gone in [".env", "logs/build.log", ".claude/agents/wt-c0ffee-task-1-1.md", "cache.log/.git/HEAD"] {
        assert_eq!(read(gone), "<missing>", "{gone} leaked");
    }
    let flags: Vec<String> = git(&next, &["ls-files", "-v"]).lines().map(str::to_owned).collect();
    assert!(flags.iter().all(|line| line.starts_with("H ")), "index flags carried over: {flags:?}");
    assert_eq!(
        git(&next, &["status", "--porcelain", "--ignored", "--untracked-files=all"]),
        "!! sub/target/lib.rlib\n!! target/debug/app\n"
    );
    let lock = std::fs::read_to_string(git::worktree_admin_dir(&next).unwrap().join("locked")).unwrap();
    assert_eq!(lock.trim(), "test run 2");
}

/// Rewrites `path` in place with `content` of the same length and sets its mtime back: only its
/// ctime tells, and git compares ctime to the second. True when the ctime still reads the second
/// the file was written in (the machine was quick enough).
fn change_in_the_same_second(worktree: &Path, path: &str, content: &str) -> bool {
    use std::io::Write;
    let file = worktree.join(path);
    let before = std::fs::metadata(&file).unwrap();
    assert_eq!(before.len(), content.len() as u64);
    let mut open = std::fs::OpenOptions::new().write(true).open(&file).unwrap();
    open.write_all(content.as_bytes()).unwrap();
    open.set_modified(before.modified().unwrap()).unwrap();
    drop(open);
    let after = std::fs::metadata(&file).unwrap();
    assert_eq!(
        (after.ino(), after.len(), after.mtime_nsec()),
        (before.ino(), before.len(), before.mtime_nsec())
    );
    after.ctime() == before.ctime()
}

/// Sleeps until just past the start of the next second.
fn wait_for_a_new_second() {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap();
    std::thread::sleep(std::time::Duration::from_nanos(
        1_000_000_000 - u64::from(now.subsec_nanos()) + 5_000_000,
    ));
}

#[test]
fn a_change_made_in_the_second_its_file_was_checked_out_is_found() {
    let f = fixture();
    for attempt in 1..=5 {
        wait_for_a_new_second();
        let used = f.worktree(&format!("c0ffee-task-1-{attempt}"));
        let landed = change_in_the_same_second(&used, "lib/b.txt", "B AS COMMITTED\n");
        git(&used, &["update-index", "--skip-worktree", "lib/b.txt"]);
        if !landed {
            f.pool().retire(&used, "1.1", Uncommitted::Discard).unwrap();
            continue;
        }
        // Parked a second later or more: the index wt puts back is then older than the file.
        wait_for_a_new_second();
        let retired = f.pool().retire(&used, "1.1", Uncommitted::NoneSeen).unwrap();
        let Retired::Parked { slot } = retired else { panic!("not parked: {retired:?}") };
        let next = f.repo.root().join(WORKTREES_DIR).join("beef00-task-1-1");
        assert!(
            f.pool().take(&next, "main", "1.1", "test run 2").unwrap(),
            "{} was not taken",
            slot.display()
        );
        assert_eq!(
            std::fs::read_to_string(next.join("lib/b.txt")).unwrap(),
            "b as committed\n",
            "a change made in the second its file was written leaked"
        );
        assert_eq!(git(&next, &["status", "--porcelain"]), "");
        return;
    }
    panic!("no attempt changed the file within the second it was written");
}

#[test]
fn kept_files_that_the_next_commit_does_not_ignore_are_never_handed_out() {
    let f = fixture();
    type Leave<'a> = &'a dyn Fn(&Path);
    let cases: [(&str, Leave); 2] = [
        ("ignored only by the task's commit", &|w| {
            git(w, &["checkout", "--quiet", "-b", "ignores-node-modules"]);
            std::fs::write(w.join(".gitignore"), "target/\n.env\n*.log\nnode_modules/\n").unwrap();
            git(w, &["commit", "--quiet", "-am", "ignore node_modules"]);
            git(w, &["checkout", "--quiet", "--detach"]);
        }),
        ("ignored only by a .gitignore the task left there", &|w| {
            std::fs::create_dir_all(w.join("node_modules")).unwrap();
            std::fs::write(w.join("node_modules/.gitignore"), "*\n").unwrap();
        }),
    ];
    for (n, (what, leave)) in cases.iter().enumerate() {
        let used = f.worktree(&format!("c0ffee-task-1-{}", n + 1));
        leave(&used);
        std::fs::create_dir_all(used.join("node_modules")).unwrap();
        std::fs::write(used.join("node_modules/payload.js"), "the last task's").unwrap();
        assert_eq!(git(&used, &["status", "--porcelain"]), "", "{what}: git sees it as ignored");
        let retired = f.pool().retire(&used, "1.1", Uncommitted::NoneSeen).unwrap();
        assert!(matches!(retired, Retired::Parked { .. }), "{what}: {retired:?}");

        // `main` does not ignore node_modules/: what is there would be the next task's to commit.
        let next = f.repo.root().join(WORKTREES_DIR).join(format!("beef00-task-1-{}", n + 1));
        let taken = f.pool().take(&next, "main", "1.1", "test run 2").unwrap();
        assert!(
            !next.join("node_modules/payload.js").exists(),
            "{what}: the last task's file reached the next (taken: {taken})"
        );
        assert!(!taken && !next.exists() && f.record().worktrees.is_empty(), "{what}: not removed");
    }
    assert_eq!(f.registered(), Vec::<PathBuf>::new());
}

#[test]
fn a_worktree_with_state_of_its_own_is_removed_not_parked() {
    let f = fixture();
    type Leave<'a> = &'a dyn Fn(&Path);
    let cases: [(&str, Leave); 5] = [
        ("refs of its own", &|w| {
            git(w, &["update-ref", "refs/worktree/mine", "HEAD"]);
        }),
        ("a rebase under way", &|w| {
            std::fs::create_dir_all(git::worktree_admin_dir(w).unwrap().join("rebase-merge")).unwrap();
        }),
        ("git configuration of its own", &|w| {
            std::fs::write(git::worktree_admin_dir(w).unwrap().join("config.worktree"), "[core]\n").unwrap();
        }),
        ("hard-linked from elsewhere", &|w| {
            std::fs::create_dir_all(w.join("target")).unwrap();
            std::fs::hard_link(w.join("a.txt"), w.join("target/a-link")).unwrap();
        }),
        ("a submodule's files", &|w| {
            let head = git(w, &["rev-parse", "HEAD"]);
            git(w, &["checkout", "--quiet", "-b", "with-submodule"]);
            git(w, &["update-index", "--add", "--cacheinfo", &format!("160000,{},sub", head.trim())]);
            git(w, &["commit", "--quiet", "-m", "a submodule"]);
            std::fs::create_dir_all(w.join("sub")).unwrap();
            std::fs::write(w.join("sub/file"), "the submodule's").unwrap();
        }),
    ];
    for (n, (what, leave)) in cases.iter().enumerate() {
        let used = f.worktree(&format!("c0ffee-task-1-{}", n + 1));
        let admin = git::worktree_admin_dir(&used).unwrap();
        leave(&used);
        let retired = f.pool().retire(&used, "1.1", Uncommitted::Discard).unwrap();
        let Retired::Removed { reason } = retired else { panic!("{what}: {retired:?}") };
        assert!(reason.contains(what), "{what}: {reason}");
        assert!(!used.exists() && !admin.exists(), "{what}: left behind");
        assert!(f.record().worktrees.is_empty(), "{what}");
        assert!(!f.layout.trusted_index(&clean::admin_name(&admin)).exists(), "{what}: index copy left");
    }
    assert_eq!(f.registered(), Vec::<PathBuf>::new());
}

#[test]
fn without_a_trusted_index_or_room_or_recycling_a_worktree_is_removed() {
    let mut f = fixture();
    let untrusted = f.repo.root().join(WORKTREES_DIR).join("c0ffee-task-1-1");
    git::add_detached(f.repo.root(), &untrusted, "main", "made by an older wt").unwrap();
    let Retired::Removed { reason } = f.pool().retire(&untrusted, "1.1", Uncommitted::NoneSeen).unwrap()
    else {
        panic!()
    };
    assert!(reason.contains("no index of its own making"), "{reason}");

    f.policy.cap = 1;
    assert!(matches!(
        f.pool().retire(&f.worktree("c0ffee-task-1-2"), "1.2", Uncommitted::NoneSeen).unwrap(),
        Retired::Parked { .. }
    ));
    let Retired::Removed { reason } =
        f.pool().retire(&f.worktree("c0ffee-task-1-3"), "1.3", Uncommitted::NoneSeen).unwrap()
    else {
        panic!()
    };
    assert!(reason.contains("full"), "{reason}");

    f.policy.recycle = false;
    let off = f.worktree("c0ffee-task-1-4");
    assert!(matches!(f.pool().retire(&off, "1.4", Uncommitted::NoneSeen).unwrap(), Retired::Removed { .. }));
    let elsewhere = f.repo.root().join(WORKTREES_DIR).join("c0ffee-task-1-5");
    assert!(!f.pool().take(&elsewhere, "main", "1.5", "r").unwrap(), "recycling off takes nothing");
    assert_eq!(f.record().parked().count(), 1);
}

#[test]
fn a_worktree_a_process_works_in_is_not_parked() {
    let f = fixture();
    let used = f.worktree("c0ffee-task-1-1");
    let log = f.repo.common_dir().join("sleeper.log");
    let sleeper =
        crate::process::Cmd::new("sleep").arg("3").dir(used.join("lib")).start_to_files(&log, &log).unwrap();
    let pid = sleeper.pid().unwrap();
    let retired = f.pool().retire(&used, "1.1", Uncommitted::NoneSeen);
    let _ = sleeper.wait();
    let Retired::Removed { reason } = retired.unwrap() else { panic!() };
    assert!(reason.contains(&format!("process {pid} works in it")), "{reason}");
}

#[test]
fn a_worktree_whose_changes_must_stay_is_neither_parked_nor_removed() {
    let f = fixture();
    let used = f.worktree("c0ffee-task-1-1");
    std::fs::write(used.join("a.txt"), "written after wt cleanup looked").unwrap();
    assert!(f.pool().retire(&used, "1.1", Uncommitted::Keep).is_err(), "git refuses to remove it");
    assert_eq!(std::fs::read_to_string(used.join("a.txt")).unwrap(), "written after wt cleanup looked");
    assert!(f.record().worktrees.is_empty(), "nothing parked");
}

#[test]
fn a_worktree_whose_changes_may_go_is_removed_with_them_never_parked() {
    let f = fixture();
    let used = f.worktree("c0ffee-task-1-1");
    std::fs::write(used.join("a.txt"), "unsaved").unwrap();
    let Retired::Removed { reason } = f.pool().retire(&used, "1.1", Uncommitted::Discard).unwrap() else {
        panic!()
    };
    assert!(reason.contains("uncommitted"), "{reason}");
    assert!(!used.exists() && f.record().worktrees.is_empty());
}

/// Leaves the record saying `state` for a worktree that the killed move left at `at`.
fn killed_mid_move(f: &Fixture, at: &Path, state: PoolState) {
    let admin = git::worktree_admin_dir(at).unwrap();
    let mut record = f.record();
    record.worktrees.push(PooledWorktree {
        slot: "7".into(),
        admin: clean::admin_name(&admin),
        origin: "c0ffee-task-1-1".into(),
        at: 0,
        state,
    });
    record.save(&f.layout.pool_record()).unwrap();
}

#[test]
fn a_move_a_killed_process_left_is_finished_by_removing_that_worktree() {
    let f = fixture();
    let dir = pool_dir(&f.repo);
    // Killed after moving into the pool, before the record said parked.
    let parking = f.worktree("c0ffee-task-1-1");
    std::fs::create_dir_all(&dir).unwrap();
    git::move_worktree(f.repo.root(), &parking, &dir.join("7")).unwrap();
    killed_mid_move(&f, &dir.join("7"), PoolState::Parking { from: parking.clone() });
    recover(&f.repo, &f.layout).unwrap();
    assert!(f.record().worktrees.is_empty() && f.registered().is_empty() && !dir.join("7").exists());

    // Killed after moving out to a task's place, before checking it out there.
    let taking = f.worktree("beef00-task-2-1");
    killed_mid_move(&f, &taking, PoolState::Taking { to: taking.clone() });
    recover(&f.repo, &f.layout).unwrap();
    assert!(f.record().worktrees.is_empty() && f.registered().is_empty() && !taking.exists());

    // A folder in the pool the record does not know, and a parked one whose folder is gone.
    let parked = f.worktree("c0ffee-task-1-2");
    assert!(matches!(
        f.pool().retire(&parked, "1.2", Uncommitted::NoneSeen).unwrap(),
        Retired::Parked { .. }
    ));
    let stray = dir.join("stray");
    std::fs::create_dir_all(stray.join("x")).unwrap();
    let lost = dir.join(&f.record().worktrees[0].slot);
    std::fs::remove_dir_all(&lost).unwrap();
    recover(&f.repo, &f.layout).unwrap();
    assert!(f.record().worktrees.is_empty() && !stray.exists());
    assert!(f.registered().is_empty(), "git's record of the lost one is gone too");
    // Another worktree of the run is never touched.
    let other = f.worktree("c0ffee-main");
    recover(&f.repo, &f.layout).unwrap();
    assert!(other.exists() && f.registered().len() == 1);
}

#[test]
fn a_parked_worktree_whose_git_record_names_a_folder_outside_the_pool_never_has_it_removed() {
    let f = fixture();
    let victim = f.repo.root().parent().unwrap().join("victim");
    std::fs::create_dir_all(&victim).unwrap();
    std::fs::write(victim.join("keep.txt"), "yours").unwrap();
    for n in 1..=2 {
        let used = f.worktree(&format!("c0ffee-task-1-{n}"));
        let admin = git::worktree_admin_dir(&used).unwrap();
        assert!(matches!(
            f.pool().retire(&used, "1.1", Uncommitted::NoneSeen).unwrap(),
            Retired::Parked { .. }
        ));
        // What a process the task left behind could write while the worktree waits: its git
        // folder is the task's to write.
        let outside = pool_dir(&f.repo).join("../../../victim/.git");
        std::fs::write(admin.join("gitdir"), format!("{}\n", outside.display())).unwrap();
    }
    recover(&f.repo, &f.layout).unwrap();
    assert!(victim.join("keep.txt").exists(), "the pool's recovery removed a folder it does not own");
    empty(&f.repo, &f.layout).unwrap();
    assert!(victim.join("keep.txt").exists(), "emptying the pool removed a folder it does not own");
    assert!(f.record().worktrees.is_empty() && !pool_dir(&f.repo).exists());
}

/// Copies the folder `from` into `to`, files and folders only.
fn copy_folder(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        let target = to.join(entry.file_name());
        match entry.file_type().unwrap().is_dir() {
            true => copy_folder(&entry.path(), &target),
            false => drop(std::fs::copy(entry.path(), target).unwrap()),
        }
    }
}

#[test]
fn a_parked_worktree_linked_to_another_repository_is_removed_before_git_runs_there() {
    let f = fixture();
    let used = f.worktree("c0ffee-task-1-1");
    let admin = git::worktree_admin_dir(&used).unwrap();
    assert!(matches!(f.pool().retire(&used, "1.1", Uncommitted::NoneSeen).unwrap(), Retired::Parked { .. }));
    // A copy of the repository whose config runs a program on every file git checks out, which
    // a process the task left behind could write (its git folder is the task's to write).
    let fake = f.repo.root().parent().unwrap().join("fake");
    copy_folder(f.repo.common_dir(), &fake);
    let ran = f.repo.root().parent().unwrap().join("ran");
    let config = format!("[filter \"x\"]\n\tsmudge = \"touch {} && cat\"\n", ran.display());
    let mut text = std::fs::read_to_string(fake.join("config")).unwrap();
    text.push_str(&config);
    std::fs::write(fake.join("config"), text).unwrap();
    std::fs::create_dir_all(fake.join("info")).unwrap();
    std::fs::write(fake.join("info/attributes"), "* filter=x\n").unwrap();
    std::fs::write(admin.join("commondir"), format!("{}\n", fake.display())).unwrap();

    let next = f.repo.root().join(WORKTREES_DIR).join("beef00-task-1-1");
    let taken = f.pool().take(&next, "next", "1.1", "test run 2").unwrap();
    assert!(!ran.exists(), "wt's git ran the other repository's filter");
    assert!(!taken && !next.exists() && f.record().worktrees.is_empty());
    assert_eq!(f.registered(), Vec::<PathBuf>::new());
}

#[test]
fn a_parked_worktree_wt_cannot_remove_is_set_aside_once_not_failed_on_by_every_run() {
    let f = fixture();
    let used = f.worktree("c0ffee-task-1-1");
    assert!(matches!(f.pool().retire(&used, "1.1", Uncommitted::NoneSeen).unwrap(), Retired::Parked { .. }));
    let slot = pool_dir(&f.repo).join(&f.record().worktrees[0].slot);
    // An immutable file (a root task's `chattr +i`; Landlock does not cover it) cannot be removed.
    let stuck = slot.join("target/stuck");
    std::fs::create_dir_all(stuck.parent().unwrap()).unwrap();
    std::fs::write(&stuck, "x").unwrap();
    let chattr = |flag: &str| Cmd::new("chattr").arg(flag).arg(&stuck).read();
    if chattr("+i").is_err() {
        eprintln!("skipped: chattr +i needs root and a file system with the attribute");
        return;
    }
    let emptied = empty(&f.repo, &f.layout);
    let aside: Vec<PathBuf> =
        std::fs::read_dir(set_aside_dir(&f.repo)).into_iter().flatten().flatten().map(|e| e.path()).collect();
    for folder in &aside {
        let _ = Cmd::new("chattr").arg("-i").arg(folder.join("target/stuck")).read();
    }
    emptied.unwrap();
    assert_eq!(aside.len(), 1, "set aside: {aside:?}");
    assert!(!slot.exists() && f.registered().is_empty() && f.record().worktrees.is_empty());
    recover(&f.repo, &f.layout).unwrap();
    let problems = view(&f.repo, &f.layout).problems;
    assert!(problems.iter().any(|problem| problem.contains("set aside")), "{problems:?}");
}

#[test]
fn emptying_the_pool_removes_every_parked_worktree() {
    let f = fixture();
    for n in 1..=2 {
        let used = f.worktree(&format!("c0ffee-task-1-{n}"));
        std::fs::create_dir_all(used.join("target")).unwrap();
        std::fs::write(used.join("target/out"), "x").unwrap();
        f.pool().retire(&used, "1.1", Uncommitted::NoneSeen).unwrap();
    }
    assert_eq!(view(&f.repo, &f.layout).worktrees.len(), 2);
    let removed = empty(&f.repo, &f.layout).unwrap();
    assert_eq!(removed.len(), 2);
    assert!(f.registered().is_empty() && !pool_dir(&f.repo).exists());
    assert_eq!(view(&f.repo, &f.layout).worktrees.len(), 0);
}
