//! Structure: lists, pipelines, subshells, groups, simple commands, redirections, heredocs.

use super::{Item, Node, ParseError, Redirect, RedirectKind, Script, Segment, SimpleCommand, Word};

/// Keywords that start or continue a compound command; the command after them is parsed as usual.
const SKIPPED_KEYWORDS: &[&str] = &["if", "then", "elif", "else", "do", "while", "until", "!", "time"];
/// Keywords that end a compound command.
const CLOSING_KEYWORDS: &[&str] = &["fi", "done"];

pub(super) struct Parser {
    pub(super) chars: Vec<char>,
    pub(super) pos: usize,
    /// Where the parser continues after the newline that ends the current line, when heredoc
    /// bodies follow it.
    after_heredocs: Option<usize>,
    /// How deeply `( )`, `{ }` and substitutions are nested here, to refuse (rather than
    /// overflow the stack on) absurd nesting.
    pub(super) depth: usize,
}

/// Deeper nesting than this is refused.
const MAX_NESTING: usize = 64;

impl Parser {
    pub(super) fn new(text: &str, depth: usize) -> Self {
        Parser { chars: text.chars().collect(), pos: 0, after_heredocs: None, depth }
    }

    pub(super) fn parse(mut self) -> Result<Script, ParseError> {
        let script = self.script(None)?;
        match self.peek() {
            Some(c) => Err(ParseError(format!("unexpected `{c}`"))),
            None => Ok(script),
        }
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
                Some(' ' | '\t') => self.pos += 1,
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

    fn newline(&mut self) {
        self.pos += 1;
        if let Some(resume) = self.after_heredocs.take() {
            self.pos = resume;
        }
    }

    /// Items up to the end, or up to `close` (not consumed).
    pub(super) fn script(&mut self, close: Option<char>) -> Result<Script, ParseError> {
        if close.is_some() {
            self.depth += 1;
            if self.depth > MAX_NESTING {
                return Err(ParseError("the command is nested too deeply".into()));
            }
        }
        let script = self.items(close);
        if close.is_some() {
            self.depth -= 1;
        }
        script
    }

    fn items(&mut self, close: Option<char>) -> Result<Script, ParseError> {
        let mut script = Script::default();
        loop {
            self.skip_blanks();
            match self.peek() {
                None => {
                    return match close {
                        Some(c) => Err(ParseError(format!("`{c}` is missing"))),
                        None => Ok(script),
                    };
                }
                Some(c) if Some(c) == close => return Ok(script),
                Some('\n') => self.newline(),
                Some(';') if self.peek_at(1) == Some(';') => {
                    return Err(ParseError("`;;` outside a case statement".into()));
                }
                Some(';') => self.pos += 1,
                Some(')') => return Err(ParseError("unexpected `)`".into())),
                Some(_) => self.pipeline(&mut script, close)?,
            }
        }
    }

    fn pipeline(&mut self, script: &mut Script, close: Option<char>) -> Result<(), ParseError> {
        let mut elements = Vec::new();
        loop {
            self.skip_blanks();
            match self.element(close)? {
                Some(node) => elements.push(node),
                None if elements.is_empty() => {
                    return match self.peek() {
                        Some('|' | '&') => {
                            Err(ParseError(format!("unexpected `{}`", self.peek().unwrap_or(' '))))
                        }
                        _ => Ok(()),
                    };
                }
                None => return Err(ParseError("a pipe `|` has no command after it".into())),
            }
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
        }
        self.skip_blanks();
        let background = self.peek() == Some('&') && !self.starts_with("&&");
        if background {
            self.pos += 1;
        } else if self.starts_with("&&") || self.starts_with("||") {
            self.pos += 2;
            self.skip_blanks();
            if self.at_command_end(close) && self.peek() != Some('\n') {
                return Err(ParseError("`&&` or `||` has no command after it".into()));
            }
        }
        let isolated = background || elements.len() > 1;
        script.items.extend(elements.into_iter().map(|node| Item { node, isolated }));
        Ok(())
    }

    /// One pipeline element: a subshell, a group or a simple command.
    fn element(&mut self, close: Option<char>) -> Result<Option<Node>, ParseError> {
        if self.starts_with("((") {
            self.skip_arithmetic()?;
            return Ok(Some(Node::Command(SimpleCommand::default())));
        }
        if self.peek() == Some('(') {
            self.pos += 1;
            let inner = self.script(Some(')'))?;
            self.pos += 1;
            let mut tail = SimpleCommand::default();
            self.command_tail(&mut tail, close)?;
            return Ok(Some(wrap_with_redirects(Node::Subshell(inner), tail)));
        }
        self.simple_command(close)
    }

    fn simple_command(&mut self, close: Option<char>) -> Result<Option<Node>, ParseError> {
        let mut command = SimpleCommand::default();
        loop {
            self.skip_blanks();
            if self.at_command_end(close) {
                break;
            }
            if let Some(redirect) = self.redirect()? {
                command.redirects.push(redirect);
                continue;
            }
            let start = self.pos;
            let word = self.word()?;
            if command.words.is_empty() {
                let text = word.literal();
                match text.as_deref() {
                    Some("{") => {
                        let inner = self.script(Some('}'))?;
                        self.pos += 1;
                        let mut tail = SimpleCommand::default();
                        self.command_tail(&mut tail, close)?;
                        return Ok(Some(wrap_with_redirects(Node::Group(inner), tail)));
                    }
                    Some(k) if SKIPPED_KEYWORDS.contains(&k) || CLOSING_KEYWORDS.contains(&k) => continue,
                    Some(k @ ("case" | "function" | "select" | "coproc")) => {
                        return Err(ParseError(format!("`{k}` blocks are not supported")));
                    }
                    _ => {}
                }
                if let Some((name, value)) = self.assignment(start, &word) {
                    command.assignments.push((name, value));
                    continue;
                }
            }
            if self.starts_with("()") {
                return Err(ParseError("function definitions are not supported".into()));
            }
            command.words.push(word);
        }
        if command.words.is_empty() && command.assignments.is_empty() && command.redirects.is_empty() {
            return Ok(None);
        }
        Ok(Some(Node::Command(command)))
    }

    /// Redirections after a `( )` or `{ }`.
    fn command_tail(&mut self, command: &mut SimpleCommand, close: Option<char>) -> Result<(), ParseError> {
        loop {
            self.skip_blanks();
            if self.at_command_end(close) {
                return Ok(());
            }
            match self.redirect()? {
                Some(redirect) => command.redirects.push(redirect),
                None => return Err(ParseError("unexpected word after `)` or `}`".into())),
            }
        }
    }

    fn at_command_end(&self, close: Option<char>) -> bool {
        match self.peek() {
            None | Some(';' | '\n' | '|' | ')') => true,
            Some('&') => self.peek_at(1) != Some('>'),
            Some('}') => close == Some('}') && self.peek_at(1).is_none_or(|c| " \t\n;&|)".contains(c)),
            _ => false,
        }
    }

    /// `NAME=value` (or `NAME+=value`) with an unquoted name.
    fn assignment(&self, start: usize, word: &Word) -> Option<(String, Word)> {
        let raw: String = self.chars[start..self.pos].iter().collect();
        let eq = raw.find('=')?;
        let name = raw[..eq].trim_end_matches('+');
        let valid = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            return None;
        }
        let mut value = word.clone();
        let Some(Segment::Literal(first)) = value.segments.first_mut() else { return None };
        let cut = first.find('=')? + 1;
        first.drain(..cut);
        if first.is_empty() {
            value.segments.remove(0);
        }
        Some((name.to_owned(), value))
    }

    fn redirect(&mut self) -> Result<Option<Redirect>, ParseError> {
        let mut offset = 0;
        while self.peek_at(offset).is_some_and(|c| c.is_ascii_digit()) {
            offset += 1;
        }
        let rest: String = self.chars[self.pos + offset..].iter().take(3).collect();
        if rest.starts_with("<(") || rest.starts_with(">(") {
            return Ok(None);
        }
        let (op, kind) = if offset == 0 && rest.starts_with("&>>") {
            ("&>>", RedirectKind::Write)
        } else if offset == 0 && rest.starts_with("&>") {
            ("&>", RedirectKind::Write)
        } else {
            match () {
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
            }
        };
        self.pos += offset + op.chars().count();
        self.skip_blanks();
        if self.at_command_end(None) || self.peek() == Some('&') {
            return Err(ParseError(format!("`{op}` has no target")));
        }
        let target = self.word()?;
        let kind = match (kind, target.literal()) {
            // `>&file` writes to a file; `>&2` and `>&-` only duplicate a descriptor.
            (RedirectKind::Duplicate, Some(t)) if t != "-" && !t.chars().all(|c| c.is_ascii_digit()) => {
                if op == ">&" { RedirectKind::Write } else { RedirectKind::Read }
            }
            (kind, _) => kind,
        };
        let body = match kind {
            RedirectKind::Heredoc => Some(self.heredoc_body(&target, op == "<<-")?),
            _ => None,
        };
        Ok(Some(Redirect { kind, target, body }))
    }

    /// Reads the body of a heredoc from the lines after the current one (after the bodies of
    /// earlier heredocs on this line), and arranges for the parser to skip it.
    fn heredoc_body(&mut self, delimiter: &Word, strip_tabs: bool) -> Result<String, ParseError> {
        let delimiter =
            delimiter.literal().ok_or_else(|| ParseError("a heredoc delimiter must be literal".into()))?;
        let start = match self.after_heredocs {
            Some(resume) => resume,
            None => match self.chars[self.pos..].iter().position(|&c| c == '\n') {
                Some(newline) => self.pos + newline + 1,
                None => return Err(ParseError(format!("the heredoc `{delimiter}` has no body"))),
            },
        };
        let mut body = String::new();
        let mut line_start = start;
        loop {
            if line_start >= self.chars.len() {
                return Err(ParseError(format!("the heredoc is not closed by a `{delimiter}` line")));
            }
            let line_end = self.chars[line_start..]
                .iter()
                .position(|&c| c == '\n')
                .map_or(self.chars.len(), |n| line_start + n);
            let line: String = self.chars[line_start..line_end].iter().collect();
            let compared = if strip_tabs { line.trim_start_matches('\t') } else { line.as_str() };
            if compared == delimiter {
                self.after_heredocs = Some((line_end + 1).min(self.chars.len()));
                return Ok(body);
            }
            body.push_str(&line);
            body.push('\n');
            line_start = line_end + 1;
        }
    }

    pub(super) fn skip_arithmetic(&mut self) -> Result<(), ParseError> {
        let mut depth = 0usize;
        while let Some(c) = self.peek() {
            self.pos += 1;
            match c {
                '(' => depth += 1,
                ')' if depth <= 1 => return Ok(()),
                ')' => depth -= 1,
                _ => {}
            }
        }
        Err(ParseError("an arithmetic `((` is not closed".into()))
    }
}

/// Redirections written after `( )` or `{ }` apply to the whole block: kept as an empty command
/// with those redirections, run in the same scope as the block.
fn wrap_with_redirects(node: Node, tail: SimpleCommand) -> Node {
    if tail.redirects.is_empty() {
        return node;
    }
    let (Node::Subshell(inner) | Node::Group(inner)) = &node else { return node };
    let mut items = inner.items.clone();
    items.push(Item { node: Node::Command(tail), isolated: true });
    match node {
        Node::Subshell(_) => Node::Subshell(Script { items }),
        _ => Node::Group(Script { items }),
    }
}
