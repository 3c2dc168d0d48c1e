//! Generated subagents appear with their task's worktree and go with it; `wt check-ignore`.

mod common;

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::TestRepo;

fn frontmatter(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|err| panic!("{}: {err}", path.display()));
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("---"), "{text}");
    lines.take_while(|line| *line != "---").map(str::to_owned).collect()
}

#[test]
fn agents_are_written_for_each_task_and_leave_with_their_worktree() {
    let repo = TestRepo::new();
    let marks = repo.scratch.join("marks");
    std::fs::create_dir_all(&marks).unwrap();
    let task = |name: &str| {
        format!(
            "[[phase.task]]\nname = \"{name}\"\nrun = \"touch {m}/{name} && while [ ! -f {m}/go ]; do sleep 0.05; done && echo {name} > {name}\"\n",
            m = marks.display()
        )
    };
    let plan = format!(
        "[run]\nid = \"a9e471\"\n[[phase]]\n[[phase.task]]\nname = \"setup\"\nrun = \"echo s > s\"\n[[phase]]\nstrategy = \"parallel\"\n{}{}",
        task("left"),
        task("right")
    );
    let plan = repo.plan("plan.toml", &plan);
    let mut cmd = repo.command(env!("CARGO_BIN_EXE_wt"), &repo.root);
    let child = cmd
        .args(["run", plan.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while !(marks.join("left").exists() && marks.join("right").exists()) {
        assert!(start.elapsed() < Duration::from_secs(30), "the parallel agents never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    let agents = repo.root.join(".claude/agents");
    let left = frontmatter(&agents.join("wt-a9e471-task-2-1.md"));
    assert_eq!(left[0], "name: wt-a9e471-task-2-1");
    assert!(left[1].starts_with("description: \"Task 2.1 of wt run a9e471: left."), "{left:?}");
    let worktree = repo.root.join(".worktrees/a9e471-task-2-1");
    let hook = left.iter().find(|l| l.trim_start().starts_with("command:")).unwrap();
    assert!(
        hook.contains(&format!("guard --root '{}' --branch 'a9e471-task-2-1-left'", worktree.display())),
        "{hook}"
    );
    assert!(agents.join("wt-a9e471-task-2-2.md").exists());
    assert!(agents.join("wt-a9e471-task-1-1.md").exists(), "the sequential task has one too");
    let validated = repo
        .command(common::claude_client().to_str().unwrap(), &repo.root)
        .args(["plugin", "validate", agents.to_str().unwrap(), "--strict"])
        .output()
        .unwrap();
    assert!(
        validated.status.success(),
        "Claude Code refuses the generated agents:\n{}{}",
        String::from_utf8_lossy(&validated.stdout),
        String::from_utf8_lossy(&validated.stderr)
    );
    std::fs::write(marks.join("go"), "").unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));

    assert!(!agents.join("wt-a9e471-task-2-1.md").exists(), "removed with its worktree");
    assert!(!agents.join("wt-a9e471-task-2-2.md").exists());
    assert!(agents.join("wt-a9e471-task-1-1.md").exists(), "the main worktree stays, and so does its agent");
    assert_eq!(repo.git(&["status", "--porcelain"]), "", "generated agents are ignored");
    repo.wt(&["cleanup", "a9e471"]).ok();
    assert!(!agents.join("wt-a9e471-task-1-1.md").exists(), "cleanup removes the rest");
}

#[test]
fn check_ignore_reports_and_fixes_missing_rules_through_info_exclude() {
    let repo = TestRepo::new();
    let out = repo.wt(&["check-ignore"]);
    assert_eq!(out.code(), 3);
    assert!(out.stdout().contains("NOT ignored /.worktrees/"), "{}", out.stdout());
    assert!(out.stderr().contains("wt check-ignore --fix"), "{}", out.stderr());
    let before = repo.checkout_snapshot();
    let fixed = repo.wt(&["check-ignore", "--fix"]).ok();
    assert!(
        fixed.contains("ignored     /.worktrees/") && fixed.contains("ignored     /.claude/agents/wt-*.md"),
        "{fixed}"
    );
    assert_eq!(repo.checkout_snapshot(), before, "no tracked .gitignore was touched");
    let exclude = std::fs::read_to_string(repo.root.join(".git/info/exclude")).unwrap();
    repo.wt(&["check-ignore", "--fix"]).ok();
    assert_eq!(
        std::fs::read_to_string(repo.root.join(".git/info/exclude")).unwrap(),
        exclude,
        "fixing twice adds nothing"
    );
}
