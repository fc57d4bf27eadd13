//! Messages on standard error: `ftw: PATH: reason` for what failed, `ftw: warning:` for
//! what the run went on without; both wipe a progress line first. Paths are always
//! escaped as [`crate::term`] says (a newline too: one message, one line).

use crate::progress;
use crate::term;
use std::sync::atomic::{AtomicBool, Ordering};

/// Reports `ftw: PATH: reason` on standard error, the path escaped (`''` if empty).
pub fn report(path: &[u8], reason: &str) {
    let path = term::quote(path);
    let reason = one_line(reason);
    let mut line = Vec::with_capacity(path.len() + reason.len() + 16);
    line.extend_from_slice(b"ftw: ");
    line.extend_from_slice(path.as_bytes());
    line.extend_from_slice(b": ");
    line.extend_from_slice(reason.as_bytes());
    line.push(b'\n');
    progress::write_message(&line);
}

/// An `io::Error` as a person reads it, without the "(os error N)" tail: "Permission
/// denied", not "Permission denied (os error 13)".
pub fn describe(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.rfind(" (os error ") {
        Some(i) if s.ends_with(')') => s[..i].to_string(),
        _ => s,
    }
}

/// A reason made one line for the terminal: its control characters (from a path the
/// library wrote into it) escaped as names are; the rest, backslashes included, as is.
fn one_line(reason: &str) -> std::borrow::Cow<'_, str> {
    let unsafe_char = |c: char| c.is_control() || term::unsafe_format_char(c);
    if !reason.chars().any(unsafe_char) {
        return reason.into();
    }
    let mut s = String::with_capacity(reason.len() + 8);
    for c in reason.chars() {
        if unsafe_char(c) {
            let mut buf = [0u8; 4];
            s.push_str(&term::escape(c.encode_utf8(&mut buf).as_bytes()));
        } else {
            s.push(c);
        }
    }
    s.into()
}

/// What `--mpi` says in a build without the feature.
#[cfg(not(feature = "mpi"))]
pub const NO_MPI: &str = "this ftw was built without MPI: build it with the feature 'mpi' \
(cargo install --features mpi, which needs an MPI such as Open MPI and libclang), then run \
it under mpirun";

/// Refuses an option with `--mpi`: `ftw: COMMAND: WHAT cannot be used with --mpi (yet)`,
/// said once, by rank 0, before any rank exits (with the feature, every rank joins MPI
/// for it: mpirun ends the job at the first rank that exits with an error, which must
/// not be before rank 0 has spoken); status 2.
pub fn refuse_mpi(command: &[u8], what: &str) -> std::process::ExitCode {
    say_once_mpi(command, &format!("{what} cannot be used with --mpi (yet)"))
}

/// What a distributed walk ended with, said by rank 0: its counts, where
/// `FTW_MPI_STATS` is set, or why it could not run (status 2); the status it sets.
#[cfg(feature = "mpi")]
pub fn mpi_walked(mpi: &ftw_mpi::Mpi, walked: Result<ftw_mpi::Stats, String>) -> u8 {
    match walked {
        Ok(stats) => {
            mpi_stats(mpi, &stats);
            0
        }
        Err(e) => {
            if mpi.rank() == 0 {
                report(b"--mpi", &e);
            }
            2
        }
    }
}

/// A distributed walk's counts, said by rank 0 where `FTW_MPI_STATS` is set.
#[cfg(feature = "mpi")]
pub fn mpi_stats(mpi: &ftw_mpi::Mpi, stats: &ftw_mpi::Stats) {
    if mpi.rank() == 0 && std::env::var_os("FTW_MPI_STATS").is_some() {
        eprintln!(
            "ftw: mpi: {} ranks, {} jobs, {} sent, {} received, {} requests for work",
            mpi.size(),
            stats.jobs,
            stats.sent,
            stats.received,
            stats.steals
        );
    }
}

/// A usage error with `--mpi`: `ftw: COMMAND: MESSAGE` said once, by rank 0, before
/// any rank exits (as [`refuse_mpi`] says its refusal); status 2.
pub fn say_once_mpi(command: &[u8], message: &str) -> std::process::ExitCode {
    #[cfg(feature = "mpi")]
    if let Some(mpi) = ftw_mpi::Mpi::init() {
        if mpi.rank() == 0 {
            report(command, message);
        }
        return std::process::ExitCode::from(mpi.max_status(2));
    }
    report(command, message);
    std::process::ExitCode::from(2)
}

/// Reports `ftw: warning: MESSAGE` on standard error: something the run went on without,
/// which does not change the exit status.
pub fn warn(message: &str) {
    progress::write_message(format!("ftw: warning: {}\n", one_line(message)).as_bytes());
}

/// Reports a walk's error (and sets `failed`): a root named like a pattern that is not
/// there also says how to match names.
pub fn walk_error(err: &ftw::walk::Error, failed: &AtomicBool) {
    failed.store(true, Ordering::Relaxed);
    let path = &crate::os::bytes(err.path().as_os_str());
    let mut reason = reason(err);
    // 'ftw find foo' for a name foo that is not there: say how to look for names.
    if err.depth() == 0
        && err.io_error().kind() == std::io::ErrorKind::NotFound
        && !path.is_empty()
        && !path.contains(&b'/')
    {
        reason.push_str(&format!(
            " (to match names: ftw find {})",
            match_names(path)
        ));
    }
    report(path, &reason);
}

/// The options of `ftw find` that list the entries whose name contains `name`, as a
/// shell reads them back (pasted, they do what they say): `-F NAME` (`--fixed=-NAME`
/// for a name that starts with '-'), quoted as needed; for a name with controls or
/// bytes that are not UTF-8, `-n` with a regex that spells them (`\x{1b}`,
/// `(?-u:\xff)`), so that the hint holds no raw control.
fn match_names(name: &[u8]) -> String {
    let plain = |c: char| !c.is_control() && !term::unsafe_format_char(c);
    if let Ok(s) = std::str::from_utf8(name) {
        if s.chars().all(plain) {
            let word = term::shell_word(s);
            return if s.starts_with('-') {
                format!("--fixed={word}")
            } else {
                format!("-F {word}")
            };
        }
    }
    let mut regex = String::new();
    for chunk in name.utf8_chunks() {
        for c in chunk.valid().chars() {
            if !plain(c) {
                regex.push_str(&format!("\\x{{{:x}}}", u32::from(c)));
            } else if "\\.+*?()|[]{}^$#&-~".contains(c) {
                regex.push('\\');
                regex.push(c);
            } else {
                regex.push(c);
            }
        }
        for b in chunk.invalid() {
            regex.push_str(&format!("(?-u:\\x{b:02x})"));
        }
    }
    format!("-n '{}'", regex.replace('\'', r"'\''"))
}

/// Reports an error of the library's, its path escaped.
pub fn error(err: &ftw::walk::Error) {
    report(&crate::os::bytes(err.path().as_os_str()), &reason(err));
}

/// An error's reason, with any other path it names (a loop's ancestor, a directory
/// that refused a removal) escaped as the error's own path is.
fn reason(err: &ftw::walk::Error) -> String {
    let quoted = |p: &std::path::Path| term::quote(&crate::os::bytes(p.as_os_str()));
    if let Some(a) = err.loop_ancestor() {
        return format!("file system loop detected: it leads back to {}", quoted(a));
    }
    let io = err.io_error();
    match io
        .get_ref()
        .and_then(|e| e.downcast_ref::<ftw::remove::DirNotWritable>())
    {
        Some(d) => format!(
            "{}: its directory {} is not writable",
            describe(d.io_error()),
            quoted(d.dir())
        ),
        None => err.reason(),
    }
}

/// Warns, once per message, that an option asks for what Windows does not have; the
/// run goes on (what it asks for never matches, or shows 0).
#[cfg(windows)]
pub fn not_on_windows(what: &str) {
    use std::sync::Mutex;
    static SAID: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let mut said = SAID.lock().unwrap_or_else(|e| e.into_inner());
    if !said.iter().any(|s| s == what) {
        said.push(what.to_string());
        warn(what);
    }
}

/// The `-t` types that mean nothing on Windows, with why.
#[cfg(windows)]
pub fn note_type(t: &str) {
    match t {
        "s" | "p" | "b" | "c" => not_on_windows(&format!(
            "-t {t}: Windows directories hold no sockets, pipes or devices: nothing matches"
        )),
        "x" => not_on_windows("-t x: Windows files have no executable bit: nothing matches"),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::describe;
    use std::io;

    #[test]
    fn describe_drops_the_os_error_tail_only() {
        let e = io::Error::from_raw_os_error(2);
        assert!(e.to_string().ends_with(")"));
        assert!(!describe(&e).contains("os error"), "{}", describe(&e));
        assert_eq!(describe(&io::Error::other("as (it) is")), "as (it) is");
    }
}
