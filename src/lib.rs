//! `wt`: runs a plan of phases and tasks in isolated git worktrees and stacks the task branches
//! with git-spice. The CLI in `cli` is a thin layer over these modules; none of them prints.

pub mod agent;
pub mod cli;
pub mod doctor;
pub mod engine;
pub mod git;
pub mod guard;
pub mod plan;
pub mod process;
pub mod sandbox;
pub mod spice;
pub mod store;
pub mod ui;
