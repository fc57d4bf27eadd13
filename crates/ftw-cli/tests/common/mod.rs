//! Shared by the integration tests: tree builders (odd names, links, deep chains, huge
//! directories), running `ftw` and GNU `find`, and comparing their listings.
#![allow(dead_code)]

use rustix::fs::{self as rfs, CWD, Mode, OFlags};
use std::ffi::OsStr;
use std::io::Read;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

pub fn ftw_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_ftw"))
}

/// The output of one command.
pub struct Run {
    pub stdout: Vec<u8>,
    pub stderr: String,
    pub code: i32,
}

pub fn run(cmd: &mut Command) -> Run {
    let out = cmd.output().expect("command runs");
    Run {
        stdout: out.stdout,
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        code: out.status.code().unwrap_or(-1),
    }
}

pub fn ftw(args: &[&OsStr]) -> Run {
    run(Command::new(ftw_bin()).args(args))
}

/// NUL-separated records, sorted.
pub fn records(out: &[u8]) -> Vec<Vec<u8>> {
    let mut v: Vec<Vec<u8>> = out
        .split(|&b| b == 0)
        .filter(|r| !r.is_empty())
        .map(|r| r.to_vec())
        .collect();
    v.sort();
    v
}

/// `find [OPTS...] ROOT [TESTS...] -print0` (the root included unless the tests say
/// otherwise), sorted records.
pub fn gnu_find(root: &Path, opts: &[&str], tests: &[&str]) -> (Vec<Vec<u8>>, Run) {
    let mut cmd = Command::new("find");
    for o in opts {
        cmd.arg(o);
    }
    cmd.arg(root);
    for t in tests {
        cmd.arg(t);
    }
    cmd.arg("-print0");
    let r = run(&mut cmd);
    (records(&r.stdout), r)
}

/// `ftw find -0 ROOT ARGS...`, sorted records.
pub fn ftw_find(root: &Path, args: &[&str]) -> (Vec<Vec<u8>>, Run) {
    let mut cmd = Command::new(ftw_bin());
    cmd.arg("find").arg("-0").args(args).arg(root);
    let r = run(&mut cmd);
    (records(&r.stdout), r)
}

pub fn show(recs: &[Vec<u8>]) -> String {
    recs.iter()
        .map(|r| format!("{:?}", String::from_utf8_lossy(r)))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Asserts two sorted listings are equal, printing the difference if not.
pub fn assert_same(what: &str, ours: &[Vec<u8>], theirs: &[Vec<u8>]) {
    if ours != theirs {
        let only_ours: Vec<_> = ours
            .iter()
            .filter(|r| !theirs.contains(r))
            .cloned()
            .collect();
        let only_theirs: Vec<_> = theirs
            .iter()
            .filter(|r| !ours.contains(r))
            .cloned()
            .collect();
        panic!(
            "{what}: listings differ ({} vs {} entries)\nonly in ftw:\n{}\nonly in find:\n{}",
            ours.len(),
            theirs.len(),
            show(&only_ours),
            show(&only_theirs)
        );
    }
}

pub fn p(bytes: &[u8]) -> &Path {
    Path::new(OsStr::from_bytes(bytes))
}

/// A tree with every kind of odd name and link the listing must survive.
pub fn odd_tree(root: &Path) {
    let mk = |rel: &[u8]| std::fs::create_dir_all(root.join(p(rel))).unwrap();
    let file = |rel: &[u8]| std::fs::write(root.join(p(rel)), b"data").unwrap();
    mk(b"plain/sub/subsub");
    mk(b"with space/and more");
    mk(b"new\nline dir");
    mk(b"back\\slash");
    mk(b"empty");
    mk(b"non-utf8-\xff\xfe dir");
    file(b"plain/a.txt");
    file(b"plain/sub/b.rs");
    file(b"plain/sub/subsub/c");
    file(b"with space/file with space");
    file(b"new\nline dir/new\nline file");
    file(b"back\\slash/\\\\");
    file(b"non-utf8-\xff\xfe dir/\xc3\x28 bad");
    file(b".hidden");
    file(b"-starts-with-dash");
    let long = vec![b'n'; 255];
    file(&long);
    let mut long_dir = vec![b'D'; 255];
    mk(&long_dir);
    long_dir.push(b'/');
    long_dir.extend(vec![b'f'; 255]);
    file(&long_dir);
    symlink("plain/a.txt", root.join("link-to-file")).unwrap();
    symlink("plain", root.join("link-to-dir")).unwrap();
    symlink("nowhere", root.join("dangling")).unwrap();
    symlink("loop-b", root.join("loop-a")).unwrap();
    symlink("loop-a", root.join("loop-b")).unwrap();
    symlink("../..", root.join("plain/sub/up-two")).unwrap();
    symlink(".", root.join("self")).unwrap();
}

/// An entry of a random tree, for [`build_entries`].
pub enum Made {
    /// A file of this many bytes.
    File(usize),
    Dir,
    /// A hard link to the n-th file made so far (modulo their count; none before the
    /// first).
    HardLink(usize),
    /// A symbolic link to this target.
    Link(PathBuf),
}

/// Builds random trees' entries under `root`, each a path of name components whose
/// parents are made as directories. An entry whose place is taken (a file where a
/// directory would go, or a name already made) is left out, as is one that cannot be
/// made.
pub fn build_entries<'a>(root: &Path, entries: impl IntoIterator<Item = (&'a [Vec<u8>], Made)>) {
    let mut files: Vec<PathBuf> = Vec::new();
    for (comps, made) in entries {
        let mut path = root.to_path_buf();
        for c in &comps[..comps.len() - 1] {
            path.push(p(c));
        }
        if std::fs::create_dir_all(&path).is_err() {
            continue;
        }
        path.push(p(comps.last().unwrap()));
        if std::fs::symlink_metadata(&path).is_ok() {
            continue;
        }
        let file = match made {
            Made::File(len) => std::fs::write(&path, vec![b'x'; len]).map(|()| true),
            Made::Dir => std::fs::create_dir(&path).map(|()| false),
            Made::HardLink(i) if !files.is_empty() => {
                std::fs::hard_link(&files[i % files.len()], &path).map(|()| false)
            }
            Made::HardLink(_) => Ok(false),
            Made::Link(to) => symlink(to, &path).map(|()| false),
        };
        if file.unwrap_or(false) {
            files.push(path);
        }
    }
}

/// Opens a directory relative to another (or the working directory).
fn open_dir(at: Option<&OwnedFd>, name: &Path) -> OwnedFd {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    match at {
        Some(fd) => rfs::openat(fd, name, flags, Mode::empty()).unwrap(),
        None => rfs::openat(CWD, name, flags, Mode::empty()).unwrap(),
    }
}

/// A chain of `levels` directories named `name` under `root`, one file `f` in every
/// `file_every`-th level, built through handles so that depth is no obstacle. Returns
/// how many entries it made.
pub fn chain(root: &Path, levels: usize, name: &str, file_every: usize) -> usize {
    let mut fd = open_dir(None, root);
    let mut made = 0;
    for i in 0..levels {
        if file_every > 0 && i % file_every == 0 {
            let f = rfs::openat(
                &fd,
                "f",
                OFlags::CREATE | OFlags::WRONLY | OFlags::CLOEXEC,
                Mode::from(0o644),
            )
            .unwrap();
            drop(f);
            made += 1;
        }
        rfs::mkdirat(&fd, name, Mode::from(0o755)).unwrap();
        made += 1;
        fd = open_dir(Some(&fd), Path::new(name));
    }
    made
}

/// `ftw find -0 ARGS ROOT` run under a shell limit (`limit`: `ulimit`'s option and value,
/// such as `-n 32` or `-s 256`), as a user meets it.
pub fn ftw_find_under(limit: &str, args: &str, root: &Path) -> Command {
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(format!(
            "ulimit {limit} && exec \"$0\" find -0 {args} \"$1\""
        ))
        .arg(ftw_bin())
        .arg(root);
    cmd
}

/// Starts `cmd` with its standard output and error on pipes.
pub fn spawn_piped(cmd: &mut Command) -> Child {
    cmd.stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Runs `cmd`, calling `each` with every NUL-terminated record of its output as it
/// streams (for listings too large to hold); returns the exit code and stderr.
pub fn stream_records(cmd: &mut Command, mut each: impl FnMut(&[u8], u32)) -> (i32, String) {
    let mut child = spawn_piped(cmd);
    let pid = child.id();
    let mut out = child.stdout.take().unwrap();
    let mut cur = Vec::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = out.read(&mut buf).unwrap();
        if n == 0 {
            break;
        }
        for &b in &buf[..n] {
            if b == 0 {
                each(&cur, pid);
                cur.clear();
            } else {
                cur.push(b);
            }
        }
    }
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    let status = child.wait().unwrap();
    (status.code().unwrap_or(-1), err)
}

/// Streams `cmd`'s NUL-separated output: the count of records and the longest one.
pub fn count_and_longest(cmd: &mut Command) -> (usize, Vec<u8>, i32, String) {
    let mut count = 0;
    let mut longest = Vec::new();
    let (code, err) = stream_records(cmd, |r, _| {
        count += 1;
        if r.len() > longest.len() {
            longest = r.to_vec();
        }
    });
    (count, longest, code, err)
}

/// An order-independent fingerprint of a NUL-separated listing: (count, sum and xor of
/// the records' hashes), for listings too large to sort in a test.
pub fn fingerprint(cmd: &mut Command) -> ((usize, u64, u64), i32, String) {
    fingerprint_with(cmd, |_, _| {})
}

/// [`fingerprint`], calling `each` too with every record and the process's id, as the
/// listing streams.
pub fn fingerprint_with(
    cmd: &mut Command,
    mut each: impl FnMut(&[u8], u32),
) -> ((usize, u64, u64), i32, String) {
    use std::hash::{DefaultHasher, Hasher};
    let (mut count, mut sum, mut xor) = (0usize, 0u64, 0u64);
    let (code, err) = stream_records(cmd, |r, pid| {
        each(r, pid);
        let mut h = DefaultHasher::new();
        h.write(r);
        let v = h.finish();
        count += 1;
        sum = sum.wrapping_add(v);
        xor ^= v;
    });
    ((count, sum, xor), code, err)
}

pub fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

/// Removes a chain made by [`chain`] without recursion (std's `remove_dir_all` recurses
/// and would overflow a test thread's stack): lift the second level to the top, remove
/// the emptied first level, again and again.
pub fn remove_chain(root: &Path, name: &str) {
    let top = root.join(name);
    let lifted = root.join(".lifted");
    while top.exists() {
        let _ = std::fs::remove_file(top.join("f"));
        if top.join(name).exists() {
            std::fs::rename(top.join(name), &lifted).unwrap();
            std::fs::remove_dir(&top).unwrap();
            std::fs::rename(&lifted, &top).unwrap();
        } else {
            std::fs::remove_dir(&top).unwrap();
        }
    }
}

/// What ftw should say where find said `fr`: the count of errors and the exit status.
/// One deliberate difference: a link through a file (`link -> file/x`) is a broken link
/// like a dangling one, printed without an error (as bfs does); find -L also reports
/// "Not a directory" for it.
pub fn find_expectation(fr: &Run) -> (usize, i32) {
    let broken = fr
        .stderr
        .lines()
        .filter(|l| l.starts_with("find: ") && l.ends_with(": Not a directory"))
        .count();
    let errors = error_count(&fr.stderr) - broken;
    let code = if fr.code == 1 && errors == 0 {
        0
    } else {
        fr.code
    };
    (errors, code)
}

/// How many error messages a stderr holds (names may hold newlines: count the lines
/// that start with the program's prefix).
pub fn error_count(stderr: &str) -> usize {
    stderr
        .lines()
        .filter(|l| l.starts_with("ftw: ") || l.starts_with("find: "))
        .count()
}

/// Waits for `child`, failing the test (and killing it) if it takes more than `limit`:
/// a deadlock, not a slow run.
pub fn wait_or_kill(child: &mut Child, limit: Duration) -> std::process::ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            panic!("ftw did not finish within {limit:?}: a deadlock?");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The peak resident memory of the running process `pid`, in KiB (its `VmHWM`).
pub fn peak_rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap()
}

/// Runs `cmd` to its end, its output read on another thread, watching its peak RSS:
/// (status, output, peak KiB).
pub fn with_peak_rss(cmd: &mut Command) -> (std::process::ExitStatus, Vec<u8>, u64) {
    let mut child = spawn_piped(cmd);
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut stdout, &mut v).map(|_| v)
    });
    let pid = child.id();
    let mut peak = 0;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        // (Gone from /proc, or a zombie without memory, once it ends.)
        let hwm = std::fs::read_to_string(format!("/proc/{pid}/status")).ok();
        if let Some(kib) = hwm.as_deref().and_then(|st| {
            st.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse::<u64>().ok())
        }) {
            peak = peak.max(kib);
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    };
    (status, reader.join().unwrap().unwrap(), peak)
}

/// Runs `cmd`, reads the first 100 bytes of its output, then closes the pipe, as
/// `| head -c 100` would; returns how it ended and its stderr.
pub fn close_after_first_bytes(cmd: &mut Command) -> (ExitStatus, String) {
    let mut child = spawn_piped(cmd);
    let mut first = [0u8; 100];
    child
        .stdout
        .as_mut()
        .unwrap()
        .read_exact(&mut first)
        .unwrap();
    drop(child.stdout.take());
    let status = wait_or_kill(&mut child, Duration::from_secs(60));
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    (status, err)
}

/// Runs `cmd` to its end like [`run`], but kills it and fails the test if it takes more
/// than `limit` (a deadlock, not a slow run): its output is read on other threads, so a
/// hung child cannot block the test on a pipe.
pub fn run_within(cmd: &mut Command, limit: Duration) -> Run {
    let mut child = spawn_piped(cmd);
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut v = Vec::new();
        out.read_to_end(&mut v).map(|_| v)
    });
    let err = std::thread::spawn(move || {
        let mut v = String::new();
        err.read_to_string(&mut v).map(|_| v)
    });
    let status = wait_or_kill(&mut child, limit);
    Run {
        stdout: out.join().unwrap().unwrap(),
        stderr: err.join().unwrap().unwrap(),
        code: status.code().unwrap_or(-1),
    }
}

/// `program` to run as the unprivileged user nobody (uid and gid 65534, no groups),
/// through util-linux's setpriv: root can open anything, so permission tests need it.
pub fn as_nobody(program: &Path) -> Command {
    let mut c = Command::new("setpriv");
    c.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(program);
    c
}

/// `program` to run as the user of a permission test: nobody when the tests run as root
/// (whom no permission stops), else as it is.
pub fn as_user(program: &Path) -> Command {
    if is_root() {
        as_nobody(program)
    } else {
        Command::new(program)
    }
}

/// Where a test runs ftw as another user: a temporary directory in /tmp that anyone may
/// enter, holding a copy of the binary anyone may run, and the tree's root (`tree`).
pub struct Unprivileged {
    pub tmp: tempfile::TempDir,
    pub bin: PathBuf,
    pub root: PathBuf,
}

impl Unprivileged {
    pub fn new(prefix: &str) -> Unprivileged {
        let tmp = tempfile::Builder::new()
            .prefix(prefix)
            .tempdir_in("/tmp")
            .unwrap();
        let root = tmp.path().join("tree");
        std::fs::create_dir(&root).unwrap();
        let bin = tmp.path().join("ftw");
        std::fs::copy(ftw_bin(), &bin).unwrap();
        set_mode(tmp.path(), 0o755);
        set_mode(&root, 0o755);
        Unprivileged { tmp, bin, root }
    }

    /// Whether a run of `as_user` could not switch users (the test then skips).
    pub fn cannot_switch(r: &Run) -> bool {
        r.code == 127 || r.stderr.contains("setpriv:")
    }
}

/// Sets the permission bits of `path`.
pub fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}
