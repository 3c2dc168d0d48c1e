//! Structure: lists, pipelines, simple commands, assignments and redirections. Compound commands
//! are in `compound.rs`, words in `words.rs`, heredoc bodies in `heredoc.rs`.

use super::heredoc::PendingHeredoc;
use super::{
    Assignment, Item, Join, MAX_NESTING, Node, ParseError, Redirect, RedirectKind, Script, Segment, Shape,
    SimpleCommand, Word,
};

/// Where a list ends.
#[derive(Debug, Clone, Copy)]
pub(super) enum Stop {
    /// The end of the text.
    End,
    /// A `)`, closing a subshell or a substitution.
    Paren,
    /// One of these reserved words at the start of a command (`then`, `fi`, `}`, …).
    Words(&'static [&'static str]),
    /// The end of a `case` arm: `;;`, `;&`, `;;&` or `esac`.
    CaseArm,
}

/// Words that are reserved at the start of a command.
const RESERVED: &[&str] = &[
    "!", "{", "}", "[[", "if", "then", "elif", "else", "fi", "while", "until", "for", "select", "do", "done",
    "case", "esac", "in", "function", "coproc", "time",
];

pub(super) struct Parser {
    pub(super) chars: Vec<char>,
    pub(super) pos: usize,
    /// How deeply `( )`, `{ }`, substitutions and compound commands are nested here.
    pub(super) depth: usize,
    /// Heredocs whose bodies start after the next newline.
    pub(super) pending: Vec<PendingHeredoc>,
    /// Heredoc bodies read so far, by the index their redirection holds.
    pub(super) bodies: Vec<Option<Word>>,
    /// Where the complete top-level lines end (a char index).
    complete: usize,
}

impl Parser {
    pub(super) fn new(text: &str, depth: usize) -> Self {
        Parser {
            chars: text.chars().collect(),
            pos: 0,
            depth,
            pending: Vec::new(),
            bodies: Vec::new(),
            complete: 0,
        }
    }

    pub(super) fn parse(mut self) -> Result<Script, ParseError> {
        let result = self.list(Stop::End).and_then(|mut script| {
            self.finish_heredocs(&mut script)?;
            Ok(script)
        });
        result.map_err(|mut err| {
            err.complete = self.chars[..self.complete].iter().map(|c| c.len_utf8()).sum();
            err
        })
    }

    pub(super) fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    pub(super) fn peek_at(&self, offset: usize) -> Option<char> {
        self.chars.get(self.pos + offset).copied()
    }

    pub(super) fn starts_with(&self, text: &str) -> bool {
        text.chars().enumerate().all(|(i, c)| self.peek_at(i) == Some(c))
    }

    pub(super) fn skip_blanks(&mut self) {
        loop {
            match self.peek() {
                Some(' ' | '\t' | '\r') => self.pos += 1,
                Some('\\') if self.peek_at(1) == Some('\n') => self.pos += 2,
                Some('#') => {
                    while self.peek().is_some_and(|c| c != '\n') {
                        self.pos += 1;
                    }
                }
                _ => return,
            }
        }
    }

    /// Consumes a newline token; heredoc bodies waiting for it are read now.
    pub(super) fn newline(&mut self) -> Result<(), ParseError> {
        self.pos += 1;
        if !self.pending.is_empty() {
            self.read_heredoc_bodies()?;
        }
        Ok(())
    }

    /// Blanks, comments and newlines (where the grammar allows a line break).
    pub(super) fn skip_linebreaks(&mut self) -> Result<(), ParseError> {
        loop {
            self.skip_blanks();
            if self.peek() != Some('\n') {
                return Ok(());
            }
            self.newline()?;
        }
    }

    /// A list one level deeper, up to `stop`.
    pub(super) fn nested(&mut self, stop: Stop) -> Result<Script, ParseError> {
        self.enter()?;
        let script = self.list(stop);
        self.depth -= 1;
        script
    }

    pub(super) fn enter(&mut self) -> Result<(), ParseError> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(ParseError {
                message: format!(
                    "the command nests `( )`, `$( )`, `{{ }}` or compound commands deeper than {MAX_NESTING} levels"
                ),
                limit: true,
                complete: 0,
            });
        }
        Ok(())
    }

    /// Items up to `stop` (not consumed).
    pub(super) fn list(&mut self, stop: Stop) -> Result<Script, ParseError> {
        let mut script = Script::default();
        let mut join = Join::Seq;
        let mut needs_command = false;
        loop {
            self.skip_blanks();
            let at_stop = match self.peek() {
                None => true,
                Some(')') => matches!(stop, Stop::Paren),
                Some(';') => {
                    matches!(stop, Stop::CaseArm) && (self.starts_with(";;") || self.starts_with(";&"))
                }
                _ => self.at_stop_word(stop),
            };
            if at_stop {
                if needs_command {
                    return Err(ParseError::syntax("`&&`, `||` or `|` has no command after it"));
                }
                return match (self.peek(), stop) {
                    (None, Stop::End) => Ok(script),
                    (None, _) => Err(ParseError::syntax(format!("{} is missing", closing(stop)))),
                    _ => Ok(script),
                };
            }
            match self.peek() {
                Some('\n') => {
                    self.newline()?;
                    if matches!(stop, Stop::End)
                        && self.depth == 0
                        && self.pending.is_empty()
                        && !needs_command
                    {
                        self.complete = self.pos;
                    }
                }
                Some(';') if needs_command || self.starts_with(";;") => {
                    return Err(ParseError::syntax("unexpected `;`"));
                }
                Some(';') => {
                    self.pos += 1;
                    join = Join::Seq;
                }
                Some(c @ (')' | '&' | '|')) => return Err(ParseError::syntax(format!("unexpected `{c}`"))),
                Some(_) => {
                    let start = self.pipeline(&mut script, join)?;
                    (join, needs_command) = self.after_pipeline(&mut script, start);
                }
                None => unreachable!("handled as a stop above"),
            }
        }
    }

    /// The operator after a pipeline: how the next one joins, and whether one must follow.
    fn after_pipeline(&mut self, script: &mut Script, start: usize) -> (Join, bool) {
        self.skip_blanks();
        if self.starts_with("&&") || self.starts_with("||") {
            let join = if self.starts_with("&&") { Join::And } else { Join::Or };
            self.pos += 2;
            return (join, true);
        }
        if self.peek() == Some('&') {
            self.pos += 1;
            script.items[start..].iter_mut().for_each(|item| item.isolated = true);
        }
        (Join::Seq, false)
    }

    fn at_stop_word(&self, stop: Stop) -> bool {
        match stop {
            Stop::Words(words) => self.peek_reserved().is_some_and(|w| words.contains(&w)),
            Stop::CaseArm => self.peek_reserved() == Some("esac"),
            _ => false,
        }
    }

    /// The reserved word at the current position, if one starts here.
    pub(super) fn peek_reserved(&self) -> Option<&'static str> {
        let mut len = 0;
        while let Some(c) = self.peek_at(len) {
            if " \t\r\n;&|()<>".contains(c) {
                break;
            }
            if "'\"\\$`".contains(c) {
                return None;
            }
            len += 1;
        }
        let text: String = self.chars[self.pos..self.pos + len].iter().collect();
        RESERVED.iter().find(|w| **w == text).copied()
    }

    pub(super) fn expect_reserved(&mut self, word: &'static str) -> Result<(), ParseError> {
        self.skip_blanks();
        if self.peek_reserved() == Some(word) {
            self.pos += word.chars().count();
            Ok(())
        } else {
            Err(ParseError::syntax(format!("`{word}` is missing")))
        }
    }

    /// One pipeline (with its `!` and `time` prefixes); returns the index of its first item.
    fn pipeline(&mut self, script: &mut Script, join: Join) -> Result<usize, ParseError> {
        let mut negated = false;
        loop {
            self.skip_blanks();
            match self.peek_reserved() {
                Some("!") => negated = !negated,
                Some("time") if self.peek_at(4).is_none_or(|c| " \t\n;".contains(c)) => {
                    self.pos += 4;
                    self.skip_blanks();
                    if self.starts_with("-p") && self.peek_at(2).is_none_or(|c| " \t".contains(c)) {
                        self.pos += 2;
                    }
                    continue;
                }
                _ => break,
            }
            self.pos += 1;
        }
        let start = script.items.len();
        loop {
            self.skip_blanks();
            let first = script.items.len() == start;
            let node = self.command()?;
            let join = if first { join } else { Join::Pipe };
            script.items.push(Item { node, isolated: false, join, negated: first && negated });
            self.skip_blanks();
            if self.starts_with("||") {
                break;
            }
            if self.starts_with("|&") {
                self.pos += 2;
            } else if self.peek() == Some('|') {
                self.pos += 1;
            } else {
                break;
            }
            self.skip_linebreaks()?;
        }
        if script.items.len() - start > 1 {
            script.items[start..].iter_mut().for_each(|item| item.isolated = true);
        }
        Ok(start)
    }

    /// One command: a compound command, a subshell or a simple command.
    pub(super) fn command(&mut self) -> Result<Node, ParseError> {
        if self.starts_with("((") {
            // As bash does: `((` that does not close as arithmetic opens two subshells.
            if let Some(node) = self.attempt(Self::arithmetic_command)? {
                return Ok(node);
            }
        }
        if self.peek() == Some('(') {
            self.pos += 1;
            let inner = self.nested(Stop::Paren)?;
            self.pos += 1;
            return self.with_redirects(Node::Subshell(inner));
        }
        match self.peek_reserved() {
            Some("{") => self.brace_group(),
            Some("if") => self.if_clause(),
            Some(k @ ("while" | "until")) => self.loop_clause(k == "until"),
            Some(k @ ("for" | "select")) => self.for_clause(k.len()),
            Some("case") => self.case_clause(),
            Some("function") => self.function_keyword(),
            Some("[[") => self.conditional(),
            Some("coproc") => self.coproc(),
            Some(word) => Err(ParseError::syntax(format!("`{word}` is not supported here"))),
            None => self.simple_command(),
        }
    }

    fn simple_command(&mut self) -> Result<Node, ParseError> {
        let mut command = SimpleCommand::default();
        loop {
            self.skip_blanks();
            if self.at_command_end() {
                break;
            }
            if let Some(redirect) = self.redirect()? {
                command.redirects.push(redirect);
                continue;
            }
            if command.words.is_empty()
                && let Some(assignment) = self.assignment()?
            {
                command.assignments.push(assignment);
                continue;
            }
            let mut word = self.word()?;
            if self.peek() == Some('(') && declares_array(&command, &word) {
                // `declare -a x=(a b)`: the elements' substitutions run; the value is not followed.
                let elements = self.array_elements()?;
                word.segments.push(Segment::Parameter {
                    name: "(array)".into(),
                    words: elements,
                    assigns: false,
                    quoted: false,
                });
            }
            if command.words.is_empty() && command.assignments.is_empty() && self.function_parens() {
                let name =
                    word.literal().ok_or_else(|| ParseError::syntax("a function name must be literal"))?;
                return self.function_body(name);
            }
            command.words.push(word);
        }
        if command.words.is_empty() && command.assignments.is_empty() && command.redirects.is_empty() {
            return Err(ParseError::syntax(match self.peek() {
                Some(c) => format!("unexpected `{c}`"),
                None => "a command is missing".into(),
            }));
        }
        Ok(Node::Command(command))
    }

    pub(super) fn at_command_end(&self) -> bool {
        match self.peek() {
            None | Some(';' | '\n' | '|' | ')') => true,
            Some('&') => self.peek_at(1) != Some('>'),
            _ => false,
        }
    }

    /// Redirections after a compound command apply to all of it: kept as a command of only
    /// those redirections, after the compound command in a group.
    pub(super) fn with_redirects(&mut self, node: Node) -> Result<Node, ParseError> {
        let mut tail = SimpleCommand::default();
        loop {
            self.skip_blanks();
            if self.at_command_end() {
                break;
            }
            match self.redirect()? {
                Some(redirect) => tail.redirects.push(redirect),
                None => return Err(ParseError::syntax("unexpected word after a compound command")),
            }
        }
        if tail.redirects.is_empty() {
            return Ok(node);
        }
        let items = vec![
            Item { node, isolated: false, join: Join::Seq, negated: false },
            Item { node: Node::Command(tail), isolated: true, join: Join::Seq, negated: false },
        ];
        Ok(Node::Group(Script { items, shape: Shape::Redirected }))
    }

    /// `NAME=value`, `NAME+=value`, `NAME[i]=value`, `NAME=( … )` at the current position.
    fn assignment(&mut self) -> Result<Option<Assignment>, ParseError> {
        let Some((name, subscript, append, len)) = self.assignment_prefix() else { return Ok(None) };
        self.pos += len;
        let mut words = Vec::new();
        if let Some(subscript) = subscript {
            words.push(Parser::new(&subscript, self.depth + 1).arithmetic_text()?);
        }
        if self.peek() == Some('(') {
            words.extend(self.array_elements()?);
            return Ok(Some(Assignment { name, array: true, append, words }));
        }
        let array = !words.is_empty();
        let value = if self.at_command_end() || matches!(self.peek(), Some(' ' | '\t')) {
            Word { segments: vec![super::Segment::Literal(String::new())] }
        } else {
            self.word()?
        };
        words.push(value);
        Ok(Some(Assignment { name, array, append, words }))
    }

    /// Runs `parse`; when it fails with a syntax error, puts the parser back where it was and
    /// returns `None`, so another reading can be tried.
    pub(super) fn attempt<T>(
        &mut self,
        parse: fn(&mut Self) -> Result<T, ParseError>,
    ) -> Result<Option<T>, ParseError> {
        let (pos, depth, pending, bodies) = (self.pos, self.depth, self.pending.len(), self.bodies.len());
        match parse(self) {
            Ok(value) => Ok(Some(value)),
            Err(err) if err.limit => Err(err),
            Err(_) => {
                (self.pos, self.depth) = (pos, depth);
                self.pending.truncate(pending);
                self.bodies.truncate(bodies);
                Ok(None)
            }
        }
    }

    /// The words of `( … )` after `NAME=`.
    fn array_elements(&mut self) -> Result<Vec<Word>, ParseError> {
        self.pos += 1;
        self.enter()?;
        let mut words = Vec::new();
        loop {
            self.skip_linebreaks()?;
            match self.peek() {
                Some(')') => break,
                None => return Err(ParseError::syntax("an array's `(` is not closed")),
                _ => words.push(self.word()?),
            }
        }
        self.depth -= 1;
        self.pos += 1;
        Ok(words)
    }

    /// `coproc [NAME] command`: the command runs in the background, in a subshell.
    fn coproc(&mut self) -> Result<Node, ParseError> {
        self.pos += "coproc".len();
        self.skip_blanks();
        let save = self.pos;
        if self.peek_reserved().is_none() && self.peek() != Some('(') {
            self.word()?;
            self.skip_blanks();
            if self.peek_reserved() != Some("{") && self.peek() != Some('(') {
                self.pos = save;
            }
        }
        let node = self.command()?;
        let item = Item { node, isolated: true, join: Join::Seq, negated: false };
        Ok(Node::Subshell(Script { items: vec![item], shape: Shape::List }))
    }

    /// The name, subscript, `+=` and length of an assignment's `NAME…=` prefix.
    fn assignment_prefix(&self) -> Option<(String, Option<String>, bool, usize)> {
        let mut len = 0;
        while self.peek_at(len).is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
            len += 1;
        }
        if len == 0 || self.peek().is_some_and(|c| c.is_ascii_digit()) {
            return None;
        }
        let name: String = self.chars[self.pos..self.pos + len].iter().collect();
        let mut subscript = None;
        if self.peek_at(len) == Some('[') {
            let mut depth = 0usize;
            let start = len + 1;
            loop {
                match self.peek_at(len)? {
                    '[' => depth += 1,
                    ']' if depth == 1 => break,
                    ']' => depth -= 1,
                    ' ' | '\t' | '\n' => return None,
                    _ => {}
                }
                len += 1;
            }
            subscript = Some(self.chars[self.pos + start..self.pos + len].iter().collect());
            len += 1;
        }
        let append = self.peek_at(len) == Some('+');
        len += usize::from(append);
        (self.peek_at(len) == Some('=')).then_some((name, subscript, append, len + 1))
    }

    fn function_parens(&mut self) -> bool {
        let save = self.pos;
        self.skip_blanks();
        if self.peek() == Some('(') {
            self.pos += 1;
            self.skip_blanks();
            if self.peek() == Some(')') {
                self.pos += 1;
                return true;
            }
        }
        self.pos = save;
        false
    }

    fn redirect(&mut self) -> Result<Option<Redirect>, ParseError> {
        let mut offset = 0;
        while self.peek_at(offset).is_some_and(|c| c.is_ascii_digit()) {
            offset += 1;
        }
        let at = |i: usize| self.peek_at(offset + i);
        if matches!((at(0), at(1)), (Some('<' | '>'), Some('('))) {
            return Ok(None);
        }
        let number: String = (0..offset).filter_map(|i| self.peek_at(i)).collect();
        let rest: String = (0..3).filter_map(at).collect();
        let (op, kind) = match () {
            _ if offset == 0 && rest.starts_with("&>>") => ("&>>", RedirectKind::Write),
            _ if offset == 0 && rest.starts_with("&>") => ("&>", RedirectKind::Write),
            _ if rest.starts_with("<<<") => ("<<<", RedirectKind::HereString),
            _ if rest.starts_with("<<-") => ("<<-", RedirectKind::Heredoc),
            _ if rest.starts_with("<<") => ("<<", RedirectKind::Heredoc),
            _ if rest.starts_with("<>") => ("<>", RedirectKind::Write),
            _ if rest.starts_with(">>") => (">>", RedirectKind::Write),
            _ if rest.starts_with(">|") => (">|", RedirectKind::Write),
            _ if rest.starts_with(">&") => (">&", RedirectKind::Duplicate),
            _ if rest.starts_with("<&") => ("<&", RedirectKind::Duplicate),
            _ if rest.starts_with('>') => (">", RedirectKind::Write),
            _ if rest.starts_with('<') => ("<", RedirectKind::Read),
            _ => return Ok(None),
        };
        self.pos += offset + op.len();
        self.skip_blanks();
        if self.at_command_end() || matches!(self.peek(), Some('&' | '<' | '>')) {
            return Err(ParseError::syntax(format!("`{op}` has no target")));
        }
        let target = self.word()?;
        let kind = match (kind, target.literal()) {
            // `>&file` writes to a file; `>&2` and `>&-` only duplicate a descriptor.
            (RedirectKind::Duplicate, Some(t)) if t != "-" && !t.chars().all(|c| c.is_ascii_digit()) => {
                if op == ">&" { RedirectKind::Write } else { RedirectKind::Read }
            }
            (RedirectKind::Duplicate, None) if op == ">&" => RedirectKind::Write,
            (kind, _) => kind,
        };
        let body = match kind {
            RedirectKind::Heredoc => Some(self.register_heredoc(&target, op == "<<-")?),
            _ => None,
        };
        let both_outputs = op.starts_with('&') || (op == ">&" && kind == RedirectKind::Write && offset == 0);
        let fd = match number.as_str() {
            "" if op.starts_with('<') => 0,
            "" => 1,
            digits => digits.parse().unwrap_or(u32::MAX),
        };
        Ok(Some(Redirect { kind, fd, both_outputs, target, body }))
    }
}

fn closing(stop: Stop) -> String {
    match stop {
        Stop::End => "the end".into(),
        Stop::Paren => "a closing `)`".into(),
        Stop::Words(words) => format!("`{}`", words.join("` or `")),
        Stop::CaseArm => "`esac`".into(),
    }
}

/// `NAME=` given to `declare`, `local`, … right before a `(`.
fn declares_array(command: &SimpleCommand, word: &Word) -> bool {
    let declaration = command
        .words
        .first()
        .and_then(Word::literal)
        .is_some_and(|w| matches!(w.as_str(), "declare" | "typeset" | "local" | "export" | "readonly"));
    declaration && word.bare().is_some_and(|w| w.ends_with('='))
}
