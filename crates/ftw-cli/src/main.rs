//! The `ftw` command: argument parsing and dispatch. The work is done by the `ftw`
//! library; this crate only wires options and formats output.

mod du;
mod exec;
mod export;
mod find;
mod format;
mod msg;
mod os;
mod output;
mod progress;
mod rm;
mod select;
mod size;
mod tree;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
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
