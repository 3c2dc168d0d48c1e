//! spectacular's `plan.md`: YAML frontmatter (`runId`, `feature`), `## Phase N: <name>` sections
//! with a `**Strategy**: sequential|parallel` line, and `### Task N.M: <name>` sections with
//! bold-labelled fields. Headings inside fenced code are text, and a `## Phase …` section with no
//! strategy (a dependency graph, an execution note) is not a phase. A task's prompt is its whole
//! section.

use std::path::Path;

use super::error::PlanError;
use super::model::{Location, Phase, Strategy, Task, TaskId};
use super::slug::slugify;

pub struct ParsedMarkdown {
    pub run_id: Option<String>,
    pub feature: Option<String>,
    pub phases: Vec<Phase>,
}

/// A line with its 1-based number and whether it sits inside a fenced code block.
struct Line<'a> {
    number: usize,
    text: &'a str,
    fenced: bool,
}

pub fn parse(file: &Path, text: &str) -> Result<ParsedMarkdown, PlanError> {
    let (frontmatter, body_start) = frontmatter(text);
    let lines = lines(text, body_start);
    let at = |number: usize| Location { file: file.to_owned(), line: number, column: 1 };
    let mut phases: Vec<Phase> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = &lines[i];
        let heading = (!line.fenced).then(|| phase_heading(line.text)).flatten();
        let Some(name) = heading else {
            i += 1;
            continue;
        };
        let end = section_end(&lines, i + 1, 2);
        let section = &lines[i + 1..end];
        if let Some(strategy) = strategy(section) {
            let number = phases.len() + 1;
            let tasks = tasks(section, number, &at)?;
            phases.push(Phase { number, name, strategy, tasks, location: at(line.number) });
        }
        i = end;
    }
    Ok(ParsedMarkdown {
        run_id: frontmatter.iter().find(|(k, _)| k == "runId").map(|(_, v)| v.clone()),
        feature: frontmatter.iter().find(|(k, _)| k == "feature").map(|(_, v)| v.clone()),
        phases,
    })
}

/// `key: value` pairs of a leading `---` block, and the byte offset where the body starts.
fn frontmatter(text: &str) -> (Vec<(String, String)>, usize) {
    let mut pairs = Vec::new();
    let Some(rest) = text.strip_prefix("---\n") else { return (pairs, 0) };
    let mut offset = 4;
    for line in rest.split_inclusive('\n') {
        offset += line.len();
        let line = line.trim_end();
        if line == "---" {
            return (pairs, offset);
        }
        if let Some((key, value)) = line.split_once(':') {
            let value = value.trim().trim_matches('"').trim_matches('\'');
            pairs.push((key.trim().to_owned(), value.to_owned()));
        }
    }
    (Vec::new(), 0)
}

fn lines(text: &str, body_start: usize) -> Vec<Line<'_>> {
    let first_line = text[..body_start].matches('\n').count() + 1;
    let mut fenced = false;
    let mut out = Vec::new();
    for (index, raw) in text[body_start..].lines().enumerate() {
        let fence = is_fence(raw);
        if fence {
            fenced = !fenced;
        }
        out.push(Line { number: first_line + index, text: raw, fenced: fenced || fence });
    }
    out
}

/// A code fence line, also one opened inside a list item (`- ```bash`).
fn is_fence(text: &str) -> bool {
    let text = text.trim_start();
    let digits = text.chars().take_while(char::is_ascii_digit).count();
    let text = ["- ", "* ", "+ "]
        .iter()
        .find_map(|marker| text.strip_prefix(marker))
        .or_else(|| (digits > 0).then(|| text[digits..].strip_prefix(". ")).flatten())
        .map_or(text, str::trim_start);
    text.starts_with("```") || text.starts_with("~~~")
}

/// The index of the next heading of `level` or higher (fewer `#`), outside code.
fn section_end(lines: &[Line], from: usize, level: usize) -> usize {
    (from..lines.len())
        .find(|&i| !lines[i].fenced && heading_level(lines[i].text).is_some_and(|l| l <= level))
        .unwrap_or(lines.len())
}

fn heading_level(text: &str) -> Option<usize> {
    let hashes = text.chars().take_while(|&c| c == '#').count();
    (hashes > 0 && text[hashes..].starts_with(' ')).then_some(hashes)
}

/// `## Phase 2: Name`, `## Phase 2 — Name`: the name.
fn phase_heading(text: &str) -> Option<String> {
    let rest = text.strip_prefix("## ")?.trim_start().strip_prefix("Phase ")?;
    let digits = rest.chars().take_while(char::is_ascii_digit).count();
    if digits == 0 {
        return None;
    }
    Some(strip_separator(&rest[digits..])?.to_owned())
}

/// `: name`, ` — name`, ` – name`, ` - name` (the separator is required).
fn strip_separator(text: &str) -> Option<&str> {
    let text = text.trim_start();
    let rest = ["—", "–", ":", "-"].iter().find_map(|sep| text.strip_prefix(sep))?;
    Some(rest.trim())
}

/// The first `**Strategy**: …` (or `**Strategy:** …`) of a phase section, any case.
fn strategy(section: &[Line]) -> Option<Strategy> {
    section.iter().filter(|l| !l.fenced).find_map(|line| {
        let value = labelled(line.text, "Strategy")?;
        match value.split_whitespace().next()?.to_ascii_lowercase().trim_matches(|c: char| !c.is_alphabetic())
        {
            "sequential" => Some(Strategy::Sequential),
            "parallel" => Some(Strategy::Parallel),
            _ => None,
        }
    })
}

/// The text after a bold label (any case): `**Label**: text` or `**Label:** text`.
fn labelled<'a>(text: &'a str, label: &str) -> Option<&'a str> {
    let rest = text.trim_start().strip_prefix("**")?;
    let head = rest.get(..label.len())?;
    if !head.eq_ignore_ascii_case(label) {
        return None;
    }
    let rest = &rest[label.len()..];
    let rest =
        rest.strip_prefix(":**").or_else(|| rest.strip_prefix("**:")).or_else(|| rest.strip_prefix("**"))?;
    Some(rest.trim())
}

fn tasks(section: &[Line], phase: usize, at: &impl Fn(usize) -> Location) -> Result<Vec<Task>, PlanError> {
    let mut tasks = Vec::new();
    let mut i = 0;
    while i < section.len() {
        let line = &section[i];
        let Some(name) = (!line.fenced).then(|| task_heading(line.text)).flatten() else {
            i += 1;
            continue;
        };
        let end = section_end(section, i + 1, 3);
        let body = &section[i + 1..end];
        let id = TaskId { phase, task: tasks.len() + 1 };
        if name.is_empty() {
            return Err(PlanError::at(
                at(line.number),
                format!("task {id} has no name"),
                "write the task's name after its number: `### Task 1.1: Add the schema`",
            ));
        }
        let prompt: Vec<&str> = section[i..end].iter().map(|l| l.text).collect();
        tasks.push(Task {
            id,
            slug: slugify(&name),
            branch: String::new(),
            name,
            prompt: prompt.join("\n").trim_end().to_owned(),
            files: files(body),
            acceptance: list_after(body, "Acceptance Criteria")
                .into_iter()
                .map(|item| strip_checkbox(&item).to_owned())
                .collect(),
            verify: quality_gates(body),
            run: None,
            allow_empty: false,
            timeout: None,
            location: at(line.number),
        });
        i = end;
    }
    Ok(tasks)
}

/// `### Task 1.2: Name`, `### Task 1-2: Name`, `### Task 3: Name`, `### Task 1.2 - Name`.
fn task_heading(text: &str) -> Option<String> {
    let rest = text.strip_prefix("### ")?.trim_start().strip_prefix("Task ")?;
    let mut number_end = rest.chars().take_while(char::is_ascii_digit).count();
    if number_end == 0 {
        return None;
    }
    let after = &rest[number_end..];
    if let Some(second) = after.strip_prefix('.').or_else(|| after.strip_prefix('-')) {
        let digits = second.chars().take_while(char::is_ascii_digit).count();
        if digits > 0 {
            number_end += 1 + digits;
        }
    }
    Some(strip_separator(&rest[number_end..])?.to_owned())
}

/// `**Files**:` as a list of (backticked or plain) paths, or inline backticked paths.
fn files(body: &[Line]) -> Vec<String> {
    let inline =
        body.iter().filter(|l| !l.fenced).find_map(|l| labelled(l.text, "Files")).unwrap_or_default();
    let inline_paths = backticked(inline);
    if !inline_paths.is_empty() {
        return inline_paths;
    }
    list_after(body, "Files")
        .into_iter()
        .map(|item| backticked(&item).into_iter().next().unwrap_or_else(|| item.trim().to_owned()))
        .collect()
}

fn backticked(text: &str) -> Vec<String> {
    text.split('`').skip(1).step_by(2).filter(|s| !s.is_empty()).map(str::to_owned).collect()
}

/// The `- item` lines that follow a `**Label**:` line (blank lines allowed between).
fn list_after(body: &[Line], label: &str) -> Vec<String> {
    let Some(start) = body.iter().position(|l| !l.fenced && labelled(l.text, label).is_some()) else {
        return Vec::new();
    };
    let mut items = Vec::new();
    for line in &body[start + 1..] {
        let text = line.text.trim();
        if line.fenced {
            break;
        }
        if let Some(item) = text.strip_prefix("- ").or_else(|| text.strip_prefix("* ")) {
            items.push(item.trim().to_owned());
        } else if !text.is_empty() {
            break;
        }
    }
    items
}

fn strip_checkbox(item: &str) -> &str {
    ["[ ] ", "[x] ", "[X] "].iter().find_map(|b| item.strip_prefix(b)).unwrap_or(item).trim()
}

/// The fenced block after `**Quality Gates**:`, as the task's verify script.
fn quality_gates(body: &[Line]) -> Option<String> {
    let start = body.iter().position(|l| !l.fenced && labelled(l.text, "Quality Gates").is_some())?;
    let mut script = Vec::new();
    let mut opened = false;
    for line in &body[start + 1..] {
        let fence = is_fence(line.text);
        match (opened, fence) {
            (false, true) => opened = true,
            (false, false) if line.text.trim().is_empty() => {}
            (false, false) => return None,
            (true, true) => break,
            (true, false) => script.push(line.text),
        }
    }
    let script = script.join("\n");
    (!script.trim().is_empty()).then_some(script)
}
