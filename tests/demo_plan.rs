//! `examples/demo.toml` runs as the README shows: five branches, one linear stack.

mod common;

use common::TestRepo;

#[test]
fn the_demo_plan_runs_to_a_five_branch_stack() {
    let repo = TestRepo::new();
    let plan = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/demo.toml");
    let out = repo.wt(&["run", plan.to_str().unwrap(), "--run-id", "de0de0"]);
    let stdout = out.ok();
    let branches = [
        "de0de0-task-1-1-add-the-greeting-module",
        "de0de0-task-1-2-document-the-module",
        "de0de0-task-2-1-french-greeting",
        "de0de0-task-2-2-german-greeting",
        "de0de0-task-2-3-spanish-greeting",
    ];
    repo.assert_linear_stack("main", &branches);
    assert!(stdout.contains("stack of run de0de0 (bottom first):"), "{stdout}");
    let status = repo.wt(&["status"]).ok();
    assert!(status.starts_with("run de0de0  done  base main"), "{status}");
    let top = repo.root.join(".worktrees/de0de0-main");
    let greeting = std::process::Command::new(top.join("greet.sh")).arg("you").output().unwrap();
    assert_eq!(String::from_utf8_lossy(&greeting.stdout), "hello, you\n");
}
