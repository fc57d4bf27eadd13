//! `ftw --generate WHAT`: shell completions (`clap_complete`) and the man page
//! (`clap_mangen`), made from the same `clap::Command` as the help, so that they never
//! drift from it.

use clap::ValueEnum;
use std::io::{self, Write};
use std::process::ExitCode;

/// What `--generate` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Generate {
    /// A completion script for bash.
    Bash,
    /// A completion script for zsh.
    Zsh,
    /// A completion script for fish.
    Fish,
    /// A completion script for elvish.
    Elvish,
    /// A completion script for PowerShell.
    Powershell,
    /// The man page (roff), ftw(1), every command included.
    Man,
}

/// Writes what was asked for to standard output.
pub fn run(what: Generate, command: &mut clap::Command) -> ExitCode {
    let mut out = Vec::new();
    let shell = match what {
        Generate::Bash => Some(clap_complete::Shell::Bash),
        Generate::Zsh => Some(clap_complete::Shell::Zsh),
        Generate::Fish => Some(clap_complete::Shell::Fish),
        Generate::Elvish => Some(clap_complete::Shell::Elvish),
        Generate::Powershell => Some(clap_complete::Shell::PowerShell),
        Generate::Man => None,
    };
    let made = match shell {
        Some(shell) => {
            clap_complete::generate(shell, command, "ftw", &mut out);
            Ok(())
        }
        None => man(command, &mut out),
    };
    let written = made.and_then(|()| crate::output::Stdout.write_all(&out));
    match written {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if crate::output::report_error(&e) => ExitCode::from(1),
        Err(_) => ExitCode::SUCCESS,
    }
}

/// One page: ftw's synopsis, description and options, then a section for each command
/// (its synopsis, description, options and examples, the sections made subsections).
fn man(command: &mut clap::Command, out: &mut Vec<u8>) -> io::Result<()> {
    command.build();
    let top = clap_mangen::Man::new(command.clone());
    top.render_title(out)?;
    top.render_name_section(out)?;
    top.render_synopsis_section(out)?;
    top.render_description_section(out)?;
    top.render_options_section(out)?;
    commands(command, out)?;
    examples(command, out)?;
    for sub in command.get_subcommands() {
        if sub.is_hide_set() || sub.get_name() == "help" {
            continue;
        }
        let name = format!("ftw {}", sub.get_name());
        writeln!(out, ".SH \"{}\"", name.to_uppercase())?;
        let page = clap_mangen::Man::new(sub.clone().bin_name(name.clone()));
        let mut part = Vec::new();
        page.render_synopsis_section(&mut part)?;
        page.render_description_section(&mut part)?;
        page.render_options_section(&mut part)?;
        examples(sub, &mut part)?;
        for line in part.split_inclusive(|&b| b == b'\n') {
            match line.strip_prefix(b".SH ") {
                Some(rest) => {
                    out.extend_from_slice(b".SS ");
                    out.extend_from_slice(rest);
                }
                None => out.extend_from_slice(line),
            }
        }
    }
    top.render_version_section(out)?;
    Ok(())
}

/// The section COMMANDS: each command with its summary, and where on this page it is
/// told (clap_mangen's own section would send the reader to pages ftw-find(1) and so
/// on, which do not exist: every command is a section of this one).
fn commands(command: &clap::Command, out: &mut Vec<u8>) -> io::Result<()> {
    writeln!(out, ".SH COMMANDS")?;
    for sub in command.get_subcommands() {
        if sub.is_hide_set() || sub.get_name() == "help" {
            continue;
        }
        let about = sub.get_about().map(|a| a.to_string()).unwrap_or_default();
        let name = format!("ftw {}", sub.get_name());
        writeln!(out, ".TP\n\\fB{}\\fR", roff(&name))?;
        writeln!(
            out,
            "{}; see {} below.",
            roff(about.trim_end_matches('.')),
            name.to_uppercase()
        )?;
    }
    Ok(())
}

/// `text` made safe as roff text within a line: backslashes and hyphens escaped.
fn roff(text: &str) -> String {
    text.replace('\\', "\\e").replace('-', "\\-")
}

/// The help's closing text (examples and notes) as a section EXAMPLES, its lines kept
/// as they are (no filling: the examples are columns), without the text's own
/// "Examples:" heading.
fn examples(command: &clap::Command, out: &mut Vec<u8>) -> io::Result<()> {
    let Some(text) = command.get_after_help() else {
        return Ok(());
    };
    let text = text.to_string();
    let text = text.strip_prefix("Examples:\n").unwrap_or(&text);
    writeln!(out, ".SH EXAMPLES\n.nf")?;
    for line in text.lines() {
        let line = roff(line);
        // A line starting with a dot or quote would be a request.
        let guard = if line.starts_with(['.', '\'']) {
            "\\&"
        } else {
            ""
        };
        writeln!(out, "{guard}{line}")?;
    }
    writeln!(out, ".fi")
}
