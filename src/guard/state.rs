//! What the Bash policy knows about the shell at one point of a command: the working directory
//! (every place it may be), the variables the command set, the `pushd` stack, symlinks the
//! command made, functions it defined, and the descriptors it opened (a path through one,
//! `/dev/fd/5/x`, goes where the descriptor is open). Where two paths of the command meet (after `cd x;`,
//! which may fail, after an `if`, a loop, a `case`), the states are joined: what differs becomes
//! unknown, and the working directory becomes the set of places it may be.
//!
//! Cloning is cheap (shared, copy on write), since every subshell and substitution starts from
//! a copy of its parent's state.

use std::collections::HashMap;
use std::path::PathBuf;
use std::rc::Rc;

/// Distinct places the working directory may be in before wt stops following it.
const MAX_CWDS: usize = 4;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    Known(Rc<str>),
    Unknown,
}

impl Value {
    pub fn known(&self) -> Option<&str> {
        match self {
            Value::Known(text) => Some(text),
            Value::Unknown => None,
        }
    }

    pub fn of(text: Option<&str>) -> Value {
        text.map_or(Value::Unknown, |t| Value::Known(t.into()))
    }
}

/// One place the working directory may be: as `$PWD` says (logical, through symlinks) and as
/// the kernel resolves relative paths (physical).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dir {
    pub logical: PathBuf,
    pub physical: PathBuf,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cwd {
    /// One of these (never empty).
    Known(Rc<Vec<Dir>>),
    Unknown,
}

impl Cwd {
    pub fn one(dir: Dir) -> Cwd {
        Cwd::Known(Rc::new(vec![dir]))
    }

    pub fn dirs(&self) -> Option<&[Dir]> {
        match self {
            Cwd::Known(dirs) => Some(dirs),
            Cwd::Unknown => None,
        }
    }

    /// The only place it may be.
    pub fn single(&self) -> Option<&Dir> {
        match self.dirs() {
            Some([dir]) => Some(dir),
            _ => None,
        }
    }

    fn join(&self, other: &Cwd) -> Cwd {
        let (Some(a), Some(b)) = (self.dirs(), other.dirs()) else { return Cwd::Unknown };
        let mut all = a.to_vec();
        for dir in b {
            if !all.contains(dir) {
                all.push(dir.clone());
            }
        }
        if all.len() > MAX_CWDS { Cwd::Unknown } else { Cwd::Known(Rc::new(all)) }
    }
}

/// What a descriptor holds, as far as this command opened it (`5< dir`, `exec 3> log`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Opened {
    /// Not opened by this command: what the tool's shell was given (its standard input and
    /// outputs), which holds no folder of the machine.
    Inherited,
    /// The file or folder at this physical path.
    Path(PathBuf),
    /// Nothing a path can go through: a device, a heredoc, a closed descriptor.
    Nothing,
    /// A path wt cannot know, or one of several.
    Unknown,
}

#[derive(Debug, Clone, PartialEq)]
pub struct State {
    pub cwd: Cwd,
    /// Variables this command set; a name not here has the value the environment gives it.
    vars: Rc<HashMap<String, Value>>,
    /// Every variable may have changed in ways wt did not follow (after `source`).
    vars_lost: bool,
    /// The `pushd` stack; `None` when it is not known.
    dirs: Option<Rc<Vec<Cwd>>>,
    /// Symlinks this command made (`ln -s`): where each link is, and what it points to.
    pub links: Rc<Vec<(PathBuf, PathBuf)>>,
    /// Functions this command defined.
    functions: Rc<Vec<String>>,
    /// Descriptors the command opened, and what is open on each.
    descriptors: Rc<Vec<(u32, Opened)>>,
    /// Variables holding the process id of a job this command started (`pid=$!`).
    jobs: Rc<Vec<String>>,
    /// A command that may change files (not only read) ran before this point: a folder that is
    /// there now may be gone, or closed, by the time a later `cd` runs.
    pub files_changed: bool,
}

impl State {
    pub fn new(cwd: Cwd) -> State {
        State {
            cwd,
            vars: Rc::default(),
            vars_lost: false,
            dirs: Some(Rc::default()),
            links: Rc::default(),
            functions: Rc::default(),
            descriptors: Rc::default(),
            jobs: Rc::default(),
            files_changed: false,
        }
    }

    /// A variable's value as this command set it: `None` when the command did not set it (the
    /// environment's value applies), unless every variable was lost.
    pub fn var(&self, name: &str) -> Option<Value> {
        match self.vars.get(name) {
            Some(value) => Some(value.clone()),
            None if self.vars_lost => Some(Value::Unknown),
            None => None,
        }
    }

    pub fn set(&mut self, name: &str, value: Value) {
        Rc::make_mut(&mut self.vars).insert(name.to_owned(), value);
        if self.jobs.iter().any(|job| job == name) {
            Rc::make_mut(&mut self.jobs).retain(|job| job != name);
        }
    }

    /// `name` now holds the process id of a job this command started (`name=$!`).
    pub fn set_job(&mut self, name: &str) {
        self.set(name, Value::Unknown);
        Rc::make_mut(&mut self.jobs).push(name.to_owned());
    }

    /// Whether `name` holds the process id of a job this command started.
    pub fn holds_job(&self, name: &str) -> bool {
        self.jobs.iter().any(|job| job == name)
    }

    /// After `source` or anything else that may set any variable.
    pub fn lose_vars(&mut self) {
        self.vars = Rc::default();
        self.vars_lost = true;
    }

    pub fn push_dir(&mut self) {
        let cwd = self.cwd.clone();
        if let Some(dirs) = self.dirs.as_mut() {
            Rc::make_mut(dirs).push(cwd);
        }
    }

    /// The directory `popd` returns to: `None` when the stack is not known or empty.
    pub fn pop_dir(&mut self) -> Option<Cwd> {
        let popped = self.dirs.as_mut().and_then(|dirs| Rc::make_mut(dirs).pop());
        if popped.is_none() {
            self.dirs = None;
        }
        popped
    }

    pub fn add_link(&mut self, link: PathBuf, target: PathBuf) {
        Rc::make_mut(&mut self.links).push((link, target));
    }

    pub fn define(&mut self, function: &str) {
        if !self.is_function(function) {
            Rc::make_mut(&mut self.functions).push(function.to_owned());
        }
    }

    pub fn is_function(&self, name: &str) -> bool {
        self.functions.iter().any(|f| f == name)
    }

    /// What is open on descriptor `fd`.
    pub fn descriptor(&self, fd: u32) -> Opened {
        let found = self.descriptors.iter().find(|(n, _)| *n == fd);
        found.map_or(Opened::Inherited, |(_, opened)| opened.clone())
    }

    /// `fd` now holds `opened` (a redirection, `N>&M`, `N>&-`).
    pub fn open(&mut self, fd: u32, opened: Opened) {
        let descriptors = Rc::make_mut(&mut self.descriptors);
        descriptors.retain(|(n, _)| *n != fd);
        if opened != Opened::Inherited {
            descriptors.push((fd, opened));
        }
    }

    /// The descriptors of `other`: a command's redirections end with it (except `exec`'s).
    pub fn keep_descriptors_of(&mut self, other: &State) {
        self.descriptors = other.descriptors.clone();
    }

    /// What is known after either of two paths: equal values stay, others become unknown.
    pub fn join(&self, other: &State) -> State {
        if self == other {
            return self.clone();
        }
        let mut vars = HashMap::new();
        for name in self.vars.keys().chain(other.vars.keys()) {
            let value = match (self.var(name), other.var(name)) {
                (Some(a), Some(b)) if a == b => a,
                _ => Value::Unknown,
            };
            vars.insert(name.clone(), value);
        }
        let mut links = self.links.to_vec();
        links.extend(other.links.iter().filter(|l| !self.links.contains(l)).cloned());
        let mut functions = self.functions.to_vec();
        functions.extend(other.functions.iter().filter(|f| !self.functions.contains(f)).cloned());
        let descriptors = if self.descriptors == other.descriptors {
            self.descriptors.clone()
        } else {
            let numbers = self.descriptors.iter().chain(other.descriptors.iter()).map(|(n, _)| *n);
            let mut joined: Vec<(u32, Opened)> = Vec::new();
            for fd in numbers {
                if !joined.iter().any(|(n, _)| *n == fd) {
                    let same = self.descriptor(fd) == other.descriptor(fd);
                    joined.push((fd, if same { self.descriptor(fd) } else { Opened::Unknown }));
                }
            }
            Rc::new(joined)
        };
        let jobs = self.jobs.iter().filter(|job| other.holds_job(job)).cloned().collect();
        State {
            cwd: self.cwd.join(&other.cwd),
            vars: Rc::new(vars),
            vars_lost: self.vars_lost || other.vars_lost,
            dirs: if self.dirs == other.dirs { self.dirs.clone() } else { None },
            links: Rc::new(links),
            functions: Rc::new(functions),
            descriptors,
            jobs: Rc::new(jobs),
            files_changed: self.files_changed || other.files_changed,
        }
    }
}

/// The states after a command: when it succeeded, and when it failed (`None`: cannot happen,
/// as after `exit`).
#[derive(Debug, Clone)]
pub struct Flow {
    pub ok: Option<State>,
    pub fail: Option<State>,
}

impl Flow {
    pub fn both(state: State) -> Flow {
        Flow { ok: Some(state.clone()), fail: Some(state) }
    }

    pub fn none() -> Flow {
        Flow { ok: None, fail: None }
    }

    /// The state after the command, however it ended.
    pub fn end(self) -> Option<State> {
        join(self.ok, self.fail)
    }

    pub fn negate(self) -> Flow {
        Flow { ok: self.fail, fail: self.ok }
    }

    /// `change` applied to the state on each path.
    pub fn map(self, change: impl Fn(State) -> State) -> Flow {
        Flow { ok: self.ok.map(&change), fail: self.fail.map(&change) }
    }
}

pub fn join(a: Option<State>, b: Option<State>) -> Option<State> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.join(&b)),
        (a, b) => a.or(b),
    }
}
