//! `ftw find -x CMD` and `-X CMD`: a command for each entry found (in parallel, each
//! command's output kept together), or for as many at once as the argument list holds.

use crate::msg::report;
use crate::select::Select;
use ftw::walk::{Control, Entry, ParallelVisitor, WalkBuilder};
use std::ffi::OsString;
use std::io::Write;
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

/// A part of one argument of the command.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Piece {
    Text(Vec<u8>),
    /// `{}`: the path.
    Path,
    /// `{/}`: the name.
    Name,
    /// `{//}`: the parent directory.
    Parent,
    /// `{.}`: the path without its extension.
    NoExt,
    /// `{/.}`: the name without its extension.
    NameNoExt,
}

/// A command line with placeholders.
#[derive(Clone, Debug)]
pub struct Template {
    program: OsString,
    args: Vec<Vec<Piece>>,
    /// Whether any argument holds a placeholder (without one, the path is appended).
    placeholders: bool,
}

impl Template {
    /// Parses `CMD [ARGS...]`.
    pub fn new(words: &[OsString]) -> Result<Template, String> {
        let (program, rest) = words
            .split_first()
            .ok_or_else(|| "a command is needed after -x/-X".to_string())?;
        let args: Vec<Vec<Piece>> = rest.iter().map(|w| parse(&crate::os::bytes(w))).collect();
        let placeholders = args.iter().flatten().any(|p| !matches!(p, Piece::Text(_)));
        Ok(Template {
            program: program.clone(),
            args,
            placeholders,
        })
    }

    /// The command for one path.
    fn one(&self, path: &[u8]) -> Command {
        let mut c = Command::new(&self.program);
        for arg in &self.args {
            c.arg(crate::os::os_string(expand(arg, path)));
        }
        if !self.placeholders {
            c.arg(crate::os::os_string(path.to_vec()));
        }
        c
    }

    /// The arguments for a batch of `paths`: an argument with a placeholder is repeated
    /// for each path, in place; without any, the paths come last.
    fn batch_args(&self, paths: &[Vec<u8>]) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        for arg in &self.args {
            if arg.iter().all(|p| matches!(p, Piece::Text(_))) {
                out.push(expand(arg, b""));
            } else {
                out.extend(paths.iter().map(|p| expand(arg, p)));
            }
        }
        if !self.placeholders {
            out.extend(paths.iter().cloned());
        }
        out
    }

    /// The bytes the fixed part of a batch takes in the argument list.
    fn fixed_cost(&self) -> usize {
        let fixed: usize = self
            .args
            .iter()
            .filter(|a| a.iter().all(|p| matches!(p, Piece::Text(_))))
            .map(|a| expand(a, b"").len() + 1 + PTR)
            .sum();
        self.program.len() + 1 + PTR + fixed
    }

    /// The bytes one path adds to a batch's argument list.
    fn path_cost(&self, path: &[u8]) -> usize {
        let with: usize = self
            .args
            .iter()
            .filter(|a| a.iter().any(|p| !matches!(p, Piece::Text(_))))
            .map(|a| expand(a, path).len() + 1 + PTR)
            .sum();
        with + if self.placeholders {
            0
        } else {
            path.len() + 1 + PTR
        }
    }
}

/// SIGPIPE's number (13 on Linux, the BSDs and macOS).
const SIGPIPE: i32 = 13;

/// Whether a command was killed by SIGPIPE (never, where there are no signals).
fn killed_by_sigpipe(status: &std::process::ExitStatus) -> bool {
    #[cfg(unix)]
    return std::os::unix::process::ExitStatusExt::signal(status) == Some(SIGPIPE);
    #[cfg(not(unix))]
    return {
        let _ = (status, SIGPIPE);
        false
    };
}

/// A pointer in `argv` or `envp`.
const PTR: usize = std::mem::size_of::<usize>();

fn parse(word: &[u8]) -> Vec<Piece> {
    let mut pieces = Vec::new();
    let mut text = Vec::new();
    let mut i = 0;
    while i < word.len() {
        let rest = &word[i..];
        let found = [
            (&b"{}"[..], Piece::Path),
            (b"{/}", Piece::Name),
            (b"{//}", Piece::Parent),
            (b"{.}", Piece::NoExt),
            (b"{/.}", Piece::NameNoExt),
        ]
        .into_iter()
        .find(|(tok, _)| rest.starts_with(tok));
        match found {
            Some((tok, piece)) => {
                if !text.is_empty() {
                    pieces.push(Piece::Text(std::mem::take(&mut text)));
                }
                pieces.push(piece);
                i += tok.len();
            }
            None => {
                text.push(word[i]);
                i += 1;
            }
        }
    }
    if !text.is_empty() || pieces.is_empty() {
        pieces.push(Piece::Text(text));
    }
    pieces
}

/// `path`'s name (after its last `/`, trailing slashes aside).
fn name_of(path: &[u8]) -> &[u8] {
    let p = trim_end_slashes(path);
    p.rsplit(|&b| b == b'/').next().unwrap_or(p)
}

fn trim_end_slashes(p: &[u8]) -> &[u8] {
    let end = p
        .iter()
        .rposition(|&b| b != b'/')
        .map_or(p.len().min(1), |i| i + 1);
    &p[..end]
}

fn parent_of(path: &[u8]) -> &[u8] {
    let p = trim_end_slashes(path);
    match p.iter().rposition(|&b| b == b'/') {
        Some(0) => b"/",
        Some(i) => &p[..i],
        None => b".",
    }
}

/// `s` without its extension (a leading dot is not one).
fn without_ext(s: &[u8]) -> &[u8] {
    let name_start = s.iter().rposition(|&b| b == b'/').map_or(0, |i| i + 1);
    match s[name_start..].iter().rposition(|&b| b == b'.') {
        Some(0) | None => s,
        Some(i) => &s[..name_start + i],
    }
}

fn expand(arg: &[Piece], path: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    for p in arg {
        match p {
            Piece::Text(t) => out.extend_from_slice(t),
            Piece::Path => out.extend_from_slice(path),
            Piece::Name => out.extend_from_slice(name_of(path)),
            Piece::Parent => out.extend_from_slice(parent_of(path)),
            Piece::NoExt => out.extend_from_slice(without_ext(path)),
            Piece::NameNoExt => out.extend_from_slice(without_ext(name_of(path))),
        }
    }
    out
}

/// The outcome of the commands.
struct Outcome {
    /// Some command failed or could not be run.
    failed: AtomicBool,
    /// A command could not be started: reported once.
    spawn_reported: AtomicBool,
    /// Output of finished commands, written whole, one command at a time.
    out: Mutex<()>,
    /// Writing to standard output failed (reported once), or its reader went away:
    /// commands are no longer run.
    out_failed: AtomicBool,
}

impl Outcome {
    fn new() -> Outcome {
        Outcome {
            failed: AtomicBool::new(false),
            spawn_reported: AtomicBool::new(false),
            out: Mutex::new(()),
            out_failed: AtomicBool::new(false),
        }
    }

    fn spawn_failed(&self, program: &OsString, e: &std::io::Error) {
        self.failed.store(true, Ordering::Relaxed);
        if !self.spawn_reported.swap(true, Ordering::Relaxed) {
            report(&crate::os::bytes(program), &crate::msg::describe(e));
        }
    }

    /// Runs `c` with its output captured, then writes it whole.
    fn run_captured(&self, mut c: Command, program: &OsString) {
        c.stdin(Stdio::null());
        match c.output() {
            Ok(o) => {
                if !o.status.success() {
                    self.failed.store(true, Ordering::Relaxed);
                }
                let _lock = self.out.lock().unwrap_or_else(|e| e.into_inner());
                if self.out_failed.load(Ordering::Relaxed) {
                    return;
                }
                // A failing standard output is reported, once, and makes the status 1;
                // a reader gone away ends the run quietly.
                if let Err(e) = crate::output::Stdout.write_all(&o.stdout) {
                    self.out_failed.store(true, Ordering::Relaxed);
                    if crate::output::report_error(&e) {
                        self.failed.store(true, Ordering::Relaxed);
                    }
                    return;
                }
                let _ = std::io::stderr().lock().write_all(&o.stderr);
            }
            Err(e) => self.spawn_failed(program, &e),
        }
    }

    /// Runs `c` on the terminal's own streams (one command at a time).
    fn run_inherited(&self, mut c: Command, program: &OsString) {
        if crate::output::stdout_closed_at_start() {
            // Standard output was closed: the command finds it closed too, not the
            // /dev/null that Rust's runtime put in its place (as find's -exec would).
            crate::process::close_stdout_on_exec(&mut c);
        }
        match c.status() {
            Ok(s) if s.success() => {}
            // Killed by SIGPIPE: the reader of standard output went away (`| head`).
            // As for ftw's own output, the run ends quietly: no more commands.
            Ok(s) if killed_by_sigpipe(&s) => {
                self.out_failed.store(true, Ordering::Relaxed);
            }
            Ok(_) => self.failed.store(true, Ordering::Relaxed),
            Err(e) => self.spawn_failed(program, &e),
        }
    }
}

/// A command per entry: in walk order one at a time (serial or sorted walks), else on
/// each worker, output captured and written whole.
pub fn each(b: WalkBuilder, select: &Select, t: &Template, serial: bool) -> (bool, bool) {
    let outcome = Outcome::new();
    let errors = AtomicBool::new(false);
    /// Runs the command for each entry matched: on the terminal's own streams in a
    /// serial walk (one at a time, in order), its output captured and written whole
    /// in a parallel one.
    struct Each<'a> {
        select: &'a Select,
        t: &'a Template,
        outcome: &'a Outcome,
        errors: &'a AtomicBool,
        serial: bool,
        path: Vec<u8>,
        scratch: Vec<u8>,
    }
    impl ParallelVisitor for Each<'_> {
        fn visit(&mut self, item: Result<&Entry<'_>, ftw::walk::Error>) -> Control {
            let Some((e, control)) = matched(item, self.select, &mut self.scratch, self.errors)
            else {
                return Control::Continue;
            };
            self.path.clear();
            e.write_path(&mut self.path);
            let command = self.t.one(&self.path);
            if self.serial {
                self.outcome.run_inherited(command, &self.t.program);
            } else {
                self.outcome.run_captured(command, &self.t.program);
            }
            if self.outcome.out_failed.load(Ordering::Relaxed) {
                return Control::Stop;
            }
            control
        }
    }
    select.run(b, || Each {
        select,
        t,
        outcome: &outcome,
        errors: &errors,
        serial,
        path: Vec::new(),
        scratch: Vec::new(),
    });
    (outcome.failed.into_inner(), errors.into_inner())
}

/// The entry, if the filters print it, with what the walk does next; errors reported.
fn matched<'e, 'a>(
    item: Result<&'e Entry<'a>, ftw::walk::Error>,
    select: &Select,
    scratch: &mut Vec<u8>,
    errors: &AtomicBool,
) -> Option<(&'e Entry<'a>, Control)> {
    match item {
        Ok(e) => {
            let (print, control) = select.decide(&mut { *e }, scratch);
            print.then_some((e, control))
        }
        Err(err) => {
            errors.store(true, Ordering::Relaxed);
            crate::msg::walk_error(&err, errors);
            None
        }
    }
}

/// The command on the paths found, in as few runs as the argument list's limit allows
/// (the environment counted), in walk order.
pub fn batch(b: WalkBuilder, select: &Select, t: &Template) -> (bool, bool) {
    let errors = AtomicBool::new(false);
    let paths = Mutex::new(Vec::<Vec<u8>>::new());
    let collect = |item: Result<&Entry<'_>, ftw::walk::Error>, scratch: &mut Vec<u8>| {
        let (e, control) = matched(item, select, scratch, &errors)?;
        let mut p = Vec::new();
        e.write_path(&mut p);
        paths.lock().unwrap_or_else(|e| e.into_inner()).push(p);
        Some(control)
    };
    select.run(b, || {
        let mut scratch = Vec::new();
        move |item: Result<&Entry<'_>, ftw::walk::Error>| {
            collect(item, &mut scratch).unwrap_or(Control::Continue)
        }
    });
    let paths = paths.into_inner().unwrap_or_else(|e| e.into_inner());
    let outcome = Outcome::new();
    let env: usize = std::env::vars_os()
        .map(|(k, v)| k.len() + v.len() + 2 + PTR)
        .sum();
    // Room for what the kernel adds, and for the loader's own strings.
    let room = crate::process::arg_max().saturating_sub(env + t.fixed_cost() + 4096);
    let mut start = 0;
    while start < paths.len() {
        let mut used = 0;
        let mut end = start;
        while end < paths.len() {
            let cost = t.path_cost(&paths[end]);
            if end > start && used + cost > room {
                break;
            }
            used += cost;
            end += 1;
        }
        let mut c = Command::new(&t.program);
        c.args(
            t.batch_args(&paths[start..end])
                .into_iter()
                .map(crate::os::os_string),
        );
        outcome.run_inherited(c, &t.program);
        if outcome.out_failed.load(Ordering::Relaxed) {
            break;
        }
        start = end;
    }
    (outcome.failed.into_inner(), errors.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(w: &[&str]) -> Vec<OsString> {
        w.iter().map(OsString::from).collect()
    }

    #[test]
    fn placeholders() {
        let t = Template::new(&words(&["cp", "{}", "{//}/{/.}.bak", "x{.}y", "{/}"])).unwrap();
        let c = t.one(b"dir/sub/file.tar.gz");
        let args: Vec<_> = c
            .get_args()
            .map(|a| a.to_str().unwrap().to_string())
            .collect();
        assert_eq!(
            args,
            [
                "dir/sub/file.tar.gz",
                "dir/sub/file.tar.bak",
                "xdir/sub/file.tary",
                "file.tar.gz"
            ]
        );
        assert_eq!(without_ext(b"dir.d/.hidden"), b"dir.d/.hidden");
        assert_eq!(parent_of(b"name"), b".");
        assert_eq!(parent_of(b"/name"), b"/");
        let plain = Template::new(&words(&["echo", "-n"])).unwrap();
        let args: Vec<_> = plain.one(b"p").get_args().map(|a| a.to_owned()).collect();
        assert_eq!(args, ["-n", "p"]);
        let batch = plain.batch_args(&[b"a".to_vec(), b"b".to_vec()]);
        assert_eq!(batch, [b"-n".to_vec(), b"a".to_vec(), b"b".to_vec()]);
        let t = Template::new(&words(&["tar", "cf", "x.tar", "--", "{}"])).unwrap();
        let batch = t.batch_args(&[b"a".to_vec(), b"b".to_vec()]);
        assert_eq!(batch.len(), 5);
    }
}
