//! `wt`: runs a plan of phases and tasks in isolated git worktrees and stacks the task branches
//! with git-spice. The CLI in `cli` is a thin layer over these modules; none of them prints.

pub(crate) mod agent;
pub mod cli;
pub(crate) mod digest;
pub(crate) mod doctor;
pub(crate) mod engine;
pub(crate) mod error_kind;
pub(crate) mod forge;
pub(crate) mod git;
pub mod guard;
pub(crate) mod location;
pub(crate) mod plan;
pub(crate) mod plugin;
pub(crate) mod process;
pub(crate) mod sandbox;
pub(crate) mod spice;
pub(crate) mod store;
pub(crate) mod team;
pub(crate) mod ui;
