//! What the command asks of its own process, not of a file tree: the main thread's
//! stack limit, the room for a new program's arguments, the terminal's size, and whether
//! standard output was closed when ftw started. The `ftw` library has none of this: it
//! runs nothing before `main` and changes no limit of the programs that link it.
//!
//! On Linux through `rustix`; on Windows through `windows-sys` (the console's size);
//! elsewhere, safe guesses. The `unsafe` code here is the init-array entry that looks at
//! descriptor 1 before `main`, the `pre_exec` hook that closes it in a child (Linux) and
//! the console call (Windows), each with its SAFETY comment.

#[cfg(target_os = "linux")]
pub use linux::*;
#[cfg(not(any(target_os = "linux", windows)))]
pub use other::*;
#[cfg(windows)]
pub use windows::*;

#[cfg(target_os = "linux")]
mod linux {
    /// The soft limit on the main thread's stack (`ulimit -s`, `RLIMIT_STACK`) in bytes;
    /// `None` when there is none. Other threads get the stack their creator asks for.
    pub fn main_stack_limit() -> Option<u64> {
        rustix::process::getrlimit(rustix::process::Resource::Stack).current
    }

    /// Raises the soft limit on the main thread's stack (`RLIMIT_STACK`) to `to` bytes,
    /// or to the hard limit where that is lower, and returns the soft limit then in force
    /// (`None`: no limit). The main thread's stack grows up to the limit in force when it
    /// grows, not when the program started. Never lowers it. Programs started afterwards
    /// inherit it.
    pub fn raise_main_stack_limit(to: u64) -> Option<u64> {
        use rustix::process::{Resource, getrlimit, setrlimit};
        let limit = getrlimit(Resource::Stack);
        let current = limit.current?;
        let want = limit.maximum.map_or(to, |hard| hard.min(to));
        if want <= current {
            return Some(current);
        }
        let raised = rustix::process::Rlimit {
            current: Some(want),
            maximum: limit.maximum,
        };
        match setrlimit(Resource::Stack, raised) {
            Ok(()) => Some(want),
            Err(_) => Some(current),
        }
    }

    /// Raises the soft limit on open descriptors (`RLIMIT_NOFILE`) to `to`, or to the
    /// hard limit where that is lower (as Go programs do at start); never lowers it.
    /// `ftw rm --mpi` keeps a handle for each directory whose contents are being
    /// removed, within a quarter of this limit.
    #[cfg(feature = "mpi")]
    pub fn raise_open_file_limit(to: u64) {
        use rustix::process::{Resource, getrlimit, setrlimit};
        let limit = getrlimit(Resource::Nofile);
        let Some(current) = limit.current else { return };
        let want = limit.maximum.map_or(to, |hard| hard.min(to));
        if want > current {
            let raised = rustix::process::Rlimit {
                current: Some(want),
                maximum: limit.maximum,
            };
            let _ = setrlimit(Resource::Nofile, raised);
        }
    }

    /// How many bytes the arguments and environment of a new program may take (Linux's
    /// rule: a quarter of the stack limit, at least 128 KiB, at most 6 MiB).
    pub fn arg_max() -> usize {
        let stack = rustix::process::getrlimit(rustix::process::Resource::Stack).current;
        let quarter = stack.map_or(usize::MAX, |s| usize::try_from(s / 4).unwrap_or(usize::MAX));
        quarter.clamp(128 << 10, 6 << 20)
    }

    /// The size of the terminal on standard output, as (columns, rows); `None` when it is
    /// not a terminal (or says it has no size).
    pub fn terminal_size() -> Option<(u16, u16)> {
        let ws = rustix::termios::tcgetwinsize(std::io::stdout()).ok()?;
        (ws.ws_col > 0 && ws.ws_row > 0).then_some((ws.ws_col, ws.ws_row))
    }

    /// Whether standard output (descriptor 1) was closed when the process started
    /// (`ftw find >&-`). Rust's runtime opens `/dev/null` in place of a closed standard
    /// descriptor before `main`, where the output would vanish without an error; so
    /// descriptor 1 is looked at before that, from the ELF init array, where the C
    /// library runs constructors: one `fcntl` at start, in this program only.
    pub fn stdout_closed_at_start() -> bool {
        closed_at_start::CLOSED.load(std::sync::atomic::Ordering::Relaxed)
    }

    mod closed_at_start {
        use std::sync::atomic::{AtomicBool, Ordering};

        pub static CLOSED: AtomicBool = AtomicBool::new(false);

        extern "C" fn look() {
            // Before `main`, descriptor 1 may be closed: it is only asked about, never
            // used.
            let closed = rustix::io::fcntl_getfd(rustix::stdio::stdout()).is_err();
            CLOSED.store(closed, Ordering::Relaxed);
        }

        // SAFETY: the init array holds pointers to functions the loader calls with no
        // arguments before `main`; `look` is such a function, and needs nothing that
        // `main` would have set up (no allocation, no std I/O).
        #[used]
        #[unsafe(link_section = ".init_array")]
        static LOOK: extern "C" fn() = look;
    }

    /// Makes `command` start with standard output (descriptor 1) closed, as ftw's own
    /// was ([`stdout_closed_at_start`]): not the `/dev/null` Rust's runtime put in its
    /// place, so that the command's writes fail as they would under `find -exec`.
    pub fn close_stdout_on_exec(command: &mut std::process::Command) {
        use std::os::unix::process::CommandExt;
        // SAFETY: the hook runs in the child between fork and exec, where only
        // async-signal-safe calls are allowed: it makes one, close(2), and allocates
        // nothing; descriptor 1 is the child's own, and nothing in the child uses it
        // after.
        unsafe {
            command.pre_exec(|| {
                rustix::io::close(1);
                Ok(())
            });
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn standard_output_was_open_under_the_test_harness() {
            assert!(!stdout_closed_at_start());
        }

        #[test]
        fn a_command_starts_with_standard_output_closed() {
            let mut c = std::process::Command::new("sh");
            c.args(["-c", "echo x || echo failed >&2"]);
            close_stdout_on_exec(&mut c);
            let out = c.output().unwrap();
            // echo's write fails (Bad file descriptor): the shell says so, then "failed".
            assert!(out.stderr.ends_with(b"failed\n"), "{out:?}");
        }

        #[test]
        fn the_stack_limit_is_raised_never_lowered() {
            let before = main_stack_limit();
            let now = raise_main_stack_limit(0);
            assert_eq!(now, before);
            if let Some(limit) = raise_main_stack_limit(8 << 20) {
                assert!(limit >= 8 << 20 || main_stack_limit() == Some(limit));
            }
        }

        #[test]
        fn arg_max_follows_the_kernel_bounds() {
            assert!((128 << 10..=6 << 20).contains(&arg_max()));
        }
    }
}

#[cfg(windows)]
mod windows {
    /// The limit on the main thread's stack: none to read (its size is fixed in the
    /// program's header).
    pub fn main_stack_limit() -> Option<u64> {
        None
    }

    /// The main thread's stack is fixed in the program's header: no limit to raise.
    pub fn raise_main_stack_limit(_to: u64) -> Option<u64> {
        None
    }

    /// How many bytes the arguments of a new program may take: a command line holds
    /// 32,767 UTF-16 units.
    pub fn arg_max() -> usize {
        32 << 10
    }

    /// The size of the console window on standard output, as (columns, rows); `None`
    /// when standard output is not a console.
    pub fn terminal_size() -> Option<(u16, u16)> {
        use windows_sys::Win32::System::Console as con;
        let mut info = con::CONSOLE_SCREEN_BUFFER_INFO::default();
        // SAFETY: GetStdHandle takes no pointer; `info` is a live, writable
        // CONSOLE_SCREEN_BUFFER_INFO.
        let ok = unsafe {
            let out = con::GetStdHandle(con::STD_OUTPUT_HANDLE);
            con::GetConsoleScreenBufferInfo(out, &mut info)
        };
        if ok == 0 {
            return None;
        }
        let w = info.srWindow;
        let (cols, rows) = (w.Right - w.Left + 1, w.Bottom - w.Top + 1);
        (cols > 0 && rows > 0).then_some((cols as u16, rows as u16))
    }

    /// Whether standard output was closed when the process started: not known on
    /// Windows (always `false`).
    pub fn stdout_closed_at_start() -> bool {
        false
    }

    /// Makes `command` start with standard output closed: nothing to do here, where
    /// [`stdout_closed_at_start`] is always `false`.
    pub fn close_stdout_on_exec(command: &mut std::process::Command) {
        let _ = command;
    }
}

#[cfg(not(any(target_os = "linux", windows)))]
mod other {
    /// The limit on the main thread's stack: not known here.
    pub fn main_stack_limit() -> Option<u64> {
        None
    }

    /// The limit on the main thread's stack cannot be changed here: none is known.
    pub fn raise_main_stack_limit(_to: u64) -> Option<u64> {
        None
    }

    /// The limit on open descriptors is left as it is here.
    #[cfg(feature = "mpi")]
    pub fn raise_open_file_limit(_to: u64) {}

    /// How many bytes the arguments and environment of a new program may take: a safe
    /// guess where the system does not say.
    pub fn arg_max() -> usize {
        128 << 10
    }

    /// The size of the terminal on standard output, as (columns, rows): not known here.
    pub fn terminal_size() -> Option<(u16, u16)> {
        None
    }

    /// Whether standard output was closed when the process started: not known here
    /// (always `false`).
    pub fn stdout_closed_at_start() -> bool {
        false
    }

    /// Makes `command` start with standard output closed: nothing to do here, where
    /// [`stdout_closed_at_start`] is always `false`.
    pub fn close_stdout_on_exec(command: &mut std::process::Command) {
        let _ = command;
    }
}
