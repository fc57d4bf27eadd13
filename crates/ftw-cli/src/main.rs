//! The `ftw` command: argument parsing and dispatch. The work is done by the `ftw`
//! library; this crate wires options, formats output, and keeps the little it asks of
//! its own process (`process`: stack limit, terminal size, a closed standard output).

mod cp;
mod du;
mod exec;
mod export;
mod find;
mod format;
mod generate;
mod hints;
mod msg;
mod order;
mod os;
mod output;
mod process;
mod progress;
mod rm;
mod select;
mod size;
mod term;
mod tree;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use std::io::Write;
use std::process::ExitCode;

/// ftw (file tree walk): list, find, remove and measure whole directory trees, through
/// directory handles, with only the system calls the work needs.
#[derive(Parser)]
#[command(name = "ftw", version, about, long_about = None)]
#[command(propagate_version = true, args_override_self = true)]
#[command(args_conflicts_with_subcommands = true)]
struct Cli {
    /// Print a completion script for a shell (bash, zsh, fish, elvish, powershell), or
    /// the man page (man), made from these same definitions; see the README to install
    /// them.
    #[arg(long = "generate", value_name = "WHAT", value_enum, exclusive = true)]
    generate: Option<generate::Generate>,

    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    Find(Box<find::FindArgs>),
    Rm(rm::RmArgs),
    Du(Box<du::DuArgs>),
    Cp(Box<cp::CpArgs>),
}

/// A few examples, shown by `ftw --help` and by `ftw` alone.
const EXAMPLES: &str = "\
Examples:
  ftw find -e rs src             the files ending in .rs under src
  ftw find -d 1 -t d --sort      the directories here, in order
  ftw rm -v build                remove a tree, printing each path removed
  ftw du                         the largest entries under ., as a tree
  ftw cp -a src backup           an exact copy of a tree, in parallel";

/// The whole command line's definition, with the help made at run time.
pub fn command() -> clap::Command {
    // The help tells the limits that hold on this machine, so it is made at run time.
    let budget = ftw::walk::Budget::from_limit();
    Cli::command()
        .after_help(format!(
            "{EXAMPLES}\n\nRun 'ftw <COMMAND> --help' for the options and examples of a command."
        ))
        .mut_subcommand("find", |c| {
            c.after_help(format!("{}\n\n{}", find::EXAMPLES, budget.describe()))
        })
        .mut_subcommand("rm", |c| c.after_help(rm::EXAMPLES))
        .mut_subcommand("du", |c| c.after_help(du::EXAMPLES))
        .mut_subcommand("cp", |c| c.after_help(cp::EXAMPLES))
}

/// Below this limit on the main thread's stack (`ulimit -s`), ftw runs on a thread of
/// its own: parsing the command line alone takes more than 16 KiB.
const SMALL_MAIN_STACK: u64 = 1 << 20;

/// The stack of that thread: the usual main thread's.
const STACK: usize = 8 << 20;

/// Below this, a main stack that cannot be raised is too small for some commands (they
/// need from about 36 KiB): a warning says so. Above it, ftw runs as it is, unwarned.
const TOO_SMALL_MAIN_STACK: u64 = 64 << 10;

fn main() -> ExitCode {
    if process::main_stack_limit().is_some_and(|limit| limit < SMALL_MAIN_STACK) {
        // A resource limit is no reason to stop: a thread's stack is not bound by it.
        let started = std::thread::Builder::new()
            .name("main".into())
            .stack_size(STACK)
            .spawn(ftw_main);
        match started {
            Ok(thread) => {
                return thread
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            }
            Err(e) => {
                // No thread can be started (`ulimit -u`): the main thread goes on, its
                // stack allowed to grow as far as the hard limit lets it (a soft limit
                // of 16 KiB would end it in parsing the command line).
                let now = process::raise_main_stack_limit(STACK as u64);
                if let Some(limit) = now.filter(|&l| l < TOO_SMALL_MAIN_STACK) {
                    msg::warn(&format!(
                        "cannot start a thread: {}: running on a main stack of {} KiB \
                         (ulimit -s), which may be too small",
                        msg::describe(&e),
                        limit >> 10
                    ));
                }
            }
        }
    }
    ftw_main()
}

fn ftw_main() -> ExitCode {
    let mut command = command();
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    // find's spellings ('-maxdepth 1', '-name x') before clap, which would take some of
    // them for clusters of short options ('-name' is '-n ame').
    if let Some(code) = hints::find_style(&command, &args) {
        return code;
    }
    let matches = match command.try_get_matches_from_mut(&args) {
        Ok(m) => m,
        Err(e) => return hints::clap_error(&command, &args, e),
    };
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    match cli.command {
        Some(Command::Find(args)) => find::run(*args),
        Some(Command::Rm(args)) => rm::run(args),
        Some(Command::Cp(args)) => cp::run(*args),
        Some(Command::Du(args)) => {
            let sub = matches.subcommand_matches("du").expect("the du subcommand");
            du::run(*args, sub)
        }
        None => match cli.generate {
            Some(what) => generate::run(what, &mut command),
            None => short_usage(&mut command),
        },
    }
}

/// `ftw` alone: its usage, a few examples and the commands, on standard error, with
/// status 2 (a usage error, as a missing command is for clap).
fn short_usage(command: &mut clap::Command) -> ExitCode {
    let usage = command.render_usage();
    let names: Vec<&str> = command
        .get_subcommands()
        .map(|c| c.get_name())
        .filter(|&n| n != "help")
        .collect();
    let text = format!(
        "{}\n\n{EXAMPLES}\n\nCommands: {}. 'ftw --help' says more, 'ftw <COMMAND> --help' \
         tells a command's options.\n",
        usage,
        names.join(", ")
    );
    let _ = std::io::stderr().write_all(text.as_bytes());
    ExitCode::from(2)
}
