//! The `ftw` command: argument parsing and dispatch. The work is done by the `ftw`
//! library; this crate only wires options and formats output.

mod du;
mod exec;
mod export;
mod find;
mod format;
mod output;
mod progress;
mod rm;
mod select;
mod size;
mod tree;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use std::io::Write;
use std::process::ExitCode;

/// ftw (file tree walk): list, find, remove and measure whole directory trees, through
/// directory handles, with only the system calls the work needs.
#[derive(Parser)]
#[command(name = "ftw", version, about, long_about = None)]
#[command(after_help = "Run 'ftw <COMMAND> --help' for the options and examples of a command.")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    Find(Box<find::FindArgs>),
    Rm(rm::RmArgs),
    Du(Box<du::DuArgs>),
}

fn main() -> ExitCode {
    // The help tells the limits that hold on this machine, so it is made at run time.
    let budget = ftw::walk::Budget::from_limit();
    let command = Cli::command()
        .mut_subcommand("find", |c| {
            c.after_help(format!("{}\n\n{}", find::EXAMPLES, budget.describe()))
        })
        .mut_subcommand("rm", |c| c.after_help(rm::EXAMPLES))
        .mut_subcommand("du", |c| c.after_help(du::EXAMPLES));
    let matches = command.get_matches();
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    match cli.command {
        Command::Find(args) => find::run(*args),
        Command::Rm(args) => rm::run(args),
        Command::Du(args) => {
            let sub = matches.subcommand_matches("du").expect("the du subcommand");
            du::run(*args, sub)
        }
    }
}

/// Reports `ftw: PATH: reason` on standard error, the path's bytes as they are.
pub fn report(path: &[u8], reason: &str) {
    let mut line = Vec::with_capacity(path.len() + reason.len() + 16);
    line.extend_from_slice(progress::before_message());
    line.extend_from_slice(b"ftw: ");
    line.extend_from_slice(path);
    line.extend_from_slice(b": ");
    line.extend_from_slice(reason.as_bytes());
    line.push(b'\n');
    let _ = std::io::stderr().lock().write_all(&line);
}

/// Reports `ftw: warning: MESSAGE` on standard error: something the run went on without,
/// which does not change the exit status.
pub fn warn(message: &str) {
    let mut line = progress::before_message().to_vec();
    line.extend_from_slice(format!("ftw: warning: {message}\n").as_bytes());
    let _ = std::io::stderr().lock().write_all(&line);
}
