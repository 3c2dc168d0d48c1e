//! How the commands of a script follow each other: lists joined by `;`, `&&` and `||`,
//! pipelines (and what each stage feeds the next), and compound commands — `if`, loops,
//! `case`, functions — each followed with the states the shell may be in along its paths.
//! A part no path reaches is still checked, for what it would deny.

use super::arg::Arg;
use super::checker::{Checker, LoopExits, Stdin};
use super::expand::arithmetic_names;
use super::shell::{Item, Join, Node, Script, Shape};
use super::state::{Cwd, Flow, State, Value, join};

/// Literal `for` lists up to this long are followed value by value; longer ones with the loop
/// variable unknown.
const MAX_UNROLLED: usize = 16;

/// Rounds a loop body is followed before what it may change is given up as unknown.
const LOOP_ROUNDS: usize = 3;

impl Checker<'_> {
    pub(super) fn shape(&mut self, script: &Script, state: State, stdin: &Stdin) -> Flow {
        let parts = &script.items;
        match &script.shape {
            Shape::List => self.list(parts, state, stdin),
            Shape::If => self.if_parts(parts, state, stdin),
            Shape::Loop { until } => match parts.as_slice() {
                [condition, body] => self.repeat(Some((condition, *until)), body, state, stdin),
                _ => Flow::both(state),
            },
            Shape::For { name, words_given } => self.for_loop(parts, name, *words_given, state, stdin),
            Shape::ArithFor => {
                let mut state = state;
                self.arithmetic_part(parts.first(), &mut state, stdin);
                match parts.get(1) {
                    Some(body) => self.repeat(None, body, state, stdin),
                    None => Flow::both(state),
                }
            }
            Shape::Arithmetic => {
                let mut state = state;
                self.arithmetic_part(parts.first(), &mut state, stdin);
                Flow::both(state)
            }
            Shape::Case { fallthrough } => self.case(parts, fallthrough, state, stdin),
            Shape::Function { name } => {
                for body in parts {
                    self.node(&body.node, state.clone(), &Stdin::Unknown);
                }
                let mut state = state;
                state.define(name);
                Flow::both(state)
            }
            Shape::Redirected => self.redirected(parts, state, stdin),
        }
    }

    fn list(&mut self, items: &[Item], state: State, stdin: &Stdin) -> Flow {
        let mut last = state.clone();
        let mut flow = Flow { ok: Some(state), fail: None };
        let mut i = 0;
        while i < items.len() && self.budget.ok() {
            let end = i + 1 + items[i + 1..].iter().take_while(|item| item.join == Join::Pipe).count();
            let join_kind = items[i].join;
            let (start, carried) = match join_kind {
                Join::And => (flow.ok, flow.fail),
                Join::Or => (flow.fail, flow.ok),
                _ => (join(flow.ok, flow.fail), None),
            };
            let result = match start {
                Some(start) => {
                    last = start.clone();
                    self.pipeline(&items[i..end], start, stdin)
                }
                None => {
                    self.pipeline(&items[i..end], last.clone(), stdin);
                    Flow::none()
                }
            };
            flow = match join_kind {
                Join::And => Flow { ok: result.ok, fail: join(carried, result.fail) },
                Join::Or => Flow { ok: join(carried, result.ok), fail: result.fail },
                _ => result,
            };
            i = end;
        }
        flow
    }

    /// A pipeline: one command in the current shell, or stages in subshells, each reading
    /// what the one before writes.
    fn pipeline(&mut self, items: &[Item], state: State, stdin: &Stdin) -> Flow {
        if let [item] = items {
            if item.isolated {
                self.node(&item.node, state.clone(), stdin);
                return Flow::both(state);
            }
            let flow = self.node(&item.node, state, stdin);
            return if item.negated { flow.negate() } else { flow };
        }
        let mut input = stdin.clone();
        for item in items {
            self.node(&item.node, state.clone(), &input);
            input = self.output_of(&item.node, &state);
        }
        Flow::both(state)
    }

    pub(super) fn node(&mut self, node: &Node, state: State, stdin: &Stdin) -> Flow {
        match node {
            Node::Command(command) => self.command(command, state, stdin),
            Node::Subshell(inner) => {
                self.script(inner, state.clone(), stdin);
                Flow::both(state)
            }
            Node::Group(inner) => self.script(inner, state, stdin),
        }
    }

    /// What a pipeline stage writes, when it is literal text (`echo '…'`, `printf '…'`,
    /// `cat <<EOF`): the script a shell at the next stage would run.
    fn output_of(&mut self, node: &Node, state: &State) -> Stdin {
        match node {
            Node::Command(command) => self.output_of_command(command, state),
            _ => Stdin::Unknown,
        }
    }

    /// Runs one part of a compound command from `state`, or — when no path reaches it — from
    /// `fallback`, only to find what it would deny.
    fn part(&mut self, item: &Item, state: Option<State>, fallback: &State, stdin: &Stdin) -> Flow {
        match state {
            Some(state) => self.node(&item.node, state, stdin),
            None => {
                self.node(&item.node, fallback.clone(), stdin);
                Flow::none()
            }
        }
    }

    fn if_parts(&mut self, parts: &[Item], state: State, stdin: &Stdin) -> Flow {
        let mut next = Some(state.clone());
        let mut end = None;
        for chunk in parts.chunks(2) {
            match chunk {
                [condition, body] => {
                    let tested = self.part(condition, next, &state, stdin);
                    end = join(end, self.part(body, tested.ok, &state, stdin).end());
                    next = tested.fail;
                }
                [otherwise] => end = join(end, self.part(otherwise, next.take(), &state, stdin).end()),
                _ => {}
            }
        }
        join(end, next).map_or_else(Flow::none, Flow::both)
    }

    /// A loop body run any number of times (after its condition, if any): followed until what
    /// it may change stops changing, then with that given up.
    fn repeat(&mut self, condition: Option<(&Item, bool)>, body: &Item, state: State, stdin: &Stdin) -> Flow {
        self.loops.push(LoopExits::default());
        let mut entry = state;
        let mut exits = None;
        let mut stable = false;
        for _ in 0..LOOP_ROUNDS {
            let runs = match condition {
                Some((condition, until)) => {
                    let tested = self.part(condition, Some(entry.clone()), &entry, stdin);
                    let (runs, leaves) =
                        if until { (tested.fail, tested.ok) } else { (tested.ok, tested.fail) };
                    exits = join(exits, leaves);
                    runs
                }
                None => Some(entry.clone()),
            };
            let after = runs.and_then(|s| self.node(&body.node, s, stdin).end());
            let continued = self.loops.last_mut().and_then(|l| l.continues.take());
            let next = entry.join(&join(after, continued).unwrap_or_else(|| entry.clone()));
            if next == entry {
                stable = true;
                break;
            }
            entry = next;
        }
        if !stable {
            entry.lose_vars();
            entry.cwd = Cwd::Unknown;
        }
        let breaks = self.loops.pop().and_then(|l| l.breaks);
        Flow::both([exits, breaks].into_iter().flatten().fold(entry, |end, other| end.join(&other)))
    }

    fn for_loop(
        &mut self,
        parts: &[Item],
        name: &str,
        words_given: bool,
        state: State,
        stdin: &Stdin,
    ) -> Flow {
        let [words, body] = parts else { return Flow::both(state) };
        let mut state = state;
        let values = if words_given { self.words_part(words, &mut state, stdin) } else { Vec::new() };
        let exact: Option<Vec<String>> = values.iter().map(|a| a.exact().map(str::to_owned)).collect();
        let unrolled = exact.filter(|v| words_given && v.len() <= MAX_UNROLLED);
        let Some(values) = unrolled else {
            self.environment(name, &Value::Unknown, &state);
            state.set(name, Value::Unknown);
            return self.repeat(None, body, state, stdin);
        };
        self.loops.push(LoopExits::default());
        let mut current = Some(state.clone());
        for value in values {
            let Some(mut start) = current.take() else { break };
            let value = Value::Known(value.into());
            self.environment(name, &value, &start);
            start.set(name, value);
            let after = self.node(&body.node, start, stdin).end();
            let continued = self.loops.last_mut().and_then(|l| l.continues.take());
            current = join(after, continued);
        }
        let breaks = self.loops.pop().and_then(|l| l.breaks);
        join(current, breaks).map_or_else(Flow::none, Flow::both)
    }

    fn case(&mut self, parts: &[Item], fallthrough: &[bool], state: State, stdin: &Stdin) -> Flow {
        let mut state = state;
        if let Some(subject) = parts.first() {
            self.words_part(subject, &mut state, stdin);
        }
        let mut end = Some(state.clone());
        let mut carried = None;
        for (i, arm) in parts[1.min(parts.len())..].chunks(2).enumerate() {
            let [patterns, body] = arm else { continue };
            self.words_part(patterns, &mut state.clone(), stdin);
            let start = join(Some(state.clone()), carried.take());
            let after = self.part(body, start, &state, stdin).end();
            if fallthrough.get(i).copied().unwrap_or(false) {
                carried = after.clone();
            }
            end = join(end, after);
        }
        end.map_or_else(Flow::none, Flow::both)
    }

    fn redirected(&mut self, parts: &[Item], state: State, stdin: &Stdin) -> Flow {
        let [body, Item { node: Node::Command(tail), .. }] = parts else { return Flow::both(state) };
        self.substitutions(tail, &state, stdin);
        let mut redirected = state.clone();
        let input = self.redirects(&tail.redirects, &mut redirected, stdin, None);
        self.node(&body.node, redirected, &input).map(|mut s| {
            s.keep_descriptors_of(&state);
            s
        })
    }

    /// The words of a compound command's header (`for … in WORDS`, `case WORD`, patterns):
    /// their substitutions run; `${X:=…}` sets `X`.
    fn words_part(&mut self, item: &Item, state: &mut State, stdin: &Stdin) -> Vec<Arg> {
        let Node::Command(command) = &item.node else { return Vec::new() };
        self.substitutions(command, state, stdin);
        let args = self.expand_words(&command.words, state, false);
        for name in std::mem::take(&mut self.assigned) {
            state.set(&name, Value::Unknown);
        }
        args
    }

    /// `(( … ))` or a `for (( … ))` header: checked like words; every variable it names may be
    /// assigned, so each becomes unknown.
    fn arithmetic_part(&mut self, item: Option<&Item>, state: &mut State, stdin: &Stdin) {
        let Some(item) = item else { return };
        self.words_part(item, state, stdin);
        let Node::Command(command) = &item.node else { return };
        for word in &command.words {
            for name in arithmetic_names(word) {
                self.environment(&name, &Value::Unknown, state);
                state.set(&name, Value::Unknown);
            }
        }
    }
}
