//! `ftw find`: list every entry under each root.

use crate::output::{Closed, Output};
use crate::report;
use clap::Args;
use ftw::walk::{Control, WalkBuilder};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::process::ExitCode;

const EXAMPLES: &str = "\
Examples:
  ftw find                       every entry under the working directory
  ftw find /usr | head           stops quietly when the reader goes away
  ftw find -0 src | xargs -0 ls -ld
  ftw find --sort -d 2 /etc      the top two levels, in a fixed order
  ftw find -L --one-file-system /

Paths are printed as ROOT/relative/name, with the bytes on disk as they are (names
need not be UTF-8). Errors are reported as 'ftw: PATH: reason' on standard error while
the listing goes on; the exit status is then 1.";

/// List every entry under each PATH (like 'find PATH -mindepth 1').
#[derive(Args)]
#[command(after_help = EXAMPLES)]
pub struct FindArgs {
    /// Trees to list [default: .]. A root that is a symbolic link is followed.
    #[arg(value_name = "PATH")]
    paths: Vec<PathBuf>,

    /// End each path with a NUL byte instead of a newline (for 'xargs -0').
    #[arg(short = '0', long = "print0")]
    print0: bool,

    /// Descend at most N levels below each root (1: the root's own entries only).
    #[arg(short = 'd', long = "max-depth", value_name = "N")]
    max_depth: Option<usize>,

    /// Do not print entries less than N levels below their root (0 prints the root too).
    #[arg(long = "min-depth", value_name = "N", default_value_t = 1)]
    min_depth: usize,

    /// Follow symbolic links (like 'find -L'). A link leading back to a directory being
    /// listed is reported as an error, not followed; a dangling link is printed.
    #[arg(short = 'L', long = "follow")]
    follow: bool,

    /// Do not descend into directories on other file systems (mount points are printed).
    #[arg(long = "one-file-system", visible_alias = "xdev")]
    one_file_system: bool,

    /// Print in a fixed order: each directory's entries sorted by their bytes, each
    /// directory's contents right after it.
    #[arg(short = 's', long = "sort")]
    sort: bool,

    /// Worker threads (0: chosen by ftw). The walk is serial for now: any value runs
    /// one thread.
    #[arg(short = 'j', long = "threads", value_name = "N", default_value_t = 0)]
    threads: usize,
}

pub fn run(args: FindArgs) -> ExitCode {
    let _ = args.threads;
    let mut out = match Output::stdout() {
        Ok(o) => o,
        Err(e) => {
            report(b"standard output", &ftw::walk::describe(&e));
            return ExitCode::from(1);
        }
    };
    let roots = if args.paths.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        args.paths
    };
    let end = if args.print0 { 0u8 } else { b'\n' };
    let mut failed = false;
    let mut closed = None;
    for root in roots {
        let mut b = WalkBuilder::new(&root)
            .min_depth(args.min_depth)
            .follow_links(args.follow)
            .same_file_system(args.one_file_system)
            .sort(args.sort);
        if let Some(d) = args.max_depth {
            b = b.max_depth(d);
        }
        b.build().visit(|item| match item {
            Ok(entry) => {
                let buf = out.buf();
                entry.write_path(buf);
                buf.push(end);
                match out.end_record() {
                    Ok(()) => Control::Continue,
                    Err(c) => {
                        closed = Some(c);
                        Control::Stop
                    }
                }
            }
            Err(err) => {
                failed = true;
                report(err.path().as_os_str().as_bytes(), &err.reason());
                Control::Continue
            }
        });
        if closed.is_some() {
            break;
        }
    }
    if closed.is_none() {
        if let Err(c) = out.flush() {
            closed = Some(c);
        }
    }
    match closed {
        Some(Closed::Pipe) => return ExitCode::SUCCESS,
        Some(Closed::Failed(e)) => {
            report(b"standard output", &ftw::walk::describe(&e));
            return ExitCode::from(1);
        }
        None => {}
    }
    if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
