//! The `placid` binary: all logic lives in the library; this is the entry point.

fn main() -> std::process::ExitCode {
    placid_compiler::cli::main()
}
