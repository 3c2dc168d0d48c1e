//! Words to arguments, as bash expands them: `~`, the variables the command set (or the
//! environment's `HOME`, `PWD`, `CDPATH`), field splitting of unquoted expansions on `IFS`,
//! globs and brace expansion marked (never expanded). What wt cannot know stays unknown, and an
//! unknown unquoted expansion may be any number of arguments, options included. Arithmetic
//! (`$(( ))`) reads the variables it names as expressions: one holding a command substitution
//! would run it, and is refused.

use super::arg::Arg;
use super::checker::Checker;
use super::shell::{Node, Script, Segment, Word};
use super::state::{State, Value};

/// Whether unquoted expansions are split into several arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Split {
    /// Command arguments.
    Fields,
    /// Assignments, redirection targets, `case` subjects: one word whatever the value.
    Single,
}

#[derive(Default)]
struct Field {
    value: Option<String>,
    glob: bool,
    started: bool,
}

struct Fields {
    done: Vec<Field>,
    current: Field,
}

impl Fields {
    fn new() -> Fields {
        Fields { done: Vec::new(), current: Field { value: Some(String::new()), ..Field::default() } }
    }

    fn push(&mut self, text: &str) {
        if let Some(value) = self.current.value.as_mut() {
            value.push_str(text);
        }
    }

    fn unknown(&mut self) {
        self.current.value = None;
        self.current.started = true;
    }

    fn finish(&mut self) {
        let field =
            std::mem::replace(&mut self.current, Field { value: Some(String::new()), ..Field::default() });
        if field.started {
            self.done.push(field);
        }
    }
}

impl Checker<'_> {
    /// The arguments of a command's words (`declaration`: after `export`, `declare`, … whose
    /// `NAME=value` arguments are not split).
    pub fn expand_words(&mut self, words: &[Word], state: &State, declaration: bool) -> Vec<Arg> {
        let mut args = Vec::new();
        for (i, word) in words.iter().enumerate() {
            let split =
                if declaration && i > 0 && is_assignment_word(word) { Split::Single } else { Split::Fields };
            args.extend(self.expand(word, state, split));
        }
        args
    }

    /// One word as one argument (no splitting).
    pub fn expand_one(&mut self, word: &Word, state: &State) -> Arg {
        self.expand(word, state, Split::Single).pop().unwrap_or_else(|| Arg::literal(""))
    }

    pub fn expand(&mut self, word: &Word, state: &State, split: Split) -> Vec<Arg> {
        let shown = word.shown();
        let mut fields = Fields::new();
        let mut unquoted = String::new();
        for segment in &word.segments {
            match segment {
                Segment::Literal(text) => {
                    fields.push(text);
                    fields.current.started = true;
                    unquoted.push('\u{1}');
                }
                Segment::Bare(text) => {
                    fields.push(text);
                    fields.current.started |= !text.is_empty();
                    fields.current.glob |= has_glob(text);
                    unquoted.push_str(text);
                }
                Segment::Tilde(user) => {
                    let value = self.tilde(user, state);
                    self.push_value(&mut fields, value, true, split, state);
                    unquoted.push('\u{1}');
                }
                Segment::Variable { name, quoted } => {
                    let value = self.variable(name, state);
                    self.push_value(&mut fields, value, *quoted, split, state);
                    unquoted.push('\u{1}');
                }
                Segment::Parameter { name, assigns, quoted, .. } => {
                    if *assigns {
                        self.assigned.push(name.clone());
                    }
                    self.push_value(&mut fields, None, *quoted, split, state);
                    unquoted.push('\u{1}');
                }
                Segment::Substitution { script, quoted } => {
                    let value = self.known_output(script, state);
                    self.push_value(&mut fields, value, *quoted, split, state);
                    unquoted.push('\u{1}');
                }
                Segment::Arithmetic { quoted, .. } => {
                    self.push_value(&mut fields, None, *quoted, split, state);
                    unquoted.push('\u{1}');
                }
                Segment::Process(_) => {
                    fields.push("/dev/fd/63");
                    fields.current.started = true;
                }
            }
            if !self.budget.expand(0, fields.current.value.as_ref().map_or(0, String::len)) {
                fields.current.value = None;
            }
        }
        fields.finish();
        if split == Split::Fields && has_brace_expansion(&unquoted) {
            return self.expand_braces(word, state, shown);
        }
        fields.done.into_iter().map(|f| Arg { value: f.value, shown: shown.clone(), glob: f.glob }).collect()
    }

    /// A word with brace expansion: followed when it is literal (after a leading `~`), else
    /// one unknown argument.
    fn expand_braces(&mut self, word: &Word, state: &State, shown: String) -> Vec<Arg> {
        let mut pieces = Vec::new();
        for segment in &word.segments {
            match segment {
                Segment::Bare(text) => pieces.extend(text.chars().map(|c| (c, false))),
                Segment::Literal(text) => pieces.extend(text.chars().map(|c| (c, true))),
                Segment::Tilde(user) if pieces.is_empty() => match self.tilde(user, state) {
                    Some(home) => pieces.extend(home.chars().map(|c| (c, true))),
                    None => return vec![Arg { value: None, shown, glob: false }],
                },
                _ => return vec![Arg { value: None, shown, glob: false }],
            }
        }
        let Some(words) = super::braces::expand(&pieces) else {
            return vec![Arg { value: None, shown, glob: false }];
        };
        let mut args = Vec::new();
        for pieces in words {
            let value: String = pieces.iter().map(|p| p.0).collect();
            if !self.budget.expand(value.len(), value.len()) {
                return vec![Arg { value: None, shown, glob: false }];
            }
            let unquoted: String =
                pieces.iter().map(|&(c, quoted)| if quoted { '\u{1}' } else { c }).collect();
            args.push(Arg { value: Some(value), shown: shown.clone(), glob: has_glob(&unquoted) });
        }
        args
    }

    /// Adds an expansion's value; unquoted, it is split on `IFS` (when splitting) and its glob
    /// characters are live.
    fn push_value(
        &mut self,
        fields: &mut Fields,
        value: Option<String>,
        quoted: bool,
        split: Split,
        state: &State,
    ) {
        let Some(value) = value else {
            fields.unknown();
            return;
        };
        if !self.budget.expand(value.len(), 0) {
            fields.unknown();
            return;
        }
        if quoted || split == Split::Single {
            fields.push(&value);
            fields.current.started = true;
            fields.current.glob |= !quoted && has_glob(&value);
            return;
        }
        let Some(ifs) = self.variable("IFS", state) else {
            fields.unknown();
            return;
        };
        for c in value.chars() {
            if ifs.contains(c) {
                if !c.is_whitespace() || fields.current.started {
                    fields.current.started = true;
                    fields.finish();
                }
            } else {
                if let Some(v) = fields.current.value.as_mut() {
                    v.push(c);
                }
                fields.current.started = true;
                fields.current.glob |= "*?[".contains(c);
            }
        }
    }

    /// What a substitution prints, for the two wt knows without running anything: `$(pwd)`
    /// and `$(git rev-parse --show-toplevel)` (the worktree, when the command runs inside it).
    fn known_output(&self, script: &Script, state: &State) -> Option<String> {
        let [item] = script.items.as_slice() else { return None };
        let Node::Command(command) = &item.node else { return None };
        if !command.assignments.is_empty() || !command.redirects.is_empty() {
            return None;
        }
        let words: Option<Vec<String>> = command.words.iter().map(Word::literal).collect();
        let dir = state.cwd.single()?;
        match words?.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
            ["pwd"] | ["pwd", "-L"] => Some(dir.logical.display().to_string()),
            ["pwd", "-P"] => Some(dir.physical.display().to_string()),
            ["git", "rev-parse", "--show-toplevel"] if self.wt.contains(&dir.physical) => Some(self.root()),
            _ => None,
        }
    }

    fn tilde(&self, user: &str, state: &State) -> Option<String> {
        match user {
            "" => self.variable("HOME", state),
            "+" => self.variable("PWD", state),
            "-" => self.variable("OLDPWD", state),
            _ => None,
        }
    }

    /// Arithmetic reads variables' values as expressions, and expands what they hold: a value
    /// holding a command substitution would run it.
    pub(super) fn arithmetic(&mut self, word: &Word, state: &State) {
        for segment in &word.segments {
            let names = match segment {
                Segment::Arithmetic { expression, .. } => arithmetic_names(expression),
                Segment::Parameter { words, .. } => words.iter().flat_map(arithmetic_names).collect(),
                _ => continue,
            };
            for name in names {
                if let Some(Value::Known(value)) = state.var(&name)
                    && (value.contains("$(") || value.contains('`'))
                {
                    self.deny(format!(
                        "`{name}` holds a command substitution that arithmetic would run; run that command directly"
                    ));
                }
            }
        }
    }
}

/// `NAME=…` or `NAME+=…` written literally at the start of the word.
pub fn is_assignment_word(word: &Word) -> bool {
    let Some(Segment::Bare(text) | Segment::Literal(text)) = word.segments.first() else { return false };
    let name_end = text.find(['=', '+']).unwrap_or(0);
    let name = &text[..name_end];
    !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && (text[name_end..].starts_with('=') || text[name_end..].starts_with("+="))
}

fn has_glob(text: &str) -> bool {
    text.contains(['*', '?']) || text.find('[').is_some_and(|i| text[i..].contains(']'))
}

/// `{a,b}` or `{1..3}` in the unquoted text of a word (other pieces are `\u{1}`), in one pass.
fn has_brace_expansion(text: &str) -> bool {
    // For each open `{`: whether a `,` or `..` was seen at its level.
    let mut open: Vec<bool> = Vec::new();
    let mut previous = '\0';
    for c in text.chars() {
        match c {
            '{' => open.push(false),
            '}' if open.pop() == Some(true) => return true,
            ',' => {
                if let Some(top) = open.last_mut() {
                    *top = true;
                }
            }
            '.' if previous == '.' => {
                if let Some(top) = open.last_mut() {
                    *top = true;
                }
            }
            _ => {}
        }
        previous = c;
    }
    false
}

/// The variables an arithmetic expression names (`x` in `x + $y`, `a` in `a[i]`).
pub fn arithmetic_names(word: &Word) -> Vec<String> {
    let mut names = Vec::new();
    for segment in &word.segments {
        match segment {
            Segment::Bare(text) | Segment::Literal(text) => {
                let mut current = String::new();
                for c in text.chars().chain(std::iter::once(' ')) {
                    if c.is_ascii_alphanumeric() || c == '_' {
                        current.push(c);
                    } else if !current.is_empty() {
                        if !current.starts_with(|d: char| d.is_ascii_digit()) {
                            names.push(std::mem::take(&mut current));
                        }
                        current.clear();
                    }
                }
            }
            Segment::Variable { name, .. } => names.push(name.clone()),
            Segment::Arithmetic { expression, .. } => names.extend(arithmetic_names(expression)),
            _ => {}
        }
    }
    names
}
