use super::*;
use crate::ui::timeline::records::parse;

fn id(text: &str) -> TaskId {
    text.parse().unwrap()
}

/// Phase 1 sequential (1.1), phase 2 parallel (2.1, 2.2).
fn outline() -> Vec<PhaseOutline> {
    vec![
        PhaseOutline {
            number: 1,
            name: "Foundation".into(),
            strategy: "sequential".into(),
            tasks: vec![(id("1.1"), "Add schema".into())],
        },
        PhaseOutline {
            number: 2,
            name: "Languages".into(),
            strategy: "parallel".into(),
            tasks: vec![(id("2.1"), "French".into()), (id("2.2"), "German".into())],
        },
    ]
}

/// An event log from `(ts, json without ts)` pairs.
fn log(lines: &[(u64, &str)]) -> Vec<Record> {
    let text: Vec<String> =
        lines.iter().map(|(ts, json)| format!("{},\"ts\":{ts}}}", json.strip_suffix('}').unwrap())).collect();
    parse(&text.join("\n"))
}

const STARTED: &str = r#"{"event":"run_started","run_id":"a1b2c3","resumed":false}"#;

fn task(row: &Timeline, task: &str) -> TaskRow {
    row.tasks().find(|t| t.id == id(task)).unwrap().clone()
}

fn parts(row: &TaskRow) -> Vec<(Part, u64, u64)> {
    row.bars.iter().map(|bar| (bar.part, bar.span.from, bar.span.to)).collect()
}

fn finished_run() -> Vec<Record> {
    log(&[
        (0, r#"{"event":"step","step":"exclude","target":"info/exclude","at":"intent"}"#),
        (10, STARTED),
        (10, r#"{"event":"phase_started","phase":1,"name":"Foundation","strategy":"sequential","tasks":1}"#),
        (11, r#"{"event":"task_started","task":"1.1","name":"Add schema"}"#),
        (20, r#"{"event":"task_activity","task":"1.1","activity":"agent"}"#),
        (25, r#"{"event":"task_activity","task":"1.1","activity":"agent","detail":"Reading a file"}"#),
        (100, r#"{"event":"task_activity","task":"1.1","activity":"committing"}"#),
        (110, r#"{"event":"task_activity","task":"1.1","activity":"verifying"}"#),
        (150, r#"{"event":"task_finished","task":"1.1","name":"Add schema","ok":true,"error":null}"#),
        (151, r#"{"event":"phase_finished","phase":1,"ok":true}"#),
        (160, r#"{"event":"phase_started","phase":2,"name":"Languages","strategy":"parallel","tasks":2}"#),
        (161, r#"{"event":"task_activity","task":"2.1","activity":"preparing"}"#),
        (162, r#"{"event":"task_activity","task":"2.2","activity":"preparing"}"#),
        (170, r#"{"event":"task_started","task":"2.1","name":"French"}"#),
        (180, r#"{"event":"task_started","task":"2.2","name":"German"}"#),
        (181, r#"{"event":"task_activity","task":"2.1","activity":"agent"}"#),
        (182, r#"{"event":"task_activity","task":"2.2","activity":"agent"}"#),
        (200, r#"{"event":"task_activity","task":"2.1","activity":"committing"}"#),
        (210, r#"{"event":"task_finished","task":"2.1","name":"French","ok":true,"error":null}"#),
        (300, r#"{"event":"task_activity","task":"2.2","activity":"committing"}"#),
        (305, r#"{"event":"task_finished","task":"2.2","name":"German","ok":true,"error":null}"#),
        (306, r#"{"event":"phase_linearizing","phase":2,"branches":["a","b"]}"#),
        (350, r#"{"event":"phase_finished","phase":2,"ok":true}"#),
        (360, r#"{"event":"run_finished","run_id":"a1b2c3","ok":true,"stack":[],"message":"done"}"#),
    ])
}

#[test]
fn each_activity_lasts_until_the_next_and_stacking_until_the_phase_finished() {
    let timeline = Timeline::build("a1b2c3", &outline(), &finished_run(), RunState::Done, 9999);
    assert_eq!(timeline.span, Span { from: 0, to: 360 });
    assert!(timeline.pauses.is_empty());
    assert_eq!(
        parts(&task(&timeline, "1.1")),
        [
            (Part::Preparing, 11, 20),
            (Part::Agent, 20, 100),
            (Part::Committing, 100, 110),
            (Part::Verifying, 110, 150)
        ],
        "a sequential task prepares from its start; the agent's details do not split its bar"
    );
    assert_eq!(
        parts(&task(&timeline, "2.2")),
        [(Part::Preparing, 162, 182), (Part::Agent, 182, 300), (Part::Committing, 300, 305)],
        "a parallel task prepares from its preparing activity, through task_started"
    );
    let languages = &timeline.phases[1];
    assert_eq!(languages.spans, [Span { from: 160, to: 350 }]);
    assert_eq!(languages.stacking.len(), 1);
    assert_eq!(languages.stacking[0].span, Span { from: 306, to: 350 });
    assert!(timeline.phases[0].stacking.is_empty(), "a sequential phase is stacked as it goes");
    assert!(timeline.tasks().all(|task| task.state == TaskState::Verified));

    let sums = timeline.sums();
    assert_eq!(sums.of(Part::Preparing), 9 + 20 + 20);
    assert_eq!(sums.of(Part::Agent), 80 + 19 + 118);
    assert_eq!(sums.of(Part::Committing), 10 + 10 + 5);
    assert_eq!(sums.of(Part::Verifying), 40);
    assert_eq!(sums.of(Part::Stacking), 44);
    assert_eq!((sums.wall_ms, sums.paused_ms, sums.attempts), (360, 0, 1));
}

#[test]
fn a_failed_task_ends_in_the_part_it_failed_in_with_its_error() {
    let records = log(&[
        (0, STARTED),
        (1, r#"{"event":"phase_started","phase":1,"name":"Foundation","strategy":"sequential","tasks":1}"#),
        (2, r#"{"event":"task_started","task":"1.1","name":"Add schema"}"#),
        (5, r#"{"event":"task_activity","task":"1.1","activity":"agent"}"#),
        (9, r#"{"event":"task_finished","task":"1.1","name":"Add schema","ok":false,"error":"exit 3"}"#),
        (10, r#"{"event":"phase_finished","phase":1,"ok":false}"#),
        (11, r#"{"event":"run_finished","run_id":"a1b2c3","ok":false,"stack":[],"message":"stopped"}"#),
    ]);
    let timeline = Timeline::build("a1b2c3", &outline(), &records, RunState::Failed, 9999);
    let failed = task(&timeline, "1.1");
    assert_eq!(failed.state, TaskState::Failed);
    assert_eq!(failed.error.as_deref(), Some("exit 3"));
    assert_eq!(failed.bars[0].end, End::Done);
    assert_eq!(
        failed.bars[1],
        Bar { part: Part::Agent, span: Span { from: 5, to: 9 }, end: End::Failed("exit 3".into()) }
    );
    for never in ["2.1", "2.2"] {
        let row = task(&timeline, never);
        assert_eq!((row.state, row.bars.len()), (TaskState::NotRun, 0), "{never} has its row, empty");
    }
}

#[test]
fn a_resumed_run_pauses_between_its_attempts() {
    let records = log(&[
        (0, STARTED),
        (1, r#"{"event":"phase_started","phase":1,"name":"Foundation","strategy":"sequential","tasks":1}"#),
        (2, r#"{"event":"task_started","task":"1.1","name":"Add schema"}"#),
        (5, r#"{"event":"task_activity","task":"1.1","activity":"agent"}"#),
        (40, r#"{"event":"step","step":"agent","target":"1.1","at":"intent"}"#),
        // Killed here; resumed an hour later.
        (3_600_000, r#"{"event":"step","step":"worktree-repair","target":"main","at":"intent"}"#),
        (3_600_010, r#"{"event":"notice","message":"found task 1.1 interrupted"}"#),
        (3_600_020, r#"{"event":"run_started","run_id":"a1b2c3","resumed":true}"#),
        (
            3_600_021,
            r#"{"event":"phase_started","phase":1,"name":"Foundation","strategy":"sequential","tasks":1}"#,
        ),
        (3_600_022, r#"{"event":"task_started","task":"1.1","name":"Add schema"}"#),
        (3_600_030, r#"{"event":"task_activity","task":"1.1","activity":"agent"}"#),
        (3_600_050, r#"{"event":"task_finished","task":"1.1","name":"Add schema","ok":true,"error":null}"#),
        (3_600_051, r#"{"event":"phase_finished","phase":1,"ok":true}"#),
        (3_600_060, r#"{"event":"run_finished","run_id":"a1b2c3","ok":true,"stack":[],"message":"done"}"#),
    ]);
    let timeline = Timeline::build("a1b2c3", &outline(), &records, RunState::Done, 9_999_999);
    assert_eq!(
        timeline.pauses,
        [Span { from: 40, to: 3_600_000 }],
        "the pause ends where the resume prepares"
    );
    let row = task(&timeline, "1.1");
    assert_eq!(
        (row.state, row.outcome().as_str()),
        (TaskState::Verified, "verified"),
        "interrupted is not failed"
    );
    assert_eq!(row.bars[1], Bar { part: Part::Agent, span: Span { from: 5, to: 40 }, end: End::Interrupted });
    assert_eq!(row.bars[3].span, Span { from: 3_600_030, to: 3_600_050 });
    assert_eq!(timeline.phases[0].spans, [Span { from: 1, to: 40 }, Span { from: 3_600_021, to: 3_600_051 }]);

    let sums = timeline.sums();
    assert_eq!(
        (sums.wall_ms, sums.paused_ms, sums.running_ms(), sums.attempts),
        (3_600_060, 3_599_960, 100, 2)
    );
    assert_eq!(timeline.running_offset(40), 40);
    assert_eq!(timeline.running_offset(1_000_000), 40, "a time inside the pause sits where it begins");
    assert_eq!(timeline.running_offset(3_600_000), 40);
    assert_eq!(timeline.running_offset(3_600_060), 100);
}

#[test]
fn a_running_run_is_drawn_until_now() {
    let records = log(&[
        (0, STARTED),
        (1, r#"{"event":"phase_started","phase":2,"name":"Languages","strategy":"parallel","tasks":2}"#),
        (2, r#"{"event":"task_activity","task":"2.1","activity":"preparing"}"#),
        (3, r#"{"event":"task_started","task":"2.1","name":"French"}"#),
        (4, r#"{"event":"task_activity","task":"2.1","activity":"agent"}"#),
    ]);
    let timeline = Timeline::build("a1b2c3", &outline(), &records, RunState::Running, 500);
    assert_eq!(timeline.span, Span { from: 0, to: 500 });
    let row = task(&timeline, "2.1");
    assert_eq!(row.state, TaskState::Running);
    assert_eq!(row.bars[1], Bar { part: Part::Agent, span: Span { from: 4, to: 500 }, end: End::Open });
    assert_eq!(timeline.phases[1].spans, [Span { from: 1, to: 500 }]);
    assert_eq!(task(&timeline, "2.2").state, TaskState::NotRun);

    let stopped = Timeline::build("a1b2c3", &outline(), &records, RunState::Interrupted, 500);
    assert_eq!(stopped.span.to, 4, "a run whose process died ends at its last event");
    assert_eq!(task(&stopped, "2.1").state, TaskState::Interrupted);
}

#[test]
fn tasks_and_phases_missing_from_the_outline_get_rows_in_order() {
    let records = log(&[
        (0, STARTED),
        (1, r#"{"event":"task_activity","task":"3.2","activity":"preparing"}"#),
        (2, r#"{"event":"task_started","task":"3.2","name":"Late"}"#),
        (3, r#"{"event":"task_finished","task":"3.1","name":"Early","ok":false,"error":"gone"}"#),
    ]);
    let timeline = Timeline::build("a1b2c3", &outline(), &records, RunState::Failed, 0);
    let labels: Vec<String> = timeline.tasks().map(TaskRow::label).collect();
    assert_eq!(labels, ["1.1 Add schema", "2.1 French", "2.2 German", "3.1 Early", "3.2 Late"]);
    let early = task(&timeline, "3.1");
    assert_eq!(
        early.bars,
        [Bar { part: Part::Agent, span: Span { from: 3, to: 3 }, end: End::Failed("gone".into()) }]
    );
}

#[test]
fn a_task_retried_after_a_failure_says_so() {
    let records = log(&[
        (0, STARTED),
        (1, r#"{"event":"task_started","task":"1.1","name":"Add schema"}"#),
        (2, r#"{"event":"task_finished","task":"1.1","name":"Add schema","ok":false,"error":"no"}"#),
        (3, r#"{"event":"run_finished","run_id":"a1b2c3","ok":false,"stack":[],"message":"stopped"}"#),
        (9, STARTED),
        (10, r#"{"event":"task_started","task":"1.1","name":"Add schema"}"#),
        (11, r#"{"event":"task_finished","task":"1.1","name":"Add schema","ok":false,"error":"still no"}"#),
    ]);
    let timeline = Timeline::build("a1b2c3", &outline(), &records, RunState::Failed, 0);
    let row = task(&timeline, "1.1");
    assert_eq!(row.outcome(), "failed after 1 failed attempt");
    assert_eq!(row.error.as_deref(), Some("still no"));
    assert_eq!(timeline.pauses, [Span { from: 3, to: 9 }]);
}
