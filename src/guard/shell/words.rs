//! Words: quoting, escapes, `$` expansions and command substitutions.

use super::parser::Parser;
use super::{ParseError, Script, Segment, Word};

impl Parser {
    /// One word, up to an unquoted blank or operator.
    pub(super) fn word(&mut self) -> Result<Word, ParseError> {
        let mut word = Word::default();
        if self.peek() == Some('~') {
            self.pos += 1;
            let mut user = String::new();
            while let Some(c) = self.peek().filter(|c| c.is_ascii_alphanumeric() || "_-.".contains(*c)) {
                user.push(c);
                self.pos += 1;
            }
            word.segments.push(Segment::Tilde(user));
        }
        while let Some(c) = self.peek() {
            match c {
                ' ' | '\t' | '\n' | ';' | '&' | '|' | ')' => break,
                '<' | '>' if self.peek_at(1) == Some('(') => {
                    self.pos += 2;
                    let inner = self.script(Some(')'))?;
                    self.pos += 1;
                    word.segments.push(Segment::Substitution(inner));
                }
                '<' | '>' => break,
                '(' => return Err(ParseError("unexpected `(` inside a word".into())),
                '\'' => {
                    self.pos += 1;
                    let text = self.until_quote('\'')?;
                    word.segments.push(Segment::Literal(text));
                }
                '"' => {
                    self.pos += 1;
                    self.double_quoted(&mut word)?;
                }
                '\\' => {
                    self.pos += 1;
                    match self.peek() {
                        Some('\n') => self.pos += 1,
                        Some(escaped) => {
                            word.push_literal(escaped);
                            self.pos += 1;
                        }
                        None => word.push_literal('\\'),
                    }
                }
                '$' => self.dollar(&mut word, false)?,
                '`' => {
                    self.pos += 1;
                    let inner = self.backquoted()?;
                    word.segments.push(Segment::Substitution(inner));
                }
                _ => {
                    word.push_literal(c);
                    self.pos += 1;
                }
            }
        }
        if word.segments.is_empty() {
            word.segments.push(Segment::Literal(String::new()));
        }
        Ok(word)
    }

    fn until_quote(&mut self, quote: char) -> Result<String, ParseError> {
        let mut text = String::new();
        loop {
            match self.peek() {
                None => return Err(ParseError(format!("a `{quote}` quote is not closed"))),
                Some(c) if c == quote => {
                    self.pos += 1;
                    return Ok(text);
                }
                Some(c) => {
                    text.push(c);
                    self.pos += 1;
                }
            }
        }
    }

    fn double_quoted(&mut self, word: &mut Word) -> Result<(), ParseError> {
        word.segments.push(Segment::Literal(String::new()));
        loop {
            match self.peek() {
                None => return Err(ParseError("a `\"` quote is not closed".into())),
                Some('"') => {
                    self.pos += 1;
                    return Ok(());
                }
                Some('\\') => {
                    let next = self.peek_at(1);
                    match next {
                        Some('$' | '`' | '"' | '\\') => {
                            word.push_literal(next.unwrap_or('\\'));
                            self.pos += 2;
                        }
                        Some('\n') => self.pos += 2,
                        _ => {
                            word.push_literal('\\');
                            self.pos += 1;
                        }
                    }
                }
                Some('$') => self.dollar(word, true)?,
                Some('`') => {
                    self.pos += 1;
                    let inner = self.backquoted()?;
                    word.segments.push(Segment::Substitution(inner));
                }
                Some(c) => {
                    word.push_literal(c);
                    self.pos += 1;
                }
            }
        }
    }

    /// `$name`, `${…}`, `$(…)`, `$((…))`, `$'…'`, or a lone `$`.
    fn dollar(&mut self, word: &mut Word, quoted: bool) -> Result<(), ParseError> {
        self.pos += 1;
        match self.peek() {
            Some('(') if self.peek_at(1) == Some('(') => {
                self.skip_arithmetic()?;
                word.segments.push(Segment::Variable("((arithmetic))".into()));
            }
            Some('(') => {
                self.pos += 1;
                let inner = self.script(Some(')'))?;
                self.pos += 1;
                word.segments.push(Segment::Substitution(inner));
            }
            Some('{') => {
                self.pos += 1;
                let mut name = String::new();
                let mut depth = 1;
                loop {
                    match self.peek() {
                        None => return Err(ParseError("a `${` is not closed".into())),
                        Some('}') if depth == 1 => {
                            self.pos += 1;
                            break;
                        }
                        Some(c) => {
                            depth += usize::from(c == '{');
                            depth -= usize::from(c == '}');
                            name.push(c);
                            self.pos += 1;
                        }
                    }
                }
                let plain: String =
                    name.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
                // `${X:-…}` and friends have a value wt cannot know: keep the whole text.
                let name = if plain.len() == name.len() { plain } else { name };
                word.segments.push(Segment::Variable(name));
            }
            Some('\'') if !quoted => {
                self.pos += 1;
                let text = self.ansi_c_quoted()?;
                word.segments.push(Segment::Literal(text));
            }
            Some(c) if c.is_ascii_alphabetic() || c == '_' => {
                let mut name = String::new();
                while let Some(c) = self.peek().filter(|c| c.is_ascii_alphanumeric() || *c == '_') {
                    name.push(c);
                    self.pos += 1;
                }
                word.segments.push(Segment::Variable(name));
            }
            Some(c) if c.is_ascii_digit() || "@*#?$!-".contains(c) => {
                self.pos += 1;
                word.segments.push(Segment::Variable(c.to_string()));
            }
            _ => word.push_literal('$'),
        }
        Ok(())
    }

    fn ansi_c_quoted(&mut self) -> Result<String, ParseError> {
        let mut text = String::new();
        loop {
            match self.peek() {
                None => return Err(ParseError("a `$'` quote is not closed".into())),
                Some('\'') => {
                    self.pos += 1;
                    return Ok(text);
                }
                Some('\\') => {
                    let escaped = self.peek_at(1).unwrap_or('\\');
                    text.push(match escaped {
                        'n' => '\n',
                        't' => '\t',
                        other => other,
                    });
                    self.pos += 2;
                }
                Some(c) => {
                    text.push(c);
                    self.pos += 1;
                }
            }
        }
    }

    /// The command inside backquotes, with `\`` and `\\` unescaped, parsed on its own.
    fn backquoted(&mut self) -> Result<Script, ParseError> {
        let mut inner = String::new();
        loop {
            match self.peek() {
                None => return Err(ParseError("a backquote is not closed".into())),
                Some('`') => {
                    self.pos += 1;
                    return Parser::new(&inner, self.depth + 1).parse();
                }
                Some('\\') if matches!(self.peek_at(1), Some('`' | '\\' | '$')) => {
                    inner.push(self.peek_at(1).unwrap_or('\\'));
                    self.pos += 2;
                }
                Some(c) => {
                    inner.push(c);
                    self.pos += 1;
                }
            }
        }
    }
}
