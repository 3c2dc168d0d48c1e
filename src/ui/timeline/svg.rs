//! The picture: a standalone SVG of a [`Timeline`]. A header (run, state, wall time), a legend
//! that carries the per-part sums, a time axis, then per phase a band with its name and span,
//! one row per task with its parts as bars, and a row for the phase's stacking. Pauses between
//! attempts are cut out of the axis and drawn as a hatched strip; failures are red with their
//! error as the bar's tooltip. Every text from a plan or a log is escaped.

use std::fmt::Write;

use super::axis::{duration, ticks, utc};
use super::model::{Bar, End, Part, PhaseRow, RunState, Sums, TaskRow, TaskState, Timeline};

pub const FAILED: &str = "#d62728";
const WIDTH: f64 = 1120.0;
const LABEL_X: f64 = 12.0;
const PLOT_X: f64 = 330.0;
const PLOT_RIGHT: f64 = WIDTH - 60.0;
const ROW: f64 = 20.0;
const BAR: f64 = 12.0;
/// The narrowest bar drawn: a part of a few milliseconds in an hour-long run stays visible,
/// and a failure more so.
const MIN_BAR: f64 = 2.0;
const MIN_FAILED_BAR: f64 = 4.0;
/// Characters of a row label (12 px monospace is 7.2 px a character: the label column).
const LABEL_CHARS: usize = 42;
const MAX_PAUSE: f64 = 36.0;
const MIN_TICK_SPACING: f64 = 70.0;

pub fn colour(part: Part) -> &'static str {
    match part {
        Part::Preparing => "#a0a7b4",
        Part::Agent => "#4e79a7",
        Part::Committing => "#f28e2b",
        Part::Verifying => "#59a14f",
        Part::Stacking => "#b07aa1",
    }
}

const STYLE: &str = "text{font-family:'DejaVu Sans',Verdana,Arial,sans-serif;font-size:12px;fill:#222}\
.mono{font-family:'DejaVu Sans Mono',Menlo,Consolas,monospace}\
.title{font-size:16px;font-weight:bold}.sub{fill:#555}\
.tick{font-size:10px;fill:#666;text-anchor:middle}.grid{stroke:#e6e6e6;stroke-width:1}\
.phase{font-weight:bold}.stack-label{font-style:italic;fill:#666}.not-run{fill:#999}\
.label.failed{fill:#b71c1c}.pause-label{font-size:10px;fill:#555}";

/// Where things go: times to x through the run's axis with its pauses cut out.
struct Scale<'t> {
    timeline: &'t Timeline,
    px_per_ms: f64,
    pause_px: f64,
}

impl<'t> Scale<'t> {
    fn new(timeline: &'t Timeline) -> Scale<'t> {
        let plot = PLOT_RIGHT - PLOT_X;
        let pauses = timeline.pauses.len() as f64;
        let pause_px = if pauses == 0.0 { 0.0 } else { MAX_PAUSE.min(plot * 0.25 / pauses) };
        let running = timeline.running_offset(timeline.span.to).max(1) as f64;
        Scale { timeline, px_per_ms: (plot - pauses * pause_px) / running, pause_px }
    }

    /// The x of a moment of the run.
    fn x(&self, t: u64) -> f64 {
        let pauses_before = self.timeline.pauses.iter().filter(|pause| pause.to <= t).count();
        PLOT_X
            + self.timeline.running_offset(t) as f64 * self.px_per_ms
            + pauses_before as f64 * self.pause_px
    }

    /// The x of a point of the axis (running time): before a pause that starts there.
    fn x_running(&self, offset: u64) -> f64 {
        let pauses_before = self
            .timeline
            .pauses
            .iter()
            .filter(|pause| self.timeline.running_offset(pause.from) < offset)
            .count();
        PLOT_X + offset as f64 * self.px_per_ms + pauses_before as f64 * self.pause_px
    }
}

enum Row<'t> {
    Phase(&'t PhaseRow),
    Task(&'t TaskRow),
    Stacking(&'t PhaseRow),
}

/// The SVG document of `timeline`.
pub fn render(timeline: &Timeline) -> String {
    let sums = timeline.sums();
    let scale = Scale::new(timeline);
    let mut out = String::new();
    let mut y = header(&mut out, timeline, &sums);
    y = legend(&mut out, timeline, &sums, y + 8.0);
    let axis_y = y + 26.0;
    let rows = rows(timeline);
    let rows_top = axis_y + 6.0;
    let rows_bottom = rows_top + rows.len() as f64 * ROW;
    let height = rows_bottom + 34.0;
    bands(&mut out, &rows, rows_top);
    axis(&mut out, timeline, &scale, axis_y, rows_bottom);
    pauses(&mut out, timeline, &scale, axis_y, rows_bottom);
    for (k, row) in rows.iter().enumerate() {
        let top = rows_top + k as f64 * ROW;
        match row {
            Row::Phase(phase) => phase_row(&mut out, phase, &scale, top),
            Row::Task(task) => task_row(&mut out, task, &scale, top),
            Row::Stacking(phase) => stacking_row(&mut out, phase, &scale, top),
        }
    }
    if timeline.state.is_live() {
        now_line(&mut out, &scale, timeline, axis_y, rows_bottom);
    }
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{height}\" \
         viewBox=\"0 0 {WIDTH} {height}\" role=\"img\" aria-label=\"timeline of run {id}\">\n\
         <title>wt run {id}: timeline</title>\n<style>{STYLE}</style>\n\
         <defs><pattern id=\"paused\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" \
         patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"#f2f2f2\"/>\
         <line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#bdbdbd\" stroke-width=\"2\"/></pattern></defs>\n\
         <rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n{out}</svg>\n",
        id = escape(&timeline.run_id),
    )
}

/// The title (run, state, what became of the tasks) and the line under it (when, how long);
/// returns the y below them.
fn header(out: &mut String, timeline: &Timeline, sums: &Sums) -> f64 {
    let state = match timeline.state {
        RunState::Running => "running (drawn up to now)".to_owned(),
        RunState::Dispatched => "running: subagents out (drawn up to now)".to_owned(),
        other => other.as_str().to_owned(),
    };
    let _ = writeln!(
        out,
        "<text x=\"{LABEL_X}\" y=\"26\"><tspan class=\"title\">wt run {} · {}</tspan>\
         <tspan class=\"sub\"> · {}</tspan></text>",
        escape(&timeline.run_id),
        escape(&state),
        escape(&task_counts(timeline))
    );
    let mut wall = format!("wall time {}", duration(sums.wall_ms));
    if sums.attempts > 1 {
        let _ = write!(
            wall,
            ", of it {} running in {} attempts ({} paused between them)",
            duration(sums.running_ms()),
            sums.attempts,
            duration(sums.paused_ms)
        );
    }
    let _ = writeln!(
        out,
        "<text class=\"sub\" x=\"{LABEL_X}\" y=\"46\">started {} · <tspan class=\"sum\" data-part=\"wall\" \
         data-ms=\"{}\">{}</tspan></text>",
        utc(timeline.span.from),
        sums.wall_ms,
        escape(&wall),
    );
    46.0
}

/// `5 tasks: 3 verified, 1 failed, 1 not run`.
fn task_counts(timeline: &Timeline) -> String {
    let states = [
        (TaskState::Verified, "verified"),
        (TaskState::Failed, "failed"),
        (TaskState::Running, "running"),
        (TaskState::Interrupted, "interrupted"),
        (TaskState::NotRun, "not run"),
    ];
    let counts: Vec<String> = states
        .iter()
        .filter_map(|(state, name)| {
            let n = timeline.tasks().filter(|task| task.state == *state).count();
            (n > 0).then(|| format!("{n} {name}"))
        })
        .collect();
    format!("{} tasks: {}", timeline.tasks().count(), counts.join(", "))
}

/// The swatches, each part with its sum; wraps at the right edge. Returns the y of its last line.
fn legend(out: &mut String, timeline: &Timeline, sums: &Sums, top: f64) -> f64 {
    let bars = || timeline.tasks().flat_map(|task| &task.bars);
    let mut entries: Vec<(String, String, String)> = Part::ALL
        .iter()
        .map(|&part| {
            let ms = sums.of(part);
            let text = format!("{} {}", part.label(), duration(ms));
            let swatch = format!("fill=\"{}\"", colour(part));
            (swatch, text, format!(" class=\"sum\" data-part=\"{}\" data-ms=\"{ms}\"", part.key()))
        })
        .collect();
    if bars().any(|bar| matches!(bar.end, End::Failed(_))) {
        entries.push((format!("fill=\"{FAILED}\""), "failed (hover for the error)".into(), String::new()));
    }
    if bars().any(|bar| bar.end == End::Interrupted) {
        entries.push(("fill=\"#a0a7b4\" fill-opacity=\"0.4\"".into(), "interrupted".into(), String::new()));
    }
    if !timeline.pauses.is_empty() {
        entries.push((
            "fill=\"url(#paused)\" stroke=\"#bdbdbd\"".into(),
            "not running (between attempts)".into(),
            String::new(),
        ));
    }
    let (mut x, mut y) = (LABEL_X, top + 14.0);
    for (swatch, text, attributes) in entries {
        let width = 17.0 + text.chars().count() as f64 * 6.8 + 20.0;
        if x + width > WIDTH - LABEL_X && x > LABEL_X {
            (x, y) = (LABEL_X, y + 20.0);
        }
        let _ = writeln!(
            out,
            "<rect x=\"{x}\" y=\"{}\" width=\"12\" height=\"12\" rx=\"2\" {swatch}/>\
             <text x=\"{}\" y=\"{y}\"{attributes}>{}</text>",
            y - 10.0,
            x + 17.0,
            escape(&text)
        );
        x += width;
    }
    y
}

fn rows(timeline: &Timeline) -> Vec<Row<'_>> {
    let mut rows = Vec::new();
    for phase in &timeline.phases {
        rows.push(Row::Phase(phase));
        rows.extend(phase.tasks.iter().map(Row::Task));
        if !phase.stacking.is_empty() {
            rows.push(Row::Stacking(phase));
        }
    }
    rows
}

/// A light band behind every other phase, from its name row to its last row.
fn bands(out: &mut String, rows: &[Row], top: f64) {
    let starts: Vec<usize> =
        rows.iter().enumerate().filter(|(_, row)| matches!(row, Row::Phase(_))).map(|(k, _)| k).collect();
    for (n, &from) in starts.iter().enumerate().skip(1).step_by(2) {
        let to = starts.get(n + 1).copied().unwrap_or(rows.len());
        let _ = writeln!(
            out,
            "<rect class=\"band\" x=\"0\" y=\"{}\" width=\"{WIDTH}\" height=\"{}\" fill=\"#f3f5f8\"/>",
            top + from as f64 * ROW,
            (to - from) as f64 * ROW
        );
    }
}

fn axis(out: &mut String, timeline: &Timeline, scale: &Scale, y: f64, bottom: f64) {
    let running = timeline.running_offset(timeline.span.to);
    let room =
        ((PLOT_RIGHT - PLOT_X - timeline.pauses.len() as f64 * scale.pause_px) / MIN_TICK_SPACING) as u64;
    let caption =
        if timeline.pauses.is_empty() { "time since start" } else { "running time (pauses cut out)" };
    let _ = writeln!(out, "<text class=\"sub\" x=\"{LABEL_X}\" y=\"{}\">{caption}</text>", y - 6.0);
    for (offset, label) in ticks(running, room) {
        let x = scale.x_running(offset);
        let _ = writeln!(
            out,
            "<line class=\"grid\" x1=\"{x:.1}\" y1=\"{y}\" x2=\"{x:.1}\" y2=\"{bottom}\"/>\
             <text class=\"tick\" x=\"{x:.1}\" y=\"{}\">{}</text>",
            y - 6.0,
            escape(&label)
        );
    }
    let _ = writeln!(
        out,
        "<line x1=\"{PLOT_X}\" y1=\"{y}\" x2=\"{PLOT_RIGHT}\" y2=\"{y}\" stroke=\"#999\" stroke-width=\"1\"/>"
    );
}

fn pauses(out: &mut String, timeline: &Timeline, scale: &Scale, top: f64, bottom: f64) {
    for pause in &timeline.pauses {
        let x = scale.x(pause.from);
        let length = duration(pause.length());
        let tooltip = format!("not running for {length}: resumed at {}", utc(pause.to));
        // Written down the strip, if it fits there (10 px text is 6 px a character).
        let room = ((bottom - top - 12.0) / 6.0) as usize;
        let label =
            [format!("paused {length}"), length].into_iter().find(|label| label.chars().count() <= room);
        let label = label.map_or_else(String::new, |label| {
            format!(
                "<text class=\"pause-label\" transform=\"translate({:.1},{}) rotate(90)\">{label}</text>",
                x + scale.pause_px / 2.0 - 3.0,
                top + 6.0
            )
        });
        let _ = writeln!(
            out,
            "<g class=\"pause\"><rect x=\"{x:.1}\" y=\"{top}\" width=\"{:.1}\" height=\"{}\" \
             fill=\"url(#paused)\"><title>{}</title></rect>{label}</g>",
            scale.pause_px,
            bottom - top,
            escape(&tooltip),
        );
    }
}

fn phase_row(out: &mut String, phase: &PhaseRow, scale: &Scale, top: f64) {
    let mut title = format!("Phase {} · {}", phase.number, phase.name);
    if !phase.strategy.is_empty() {
        let _ = write!(title, " · {}", phase.strategy);
    }
    let _ = writeln!(
        out,
        "<text class=\"phase mono\" x=\"{LABEL_X}\" y=\"{}\">{}<title>{}</title></text>",
        top + 14.5,
        escape(&truncate(&title, LABEL_CHARS)),
        escape(&title)
    );
    for span in &phase.spans {
        let (x0, x1) = (scale.x(span.from), scale.x(span.to));
        let _ = writeln!(
            out,
            "<rect class=\"phase-span\" x=\"{x0:.1}\" y=\"{}\" width=\"{:.1}\" height=\"4\" fill=\"#8a8f98\">\
             <title>phase {} {}: {}</title></rect>",
            top + 10.0,
            (x1 - x0).max(MIN_BAR),
            phase.number,
            escape(&phase.name),
            duration(span.length())
        );
    }
}

fn task_row(out: &mut String, task: &TaskRow, scale: &Scale, top: f64) {
    let label = task.label();
    let class = match task.state {
        TaskState::Failed => "label mono failed",
        TaskState::NotRun => "label mono not-run",
        _ => "label mono",
    };
    let mut tooltip = format!("{label}: {}", task.outcome());
    if let Some(error) = &task.error {
        let _ = write!(tooltip, ": {error}");
    }
    let _ = writeln!(
        out,
        "<text class=\"{class}\" data-task=\"{}\" x=\"{}\" y=\"{}\">{}<title>{}</title></text>",
        task.id,
        LABEL_X + 14.0,
        top + 14.5,
        escape(&truncate(&label, LABEL_CHARS - 2)),
        escape(&tooltip)
    );
    for bar in &task.bars {
        let tooltip = format!("{label} · {} {}", bar.part.label(), duration(bar.span.length()));
        draw_bar(out, bar, scale, top, &format!("data-task=\"{}\"", task.id), &tooltip);
    }
}

fn stacking_row(out: &mut String, phase: &PhaseRow, scale: &Scale, top: f64) {
    let _ = writeln!(
        out,
        "<text class=\"stack-label\" x=\"{}\" y=\"{}\">stacking phase {}</text>",
        LABEL_X + 14.0,
        top + 14.5,
        phase.number
    );
    for bar in &phase.stacking {
        let tooltip = format!("phase {} · stacking {}", phase.number, duration(bar.span.length()));
        draw_bar(out, bar, scale, top, &format!("data-phase=\"{}\"", phase.number), &tooltip);
    }
}

fn draw_bar(out: &mut String, bar: &Bar, scale: &Scale, top: f64, data: &str, tooltip: &str) {
    let (x0, x1) = (scale.x(bar.span.from), scale.x(bar.span.to));
    let (fill, extra, note) = match &bar.end {
        End::Done => (colour(bar.part), "", String::new()),
        End::Failed(error) => (FAILED, "", format!(" · failed: {error}")),
        End::Interrupted => (
            colour(bar.part),
            " fill-opacity=\"0.4\" stroke=\"#777\" stroke-dasharray=\"3 2\"",
            " · interrupted: the attempt stopped here".to_owned(),
        ),
        End::Open => (colour(bar.part), "", " · still under way".to_owned()),
    };
    let (failed, min_width) =
        if matches!(bar.end, End::Failed(_)) { (" failed", MIN_FAILED_BAR) } else { ("", MIN_BAR) };
    let _ = writeln!(
        out,
        "<rect class=\"bar {}{failed}\" data-part=\"{}\" {data} x=\"{x0:.1}\" y=\"{}\" width=\"{:.1}\" \
         height=\"{BAR}\" rx=\"2\" fill=\"{fill}\"{extra}><title>{}</title></rect>",
        bar.part.key(),
        bar.part.key(),
        top + (ROW - BAR) / 2.0,
        (x1 - x0).max(min_width),
        escape(&format!("{tooltip}{note}"))
    );
}

fn now_line(out: &mut String, scale: &Scale, timeline: &Timeline, top: f64, bottom: f64) {
    let x = scale.x(timeline.span.to);
    let _ = writeln!(
        out,
        "<line class=\"now\" x1=\"{x:.1}\" y1=\"{top}\" x2=\"{x:.1}\" y2=\"{bottom}\" stroke=\"#333\" \
         stroke-dasharray=\"4 3\"/><text class=\"sub\" x=\"{x:.1}\" y=\"{}\" text-anchor=\"end\">now: {}</text>",
        bottom + 16.0,
        timeline.state.as_str()
    );
}

/// Text for an SVG or HTML text node or attribute value. Control characters (other than tab
/// and newline) are not allowed in XML at all: they become U+FFFD.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\t' | '\n' => out.push(c),
            c if c.is_control() => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

/// At most `chars` characters, the last an ellipsis when cut.
fn truncate(text: &str, chars: usize) -> String {
    if text.chars().count() <= chars {
        return text.to_owned();
    }
    let mut cut: String = text.chars().take(chars.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
#[path = "svg_tests.rs"]
mod tests;
