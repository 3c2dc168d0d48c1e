use super::*;
use crate::ui::timeline::model::PhaseOutline;
use crate::ui::timeline::records::parse;

const HOUR: u64 = 3_600_000;

/// A run of one phase with a task named to break markup, a task that fails in a millisecond
/// and one that takes two hours; `resume` adds a second attempt after a day.
fn timeline(resume: bool) -> Timeline {
    let outline = vec![PhaseOutline {
        number: 1,
        name: "Build <all> & \"ship\"".into(),
        strategy: "parallel".into(),
        tasks: vec![
            ("1.1".parse().unwrap(), "Add <script>alert('x')</script> & \"quotes\"".into()),
            ("1.2".parse().unwrap(), "Quick".into()),
            ("1.3".parse().unwrap(), "Long".into()),
        ],
    }];
    let mut lines = vec![
        (0, r#"{"event":"run_started"}"#.to_owned()),
        (0, r#"{"event":"phase_started","phase":1,"name":"Build"}"#.to_owned()),
        (1, r#"{"event":"task_started","task":"1.1","name":"x"}"#.to_owned()),
        (2, r#"{"event":"task_activity","task":"1.1","activity":"agent"}"#.to_owned()),
        (10, r#"{"event":"task_finished","task":"1.1","name":"x","ok":true}"#.to_owned()),
        (1, r#"{"event":"task_started","task":"1.2","name":"Quick"}"#.to_owned()),
        (2, r#"{"event":"task_activity","task":"1.2","activity":"verifying"}"#.to_owned()),
        (3, r#"{"event":"task_finished","task":"1.2","name":"Quick","ok":false,"error":"verify <exit 1> & \"more\""}"#.to_owned()),
        (5, r#"{"event":"task_started","task":"1.3","name":"Long"}"#.to_owned()),
        (6, r#"{"event":"task_activity","task":"1.3","activity":"agent"}"#.to_owned()),
        (2 * HOUR, r#"{"event":"task_finished","task":"1.3","name":"Long","ok":true}"#.to_owned()),
    ];
    if resume {
        lines.push((26 * HOUR, r#"{"event":"run_started"}"#.to_owned()));
        lines.push((26 * HOUR + 1, r#"{"event":"phase_linearizing","phase":1}"#.to_owned()));
        lines.push((26 * HOUR + 900, r#"{"event":"phase_finished","phase":1,"ok":true}"#.to_owned()));
    }
    let text: Vec<String> = lines
        .into_iter()
        .map(|(ts, json)| format!("{},\"ts\":{ts}}}", json.strip_suffix('}').unwrap()))
        .collect();
    Timeline::build("a1b2c3", &outline, &parse(&text.join("\n")), RunState::Failed, 0)
}

/// The attributes of the `<rect>` bars of a task.
fn bars_of(svg: &str, task: &str) -> Vec<String> {
    let mark = format!("data-task=\"{task}\"");
    svg.lines()
        .filter(|line| line.starts_with("<rect class=\"bar") && line.contains(&mark))
        .map(str::to_owned)
        .collect()
}

fn width(rect: &str) -> f64 {
    let start = rect.find(" width=\"").unwrap() + 8;
    rect[start..].split('"').next().unwrap().parse().unwrap()
}

#[test]
fn text_from_plans_and_logs_is_escaped() {
    assert_eq!(escape("a<b>&\"c\"'d'"), "a&lt;b&gt;&amp;&quot;c&quot;&#39;d&#39;");
    assert_eq!(escape("tab\there\u{1}bell\u{7f}"), "tab\there\u{fffd}bell\u{fffd}");
    let svg = render(&timeline(false));
    assert!(!svg.contains("<script>") && !svg.contains("<all>") && !svg.contains("<exit 1>"));
    assert!(
        svg.contains("1.1 Add &lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;quotes&quot;"),
        "{svg}"
    );
    assert!(svg.contains("Build &lt;all&gt; &amp; &quot;ship&quot;"));
    // Every tag the document opens is one it writes itself.
    let tags: std::collections::BTreeSet<&str> = svg
        .split('<')
        .skip(1)
        .map(|rest| rest.split([' ', '>', '/', '\n']).next().unwrap())
        .filter(|name| !name.is_empty())
        .collect();
    let ours = ["svg", "title", "style", "defs", "pattern", "rect", "line", "text", "tspan", "g"];
    assert!(tags.iter().all(|tag| ours.contains(tag)), "unexpected tags: {tags:?}");
}

#[test]
fn a_failed_part_is_red_with_its_error_as_tooltip() {
    let svg = render(&timeline(false));
    let quick = bars_of(&svg, "1.2");
    assert_eq!(quick.len(), 2);
    assert!(
        quick[1].contains(&format!("fill=\"{FAILED}\""))
            && quick[1].contains("class=\"bar verifying failed\"")
    );
    assert!(quick[1].contains("failed: verify &lt;exit 1&gt; &amp; &quot;more&quot;"), "{}", quick[1]);
    assert!(bars_of(&svg, "1.3").iter().all(|bar| !bar.contains(FAILED)));
    assert!(svg.contains("class=\"label mono failed\" data-task=\"1.2\""));
}

#[test]
fn a_millisecond_part_of_a_two_hour_run_stays_visible() {
    let svg = render(&timeline(false));
    for bar in bars_of(&svg, "1.2") {
        assert!(width(&bar) >= MIN_BAR, "{bar}");
    }
    let long = &bars_of(&svg, "1.3")[1];
    assert!(width(long) > 600.0, "{long}");
    for tick in ["15 min", "1 h", "1 h 45 min", "2 h"] {
        assert!(svg.contains(&format!(">{tick}</text>")), "tick {tick}");
    }
}

#[test]
fn a_pause_between_attempts_is_cut_out_and_marked() {
    let resumed = timeline(true);
    let svg = render(&resumed);
    assert_eq!(svg.matches("<g class=\"pause\">").count(), 1);
    assert!(svg.contains("<title>not running for 24 h 00 min: resumed at 1970-01-02 02:00 UTC</title>"));
    assert!(svg.contains(">24 h 00 min</text>"), "the strip says how long, as much as fits: {svg}");
    assert!(svg.contains("running time (pauses cut out)"));
    let stacking: Vec<&str> = svg.lines().filter(|line| line.contains("data-phase=\"1\"")).collect();
    assert_eq!(stacking.len(), 1);
    // The day-long pause takes a strip, not the picture: stacking starts right after it.
    assert!(Scale::new(&resumed).x(26 * HOUR + 1) < PLOT_RIGHT);
    assert!(svg.contains("wall time 26 h 00 min, of it 2 h 00 min running in 2 attempts"));
}

#[test]
fn long_labels_are_cut_with_the_whole_label_as_tooltip() {
    assert_eq!(truncate("short", 10), "short");
    assert_eq!(truncate("a longer label", 8), "a longe…");
    let svg = render(&timeline(false));
    assert!(svg.contains("1.1 Add &lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;…<title>"));
}
