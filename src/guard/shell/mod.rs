//! A shell splitter for the guard: turns a Bash tool command into a tree of simple commands, so
//! every command that would run — after `&&`, inside `( )`, `{ }`, `$( )`, backticks, process
//! substitutions, `${X:-$( )}`, `$(( ))`, unquoted heredoc bodies, `if`/`while`/`for`/`case`
//! bodies and functions — can be checked. It does not run or expand anything: variables, `~`,
//! globs and substitutions are kept as such, and the policy decides what an unknown value means.
//!
//! Invariants: parsing is linear in the input (every character is read a bounded number of
//! times; heredoc bodies are read once, when the line that starts them ends) and nesting is
//! capped at [`MAX_NESTING`], past which parsing stops with a [`ParseError`] marked `limit`.
//! Syntax it does not model is an error the policy treats as "not understood".
//!
//! Compound commands keep the three node kinds older readers know (`Command`, `Subshell`,
//! `Group`): an `if`, a loop, a `case` or a function is a `Group` whose script has a [`Shape`]
//! saying how its parts relate. Walking `items` alone still visits every command that may run.

mod compound;
mod heredoc;
mod parser;
mod words;

#[cfg(test)]
mod tests;

/// `( )`, `{ }`, substitutions and compound commands nested deeper than this are refused.
pub const MAX_NESTING: usize = 64;

/// Heredocs in one command: ordinary commands have one or two (a commit message, a file).
pub const MAX_HEREDOCS: usize = 256;

/// A parsed command line, or one part of a compound command.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Script {
    pub items: Vec<Item>,
    pub shape: Shape,
}

/// How the items of a script relate.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum Shape {
    /// Items run in order, each joined to the one before by its `join`.
    #[default]
    List,
    /// `if`: (condition, body) pairs, then the `else` body when the count is odd.
    If,
    /// `while` / `until`: the condition, then the body.
    Loop { until: bool },
    /// `for NAME in WORDS` / `select`: a command holding the words (none: `"$@"`), then the body.
    For { name: String, words_given: bool },
    /// `for (( … ))`: a command holding the header's arithmetic, then the body.
    ArithFor,
    /// `(( … ))`: one command holding the arithmetic.
    Arithmetic,
    /// `case`: the subject (a command of one word), then (patterns, body) pairs; `fallthrough[i]`
    /// when arm `i` ends with `;&` or `;;&`.
    Case { fallthrough: Vec<bool> },
    /// `NAME() { … }`: the body, which runs only when the function is called.
    Function { name: String },
    /// A compound command followed by redirections (`done < file`, `} > log`): the command,
    /// then a command of only those redirections, which apply to the first.
    Redirected,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    pub node: Node,
    /// Runs in a process of its own (a stage of a pipeline, a background job): it cannot change
    /// the working directory or variables of what follows.
    pub isolated: bool,
    /// How this item follows the one before it.
    pub join: Join,
    /// `! pipeline`: the status is inverted (set on the pipeline's first stage).
    pub negated: bool,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Join {
    /// `;`, a newline, `&`, or the first item.
    #[default]
    Seq,
    /// `&&`: runs when the one before succeeded.
    And,
    /// `||`: runs when the one before failed.
    Or,
    /// `|` or `|&`: a later stage of the same pipeline, reading the stage before.
    Pipe,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Node {
    Command(SimpleCommand),
    /// `( … )`: runs in a subshell.
    Subshell(Script),
    /// `{ …; }`, or a compound command (see [`Shape`]): runs in the current shell.
    Group(Script),
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct SimpleCommand {
    pub assignments: Vec<Assignment>,
    pub words: Vec<Word>,
    pub redirects: Vec<Redirect>,
}

/// `NAME=value`, `NAME+=value`, `NAME[i]=value` or `NAME=( … )`.
#[derive(Debug, Clone, PartialEq)]
pub struct Assignment {
    pub name: String,
    /// An array (`NAME=( … )`, `NAME[i]=…`): its value is not followed.
    pub array: bool,
    pub append: bool,
    /// The value (one word for a scalar; the elements and subscript of an array).
    pub words: Vec<Word>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Redirect {
    pub kind: RedirectKind,
    /// The descriptor it opens: the number written before the operator, else the operator's
    /// own (0 for `<`, `<>`, `<<`, `<<<`, `<&`; 1 for `>`, `>>`, `>|`, `>&`, and for `&>`,
    /// which opens 2 as well). `u32::MAX` for a number too large to be one.
    pub fd: u32,
    /// `&>`, `&>>`, `>&file`: standard error goes where standard output does.
    pub both_outputs: bool,
    pub target: Word,
    /// The body of a heredoc (`<<EOF`), when `kind` is `Heredoc`: literal when the delimiter was
    /// quoted, with its expansions otherwise.
    pub body: Option<Word>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RedirectKind {
    /// `>`, `>>`, `>|`, `&>`, `&>>`, `<>`, `>&file`: the target is written.
    Write,
    /// `<`: the target is read.
    Read,
    /// `<<`, `<<-`: the target is the delimiter; the body is input.
    Heredoc,
    /// `<<<`: the target is input text.
    HereString,
    /// `>&2`, `<&0`, `>&-`: no file.
    Duplicate,
}

/// A word after quote removal, as segments.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Word {
    pub segments: Vec<Segment>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Segment {
    /// Quoted or escaped text: taken as is.
    Literal(String),
    /// Unquoted text: subject to brace expansion and globbing.
    Bare(String),
    /// `$NAME`, `${NAME}`, `$1`, `$@`…
    Variable { name: String, quoted: bool },
    /// `${NAME…}` with an operator or subscript (`${X:-…}`, `${#X}`, `${a[@]}`): its value is not
    /// followed; `words` are the operand and subscript, whose substitutions run; `assigns` for
    /// `${X:=…}`, which sets `X`.
    Parameter { name: String, words: Vec<Word>, assigns: bool, quoted: bool },
    /// `$( … )` or backticks.
    Substitution { script: Script, quoted: bool },
    /// `<( … )` or `>( … )`: the word is a `/dev/fd/N` path.
    Process(Script),
    /// `$(( … ))`: the expression, whose substitutions run.
    Arithmetic { expression: Word, quoted: bool },
    /// A leading `~` or `~user` (`~+`, `~-`).
    Tilde(String),
}

impl Word {
    /// How the word was written, for messages (`$X` for a variable, `$(…)` for a substitution).
    pub fn shown(&self) -> String {
        self.segments
            .iter()
            .map(|segment| match segment {
                Segment::Literal(text) | Segment::Bare(text) => text.clone(),
                Segment::Variable { name, .. } => format!("${name}"),
                Segment::Parameter { name, .. } => format!("${{{name}…}}"),
                Segment::Substitution { .. } => "$(…)".into(),
                Segment::Process(_) => "<(…)".into(),
                Segment::Arithmetic { .. } => "$((…))".into(),
                Segment::Tilde(user) => format!("~{user}"),
            })
            .collect()
    }

    /// The word's text when it is all literal (quoted or not).
    pub fn literal(&self) -> Option<String> {
        let mut text = String::new();
        for segment in &self.segments {
            match segment {
                Segment::Literal(part) | Segment::Bare(part) => text.push_str(part),
                _ => return None,
            }
        }
        Some(text)
    }

    /// The word's text when it is one unquoted literal (a reserved word can only be that).
    pub fn bare(&self) -> Option<&str> {
        match self.segments.as_slice() {
            [Segment::Bare(text)] => Some(text),
            _ => None,
        }
    }

    /// Every command substitution inside the word, however deeply in `${ }` or `$(( ))` (they
    /// all run when the word is expanded).
    pub fn substitutions(&self) -> impl Iterator<Item = &Script> {
        let mut out = Vec::new();
        self.collect_substitutions(&mut out);
        out.into_iter()
    }

    fn collect_substitutions<'a>(&'a self, out: &mut Vec<&'a Script>) {
        for segment in &self.segments {
            match segment {
                Segment::Substitution { script, .. } | Segment::Process(script) => out.push(script),
                Segment::Parameter { words, .. } => words.iter().for_each(|w| w.collect_substitutions(out)),
                Segment::Arithmetic { expression, .. } => expression.collect_substitutions(out),
                _ => {}
            }
        }
    }

    pub(crate) fn push_literal(&mut self, c: char) {
        if let Some(Segment::Literal(text)) = self.segments.last_mut() {
            text.push(c);
        } else {
            self.segments.push(Segment::Literal(c.to_string()));
        }
    }

    pub(crate) fn push_bare(&mut self, c: char) {
        if let Some(Segment::Bare(text)) = self.segments.last_mut() {
            text.push(c);
        } else {
            self.segments.push(Segment::Bare(c.to_string()));
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    pub message: String,
    /// A cap was reached (nesting): the command is refused rather than "not understood".
    pub limit: bool,
    /// The byte length of the complete top-level lines before the error: bash runs those
    /// before it reads the line it cannot parse.
    pub complete: usize,
}

impl ParseError {
    pub(crate) fn syntax(message: impl Into<String>) -> ParseError {
        ParseError { message: message.into(), limit: false, complete: 0 }
    }
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

pub fn parse(text: &str) -> Result<Script, ParseError> {
    parser::Parser::new(text, 0).parse()
}
