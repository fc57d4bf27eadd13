//! The `ftw` command: argument parsing and dispatch. The work is done by the `ftw`
//! library; this crate only wires options and formats output.

mod find;
mod output;

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
    Find(find::FindArgs),
}

fn main() -> ExitCode {
    // The help tells the limits that hold on this machine, so it is made at run time.
    let budget = ftw::walk::default_fd_budget();
    let command = Cli::command().mut_subcommand("find", |c| {
        c.after_help(format!(
            "{}\n\nOpen directory handles stay under a budget: the soft open-file limit\n\
             (ulimit -n) less 16, halved, between 4 and 1024; here {budget}. Deeper or wider trees are\n\
             no problem: a directory whose handle was closed is reopened from its nearest\n\
             open ancestor. Threads grow to at most {} here; -j is capped at {}.",
            find::EXAMPLES,
            ftw::walk::max_io_threads(budget),
            ftw::walk::max_threads(budget)
        ))
    });
    let cli = match Cli::from_arg_matches(&command.get_matches()) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    match cli.command {
        Command::Find(args) => find::run(args),
    }
}

/// Reports `ftw: PATH: reason` on standard error, the path's bytes as they are.
pub fn report(path: &[u8], reason: &str) {
    let mut line = Vec::with_capacity(path.len() + reason.len() + 8);
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
    let line = format!("ftw: warning: {message}\n");
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
}
