//! A shell splitter for the guard: turns a Bash tool command into a tree of simple commands, so
//! every command that would run — after `&&`, inside `( )`, `{ }`, `$( )`, backticks, process
//! substitutions and heredoc-fed shells — can be checked. It does not run or expand anything:
//! variables, `~` and substitutions are kept as such, and the policy decides what an unknown
//! value means. Syntax it cannot follow is an error, so the guard can refuse it.

mod parser;
mod words;

#[cfg(test)]
mod tests;

/// A parsed command line: items in order; an isolated item (a pipeline element, a background
/// job) cannot change the working directory of what follows.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Script {
    pub items: Vec<Item>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    pub node: Node,
    pub isolated: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Node {
    Command(SimpleCommand),
    /// `( … )`: runs in a subshell.
    Subshell(Script),
    /// `{ …; }`: runs in the current shell.
    Group(Script),
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct SimpleCommand {
    pub assignments: Vec<(String, Word)>,
    pub words: Vec<Word>,
    pub redirects: Vec<Redirect>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Redirect {
    pub kind: RedirectKind,
    pub target: Word,
    /// The body of a heredoc (`<<EOF`), when `kind` is `Heredoc`.
    pub body: Option<String>,
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

/// A word after quote removal, as segments: literal text, variables, command substitutions
/// and a leading `~`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Word {
    pub segments: Vec<Segment>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Segment {
    Literal(String),
    Variable(String),
    Substitution(Script),
    Tilde(String),
}

impl Word {
    /// The word's text when it is all literal.
    pub fn literal(&self) -> Option<String> {
        let mut text = String::new();
        for segment in &self.segments {
            match segment {
                Segment::Literal(part) => text.push_str(part),
                _ => return None,
            }
        }
        Some(text)
    }

    /// The command substitutions inside the word (they run too).
    pub fn substitutions(&self) -> impl Iterator<Item = &Script> {
        self.segments.iter().filter_map(|segment| match segment {
            Segment::Substitution(script) => Some(script),
            _ => None,
        })
    }

    pub(crate) fn push_literal(&mut self, c: char) {
        if let Some(Segment::Literal(text)) = self.segments.last_mut() {
            text.push(c);
        } else {
            self.segments.push(Segment::Literal(c.to_string()));
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError(pub String);

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

pub fn parse(text: &str) -> Result<Script, ParseError> {
    parser::Parser::new(text, 0).parse()
}
