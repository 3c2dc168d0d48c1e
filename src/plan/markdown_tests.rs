//! spectacular's plan.md: plans in its format parse as their README says, and each trap of the
//! format is covered. Our own plans (tests/fixtures/plans/) run on every clone; spectacular's real
//! plans are other people's text, kept outside this repository, and run when
//! `WT_SPECTACULAR_PLANS` names their folder.

use std::path::{Path, PathBuf};

use super::*;

fn our_plans() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/plans")
}

/// The folder of spectacular's real plans, from `WT_SPECTACULAR_PLANS`. Without it `test` says
/// that it was skipped and how to run it, and passes: a clone has no copy of those plans.
fn real_plans(test: &str) -> Option<PathBuf> {
    let dir = std::env::var_os("WT_SPECTACULAR_PLANS").filter(|dir| !dir.is_empty());
    if dir.is_none() {
        eprintln!(
            "{test}: skipped the check against spectacular's real plans \
             (set WT_SPECTACULAR_PLANS=<folder of their plan.md files>)"
        );
    }
    dir.map(PathBuf::from)
}

fn shape(plan: &Plan) -> String {
    let phases: Vec<String> =
        plan.phases.iter().map(|p| format!("{}({})", p.strategy.as_str(), p.tasks.len())).collect();
    phases.join(" → ")
}

fn load_from(dir: &Path, file: &str) -> Plan {
    load(&dir.join(file), None).unwrap_or_else(|err| panic!("{file}: {err}"))
}

/// Checks a README's parse table, rows of (file, run id, phases), against the plans in `dir`.
fn assert_parse_table(dir: &Path, expected: &[(&str, &str, &str)]) {
    for &(file, run_id, phases) in expected {
        let plan = load_from(dir, file);
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

/// The expected parse table of tests/fixtures/plans/README.md.
#[test]
fn our_plans_parse_as_their_readme_says() {
    assert_parse_table(
        &our_plans(),
        &[
            ("4b1e07-offline-sync.plan.md", "4b1e07", "parallel(3) → sequential(1) → sequential(1)"),
            (
                "c3a9f2-recipe-scaling.plan.md",
                "c3a9f2",
                "sequential(1) → sequential(1) → sequential(1) → sequential(1)",
            ),
            ("e8d5b0-audit-log.plan.md", "e8d5b0", "sequential(1) → parallel(3) → parallel(2)"),
            ("7f20ac-theme-switcher.plan.md", "7f20ac", "parallel(3)"),
        ],
    );
}

#[test]
fn names_and_fields_of_our_plans_are_kept_verbatim() {
    let audit = load_from(&our_plans(), "e8d5b0-audit-log.plan.md");
    let task = audit.task(TaskId { phase: 1, task: 1 }).unwrap();
    assert_eq!(task.name, "Audit Event Schema");
    assert_eq!(task.files, ["migrations/0007_audit_events.sql"]);
    assert_eq!(task.branch, "e8d5b0-task-1-1-audit-event-schema");
    let sync = load_from(&our_plans(), "4b1e07-offline-sync.plan.md");
    let first = sync.task(TaskId { phase: 1, task: 1 }).unwrap();
    assert_eq!(first.files, ["src/sync/outbox.ts", "src/sync/outbox.test.ts", "src/storage/indexeddb.ts"]);
    assert!(first.acceptance[0].starts_with("`src/sync/outbox.ts` keeps edits"), "{:?}", first.acceptance);
    assert_eq!(
        first.verify.as_deref(),
        Some("# Unit tests for the queue\nnpm test -- src/sync/outbox.test.ts\n\n# Types\nnpx tsc --noEmit")
    );
    assert!(!first.prompt.contains("### Task 2"), "a prompt stops at the next task");
    let themes = load_from(&our_plans(), "7f20ac-theme-switcher.plan.md");
    let tokens = &themes.phases[0].tasks[0];
    assert_eq!(tokens.files, ["src/theme/tokens.css", "src/theme/dark.css"], "inline files");
}

#[test]
fn tasks_are_numbered_by_their_place_in_the_plan_not_by_their_heading() {
    let sync = load_from(&our_plans(), "4b1e07-offline-sync.plan.md");
    let loop_task = sync.task(TaskId { phase: 2, task: 1 }).unwrap();
    assert!(loop_task.prompt.starts_with("### Task 4: Sync Loop"), "{}", loop_task.prompt);
    assert_eq!(loop_task.branch, "4b1e07-task-2-1-sync-loop");
    let recipes = load_from(&our_plans(), "c3a9f2-recipe-scaling.plan.md");
    let shopping = recipes.task(TaskId { phase: 3, task: 1 }).unwrap();
    assert_eq!(shopping.name, "Merge scaled ingredients into the shopping list", "` - ` separator");
}

#[test]
fn headings_in_code_and_sections_that_are_not_phases_stay_text() {
    let recipes = load_from(&our_plans(), "c3a9f2-recipe-scaling.plan.md");
    let names: Vec<&str> = recipes.phases.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(
        names,
        ["Quantity Parser (Foundation)", "Scaling Rules", "Shopping List", "Servings Control and Docs"]
    );
    let parser = &recipes.phases[0].tasks[0];
    assert!(parser.prompt.contains("## Phase 2: conversions come later"), "fenced text stays in the prompt");
    assert_eq!(
        parser.verify.as_deref(),
        Some("# Parser tests, including the fuzz run\npytest tests/test_quantity.py -q")
    );
    assert!(recipes.phases[1].tasks[0].prompt.contains("### Task 9.9"), "fenced text stays in the prompt");
    let audit = load_from(&our_plans(), "e8d5b0-audit-log.plan.md");
    let export = audit.task(TaskId { phase: 3, task: 2 }).unwrap();
    assert!(!export.prompt.contains("Phase Dependency Graph"), "{}", export.prompt);
    let themes = load_from(&our_plans(), "7f20ac-theme-switcher.plan.md");
    let last = &themes.phases[0].tasks[2];
    assert!(last.verify.as_deref().unwrap().ends_with("# 2. Switch themes and reload: the choice stays"));
    assert!(!last.prompt.contains("## Testing Strategy"), "a prompt stops at the next section");
}

/// The expected parse table of the README beside spectacular's real plans.
#[test]
fn the_real_plans_parse_as_their_readme_says() {
    let Some(dir) = real_plans("the_real_plans_parse_as_their_readme_says") else { return };
    assert_parse_table(
        &dir,
        &[
            ("0de4e1-testing-system.plan.md", "0de4e1", "parallel(3) → sequential(1) → sequential(1)"),
            (
                "8c8505-cognitive-load-reduction.plan.md",
                "8c8505",
                "sequential(1) → sequential(1) → sequential(1) → sequential(1)",
            ),
            ("93a61e-worktree-isolation.plan.md", "93a61e", "sequential(1) → parallel(3) → parallel(2)"),
            ("dedf14-worktree-isolation.plan.md", "dedf14", "parallel(3)"),
        ],
    );
}

#[test]
fn names_and_fields_of_a_real_plan_are_kept_verbatim() {
    let Some(dir) = real_plans("names_and_fields_of_a_real_plan_are_kept_verbatim") else { return };
    let plan = load_from(&dir, "93a61e-worktree-isolation.plan.md");
    let task = plan.task(TaskId { phase: 1, task: 1 }).unwrap();
    assert_eq!(task.name, "Main Worktree Management Skill");
    assert_eq!(task.files, ["skills/managing-main-worktrees/SKILL.md"]);
    assert_eq!(task.branch, "93a61e-task-1-1-main-worktree-management-skill");
    let testing = load_from(&dir, "0de4e1-testing-system.plan.md");
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
