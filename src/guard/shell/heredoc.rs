//! Heredocs. As in bash, a body starts after the newline that ends the line holding its `<<`
//! (not at the first newline character, which may sit inside quotes), and the bodies of several
//! heredocs on one line follow each other. A redirection gets a placeholder when it is parsed;
//! the bodies are read at that newline and put in place once the whole command is parsed.
//! An unquoted delimiter (`<<EOF`) means the body's `$( )`, `${ }` and backticks run.

use super::parser::Parser;
use super::{MAX_HEREDOCS, Node, ParseError, Redirect, RedirectKind, Script, Segment, Word};

pub(super) struct PendingHeredoc {
    delimiter: String,
    strip_tabs: bool,
    expands: bool,
    slot: usize,
}

/// What a heredoc redirection holds until its body is read: its slot.
fn placeholder(slot: usize) -> Word {
    Word { segments: vec![Segment::Variable { name: format!("\0heredoc{slot}"), quoted: true }] }
}

fn slot_of(word: &Word) -> Option<usize> {
    match word.segments.as_slice() {
        [Segment::Variable { name, .. }] => name.strip_prefix("\0heredoc")?.parse().ok(),
        _ => None,
    }
}

impl Parser {
    pub(super) fn register_heredoc(
        &mut self,
        delimiter: &Word,
        strip_tabs: bool,
    ) -> Result<Word, ParseError> {
        let text =
            delimiter.literal().ok_or_else(|| ParseError::syntax("a heredoc delimiter must be literal"))?;
        let expands = delimiter.segments.iter().all(|s| matches!(s, Segment::Bare(_)));
        let slot = self.bodies.len();
        if slot >= MAX_HEREDOCS {
            return Err(ParseError {
                message: format!("the command has more than {MAX_HEREDOCS} heredocs"),
                limit: true,
                complete: 0,
            });
        }
        self.bodies.push(None);
        self.pending.push(PendingHeredoc { delimiter: text, strip_tabs, expands, slot });
        Ok(placeholder(slot))
    }

    /// Reads the bodies of the pending heredocs, starting at the current position (just after
    /// a newline), and moves past them.
    pub(super) fn read_heredoc_bodies(&mut self) -> Result<(), ParseError> {
        for pending in std::mem::take(&mut self.pending) {
            let mut body = String::new();
            loop {
                if self.pos >= self.chars.len() {
                    return Err(ParseError::syntax(format!(
                        "the heredoc is not closed by a `{}` line",
                        pending.delimiter
                    )));
                }
                let end = self.chars[self.pos..]
                    .iter()
                    .position(|&c| c == '\n')
                    .map_or(self.chars.len(), |n| self.pos + n);
                let mut line: &[char] = &self.chars[self.pos..end];
                if pending.strip_tabs {
                    while let [tab, rest @ ..] = line {
                        if *tab != '\t' {
                            break;
                        }
                        line = rest;
                    }
                }
                self.pos = (end + 1).min(self.chars.len());
                if line.iter().copied().eq(pending.delimiter.chars()) {
                    break;
                }
                body.extend(line);
                body.push('\n');
            }
            let word = if pending.expands {
                Parser::new(&body, self.depth + 1).heredoc_text()?
            } else {
                Word { segments: vec![Segment::Literal(body)] }
            };
            self.bodies[pending.slot] = Some(word);
        }
        Ok(())
    }

    /// Puts every body read in its redirection; a heredoc whose body never came is an error.
    pub(super) fn finish_heredocs(&mut self, script: &mut Script) -> Result<(), ParseError> {
        if let Some(pending) = self.pending.first() {
            return Err(ParseError::syntax(format!("the heredoc `{}` has no body", pending.delimiter)));
        }
        if self.bodies.is_empty() {
            return Ok(());
        }
        fill_script(script, &mut self.bodies);
        Ok(())
    }
}

impl Parser {
    /// As [`Parser::finish_heredocs`], for a word parsed on its own (a heredoc body).
    pub(super) fn finish_heredocs_in(&mut self, word: &mut Word) -> Result<(), ParseError> {
        if let Some(pending) = self.pending.first() {
            return Err(ParseError::syntax(format!("the heredoc `{}` has no body", pending.delimiter)));
        }
        fill_word(word, &mut self.bodies);
        Ok(())
    }
}

fn fill_script(script: &mut Script, bodies: &mut [Option<Word>]) {
    for item in &mut script.items {
        match &mut item.node {
            Node::Command(command) => {
                let words = command.assignments.iter_mut().flat_map(|a| a.words.iter_mut());
                for word in words.chain(command.words.iter_mut()) {
                    fill_word(word, bodies);
                }
                for redirect in &mut command.redirects {
                    fill_redirect(redirect, bodies);
                }
            }
            Node::Subshell(inner) | Node::Group(inner) => fill_script(inner, bodies),
        }
    }
}

fn fill_redirect(redirect: &mut Redirect, bodies: &mut [Option<Word>]) {
    fill_word(&mut redirect.target, bodies);
    if redirect.kind != RedirectKind::Heredoc {
        return;
    }
    if let Some(body) = redirect.body.as_mut()
        && let Some(slot) = slot_of(body)
        && let Some(filled) = bodies.get_mut(slot).and_then(Option::take)
    {
        *body = filled;
    }
}

fn fill_word(word: &mut Word, bodies: &mut [Option<Word>]) {
    for segment in &mut word.segments {
        match segment {
            Segment::Substitution { script, .. } | Segment::Process(script) => fill_script(script, bodies),
            Segment::Parameter { words, .. } => words.iter_mut().for_each(|w| fill_word(w, bodies)),
            Segment::Arithmetic { expression, .. } => fill_word(expression, bodies),
            _ => {}
        }
    }
}
