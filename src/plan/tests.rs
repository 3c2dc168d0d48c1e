//! The plan table: good plans parse to the expected model, bad plans name the place and the fix.

use std::path::Path;

use super::*;

fn load_text(text: &str) -> Result<Plan, PlanError> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("plan.toml");
    std::fs::write(&path, text).unwrap();
    load(&path, None).map_err(|mut err| {
        // Messages name the file as given; tests compare against a stable name.
        if let Place::At(location) = &mut err.place {
            location.file = "plan.toml".into();
        }
        err
    })
}

const GOOD: &str = r#"
[run]
id = "a1b2c3"
feature = "user-auth"

[agent]
kind = "command"
command = ["my-agent", "--prompt-file", "{prompt_file}"]
max_parallel = 2

[[phase]]
name = "Foundation"
strategy = "sequential"

[[phase.task]]
name = "Add schema"
prompt = "Create the users table"
files = ["src/db/schema.rs"]
acceptance = ["migration runs"]
verify = "cargo test -p db"

[[phase]]
name = "Features"
strategy = "parallel"

[[phase.task]]
name = "Login: OAuth!"
run = "sh make.sh"
allow_empty = true

[[phase.task]]
name = "Login: OAuth!"
"#;

#[test]
fn a_full_plan_parses_into_the_model() {
    let plan = load_text(GOOD).unwrap();
    assert_eq!(plan.run_id, "a1b2c3");
    assert_eq!(plan.run_id_origin, RunIdOrigin::Plan);
    assert_eq!(plan.feature.as_deref(), Some("user-auth"));
    assert_eq!(plan.agent.max_parallel, Some(2));
    assert_eq!(plan.phases.len(), 2);
    assert_eq!(plan.phases[1].strategy, Strategy::Parallel);
    let first = &plan.phases[0].tasks[0];
    assert_eq!(first.branch, "a1b2c3-task-1-1-add-schema");
    assert_eq!(first.verify.as_deref(), Some("cargo test -p db"));
    assert_eq!(first.location.line, 15);
    let twins: Vec<_> = plan.phases[1].tasks.iter().map(|t| t.branch.as_str()).collect();
    assert_eq!(twins, ["a1b2c3-task-2-1-login-oauth", "a1b2c3-task-2-2-login-oauth"]);
    assert!(plan.phases[1].tasks[0].allow_empty);
}

#[test]
fn a_derived_run_id_is_stable_for_the_same_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("plan.toml");
    std::fs::write(&path, "[[phase]]\n[[phase.task]]\nname = \"x\"\n").unwrap();
    let first = load(&path, None).unwrap();
    assert_eq!(first.run_id_origin, RunIdOrigin::Derived);
    assert_eq!(first.run_id, load(&path, None).unwrap().run_id);
    assert_eq!(load(&path, Some("abcdef")).unwrap().run_id, "abcdef");
}

/// Each bad plan, the `file:line:column: message` it must produce, and a word of the fix.
const BAD: &[(&str, &str, &str)] = &[
    ("[[phase]\n", "plan.toml:1:", "TOML syntax"),
    (
        "[[phase]]\nnmae = \"x\"\n[[phase.task]]\nname = \"t\"\n",
        "plan.toml:2:1: unknown field `nmae`",
        "spelling",
    ),
    ("[run]\nid = \"a1b2c3\"\nbsae = \"main\"\n", "plan.toml:3:1: unknown field `bsae`", "spelling"),
    (
        "[[phase]]\n[[phase.task]]\nname = \"t\"\nverfy = \"x\"\n",
        "plan.toml:4:1: unknown field `verfy`",
        "spelling",
    ),
    ("[[phase]]\n[[phase.task]]\nprompt = \"p\"\n", "plan.toml:2:1: task 1.1 has no name", "add name ="),
    ("[[phase]]\n[[phase.task]]\nname = \"  \"\n", "plan.toml:2:1: task 1.1 has no name", "add name ="),
    ("[[phase]]\nname = \"Empty\"\n", "plan.toml:1:1: phase 1 (Empty) has no tasks", "[[phase.task]]"),
    ("[run]\nfeature = \"x\"\n", "plan.toml:1:1: the plan has no phases", "[[phase]]"),
    (
        "[[phase]]\nstrategy = \"paralel\"\n[[phase.task]]\nname = \"t\"\n",
        "plan.toml:2:12: unknown strategy \"paralel\" for phase 1",
        "\"parallel\"",
    ),
    (
        "[run]\nid = \"A1B2C3\"\n[[phase]]\n[[phase.task]]\nname = \"t\"\n",
        "plan.toml:2:6: run id \"A1B2C3\" is not 6 lowercase hex characters",
        "0-9 and a-f",
    ),
    (
        "[agent]\nmax_parallel = 0\n[[phase]]\n[[phase.task]]\nname = \"t\"\n",
        "plan.toml:2:16: max_parallel is 0, it must be at least 1",
        "max_parallel = 1",
    ),
    (
        "[agent]\nkind = \"script\"\n[[phase]]\n[[phase.task]]\nname = \"t\"\n",
        "plan.toml:4:1: task 1.1 (t) has no `run` command, and the agent kind is \"script\"",
        "run =",
    ),
    (
        "[agent]\nkind = \"command\"\n[[phase]]\n[[phase.task]]\nname = \"t\"\n",
        "plan.toml:2:8: the agent kind is \"command\" but no command is given",
        "--agent-command",
    ),
    (
        "[agent]\nkind = \"robot\"\n[[phase]]\n[[phase.task]]\nname = \"t\"\n",
        "plan.toml:2:8: unknown agent kind \"robot\"",
        "\"script\"",
    ),
    ("[[phase]]\n[[phase.task]]\nname = 3\n", "plan.toml:3:8: invalid type", "TOML"),
];

#[test]
fn bad_plans_name_the_place_the_problem_and_the_fix() {
    for (text, expected, fix_word) in BAD {
        let err = load_text(text).expect_err(text);
        let shown = err.to_string();
        assert!(shown.starts_with(expected), "plan:\n{text}\nexpected: {expected}\n     got: {shown}");
        assert!(err.fix.contains(fix_word), "fix for {expected}: {}", err.fix);
    }
}

#[test]
fn an_unreadable_plan_names_the_file() {
    let err = load(Path::new("/nonexistent/plan.toml"), None).unwrap_err();
    assert!(err.to_string().starts_with("/nonexistent/plan.toml: cannot read the plan file"), "{err}");
}
