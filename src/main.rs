fn main() -> std::process::ExitCode {
    spectacular::cli::main()
}
