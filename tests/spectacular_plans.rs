//! spectacular's own layout and plan.md run unchanged: `/spectacular:spec` made the main
//! worktree on `<runId>-main` and committed the plan there; `wt run` stacks on that branch.

mod common;

use common::TestRepo;

const PLAN_MD: &str = r#"---
runId: abc123
feature: auth
---

# Auth - Implementation Plan

## Phase 1: Foundation

**Strategy**: sequential

### Task 1.1: Session store

**Files**: `src/session.rs`

**Acceptance Criteria**:
- [ ] sessions persist

**Quality Gates**:
```bash
test -f task-1.1.txt
```

## Phase 2: Features

**Strategy**: Parallel

### Task 2.1: Login

**Files**:
- src/login.rs

### Task 2.2: Logout

**Files**:
- src/logout.rs

## Phase Dependency Graph

```
Phase 1 → Phase 2
```
"#;

#[test]
fn a_spectacular_plan_runs_in_its_own_main_worktree_and_stacks_on_its_branch() {
    let repo = TestRepo::new();
    let main = repo.root.join(".worktrees/abc123-main");
    repo.git(&["worktree", "add", "--quiet", "-b", "abc123-main", main.to_str().unwrap()]);
    std::fs::create_dir_all(main.join("specs/abc123-auth")).unwrap();
    std::fs::write(main.join("specs/abc123-auth/spec.md"), "# spec\n").unwrap();
    std::fs::write(main.join("specs/abc123-auth/plan.md"), PLAN_MD).unwrap();
    repo.git_in(&main, &["add", "specs"]);
    repo.git_in(&main, &["commit", "--quiet", "-m", "spec: auth"]);
    let before = repo.checkout_snapshot();

    let plan = main.join("specs/abc123-auth/plan.md");
    let agent = r#"echo "$WT_TASK_NAME" > "task-$WT_TASK.txt" && grep -q '### Task' "$WT_PROMPT_FILE""#;
    repo.wt(&["run", plan.to_str().unwrap(), "--agent-command", agent]).ok();

    let branches = ["abc123-task-1-1-session-store", "abc123-task-2-1-login", "abc123-task-2-2-logout"];
    repo.assert_linear_stack("abc123-main", &branches);
    assert_eq!(repo.subjects("abc123-main", branches[0]), ["[Task 1.1] Session store"]);
    assert_eq!(
        repo.git_in(&main, &["branch", "--show-current"]).trim(),
        branches[2],
        "the same worktree holds the top"
    );
    assert!(main.join("specs/abc123-auth/plan.md").exists(), "spectacular's files are still there");
    assert_eq!(repo.checkout_snapshot(), before);
    let status: serde_json::Value =
        serde_json::from_str(&repo.wt(&["status", "abc123", "--json"]).ok()).unwrap();
    assert_eq!(status[0]["status"], "done");
    assert_eq!(status[0]["base"], "abc123-main");
}
