//! spectacular's plan.md: the four real plans parse as their README says, and each trap of the
//! format is covered.

use std::path::{Path, PathBuf};

use super::*;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/fixtures/spectacular-plans")
}

fn shape(plan: &Plan) -> String {
    let phases: Vec<String> =
        plan.phases.iter().map(|p| format!("{}({})", p.strategy.as_str(), p.tasks.len())).collect();
    phases.join(" → ")
}

/// The expected parse table of fixtures/spectacular-plans/README.md.
#[test]
fn the_real_plans_parse_as_their_readme_says() {
    let expected = [
        ("0de4e1-testing-system.plan.md", "0de4e1", "parallel(3) → sequential(1) → sequential(1)"),
        (
            "8c8505-cognitive-load-reduction.plan.md",
            "8c8505",
            "sequential(1) → sequential(1) → sequential(1) → sequential(1)",
        ),
        ("93a61e-worktree-isolation.plan.md", "93a61e", "sequential(1) → parallel(3) → parallel(2)"),
        ("dedf14-worktree-isolation.plan.md", "dedf14", "parallel(3)"),
    ];
    for (file, run_id, phases) in expected {
        let plan = load(&fixtures().join(file), None).unwrap_or_else(|err| panic!("{file}: {err}"));
        assert_eq!(plan.run_id, run_id, "{file}");
        assert_eq!(plan.run_id_origin, RunIdOrigin::Plan, "{file}");
        assert_eq!(shape(&plan), phases, "{file}");
        for task in plan.tasks() {
            assert!(!task.files.is_empty(), "{file} task {} has files", task.id);
            assert!(!task.acceptance.is_empty(), "{file} task {} has acceptance criteria", task.id);
            assert!(task.verify.is_some(), "{file} task {} has quality gates", task.id);
            assert!(
                task.prompt.starts_with("### Task "),
                "{file} task {}: the prompt is its section",
                task.id
            );
        }
    }
}

#[test]
fn names_and_fields_of_a_real_plan_are_kept_verbatim() {
    let plan = load(&fixtures().join("93a61e-worktree-isolation.plan.md"), None).unwrap();
    let task = plan.task(TaskId { phase: 1, task: 1 }).unwrap();
    assert_eq!(task.name, "Main Worktree Management Skill");
    assert_eq!(task.files, ["skills/managing-main-worktrees/SKILL.md"]);
    assert_eq!(task.branch, "93a61e-task-1-1-main-worktree-management-skill");
    let testing = load(&fixtures().join("0de4e1-testing-system.plan.md"), None).unwrap();
    let first = testing.task(TaskId { phase: 1, task: 1 }).unwrap();
    assert_eq!(first.files[0], "tests/fixtures/simple-typescript/CLAUDE.md");
    assert!(
        first.acceptance[0].starts_with("`tests/fixtures/simple-typescript/` is valid git repo"),
        "{:?}",
        first.acceptance
    );
    assert!(first.verify.as_deref().unwrap().contains("gs ls"));
    assert!(!first.prompt.contains("### Task 2"), "a prompt stops at the next task");
}

const VARIANTS: &str = r#"---
feature: variants
---
# Plan

## Execution Summary

**Strategy**: parallel (this is not a phase: no number)

## Phase 1 — Em dash
**Strategy:** Parallel

### Task 1.1: Add `wt guard` 🚀 (fast!)
**Files**: `src/a.rs`, `src/b.rs`

**Acceptance Criteria**:
- [ ] first
- [x] second

**Quality Gates**:

```bash
cargo test
```

### Task 1-2: Dashed number
**Files**:
- src/c.rs
- `src/d.rs`

### Task 3 - Plain number and a dash
text

```markdown
## Phase 9: Inside a fence
**Strategy**: sequential
### Task 9.9: Not a task
```

## Phase 2: No strategy here

### Task 2.1: Not a task either

## Phase Dependency Graph

**Strategy**: sequential

## Phase 3: Last
**STRATEGY**: SEQUENTIAL
### Task 3.1 - Dash separator
"#;

fn write(dir: &Path, relative: &str, text: &str) -> PathBuf {
    let path = dir.join(relative);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn every_trap_of_the_format_parses_as_expected() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "plan.md", VARIANTS);
    let plan = load(&path, None).unwrap();
    assert_eq!(shape(&plan), "parallel(3) → sequential(1)");
    assert_eq!(plan.feature.as_deref(), Some("variants"));
    assert_eq!(plan.phases[0].name, "Em dash");
    assert_eq!(plan.phases[1].name, "Last");
    let names: Vec<&str> = plan.tasks().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        ["Add `wt guard` 🚀 (fast!)", "Dashed number", "Plain number and a dash", "Dash separator"]
    );
    let first = &plan.phases[0].tasks[0];
    assert_eq!(first.files, ["src/a.rs", "src/b.rs"]);
    assert_eq!(first.acceptance, ["first", "second"]);
    assert_eq!(first.verify.as_deref(), Some("cargo test"));
    assert_eq!(first.slug, "add-wt-guard-fast");
    assert_eq!(plan.phases[0].tasks[1].files, ["src/c.rs", "src/d.rs"]);
    assert!(
        plan.phases[0].tasks[2].prompt.contains("## Phase 9: Inside a fence"),
        "fenced text stays in the prompt"
    );
    assert_eq!(plan.phases[0].tasks[2].verify, None);
    assert_eq!(plan.run_id_origin, RunIdOrigin::Derived);
}

#[test]
fn the_run_id_comes_from_the_spec_folder_when_the_frontmatter_has_none() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "specs/c0ffee-auth/plan.md", VARIANTS);
    assert_eq!(load(&path, None).unwrap().run_id, "c0ffee");
    let framed = write(
        dir.path(),
        "specs/c0ffee-auth/framed.md",
        &VARIANTS.replace("feature:", "runId: a1b2c3\nfeature:"),
    );
    assert_eq!(load(&framed, None).unwrap().run_id, "a1b2c3", "the frontmatter wins");
}

#[test]
fn a_markdown_plan_without_phases_says_how_to_write_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "plan.md", "# Plan\n\n## Phase 1: Setup\n\n### Task 1.1: x\n");
    let err = load(&path, None).unwrap_err();
    assert!(err.message.contains("no phases"), "{err}");
    assert!(err.fix.contains("**Strategy**"), "{}", err.fix);
}
