//! Compound commands: `{ }`, `if`, `while`/`until`, `for`/`select`, `for (( ))`, `(( ))`,
//! `case`, function definitions and `[[ ]]`. Each but `[[ ]]` becomes a `Group` whose script's
//! [`Shape`] says how its parts relate.

use super::parser::{Parser, Stop};
use super::{Item, Join, Node, ParseError, Script, Segment, Shape, SimpleCommand, Word};

fn item(node: Node) -> Item {
    Item { node, isolated: false, join: Join::Seq, negated: false }
}

fn words_command(words: Vec<Word>) -> Node {
    Node::Command(SimpleCommand { words, ..Default::default() })
}

impl Parser {
    fn compound(&mut self, shape: Shape, parts: Vec<Node>) -> Result<Node, ParseError> {
        let script = Script { items: parts.into_iter().map(item).collect(), shape };
        self.with_redirects(Node::Group(script))
    }

    fn part(&mut self, stop: &'static [&'static str]) -> Result<Node, ParseError> {
        Ok(Node::Group(self.list(Stop::Words(stop))?))
    }

    pub(super) fn brace_group(&mut self) -> Result<Node, ParseError> {
        self.pos += 1;
        let inner = self.nested(Stop::Words(&["}"]))?;
        self.expect_reserved("}")?;
        self.with_redirects(Node::Group(inner))
    }

    pub(super) fn if_clause(&mut self) -> Result<Node, ParseError> {
        self.pos += 2;
        self.enter()?;
        let mut parts = Vec::new();
        loop {
            parts.push(self.part(&["then"])?);
            self.expect_reserved("then")?;
            parts.push(self.part(&["elif", "else", "fi"])?);
            match self.peek_reserved() {
                Some("elif") => self.pos += 4,
                Some("else") => {
                    self.pos += 4;
                    parts.push(self.part(&["fi"])?);
                    break;
                }
                _ => break,
            }
        }
        self.expect_reserved("fi")?;
        self.depth -= 1;
        self.compound(Shape::If, parts)
    }

    pub(super) fn loop_clause(&mut self, until: bool) -> Result<Node, ParseError> {
        self.pos += 5; // `while` or `until`
        self.enter()?;
        let condition = self.part(&["do"])?;
        let body = self.do_group()?;
        self.depth -= 1;
        self.compound(Shape::Loop { until }, vec![condition, body])
    }

    fn do_group(&mut self) -> Result<Node, ParseError> {
        self.skip_linebreaks()?;
        self.expect_reserved("do")?;
        let body = self.part(&["done"])?;
        self.expect_reserved("done")?;
        Ok(body)
    }

    /// `for NAME [in WORDS]; do …; done`, `select …`, or `for (( … )); do …; done`.
    pub(super) fn for_clause(&mut self, keyword_len: usize) -> Result<Node, ParseError> {
        self.pos += keyword_len;
        self.enter()?;
        self.skip_blanks();
        if self.starts_with("((") {
            self.pos += 2;
            let header = self.arithmetic_word()?;
            self.skip_blanks();
            self.pos += usize::from(self.peek() == Some(';'));
            let body = self.do_group()?;
            self.depth -= 1;
            return self.compound(Shape::ArithFor, vec![words_command(vec![header]), body]);
        }
        let name = self.word()?.bare().map(str::to_owned).filter(|n| is_name(n));
        let name = name.ok_or_else(|| ParseError::syntax("a `for` loop needs a variable name"))?;
        self.skip_linebreaks()?;
        let mut words = Vec::new();
        let words_given = self.peek_reserved() == Some("in");
        if words_given {
            self.pos += 2;
            loop {
                self.skip_blanks();
                if self.at_command_end() {
                    break;
                }
                words.push(self.word()?);
            }
        }
        self.skip_blanks();
        self.pos += usize::from(self.peek() == Some(';'));
        let body = self.do_group()?;
        self.depth -= 1;
        self.compound(Shape::For { name, words_given }, vec![words_command(words), body])
    }

    /// The expression of `(( … ))` or `for (( … ))`, after its `((`, as a word of one arithmetic.
    fn arithmetic_word(&mut self) -> Result<Word, ParseError> {
        let expression = self.arithmetic(Some("))"))?;
        Ok(Word { segments: vec![Segment::Arithmetic { expression, quoted: false }] })
    }

    pub(super) fn arithmetic_command(&mut self) -> Result<Node, ParseError> {
        self.pos += 2;
        let expression = self.arithmetic_word()?;
        self.compound(Shape::Arithmetic, vec![words_command(vec![expression])])
    }

    pub(super) fn case_clause(&mut self) -> Result<Node, ParseError> {
        self.pos += 4;
        self.enter()?;
        self.skip_blanks();
        let subject = self.word()?;
        self.skip_linebreaks()?;
        self.expect_reserved("in")?;
        let mut parts = vec![words_command(vec![subject])];
        let mut fallthrough = Vec::new();
        loop {
            self.skip_linebreaks()?;
            if self.peek_reserved() == Some("esac") {
                self.pos += 4;
                break;
            }
            parts.push(words_command(self.case_patterns()?));
            parts.push(Node::Group(self.list(Stop::CaseArm)?));
            let (len, falls) = match () {
                _ if self.starts_with(";;&") => (3, true),
                _ if self.starts_with(";&") => (2, true),
                _ if self.starts_with(";;") => (2, false),
                _ => (0, false),
            };
            self.pos += len;
            fallthrough.push(falls);
        }
        self.depth -= 1;
        self.compound(Shape::Case { fallthrough }, parts)
    }

    fn case_patterns(&mut self) -> Result<Vec<Word>, ParseError> {
        self.pos += usize::from(self.peek() == Some('('));
        let mut patterns = Vec::new();
        loop {
            self.skip_blanks();
            patterns.push(self.word()?);
            self.skip_blanks();
            match self.peek() {
                Some('|') => self.pos += 1,
                Some(')') => {
                    self.pos += 1;
                    return Ok(patterns);
                }
                _ => return Err(ParseError::syntax("a `case` pattern is not closed by `)`")),
            }
        }
    }

    /// `function NAME [()] BODY`.
    pub(super) fn function_keyword(&mut self) -> Result<Node, ParseError> {
        self.pos += 8;
        self.skip_blanks();
        let name =
            self.word()?.literal().ok_or_else(|| ParseError::syntax("a function name must be literal"))?;
        self.skip_blanks();
        if self.starts_with("()") {
            self.pos += 2;
        }
        self.function_body(name)
    }

    /// A function's body, after `NAME()`: it runs when the function is called.
    pub(super) fn function_body(&mut self, name: String) -> Result<Node, ParseError> {
        self.skip_linebreaks()?;
        self.enter()?;
        let body = self.command()?;
        self.depth -= 1;
        Ok(Node::Group(Script { items: vec![item(body)], shape: Shape::Function { name } }))
    }

    /// `[[ … ]]`: a command of its words, where `<`, `>`, `(`, `)`, `&&` and `||` are operators
    /// of the test, not redirections or lists.
    pub(super) fn conditional(&mut self) -> Result<Node, ParseError> {
        self.pos += 2;
        let mut words = vec![bare("[[")];
        loop {
            self.skip_linebreaks()?;
            let closing = self.starts_with("]]") && self.peek_at(2).is_none_or(|c| " \t\r\n;&|)".contains(c));
            if closing {
                self.pos += 2;
                words.push(bare("]]"));
                break;
            }
            if self.starts_with("&&") || self.starts_with("||") {
                words.push(bare(&self.chars[self.pos..self.pos + 2].iter().collect::<String>()));
                self.pos += 2;
                continue;
            }
            match self.peek() {
                None => return Err(ParseError::syntax("`]]` is missing")),
                Some(c @ ('(' | ')' | '<' | '>')) => {
                    words.push(bare(&c.to_string()));
                    self.pos += 1;
                }
                _ if words.last().and_then(Word::bare) == Some("=~") => words.push(self.regex_word()?),
                _ => words.push(self.word()?),
            }
        }
        self.with_redirects(words_command(words))
    }

    /// The right side of `=~`: up to a blank outside parentheses; its expansions still run.
    fn regex_word(&mut self) -> Result<Word, ParseError> {
        let mut word = Word::default();
        let mut parens = 0usize;
        while let Some(c) = self.peek() {
            match c {
                ' ' | '\t' | '\n' if parens == 0 => break,
                '$' => self.dollar(&mut word, true)?,
                '\\' => {
                    self.pos += 1;
                    if let Some(escaped) = self.peek() {
                        word.push_literal(escaped);
                        self.pos += 1;
                    }
                }
                '\'' | '"' | '`' => {
                    let mut quoted = self.word_from_quote()?;
                    word.segments.append(&mut quoted.segments);
                }
                _ => {
                    parens += usize::from(c == '(');
                    parens = parens.saturating_sub(usize::from(c == ')'));
                    word.push_bare(c);
                    self.pos += 1;
                }
            }
        }
        if word.segments.is_empty() {
            return Err(ParseError::syntax("`=~` has no pattern"));
        }
        Ok(word)
    }

    /// A quoted piece (`'…'`, `"…"` or backquotes) read as the start of a word.
    fn word_from_quote(&mut self) -> Result<Word, ParseError> {
        let start = self.pos;
        let word = self.word()?;
        if self.pos == start {
            return Err(ParseError::syntax("unexpected character in `[[ ]]`"));
        }
        Ok(word)
    }
}

fn bare(text: &str) -> Word {
    Word { segments: vec![Segment::Bare(text.to_owned())] }
}

fn is_name(text: &str) -> bool {
    text.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && text.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}
