//! `sclc`: the command-line front end (`design/cli.md`). The only crate that
//! knows clap; it asks the database and prints.
//!
//! Exit codes: 0 success (warnings allowed), 1 the input has errors, 2 usage
//! error (unknown flag, missing file).

mod commands;

fn main() {
    std::process::exit(commands::main());
}
