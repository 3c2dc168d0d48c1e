//! `spectacular-wt`: the same program as `wt`, under a name no other tool installs. The Claude
//! Code plugin's hooks and commands call it, so another `wt` first on PATH (worktrunk installs
//! one) cannot answer for it.

fn main() -> std::process::ExitCode {
    spectacular::cli::main()
}
