//! One self-contained HTML page: the SVG inline, then the sums per part and a table of the
//! tasks. No script, no stylesheet or font from elsewhere: it opens anywhere, offline.

use std::fmt::Write;

use super::axis::duration;
use super::model::{Part, TaskState, Timeline};
use super::svg::{self, colour, escape};

const STYLE: &str = "body{font-family:'DejaVu Sans',Verdana,Arial,sans-serif;margin:16px;color:#222}\
h2{font-size:15px;margin:20px 0 6px}p{font-size:13px;color:#555}table{border-collapse:collapse;font-size:13px}\
th,td{padding:3px 12px 3px 0;border-bottom:1px solid #e3e3e3;text-align:left;vertical-align:top}\
td.ms{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}\
.swatch{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:6px}\
tr.failed td{color:#b71c1c}.error{max-width:560px;word-break:break-word}";

pub fn render(timeline: &Timeline) -> String {
    let id = escape(&timeline.run_id);
    let mut out = format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>wt run {id}: timeline</title>\n<style>{STYLE}</style>\n</head>\n<body>\n"
    );
    out.push_str(&svg::render(timeline));
    sums_table(&mut out, timeline);
    tasks_table(&mut out, timeline);
    out.push_str("</body>\n</html>\n");
    out
}

fn sums_table(out: &mut String, timeline: &Timeline) {
    let sums = timeline.sums();
    let task_time: u64 = Part::ALL.iter().map(|&part| sums.of(part)).sum();
    out.push_str("<h2>Where the time went</h2>\n<table id=\"sums\">\n<tr><th>part</th><th>time</th><th>share</th></tr>\n");
    for part in Part::ALL {
        let ms = sums.of(part);
        let share = if task_time == 0 { 0.0 } else { ms as f64 * 100.0 / task_time as f64 };
        let _ = writeln!(
            out,
            "<tr><td><span class=\"swatch\" style=\"background:{}\"></span>{}</td>\
             <td class=\"ms\" data-part=\"{}\" data-ms=\"{ms}\">{}</td><td class=\"ms\">{share:.0} %</td></tr>",
            colour(part),
            part.label(),
            part.key(),
            duration(ms)
        );
    }
    let _ = writeln!(
        out,
        "<tr><th>wall time</th><td class=\"ms\" data-part=\"wall\" data-ms=\"{}\">{}</td><td></td></tr>",
        sums.wall_ms,
        duration(sums.wall_ms)
    );
    if sums.attempts > 1 {
        let _ = writeln!(
            out,
            "<tr><td>of it running, in {} attempts</td><td class=\"ms\" data-part=\"running\" data-ms=\"{}\">{}</td>\
             <td></td></tr>\n<tr><td>paused between attempts</td><td class=\"ms\" data-part=\"paused\" \
             data-ms=\"{}\">{}</td><td></td></tr>",
            sums.attempts,
            sums.running_ms(),
            duration(sums.running_ms()),
            sums.paused_ms,
            duration(sums.paused_ms)
        );
    }
    out.push_str(
        "</table>\n<p>The parts add up the time of every task, so parallel tasks count each; \
                  stacking counts once per phase.</p>\n",
    );
}

fn tasks_table(out: &mut String, timeline: &Timeline) {
    out.push_str("<h2>Tasks</h2>\n<table id=\"tasks\">\n<tr><th>task</th><th>state</th>");
    for part in &Part::ALL[..4] {
        let _ = write!(out, "<th>{}</th>", part.label());
    }
    out.push_str("<th>error</th></tr>\n");
    for task in timeline.tasks() {
        let class = if task.state == TaskState::Failed { " class=\"failed\"" } else { "" };
        let _ = write!(
            out,
            "<tr{class} data-task=\"{}\"><td>{}</td><td>{}</td>",
            task.id,
            escape(&task.label()),
            task.outcome()
        );
        for &part in &Part::ALL[..4] {
            let ms = task.time_in(part);
            let _ = write!(
                out,
                "<td class=\"ms\" data-ms=\"{ms}\">{}</td>",
                if ms == 0 { String::new() } else { duration(ms) }
            );
        }
        let error = task.error.as_deref().map(escape).unwrap_or_default();
        let _ = writeln!(out, "<td class=\"error\">{error}</td></tr>");
    }
    out.push_str("</table>\n");
}
