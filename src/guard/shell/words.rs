//! Words: quoting, escapes, `~`, `$` expansions (`${ }` with its operand words, `$(( ))` with
//! its expression), command and process substitutions.

use super::parser::{Parser, Stop};
use super::{MAX_NESTING, ParseError, Script, Segment, Word};

/// The longest first: `${X:-…}` before `${X-…}`.
const PARAMETER_OPERATORS: &[&str] = &[
    ":-", ":=", ":?", ":+", "##", "%%", "//", "/#", "/%", "^^", ",,", "-", "=", "?", "+", "#", "%", "/", "^",
    ",", "@", ":",
];

impl Parser {
    /// One word, up to an unquoted blank or operator.
    pub(super) fn word(&mut self) -> Result<Word, ParseError> {
        let mut word = Word::default();
        if self.peek() == Some('~') {
            self.tilde(&mut word);
        }
        while let Some(c) = self.peek() {
            match c {
                ' ' | '\t' | '\r' | '\n' | ';' | '&' | '|' | ')' | '(' => break,
                '<' | '>' if self.peek_at(1) == Some('(') => {
                    self.pos += 2;
                    let inner = self.nested(Stop::Paren)?;
                    self.pos += 1;
                    word.segments.push(Segment::Process(inner));
                }
                '<' | '>' => break,
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
                    let script = self.backquoted()?;
                    word.segments.push(Segment::Substitution { script, quoted: false });
                }
                _ => {
                    word.push_bare(c);
                    self.pos += 1;
                }
            }
        }
        if word.segments.is_empty() {
            return Err(ParseError::syntax(match self.peek() {
                Some(c) => format!("unexpected `{c}`"),
                None => "a word is missing".into(),
            }));
        }
        Ok(word)
    }

    /// `~`, `~user`, `~+`, `~-` at the start of a word, when a `/` or the word's end follows.
    fn tilde(&mut self, word: &mut Word) {
        let mut len = 1;
        while self.peek_at(len).is_some_and(|c| c.is_ascii_alphanumeric() || "_.+-".contains(c)) {
            len += 1;
        }
        let user: String = self.chars[self.pos + 1..self.pos + len].iter().collect();
        self.pos += len;
        if self.peek().is_none_or(|c| c == '/' || " \t\r\n;&|)<>".contains(c)) {
            word.segments.push(Segment::Tilde(user));
        } else {
            word.segments.push(Segment::Bare(format!("~{user}")));
        }
    }

    fn until_quote(&mut self, quote: char) -> Result<String, ParseError> {
        let mut text = String::new();
        loop {
            match self.peek() {
                None => return Err(ParseError::syntax(format!("a `{quote}` quote is not closed"))),
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

    pub(super) fn double_quoted(&mut self, word: &mut Word) -> Result<(), ParseError> {
        word.segments.push(Segment::Literal(String::new()));
        loop {
            match self.peek() {
                None => return Err(ParseError::syntax("a `\"` quote is not closed")),
                Some('"') => {
                    self.pos += 1;
                    return Ok(());
                }
                _ => self.quoted_char(word)?,
            }
        }
    }

    /// One piece of double-quoted text (also a heredoc body's): `\` escapes only `$`, `` ` ``,
    /// `"`, `\` and a newline.
    fn quoted_char(&mut self, word: &mut Word) -> Result<(), ParseError> {
        match self.peek() {
            Some('\\') => match self.peek_at(1) {
                Some(next @ ('$' | '`' | '"' | '\\')) => {
                    word.push_literal(next);
                    self.pos += 2;
                }
                Some('\n') => self.pos += 2,
                _ => {
                    word.push_literal('\\');
                    self.pos += 1;
                }
            },
            Some('$') => self.dollar(word, true)?,
            Some('`') => {
                self.pos += 1;
                let script = self.backquoted()?;
                word.segments.push(Segment::Substitution { script, quoted: true });
            }
            Some(c) => {
                word.push_literal(c);
                self.pos += 1;
            }
            None => {}
        }
        Ok(())
    }

    /// A whole heredoc body with an unquoted delimiter: expanded like double-quoted text.
    pub(super) fn heredoc_text(mut self) -> Result<Word, ParseError> {
        let mut word = Word { segments: vec![Segment::Literal(String::new())] };
        while self.peek().is_some() {
            if self.peek() == Some('"') {
                word.push_literal('"');
                self.pos += 1;
            } else {
                self.quoted_char(&mut word)?;
            }
        }
        self.finish_heredocs_in(&mut word)?;
        Ok(word)
    }

    /// A whole text as an arithmetic expression (an array subscript).
    pub(super) fn arithmetic_text(mut self) -> Result<Word, ParseError> {
        self.arithmetic(None)
    }

    /// `$name`, `${…}`, `$(…)`, `$((…))`, `$[…]`, `$'…'`, `$"…"`, or a lone `$`.
    pub(super) fn dollar(&mut self, word: &mut Word, quoted: bool) -> Result<(), ParseError> {
        self.pos += 1;
        match self.peek() {
            Some('(') if self.peek_at(1) == Some('(') => self.dollar_parens(word, quoted)?,
            Some('(') => {
                self.pos += 1;
                let script = self.nested(Stop::Paren)?;
                self.pos += 1;
                word.segments.push(Segment::Substitution { script, quoted });
            }
            Some('[') => {
                self.pos += 1;
                let expression = self.arithmetic(Some("]"))?;
                word.segments.push(Segment::Arithmetic { expression, quoted });
            }
            Some('{') => {
                self.pos += 1;
                self.parameter(word, quoted)?;
            }
            Some('\'') if !quoted => {
                self.pos += 1;
                let text = self.ansi_c_quoted()?;
                word.segments.push(Segment::Literal(text));
            }
            // `$"…"` is translated by the locale; in the C locale it is plain double-quoted text.
            Some('"') if !quoted => {
                self.pos += 1;
                self.double_quoted(word)?;
            }
            Some(c) if c.is_ascii_alphabetic() || c == '_' => {
                let mut name = String::new();
                while let Some(c) = self.peek().filter(|c| c.is_ascii_alphanumeric() || *c == '_') {
                    name.push(c);
                    self.pos += 1;
                }
                word.segments.push(Segment::Variable { name, quoted });
            }
            Some(c) if c.is_ascii_digit() || "@*#?$!-".contains(c) => {
                self.pos += 1;
                word.segments.push(Segment::Variable { name: c.to_string(), quoted });
            }
            _ if quoted => word.push_literal('$'),
            _ => word.push_bare('$'),
        }
        Ok(())
    }

    /// `$((…))` after its `$`; one that does not close as arithmetic is a substitution of a
    /// subshell (`$((cmd) )`), as bash reads it.
    fn dollar_parens(&mut self, word: &mut Word, quoted: bool) -> Result<(), ParseError> {
        let arithmetic = |p: &mut Self| {
            p.pos += 2;
            p.arithmetic(Some("))"))
        };
        match self.attempt(arithmetic)? {
            Some(expression) => word.segments.push(Segment::Arithmetic { expression, quoted }),
            None => {
                self.pos += 1;
                let script = self.nested(Stop::Paren)?;
                self.pos += 1;
                word.segments.push(Segment::Substitution { script, quoted });
            }
        }
        Ok(())
    }

    /// `${…}` after its `${`: a plain `${NAME}` is a variable; anything more is a parameter
    /// whose value is not followed but whose operand and subscript are parsed.
    fn parameter(&mut self, word: &mut Word, quoted: bool) -> Result<(), ParseError> {
        self.enter()?;
        let prefixed = matches!(self.peek(), Some('#' | '!')) && self.peek_at(1).is_some_and(|c| c != '}');
        self.pos += usize::from(prefixed);
        let name = self.parameter_name();
        if name.is_empty() {
            return Err(ParseError::syntax("a `${ }` names no variable"));
        }
        let mut words = Vec::new();
        if self.peek() == Some('[') {
            self.pos += 1;
            words.push(self.arithmetic(Some("]"))?);
        }
        let mut assigns = false;
        if self.peek() == Some('}') {
            self.pos += 1;
        } else {
            let operator = PARAMETER_OPERATORS.iter().find(|op| self.starts_with(op)).copied().unwrap_or("");
            self.pos += operator.len();
            assigns = matches!(operator, "=" | ":=");
            words.push(self.braced_word(quoted)?);
        }
        self.depth -= 1;
        if words.is_empty() && !prefixed {
            word.segments.push(Segment::Variable { name, quoted });
        } else {
            word.segments.push(Segment::Parameter { name, words, assigns, quoted });
        }
        Ok(())
    }

    fn parameter_name(&mut self) -> String {
        let mut name = String::new();
        match self.peek() {
            Some(c) if c.is_ascii_alphabetic() || c == '_' => {
                while let Some(c) = self.peek().filter(|c| c.is_ascii_alphanumeric() || *c == '_') {
                    name.push(c);
                    self.pos += 1;
                }
            }
            Some(c) if c.is_ascii_digit() => {
                while let Some(c) = self.peek().filter(char::is_ascii_digit) {
                    name.push(c);
                    self.pos += 1;
                }
            }
            Some(c) if "@*#?$!-".contains(c) => {
                name.push(c);
                self.pos += 1;
            }
            _ => {}
        }
        name
    }

    /// The operand of a `${…}`, up to its closing `}` (consumed). Inside double quotes a `'` is
    /// an ordinary character, as bash reads `"${X:-it's}"`.
    fn braced_word(&mut self, quoted: bool) -> Result<Word, ParseError> {
        let mut word = Word::default();
        let mut braces = 0usize;
        loop {
            match self.peek() {
                None => return Err(ParseError::syntax("a `${` is not closed")),
                Some('}') if braces == 0 => {
                    self.pos += 1;
                    return Ok(word);
                }
                Some('\\') => {
                    self.pos += 1;
                    if let Some(c) = self.peek() {
                        word.push_literal(c);
                        self.pos += 1;
                    }
                }
                Some('$') => self.dollar(&mut word, quoted)?,
                Some('`') => {
                    self.pos += 1;
                    let script = self.backquoted()?;
                    word.segments.push(Segment::Substitution { script, quoted });
                }
                Some('"') => {
                    self.pos += 1;
                    self.double_quoted(&mut word)?;
                }
                Some('\'') if !quoted => {
                    self.pos += 1;
                    let text = self.until_quote('\'')?;
                    word.segments.push(Segment::Literal(text));
                }
                Some(c) => {
                    braces += usize::from(c == '{');
                    braces -= usize::from(c == '}');
                    if quoted {
                        word.push_literal(c)
                    } else {
                        word.push_bare(c)
                    }
                    self.pos += 1;
                }
            }
        }
    }

    /// An arithmetic expression up to `close` at parenthesis depth 0 (consumed), or to the end.
    pub(super) fn arithmetic(&mut self, close: Option<&str>) -> Result<Word, ParseError> {
        self.enter()?;
        let mut word = Word::default();
        let mut parens = 0usize;
        loop {
            if let Some(close) = close.filter(|c| parens == 0 && self.starts_with(c)) {
                self.pos += close.len();
                break;
            }
            match self.peek() {
                None if close.is_none() => break,
                None => return Err(ParseError::syntax("an arithmetic `$((` or `((` is not closed")),
                Some(')') if parens == 0 => return Err(ParseError::syntax("unbalanced `)` in arithmetic")),
                Some('$') => self.dollar(&mut word, true)?,
                Some('`') => {
                    self.pos += 1;
                    let script = self.backquoted()?;
                    word.segments.push(Segment::Substitution { script, quoted: true });
                }
                Some('"') => {
                    self.pos += 1;
                    self.double_quoted(&mut word)?;
                }
                Some(c) => {
                    parens += usize::from(c == '(');
                    parens -= usize::from(c == ')');
                    if self.depth + parens > MAX_NESTING {
                        self.enter()?;
                    }
                    word.push_bare(c);
                    self.pos += 1;
                }
            }
        }
        self.depth -= 1;
        if word.segments.is_empty() {
            word.segments.push(Segment::Bare(String::new()));
        }
        Ok(word)
    }

    /// `$'…'` with bash's escapes (`\n`, `\x2f`, `\057`, `\u2f`, `\cA`…).
    fn ansi_c_quoted(&mut self) -> Result<String, ParseError> {
        let mut text = String::new();
        loop {
            match self.peek() {
                None => return Err(ParseError::syntax("a `$'` quote is not closed")),
                Some('\'') => {
                    self.pos += 1;
                    return Ok(text);
                }
                Some('\\') => {
                    self.pos += 1;
                    self.ansi_c_escape(&mut text);
                }
                Some(c) => {
                    text.push(c);
                    self.pos += 1;
                }
            }
        }
    }

    fn ansi_c_escape(&mut self, text: &mut String) {
        let Some(c) = self.peek() else {
            text.push('\\');
            return;
        };
        self.pos += 1;
        let simple = match c {
            'a' => Some('\x07'),
            'b' => Some('\x08'),
            'e' | 'E' => Some('\x1b'),
            'f' => Some('\x0c'),
            'n' => Some('\n'),
            'r' => Some('\r'),
            't' => Some('\t'),
            'v' => Some('\x0b'),
            '\\' | '\'' | '"' | '?' => Some(c),
            _ => None,
        };
        if let Some(decoded) = simple {
            text.push(decoded);
            return;
        }
        let (radix, max) = match c {
            '0'..='7' => {
                self.pos -= 1;
                (8, 3)
            }
            'x' => (16, 2),
            'u' => (16, 4),
            'U' => (16, 8),
            'c' => {
                let control = self.peek().map(|k| ((k as u32) & 0x1f) as u8 as char);
                self.pos += usize::from(control.is_some());
                text.extend(control);
                return;
            }
            other => {
                text.push('\\');
                text.push(other);
                return;
            }
        };
        let mut value = 0u32;
        let mut digits = 0;
        while digits < max {
            let Some(digit) = self.peek().and_then(|d| d.to_digit(radix)) else { break };
            value = value * radix + digit;
            digits += 1;
            self.pos += 1;
        }
        match char::from_u32(value).filter(|_| digits > 0) {
            // bash stops the string at a NUL byte; any later text is dropped.
            Some('\0') => {}
            Some(decoded) => text.push(decoded),
            None => {
                text.push('\\');
                text.push(c);
            }
        }
    }

    /// The command inside backquotes, with `\``, `\\` and `\$` unescaped, parsed on its own.
    fn backquoted(&mut self) -> Result<Script, ParseError> {
        let mut inner = String::new();
        loop {
            match self.peek() {
                None => return Err(ParseError::syntax("a backquote is not closed")),
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
