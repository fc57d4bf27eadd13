//! The front door (`remove_dir_all`, `dir_size`, `copy_dir_all`, `for entry in
//! WalkBuilder::new(p)`) used as a hostile user uses it: odd names, links of every
//! sort, a path that is a link, a file or nothing, unreadable directories, a deep
//! chain under a low limit of open files, hard links, sparse files, a huge directory;
//! each checked against a reference (std, GNU du, cp, rsync) and against touching
//! anything outside the tree.
//!
//! What must run in a process of its own (as nobody, or under `prlimit`) runs in this
//! same test binary started again: see [`child`].
#![cfg(target_os = "linux")]

use ftw::WalkBuilder;
use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::ffi::{OsStr, OsString};
use std::io::ErrorKind;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::{MetadataExt, PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::process::Command;

// ---------------------------------------------------------------------------------
// Trees

/// A directory outside the tree, with something in it, that links point to.
fn make_outside(base: &Path) -> PathBuf {
    let outside = base.join("outside");
    std::fs::create_dir_all(outside.join("sub")).unwrap();
    std::fs::write(outside.join("keep"), b"keep me").unwrap();
    std::fs::write(outside.join("sub/deep"), b"and me").unwrap();
    outside
}

/// Every entry below `dir` (`dir` included) by path, with its type, size, mode and
/// contents or link target: a snapshot to tell whether anything was touched.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, (u32, u64, Vec<u8>)> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(p) = stack.pop() {
        let m = std::fs::symlink_metadata(&p).unwrap();
        let data = if m.is_file() {
            std::fs::read(&p).unwrap()
        } else if m.file_type().is_symlink() {
            std::fs::read_link(&p).unwrap().into_os_string().into_vec()
        } else {
            Vec::new()
        };
        if m.is_dir() {
            for e in std::fs::read_dir(&p).unwrap() {
                stack.push(e.unwrap().path());
            }
        }
        out.insert(p, (m.mode(), if m.is_dir() { 0 } else { m.len() }, data));
    }
    out
}

fn name(bytes: &[u8]) -> OsString {
    OsString::from_vec(bytes.to_vec())
}

/// A tree made to trip a walker up: names with newlines, non-UTF-8 bytes, of 255
/// bytes (one byte at a time, and multi-byte characters); links dangling, looping, to
/// directories inside, absolute to `outside`, to `..`; hard links; a sparse file; a
/// fifo; empty and read-only directories.
fn hostile_tree(root: &Path, outside: &Path) {
    std::fs::create_dir(root).unwrap();
    let nl = root.join("new\nline");
    std::fs::create_dir(&nl).unwrap();
    std::fs::write(nl.join("a\nb"), b"newline inside\n").unwrap();
    std::fs::write(nl.join("\n"), b"only a newline").unwrap();
    std::fs::write(root.join(name(b"\xff\xfe not utf-8 \x80")), b"bytes").unwrap();
    let bad_dir = root.join(name(b"dir \xc3\x28"));
    std::fs::create_dir(&bad_dir).unwrap();
    std::fs::write(bad_dir.join(name(b"\xe2\x82")), vec![7u8; 3000]).unwrap();
    let long = root.join("x".repeat(255));
    std::fs::create_dir(&long).unwrap();
    std::fs::write(long.join("y".repeat(255)), vec![1u8; 12345]).unwrap();
    std::fs::write(long.join("\u{e9}".repeat(127)), b"254 bytes of e-acute").unwrap();
    let mut non_utf8_long = vec![0xffu8; 254];
    non_utf8_long.push(b'z');
    symlink("y".repeat(255), long.join(name(&non_utf8_long))).unwrap();
    // Links.
    symlink("nowhere/at/all", root.join("dangling")).unwrap();
    symlink("self", root.join("self")).unwrap();
    symlink("ping", root.join("pong")).unwrap();
    symlink("pong", root.join("ping")).unwrap();
    symlink("new\nline", root.join("to dir")).unwrap();
    symlink(outside, root.join("absolute to outside")).unwrap();
    symlink(outside.join("keep"), long.join("absolute to a file")).unwrap();
    symlink("..", nl.join("up")).unwrap();
    symlink(".", root.join("dot")).unwrap();
    symlink("/", root.join("slash")).unwrap();
    // Hard links, inside and across directories.
    std::fs::write(root.join("hard 1"), vec![2u8; 5000]).unwrap();
    std::fs::hard_link(root.join("hard 1"), root.join("hard 2")).unwrap();
    std::fs::hard_link(root.join("hard 1"), nl.join("hard 3")).unwrap();
    // A sparse file: 8 MiB of hole, then a block of data.
    let sparse = std::fs::File::create(root.join("sparse")).unwrap();
    sparse.set_len(8 << 20).unwrap();
    use std::os::unix::fs::FileExt;
    sparse.write_all_at(&[9u8; 4096], 8 << 20).unwrap();
    drop(sparse);
    // A fifo, empty and read-only directories, a file of mode 0.
    let fifo = root.join("fifo");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    std::fs::create_dir(root.join("empty")).unwrap();
    let ro = root.join("read-only");
    std::fs::create_dir(&ro).unwrap();
    std::fs::write(ro.join("inside"), b"ro").unwrap();
    set_mode(&ro, 0o555);
    std::fs::write(root.join("mode 0"), b"secret").unwrap();
    set_mode(&root.join("mode 0"), 0o000);
}

fn set_mode(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// What is in a tree, by path, as `std::fs` lists it: (is a directory, is a link).
fn std_listing(root: &Path) -> BTreeMap<PathBuf, (bool, bool)> {
    let mut out = BTreeMap::new();
    let meta = std::fs::symlink_metadata(root).unwrap();
    out.insert(
        root.to_path_buf(),
        (meta.is_dir(), meta.file_type().is_symlink()),
    );
    let mut stack: Vec<_> = meta
        .is_dir()
        .then(|| root.to_path_buf())
        .into_iter()
        .collect();
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let entry = entry.unwrap();
            let t = entry.file_type().unwrap();
            out.insert(entry.path(), (t.is_dir(), t.is_symlink()));
            if t.is_dir() {
                stack.push(entry.path());
            }
        }
    }
    out
}

/// A chain of `levels` directories `d` below `root`, each but the deepest holding a
/// file `f` of one byte, made bottom up by renames so that no path is longer than a
/// few names (the chain's own paths are far beyond PATH_MAX).
fn deep_chain(root: &Path, levels: usize) {
    named_chain(root, levels, "d");
}

/// [`deep_chain`] with the directories named `name` (the top one still `d`).
fn named_chain(root: &Path, levels: usize, name: &str) {
    let top = root.join("d");
    let fresh = root.join(".new");
    std::fs::create_dir(&top).unwrap();
    for _ in 1..levels {
        std::fs::create_dir(&fresh).unwrap();
        std::fs::write(fresh.join("f"), b"x").unwrap();
        std::fs::rename(&top, fresh.join(name)).unwrap();
        std::fs::rename(&fresh, &top).unwrap();
    }
}

/// Removes a chain made by [`deep_chain`] (if it is still there) without recursion,
/// from the top: the second level lifted in place of the first, again and again.
fn remove_chain(root: &Path) {
    let top = root.join("d");
    let lifted = root.join(".lifted");
    while std::fs::symlink_metadata(&top).is_ok() {
        let _ = std::fs::remove_file(top.join("f"));
        if top.join("d").exists() {
            std::fs::rename(top.join("d"), &lifted).unwrap();
            std::fs::remove_dir(&top).unwrap();
            std::fs::rename(&lifted, &top).unwrap();
        } else {
            std::fs::remove_dir(&top).unwrap();
        }
    }
}

/// The depth of a chain made by [`deep_chain`], and its files, counted by walking
/// down it a level at a time.
fn chain_shape(root: &Path) -> (usize, usize) {
    let (mut levels, mut files) = (0, 0);
    // Each level opened through the handle of the one above (/proc/self/fd/N/d), so
    // that no path is long.
    let mut handle = std::fs::File::open(root.join("d")).unwrap();
    loop {
        levels += 1;
        let fd_path = PathBuf::from(format!(
            "/proc/self/fd/{}",
            std::os::fd::AsRawFd::as_raw_fd(&handle)
        ));
        if fd_path.join("f").exists() {
            files += 1;
        }
        match std::fs::File::open(fd_path.join("d")) {
            Ok(h) => handle = h,
            Err(_) => break,
        }
    }
    (levels, files)
}

// ---------------------------------------------------------------------------------
// A child process: this binary started again, to run one front-door call as nobody or
// under a limit.

const CHILD: &str = "FTW_FRONT_DOOR_CHILD";

/// Not a test of its own: in a child started by [`run_child`], runs the call its
/// environment names and prints its result on one line (`RESULT ok <value>` or
/// `RESULT err <kind> <message>`).
#[test]
fn child() {
    let Ok(op) = std::env::var(CHILD) else {
        return;
    };
    let path = PathBuf::from(std::env::var_os("FTW_FRONT_DOOR_PATH").unwrap());
    let dst = std::env::var_os("FTW_FRONT_DOOR_DST").map(PathBuf::from);
    let result: std::io::Result<String> = match op.as_str() {
        "remove" => ftw::remove_dir_all(&path).map(|()| String::new()),
        "std-remove" => std::fs::remove_dir_all(&path).map(|()| String::new()),
        "size" => ftw::dir_size(&path).map(|n| n.to_string()),
        "copy" => ftw::copy_dir_all(&path, dst.unwrap()).map(|()| String::new()),
        "walk" => {
            let (mut entries, mut errors) = (0u64, Vec::new());
            for item in WalkBuilder::new(&path) {
                match item {
                    Ok(_) => entries += 1,
                    Err(e) => errors.push(e.to_string()),
                }
            }
            Ok(format!("{entries} entries, errors: {errors:?}"))
        }
        other => panic!("no such call {other}"),
    };
    match result {
        Ok(v) => println!("RESULT ok {v}"),
        Err(e) => println!(
            "RESULT err {:?} {}",
            e.kind(),
            e.to_string().replace('\n', "\\n")
        ),
    }
}

/// Runs `op` on `path` (and `dst`) in this binary started again through `wrapper`
/// (such as `prlimit --nofile=32 --`): what the call gave (`Ok(value)` or
/// `Err((kind, message))`).
fn run_child(
    wrapper: &[&OsStr],
    exe: &Path,
    op: &str,
    path: &Path,
    dst: Option<&Path>,
) -> Result<String, (String, String)> {
    let mut cmd = Command::new(wrapper[0]);
    cmd.args(&wrapper[1..])
        .arg(exe)
        .args(["child", "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, op)
        .env("FTW_FRONT_DOOR_PATH", path);
    if let Some(d) = dst {
        cmd.env("FTW_FRONT_DOOR_DST", d);
    }
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    // The line may follow the test harness's own "test child ... ".
    let line = stdout
        .split_once("RESULT ")
        .and_then(|(_, rest)| rest.lines().next())
        .unwrap_or_else(|| {
            panic!(
                "{op} {path:?}: no result ({}):\n{stdout}\n{}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            )
        });
    if let Some(v) = line.strip_prefix("ok ") {
        return Ok(v.to_string());
    }
    let rest = line.strip_prefix("err ").unwrap();
    let (kind, msg) = rest.split_once(' ').unwrap_or((rest, ""));
    Err((kind.to_string(), msg.to_string()))
}

fn os(s: &str) -> &OsStr {
    OsStr::new(s)
}

/// Whether this runs as root (then permission tests run as nobody).
fn is_root() -> bool {
    std::fs::metadata("/proc/self")
        .map(|m| m.uid())
        .unwrap_or(1)
        == 0
}

/// Where a call runs as nobody: a directory in /tmp anyone may enter, holding a copy of
/// this test binary anyone may run. `None` when not root or setpriv is missing.
struct AsNobody {
    tmp: tempfile::TempDir,
    exe: PathBuf,
}

impl AsNobody {
    fn new() -> Option<AsNobody> {
        if !is_root() {
            return None;
        }
        let ok = Command::new("setpriv").arg("--version").output();
        if !ok.is_ok_and(|o| o.status.success()) {
            return None;
        }
        let tmp = tempfile::Builder::new()
            .prefix("ftw-front-door")
            .tempdir_in("/tmp")
            .unwrap();
        set_mode(tmp.path(), 0o755);
        let exe = tmp.path().join("front_door");
        std::fs::copy(std::env::current_exe().unwrap(), &exe).unwrap();
        set_mode(&exe, 0o755);
        Some(AsNobody { tmp, exe })
    }

    fn run(&self, op: &str, path: &Path, dst: Option<&Path>) -> Result<String, (String, String)> {
        let wrapper = [
            os("setpriv"),
            os("--reuid=65534"),
            os("--regid=65534"),
            os("--clear-groups"),
            os("--"),
        ];
        run_child(&wrapper, &self.exe, op, path, dst)
    }
}

/// Gives a whole tree to nobody (links themselves, not what they lead to).
fn chown_nobody(root: &Path) {
    let mut stack = vec![root.to_path_buf()];
    while let Some(p) = stack.pop() {
        std::os::unix::fs::lchown(&p, Some(65534), Some(65534)).unwrap();
        let m = std::fs::symlink_metadata(&p).unwrap();
        if m.is_dir() {
            for e in std::fs::read_dir(&p).unwrap() {
                stack.push(e.unwrap().path());
            }
        }
    }
}

fn under_nofile(
    n: u32,
    exe: &Path,
    op: &str,
    path: &Path,
    dst: Option<&Path>,
) -> Result<String, (String, String)> {
    let limit = format!("--nofile={n}");
    let wrapper = [os("prlimit"), os(&limit), os("--")];
    run_child(&wrapper, exe, op, path, dst)
}

// ---------------------------------------------------------------------------------
// for entry in WalkBuilder::new(p)

#[test]
fn walk_lists_every_entry_of_a_hostile_tree_once_byte_exact() {
    let tmp = tempfile::tempdir().unwrap();
    let outside = make_outside(tmp.path());
    let root = tmp.path().join("tree");
    hostile_tree(&root, &outside);
    let reference = std_listing(&root);

    for sorted in [false, true] {
        let mut listed = BTreeMap::new();
        for entry in WalkBuilder::new(&root).sort(sorted) {
            let entry = entry.unwrap();
            // The name is the path's last component, byte for byte.
            let last = entry.path().file_name().map(|n| n.as_bytes().to_vec());
            if entry.depth() > 0 {
                let on_disk = std::fs::symlink_metadata(entry.path()).unwrap();
                assert_eq!(on_disk.ino(), entry.ino(), "{:?}", entry.path());
                assert!(last.is_some());
            }
            let kind = (entry.is_dir(), entry.path_is_symlink());
            let again = listed.insert(entry.into_path(), kind);
            assert_eq!(again, None, "listed twice");
        }
        assert_eq!(listed, reference, "sorted: {sorted}");
    }
    // Nothing was followed out of the tree.
    assert!(reference.keys().all(|p| p.starts_with(&root)));
}

#[test]
fn walk_following_links_ends_and_reports_each_loop() {
    let tmp = tempfile::tempdir().unwrap();
    let outside = make_outside(tmp.path());
    let root = tmp.path().join("tree");
    hostile_tree(&root, &outside);
    // `slash` leads to the whole system: not followed here.
    std::fs::remove_file(root.join("slash")).unwrap();

    let mut seen = HashSet::new();
    let mut loops = BTreeSet::new();
    let mut other_errors = Vec::new();
    for item in WalkBuilder::new(&root).follow_links(true) {
        match item {
            Ok(e) => assert!(seen.insert(e.into_path()), "listed twice"),
            Err(e) if e.loop_ancestor().is_some() => {
                loops.insert(e.path().to_path_buf());
            }
            Err(e) => other_errors.push(e.path().to_path_buf()),
        }
    }
    // `dot` leads to the root, `new\nline/up` to the root too (and again below `to
    // dir`): loops, as walkdir reports them.
    assert!(loops.contains(&root.join("dot")), "{loops:?}");
    assert!(loops.contains(&root.join("new\nline/up")), "{loops:?}");
    assert!(loops.contains(&root.join("to dir/up")), "{loops:?}");
    // The directory linked from outside is walked through its link.
    assert!(seen.contains(&root.join("absolute to outside/sub/deep")));
    // Links that lead nowhere are listed (as walkdir does not: it reports them) or
    // reported, never both, never lost.
    for name in ["dangling", "self", "ping", "pong"] {
        let p = root.join(name);
        assert!(
            seen.contains(&p) ^ other_errors.contains(&p),
            "{name}: {seen:?} {other_errors:?}"
        );
    }
}

#[test]
fn walk_roots_that_are_a_link_a_file_or_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let outside = make_outside(tmp.path());
    let link = tmp.path().join("link");
    symlink(&outside, &link).unwrap();

    // A link as the root is followed (as walkdir's roots are, and as documented): what
    // it leads to, below the link's path; the root says it came through a link.
    let expected: BTreeSet<PathBuf> = std_listing(&outside)
        .into_keys()
        .map(|p| link.join(p.strip_prefix(&outside).unwrap()))
        .collect();
    for builder in [
        WalkBuilder::new(&link),
        WalkBuilder::new(&link).follow_links(true),
    ] {
        let mut got = BTreeSet::new();
        for entry in builder {
            let entry = entry.unwrap();
            if entry.depth() == 0 {
                assert!(entry.is_dir());
                // As walkdir's: the path is a link (followed, as every root).
                assert!(entry.path_is_symlink(), "{entry:?}");
            }
            assert!(got.insert(entry.into_path()));
        }
        assert_eq!(got, expected);
    }
    // The parallel walker says the same of its root.
    let root_is_link = std::sync::Mutex::new(None);
    WalkBuilder::new(&link)
        .threads(2)
        .build_parallel()
        .visit(|| {
            |item: Result<&ftw::walk::Entry<'_>, ftw::walk::Error>| {
                let e = item.unwrap();
                if e.depth() == 0 {
                    *root_is_link.lock().unwrap() = Some((e.is_dir(), e.path_is_symlink()));
                }
                ftw::walk::Control::Continue
            }
        });
    assert_eq!(root_is_link.into_inner().unwrap(), Some((true, true)));
    // A link to a file, a dangling link: one entry, a link; a directory named
    // with a slash is no link.
    let to_file = tmp.path().join("to file");
    symlink(outside.join("keep"), &to_file).unwrap();
    let dangling = tmp.path().join("dangling");
    symlink("nowhere", &dangling).unwrap();
    let mut slashed = outside.clone().into_os_string();
    slashed.push("/");
    let cases = [
        (&to_file, ftw::sys::FileType::File, true),
        (&dangling, ftw::sys::FileType::Symlink, true),
        (&outside, ftw::sys::FileType::Dir, false),
        (&PathBuf::from(&slashed), ftw::sys::FileType::Dir, false),
    ];
    for (root, file_type, is_link) in cases {
        let first = WalkBuilder::new(root).into_iter().next().unwrap().unwrap();
        assert_eq!(first.path(), root);
        assert_eq!(
            (first.file_type(), first.path_is_symlink()),
            (file_type, is_link),
            "{root:?}"
        );
    }

    // A file: itself, once.
    let file = outside.join("keep");
    let got: Vec<_> = WalkBuilder::new(&file)
        .into_iter()
        .map(|e| e.unwrap())
        .collect();
    assert_eq!(got.len(), 1);
    assert!(!got[0].is_dir());
    assert_eq!(got[0].path(), file);

    // Nothing: one error, naming the path.
    let missing = tmp.path().join("missing\nname");
    let got: Vec<_> = WalkBuilder::new(&missing).into_iter().collect();
    assert_eq!(got.len(), 1);
    let err = got.into_iter().next().unwrap().unwrap_err();
    assert_eq!(err.path(), missing);
    assert_eq!(err.io_error().kind(), ErrorKind::NotFound);
    assert!(err.to_string().contains("missing\nname"), "{err}");
}

#[test]
fn walk_a_huge_directory_lists_each_entry_once() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("huge");
    std::fs::create_dir(&root).unwrap();
    let n = 100_000;
    for i in 0..n {
        std::fs::File::create(root.join(format!("{i:x}"))).unwrap();
    }
    for threads in [1, 0] {
        let mut seen = vec![false; n];
        let mut count = 0;
        let walk = WalkBuilder::new(&root).min_depth(1).threads(threads);
        for entry in walk {
            let entry = entry.unwrap();
            let name = entry
                .path()
                .file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .to_owned();
            let i = usize::from_str_radix(&name, 16).unwrap();
            assert!(!seen[i], "{name} twice");
            seen[i] = true;
            count += 1;
        }
        assert_eq!(count, n);
    }
    assert_eq!(ftw::dir_size(&root).unwrap(), 0);
    ftw::remove_dir_all(&root).unwrap();
    assert!(std::fs::symlink_metadata(&root).is_err());
}

// ---------------------------------------------------------------------------------
// dir_size, beside GNU du

/// `du ARGS PATH`'s first number.
fn du(args: &[&str], path: &Path) -> u64 {
    let out = Command::new("du").args(args).arg(path).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    text.split_whitespace().next().unwrap().parse().unwrap()
}

/// Whether `du -sb` adds the directories' own sizes (coreutils 9.1 and earlier; 9.2 and
/// later count directories as 0 with --apparent-size): asked of an empty directory.
fn du_counts_directories(tmp: &Path) -> bool {
    let empty = tmp.join("du-probe");
    std::fs::create_dir(&empty).unwrap();
    let n = du(&["-sb"], &empty);
    std::fs::remove_dir(&empty).unwrap();
    n != 0
}

/// The sizes of the directories below `root` (itself included), through links too when
/// `root` is named with a slash: what an older `du -sb` adds.
fn dir_sizes(root: &Path) -> u64 {
    std_listing(root)
        .into_iter()
        .filter(|(_, (is_dir, _))| *is_dir)
        .map(|(p, _)| std::fs::metadata(p).unwrap().len())
        .sum()
}

#[test]
fn dir_size_is_du_apparent_size_on_a_hostile_tree() {
    let tmp = tempfile::tempdir().unwrap();
    let outside = make_outside(tmp.path());
    let root = tmp.path().join("tree");
    hostile_tree(&root, &outside);
    // A hard link from outside, and a second sparse file that is all hole.
    std::fs::hard_link(outside.join("keep"), root.join("linked from outside")).unwrap();
    std::fs::File::create(root.join("all hole"))
        .unwrap()
        .set_len(1 << 30)
        .unwrap();
    let older = du_counts_directories(tmp.path());
    let du_b = |p: &Path| du(&["-sb"], p) - if older { dir_sizes(p) } else { 0 };

    let size = ftw::dir_size(&root).unwrap();
    assert_eq!(size, du_b(&root));
    assert!(size > (1 << 30) + (8 << 20), "{size}"); // the holes count: apparent

    // A file, a link (the link itself), a link named with a slash (what it leads to).
    let keep = outside.join("keep");
    assert_eq!(ftw::dir_size(&keep).unwrap(), du_b(&keep));
    let link = root.join("absolute to outside");
    assert_eq!(ftw::dir_size(&link).unwrap(), du_b(&link));
    let mut slash = link.clone().into_os_string();
    slash.push("/");
    let slash = PathBuf::from(slash);
    assert_eq!(ftw::dir_size(&slash).unwrap(), du_b(&slash));
    assert_eq!(ftw::dir_size(&slash).unwrap(), 7 + 6);
    // Links that lead nowhere, or to themselves: the link, as du counts it.
    for name in ["dangling", "self", "ping"] {
        let link = root.join(name);
        assert_eq!(ftw::dir_size(&link).unwrap(), du_b(&link), "{name}");
    }

    // Allocated blocks: disk_usage's bytes are du -s -B1's.
    let usage = ftw::disk_usage(&[&root], &ftw::UsageOptions::new().max_depth(0));
    assert_eq!(usage.errors, 0);
    assert_eq!(usage.total.bytes, du(&["-s", "-B1"], &root));
}

#[test]
fn dir_size_errors_name_the_path() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("no such\ndir");
    let err = ftw::dir_size(&missing).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound);
    assert!(err.to_string().contains("no such\ndir"), "{err}");
    // Through a file.
    std::fs::write(tmp.path().join("file"), b"x").unwrap();
    let err = ftw::dir_size(tmp.path().join("file/x")).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotADirectory);
    assert!(err.to_string().contains("file/x"), "{err}");
}

// ---------------------------------------------------------------------------------
// remove_dir_all, beside std's

#[test]
fn remove_dir_all_removes_a_hostile_tree_and_nothing_outside() {
    let tmp = tempfile::tempdir().unwrap();
    let outside = make_outside(tmp.path());
    std::fs::hard_link(outside.join("keep"), outside.join("keep 2")).unwrap();
    let root = tmp.path().join("tree");
    hostile_tree(&root, &outside);
    std::fs::hard_link(outside.join("keep"), root.join("linked from outside")).unwrap();
    let before = snapshot(&outside);
    ftw::remove_dir_all(&root).unwrap();
    assert_eq!(
        std::fs::symlink_metadata(&root).unwrap_err().kind(),
        ErrorKind::NotFound
    );
    assert_eq!(snapshot(&outside), before);
    let left: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, vec![OsString::from("outside")]);
}

#[test]
fn remove_dir_all_of_a_link_removes_the_link_only() {
    let tmp = tempfile::tempdir().unwrap();
    let outside = make_outside(tmp.path());
    let before = snapshot(&outside);
    // A link to a directory, absolute and relative, and a chain of two links.
    symlink(&outside, tmp.path().join("abs")).unwrap();
    symlink("outside", tmp.path().join("rel")).unwrap();
    symlink("rel", tmp.path().join("chain")).unwrap();
    for name in ["abs", "rel", "chain"] {
        let link = tmp.path().join(name);
        ftw::remove_dir_all(&link).unwrap();
        assert!(std::fs::symlink_metadata(&link).is_err(), "{name}");
        assert_eq!(snapshot(&outside), before, "{name}");
    }
    // Named with a trailing slash (std's would empty what it leads to, then fail):
    // refused before anything is touched, naming the path.
    symlink(&outside, tmp.path().join("abs")).unwrap();
    for slashed in ["abs/", "abs//", "abs/."] {
        let p = tmp.path().join(slashed);
        let err = ftw::remove_dir_all(&p).unwrap_err();
        assert_eq!(snapshot(&outside), before, "{slashed}");
        assert!(
            err.to_string()
                .contains(tmp.path().join("abs").to_str().unwrap()),
            "{err}"
        );
        assert!(std::fs::symlink_metadata(tmp.path().join("abs")).is_ok());
    }
    // A dangling link and a looping one are removed as std removes them.
    symlink("nowhere", tmp.path().join("dangling")).unwrap();
    symlink("loop", tmp.path().join("loop")).unwrap();
    for name in ["dangling", "loop"] {
        ftw::remove_dir_all(tmp.path().join(name)).unwrap();
        assert!(std::fs::symlink_metadata(tmp.path().join(name)).is_err());
    }
}

#[test]
fn remove_dir_all_fails_as_std_does_and_says_on_what() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("missing\nname");
    let file = tmp.path().join("a file");
    std::fs::write(&file, b"x").unwrap();
    let through_file = file.join("x");
    for path in [&missing, &file, &through_file] {
        let ours = ftw::remove_dir_all(path).unwrap_err();
        let std = std::fs::remove_dir_all(path).unwrap_err();
        assert_eq!(ours.kind(), std.kind(), "{path:?}: {ours} / {std}");
        let shown = path.to_str().unwrap();
        assert!(ours.to_string().contains(shown), "{path:?}: {ours}");
    }
    assert!(file.exists());
    // `.` and `..` at the end: refused, nothing removed.
    let dir = tmp.path().join("dir");
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    std::fs::write(dir.join("sub/f"), b"x").unwrap();
    for p in [dir.join("."), dir.join("sub/.."), dir.join("sub/../")] {
        let err = ftw::remove_dir_all(&p).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidInput, "{p:?}: {err}");
        assert!(dir.join("sub/f").exists());
    }
    // An empty path: no such file, as std says.
    let ours = ftw::remove_dir_all("").unwrap_err();
    let std = std::fs::remove_dir_all("").unwrap_err();
    assert_eq!(ours.kind(), std.kind());
}

#[test]
fn remove_dir_all_never_follows_a_directory_swapped_for_a_link() {
    // A second thread keeps replacing directories of the tree by links to a directory
    // outside while the removal runs; whatever it wins, nothing outside goes.
    let tmp = tempfile::tempdir().unwrap();
    let outside = make_outside(tmp.path());
    for i in 0..200 {
        std::fs::write(outside.join(format!("o{i}")), b"outside").unwrap();
    }
    let before = snapshot(&outside);
    for round in 0..5 {
        let root = tmp.path().join(format!("tree{round}"));
        let mut dirs = Vec::new();
        for i in 0..40 {
            let d = root.join(format!("d{i}"));
            std::fs::create_dir_all(d.join("inner")).unwrap();
            for j in 0..50 {
                std::fs::write(d.join(format!("f{j}")), b"x").unwrap();
                std::fs::write(d.join("inner").join(format!("f{j}")), b"x").unwrap();
            }
            dirs.push(d);
        }
        let attacker = {
            let (dirs, outside, tmp) = (dirs.clone(), outside.clone(), tmp.path().to_owned());
            std::thread::spawn(move || {
                for (i, d) in dirs.iter().enumerate().rev() {
                    let aside = tmp.join(format!("aside{round}-{i}"));
                    if std::fs::rename(d, &aside).is_ok() {
                        let _ = symlink(&outside, d);
                    }
                    let inner = aside.join("inner");
                    if std::fs::rename(&inner, aside.join("moved")).is_ok() {
                        let _ = symlink(&outside, &inner);
                    }
                }
            })
        };
        let _ = ftw::remove_dir_all(&root);
        attacker.join().unwrap();
        assert_eq!(snapshot(&outside), before, "round {round}");
    }
}

// ---------------------------------------------------------------------------------
// copy_dir_all and copy_tree, beside GNU cp and rsync

/// What `rsync -n ARGS --checksum --itemize-changes from/ to/` would change: nothing
/// when `to` is an exact copy of `from` in what ARGS compare.
fn rsync_changes(args: &str, from: &Path, to: &Path) -> String {
    let mut a = from.as_os_str().to_owned();
    a.push("/");
    let mut b = to.as_os_str().to_owned();
    b.push("/");
    let out = Command::new("rsync")
        .arg(args)
        .args(["--checksum", "--itemize-changes"])
        .arg(a)
        .arg(b)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn have(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

fn cp(args: &[&str], src: &Path, dst: &Path) {
    let out = Command::new("cp")
        .args(args)
        .arg(src)
        .arg(dst)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A hostile tree with extended attributes and an ACL where the file system takes them.
fn hostile_tree_with_attributes(root: &Path, outside: &Path) {
    hostile_tree(root, outside);
    let f = root.join("hard 1");
    let _ = Command::new("setfattr")
        .args(["-n", "user.ftw", "-v", "odd\\012value"])
        .arg(&f)
        .status();
    let _ = Command::new("setfacl")
        .args(["-m", "u:65534:rw"])
        .arg(root.join("sparse"))
        .status();
    let _ = Command::new("setfacl")
        .args(["-d", "-m", "g:65534:rx"])
        .arg(root.join("empty"))
        .status();
    set_mode(&root.join("new\nline/a\nb"), 0o4751);
    // A socket, and (as root) a character device.
    let sock = std::os::unix::net::UnixListener::bind(root.join("new\nline/socket")).unwrap();
    drop(sock);
    if is_root() {
        let dev = root.join("null device");
        let made = Command::new("mknod")
            .arg(&dev)
            .args(["c", "1", "3"])
            .status();
        assert!(made.is_ok_and(|s| s.success()));
    }
}

#[test]
fn copy_dir_all_copies_a_hostile_tree_as_cp_r() {
    if !have("rsync") {
        eprintln!("skipped: no rsync");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let outside = make_outside(tmp.path());
    let src = tmp.path().join("src");
    hostile_tree_with_attributes(&src, &outside);
    let before = snapshot(&outside);
    let ours = tmp.path().join("ours");
    let theirs = tmp.path().join("theirs");
    ftw::copy_dir_all(&src, &ours).unwrap();
    cp(&["-RT"], &src, &theirs);
    // The same names, types, contents, link targets and modes as cp -R's copy (hard
    // links not kept by either, nor times or attributes).
    assert_eq!(rsync_changes("-nrlpD", &theirs, &ours), "");
    assert_eq!(rsync_changes("-nrlpD", &ours, &theirs), "");
    // Holes kept as cp keeps them.
    let blocks = |p: &Path| std::fs::metadata(p.join("sparse")).unwrap().blocks();
    assert!(
        blocks(&ours) <= blocks(&src) + 8,
        "{} {}",
        blocks(&ours),
        blocks(&src)
    );
    assert_eq!(snapshot(&outside), before);
}

#[test]
fn copy_tree_archive_is_exact_as_cp_a() {
    if !have("rsync") {
        eprintln!("skipped: no rsync");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let outside = make_outside(tmp.path());
    let src = tmp.path().join("src");
    hostile_tree_with_attributes(&src, &outside);
    let before = snapshot(&outside);
    let ours = tmp.path().join("ours");
    ftw::copy_tree(&src, &ours, &ftw::CopyOptions::archive())
        .into_result()
        .unwrap();
    let changes = rsync_changes("-naHAX", &src, &ours);
    assert_eq!(changes, "", "rsync would change:\n{changes}");
    let theirs = tmp.path().join("theirs");
    cp(&["-aT"], &src, &theirs);
    assert_eq!(rsync_changes("-naHAX", &theirs, &ours), "");
    assert_eq!(
        du(&["-s", "-B1"], &ours),
        du(&["-s", "-B1"], &theirs),
        "blocks allocated"
    );
    assert_eq!(snapshot(&outside), before);
}

#[test]
fn copy_dir_all_merges_into_an_existing_directory_as_cp_rt() {
    if !have("rsync") {
        eprintln!("skipped: no rsync");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    std::fs::create_dir_all(src.join("sub/deeper")).unwrap();
    std::fs::write(src.join("sub/f"), b"new contents").unwrap();
    std::fs::write(src.join("top"), b"top").unwrap();
    let make_dst = |dst: &Path| {
        std::fs::create_dir_all(dst.join("sub/other")).unwrap();
        std::fs::write(dst.join("sub/f"), b"old contents, longer than the new").unwrap();
        std::fs::write(dst.join("extra"), b"left alone").unwrap();
    };
    let (ours, theirs) = (tmp.path().join("ours"), tmp.path().join("theirs"));
    make_dst(&ours);
    make_dst(&theirs);
    ftw::copy_dir_all(&src, &ours).unwrap();
    cp(&["-RT"], &src, &theirs);
    assert_eq!(rsync_changes("-nrlpD", &theirs, &ours), "");
    assert_eq!(rsync_changes("-nrlpD", &ours, &theirs), "");
}

#[test]
fn copy_dir_all_never_writes_through_links_in_the_destination() {
    let tmp = tempfile::tempdir().unwrap();
    let outside = make_outside(tmp.path());
    let before = snapshot(&outside);
    let src = tmp.path().join("src");
    std::fs::create_dir_all(src.join("sub")).unwrap();
    std::fs::write(src.join("sub/keep"), b"overwritten!").unwrap();
    std::fs::write(src.join("keep"), b"overwritten!").unwrap();
    let dst = tmp.path().join("dst");
    std::fs::create_dir(&dst).unwrap();
    symlink(&outside, dst.join("sub")).unwrap();
    symlink(outside.join("keep"), dst.join("keep")).unwrap();
    let err = ftw::copy_dir_all(&src, &dst).unwrap_err();
    assert_eq!(snapshot(&outside), before, "{err}");
    // A link where a directory goes: refused, as cp refuses it (cannot overwrite
    // non-directory with directory), the link left.
    assert_eq!(err.kind(), ErrorKind::AlreadyExists, "{err}");
    assert!(
        err.to_string().contains(dst.join("sub").to_str().unwrap()),
        "{err}"
    );
    assert!(
        std::fs::symlink_metadata(dst.join("sub"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    // A link where a file goes: replaced by the copy (GNU cp writes through it, to
    // the file outside).
    assert!(
        std::fs::symlink_metadata(dst.join("keep"))
            .unwrap()
            .is_file()
    );
    assert_eq!(std::fs::read(dst.join("keep")).unwrap(), b"overwritten!");
    // A destination that is itself a link to a directory: refused as cp -RT refuses it.
    let err = ftw::copy_dir_all(&src, dst.join("sub")).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::AlreadyExists, "{err}");
    assert_eq!(snapshot(&outside), before);
}

#[test]
fn copy_dir_all_refuses_what_cp_refuses_and_says_on_what() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    std::fs::create_dir_all(src.join("sub")).unwrap();
    std::fs::write(src.join("sub/f"), b"x").unwrap();
    let before = snapshot(&src);

    // Into itself, or below itself: refused (cp: cannot copy a directory into itself),
    // and the copy ends.
    for dst in [src.join("sub/copy"), src.join("copy")] {
        let err = ftw::copy_dir_all(&src, &dst).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidInput, "{dst:?}: {err}");
        assert!(err.to_string().contains("into itself"), "{err}");
        let _ = std::fs::remove_dir_all(&dst);
        assert_eq!(snapshot(&src), before, "{dst:?}");
    }
    let err = ftw::copy_dir_all(&src, &src).unwrap_err();
    assert!(err.to_string().contains(src.to_str().unwrap()), "{err}");
    assert_eq!(snapshot(&src), before);

    // Onto a file: refused, the file left as it was.
    let file = tmp.path().join("file");
    std::fs::write(&file, b"a file").unwrap();
    let err = ftw::copy_dir_all(&src, &file).unwrap_err();
    assert!(err.to_string().contains(file.to_str().unwrap()), "{err}");
    assert_eq!(std::fs::read(&file).unwrap(), b"a file");

    // A source that is a file, or missing; a destination whose parent is missing.
    let missing = tmp.path().join("missing\nsrc");
    let no_parent = tmp.path().join("no/such/parent");
    let cases: [(&Path, &Path, ErrorKind, &Path); 3] = [
        (
            &file,
            &tmp.path().join("d1"),
            ErrorKind::NotADirectory,
            &file,
        ),
        (
            &missing,
            &tmp.path().join("d2"),
            ErrorKind::NotFound,
            &missing,
        ),
        (&src, &no_parent, ErrorKind::NotFound, &no_parent),
    ];
    for (from, to, kind, named) in cases {
        let err = ftw::copy_dir_all(from, to).unwrap_err();
        assert_eq!(err.kind(), kind, "{from:?} -> {to:?}: {err}");
        assert!(err.to_string().contains(named.to_str().unwrap()), "{err}");
        assert!(std::fs::symlink_metadata(to).is_err());
    }
}

#[test]
fn copy_dir_all_of_a_link_to_a_directory_copies_the_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let outside = make_outside(tmp.path());
    symlink("outside", tmp.path().join("link")).unwrap();
    let dst = tmp.path().join("sub/dst");
    std::fs::create_dir(tmp.path().join("sub")).unwrap();
    ftw::copy_dir_all(tmp.path().join("link"), &dst).unwrap();
    // A directory, as copy_dir_all promises (the relative link copied as a link would
    // lead nowhere from there).
    let m = std::fs::symlink_metadata(&dst).unwrap();
    assert!(m.is_dir(), "{:?}", m.file_type());
    assert_eq!(std::fs::read(dst.join("sub/deep")).unwrap(), b"and me");
    let _ = outside;
}

// ---------------------------------------------------------------------------------
// In a child process: unreadable directories as nobody, a deep chain under a low limit
// of open files.

#[test]
fn unreadable_directories_are_errors_naming_them_and_the_rest_is_done() {
    let Some(nobody) = AsNobody::new() else {
        eprintln!("skipped: not root, or no setpriv");
        return;
    };
    let base = nobody.tmp.path();
    let make = |root: &Path| {
        std::fs::create_dir_all(root.join("open/sub")).unwrap();
        std::fs::write(root.join("open/sub/f"), b"12345").unwrap();
        std::fs::create_dir_all(root.join("locked\nname/inner")).unwrap();
        std::fs::write(root.join("locked\nname/inner/g"), b"xyz").unwrap();
        chown_nobody(root);
        set_mode(&root.join("locked\nname"), 0o000);
    };
    let locked = |root: &Path| root.join("locked\nname");
    let shown = |root: &Path| locked(root).to_str().unwrap().replace('\n', "\\n");

    // The walk: every readable entry, one error naming the locked directory.
    let root = base.join("walk");
    make(&root);
    let out = nobody.run("walk", &root, None).unwrap();
    // The root, open, open/sub, open/sub/f and the locked directory itself.
    assert!(out.starts_with("5 entries"), "{out}");
    assert!(out.contains(&shown(&root)), "{out}");
    assert!(out.contains("Permission denied"), "{out}");

    // The size: an error of kind PermissionDenied naming it.
    let root = base.join("size");
    make(&root);
    let (kind, msg) = nobody.run("size", &root, None).unwrap_err();
    assert_eq!(kind, "PermissionDenied");
    assert!(msg.contains(&shown(&root)), "{msg}");

    // The removal: std's fails with PermissionDenied; ours too, naming the directory,
    // having removed all the rest.
    let root = base.join("remove");
    make(&root);
    let (kind, msg) = nobody.run("remove", &root, None).unwrap_err();
    assert_eq!(kind, "PermissionDenied");
    assert!(msg.contains(&shown(&root)), "{msg}");
    set_mode(&locked(&root), 0o755);
    let left: Vec<_> = std_listing(&root).into_keys().collect();
    let expected = vec![
        root.clone(),
        locked(&root),
        locked(&root).join("inner"),
        locked(&root).join("inner/g"),
    ];
    assert_eq!(left, expected);
    set_mode(&locked(&root), 0o000);
    let (std_kind, _) = nobody.run("std-remove", &root, None).unwrap_err();
    assert_eq!(kind, std_kind);

    // The copy: the rest copied, the error naming the directory.
    let root = base.join("copy");
    make(&root);
    std::fs::create_dir(base.join("out")).unwrap();
    chown_nobody(&base.join("out"));
    let dst = base.join("out/copied");
    let (kind, msg) = nobody.run("copy", &root, Some(&dst)).unwrap_err();
    assert_eq!(kind, "PermissionDenied");
    assert!(msg.contains(&shown(&root)), "{msg}");
    assert_eq!(std::fs::read(dst.join("open/sub/f")).unwrap(), b"12345");
    for root in ["walk", "size", "remove", "copy"] {
        set_mode(&locked(&base.join(root)), 0o755);
    }
}

#[test]
fn a_deep_chain_under_a_limit_of_32_open_files() {
    let levels = 3000;
    let tmp = tempfile::tempdir().unwrap();
    let exe = std::env::current_exe().unwrap();
    let root = tmp.path().join("chain");
    std::fs::create_dir(&root).unwrap();
    deep_chain(&root, levels);
    assert_eq!(chain_shape(&root), (levels, levels - 1));

    // Walked: the root, the levels and their files.
    let out = under_nofile(32, &exe, "walk", &root, None).unwrap();
    assert_eq!(
        out,
        format!("{} entries, errors: []", 1 + levels + levels - 1)
    );
    // Measured: a byte a file.
    let out = under_nofile(32, &exe, "size", &root, None).unwrap();
    assert_eq!(out, (levels - 1).to_string());
    // Copied whole.
    let copy = tmp.path().join("copy");
    under_nofile(32, &exe, "copy", &root, Some(&copy)).unwrap();
    assert_eq!(chain_shape(&copy), (levels, levels - 1));
    // Removed whole (std's cannot under this limit: one handle a level).
    let std = under_nofile(32, &exe, "std-remove", &copy, None);
    assert!(std.is_err(), "{std:?}");
    under_nofile(32, &exe, "remove", &root, None).unwrap();
    assert!(std::fs::symlink_metadata(&root).is_err());
    under_nofile(32, &exe, "remove", &copy, None).unwrap();
    assert!(std::fs::symlink_metadata(&copy).is_err());
    remove_chain(&root);
}

// ---------------------------------------------------------------------------------
// Paths as a careless caller writes them, an early stop, a tree changing underneath.

#[test]
fn relative_paths_dot_and_empty_in_a_working_directory() {
    // In a child whose working directory is a scratch directory, so that a removal
    // of '.' that went wrong could not reach this crate's sources.
    let tmp = tempfile::tempdir().unwrap();
    let exe = std::env::current_exe().unwrap();
    let cwd = tmp.path().join("cwd");
    std::fs::create_dir_all(cwd.join("keep/inner")).unwrap();
    std::fs::write(cwd.join("keep/inner/f"), b"x").unwrap();
    let make = || {
        std::fs::create_dir_all(cwd.join("tree/sub")).unwrap();
        std::fs::write(cwd.join("tree/sub/f"), b"12345").unwrap();
    };
    let wrapper = [os("env"), os("-C"), cwd.as_os_str(), os("--")];
    let run = |op: &str, path: &str| run_child(&wrapper, &exe, op, Path::new(path), None);
    let before = snapshot(&cwd.join("keep"));

    make();
    assert_eq!(run("size", "tree").unwrap(), "5");
    assert_eq!(run("size", "./tree/").unwrap(), "5");
    assert_eq!(run("walk", "tree").unwrap(), "3 entries, errors: []");
    for path in ["tree", "./tree", "tree/", "tree//"] {
        make();
        assert_eq!(run("remove", path), Ok(String::new()), "{path}");
        assert!(!cwd.join("tree").exists(), "{path}");
    }
    // '.', '..', 'x/..', '' : refused or not found, nothing removed.
    make();
    for path in [".", "./", "..", "tree/..", "tree/sub/../..", "tree/."] {
        let (kind, msg) = run("remove", path).unwrap_err();
        assert_eq!(kind, "InvalidInput", "{path}: {msg}");
        assert!(msg.contains(path.trim_end_matches('/')), "{path}: {msg}");
    }
    let (kind, _) = run("remove", "").unwrap_err();
    assert_eq!(kind, "NotFound");
    assert_eq!(snapshot(&cwd.join("keep")), before);
    assert!(cwd.join("tree/sub/f").exists());
    // The size of '' is an error too, not the working directory's.
    let (kind, _) = run("size", "").unwrap_err();
    assert_eq!(kind, "NotFound");
}

#[test]
fn a_nul_byte_in_a_path_is_invalid_input() {
    let bad = Path::new("a\0b");
    assert_eq!(
        ftw::remove_dir_all(bad).unwrap_err().kind(),
        ErrorKind::InvalidInput
    );
    assert_eq!(
        ftw::dir_size(bad).unwrap_err().kind(),
        ErrorKind::InvalidInput
    );
    let tmp = tempfile::tempdir().unwrap();
    let err = ftw::copy_dir_all(bad, tmp.path().join("d")).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    let err = ftw::copy_dir_all(tmp.path(), tmp.path().join("d\0e")).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    let got: Vec<_> = WalkBuilder::new(bad).into_iter().collect();
    assert_eq!(got.len(), 1);
    let err = got.into_iter().next().unwrap().unwrap_err();
    assert_eq!(err.io_error().kind(), ErrorKind::InvalidInput);
}

#[test]
fn copy_dir_all_into_itself_through_a_link() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    std::fs::create_dir_all(src.join("sub")).unwrap();
    std::fs::write(src.join("sub/f"), b"x").unwrap();
    symlink(&src, tmp.path().join("alias")).unwrap();
    let before = snapshot(&src);
    let err = ftw::copy_dir_all(&src, tmp.path().join("alias/sub/copy")).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput, "{err}");
    let _ = std::fs::remove_dir_all(src.join("sub/copy"));
    assert_eq!(snapshot(&src), before);
    let err = ftw::copy_dir_all(tmp.path().join("alias"), src.join("copy")).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput, "{err}");
    let _ = std::fs::remove_dir_all(src.join("copy"));
    assert_eq!(snapshot(&src), before);
}

/// Runs `f` on another thread; fails if it takes longer than `secs`.
fn within(secs: u64, what: &str, f: impl FnOnce() + Send + 'static) {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        f();
        let _ = tx.send(());
    });
    rx.recv_timeout(std::time::Duration::from_secs(secs))
        .unwrap_or_else(|_| panic!("{what}: not done in {secs} s"));
}

#[test]
fn a_walk_dropped_early_ends_at_once() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("tree");
    for i in 0..50 {
        let d = root.join(format!("d{i}"));
        std::fs::create_dir_all(&d).unwrap();
        for j in 0..200 {
            std::fs::File::create(d.join(format!("f{j}"))).unwrap();
        }
    }
    for sort in [false, true] {
        for threads in [0, 1, 4] {
            for take in [0, 1, 3, 500] {
                let root = root.clone();
                within(
                    20,
                    &format!("sort {sort}, threads {threads}, {take}"),
                    move || {
                        let walk = WalkBuilder::new(&root).sort(sort).threads(threads);
                        let got = walk.into_iter().take(take).filter(|e| e.is_ok()).count();
                        assert_eq!(got, take);
                    },
                );
            }
        }
    }
}

#[test]
fn a_tree_changing_underneath_is_walked_sized_and_removed_without_a_panic() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("tree");
    let make = |root: &Path| {
        for i in 0..30 {
            let d = root.join(format!("d{i}"));
            std::fs::create_dir_all(d.join("inner")).unwrap();
            for j in 0..100 {
                std::fs::write(d.join(format!("f{j}")), b"xy").unwrap();
            }
        }
    };
    // A thread that removes and makes directories and files while each call runs.
    let churn = |root: PathBuf, stop: std::sync::Arc<std::sync::atomic::AtomicBool>| {
        std::thread::spawn(move || {
            let mut n = 0u64;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let d = root.join(format!("d{}", n % 30));
                let _ = std::fs::remove_dir_all(&d);
                let _ = std::fs::create_dir_all(d.join(format!("new{n}")));
                let _ = std::fs::write(root.join(format!("x{n}")), b"z");
                n += 1;
            }
        })
    };
    for op in 0..3 {
        make(&root);
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let t = churn(root.clone(), stop.clone());
        let root2 = root.clone();
        within(60, &format!("op {op}"), move || match op {
            0 => {
                let mut seen = HashSet::new();
                for e in WalkBuilder::new(&root2).into_iter().flatten() {
                    assert!(seen.insert(e.into_path()), "listed twice");
                }
            }
            1 => {
                let _ = ftw::dir_size(&root2);
            }
            _ => {
                let _ = ftw::remove_dir_all(&root2);
            }
        });
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        t.join().unwrap();
        let _ = std::fs::remove_dir_all(&root);
    }
}

#[test]
fn copy_as_nobody_of_read_only_directories_is_cp_rs() {
    let Some(nobody) = AsNobody::new() else {
        eprintln!("skipped: not root, or no setpriv");
        return;
    };
    if !have("rsync") {
        eprintln!("skipped: no rsync");
        return;
    }
    let base = nobody.tmp.path();
    let src = base.join("src");
    std::fs::create_dir_all(src.join("ro/deeper")).unwrap();
    std::fs::write(src.join("ro/f"), b"in a read-only directory").unwrap();
    std::fs::write(src.join("ro/deeper/g"), b"deeper").unwrap();
    std::fs::write(src.join("read-only file"), b"r").unwrap();
    std::fs::create_dir(src.join("write-only")).unwrap();
    chown_nobody(&src);
    set_mode(&src.join("ro/deeper"), 0o500);
    set_mode(&src.join("ro"), 0o555);
    set_mode(&src.join("read-only file"), 0o444);
    set_mode(&src.join("write-only"), 0o300);
    let out = base.join("out");
    std::fs::create_dir(&out).unwrap();
    chown_nobody(&out);

    let ours = out.join("ours");
    let result = nobody.run("copy", &src, Some(&ours));
    let theirs = out.join("theirs");
    let cp = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .args(["cp", "-RT"])
        .arg(&src)
        .arg(&theirs)
        .output()
        .unwrap();
    // cp fails on the directory it cannot read (write-only), and so must we, naming it.
    assert!(!cp.status.success());
    let (kind, msg) = result.unwrap_err();
    assert_eq!(kind, "PermissionDenied", "{msg}");
    assert!(msg.contains("write-only"), "{msg}");
    assert!(
        !String::from_utf8_lossy(&cp.stderr).contains("/ro"),
        "{:?}",
        cp.stderr
    );
    assert_eq!(rsync_changes("-nrlpD", &theirs, &ours), "");
    assert_eq!(rsync_changes("-nrlpD", &ours, &theirs), "");
    for d in [&src, &ours, &theirs] {
        set_mode(&d.join("ro"), 0o755);
        set_mode(&d.join("ro/deeper"), 0o755);
        set_mode(&d.join("write-only"), 0o755);
    }
}

/// Makes `path` immutable (`chattr +i`) until dropped; `None` where the file system or
/// the process cannot.
struct Immutable(PathBuf);

impl Immutable {
    fn new(path: &Path) -> Option<Immutable> {
        let ok = Command::new("chattr").arg("+i").arg(path).output();
        ok.is_ok_and(|o| o.status.success())
            .then(|| Immutable(path.to_path_buf()))
    }
}

impl Drop for Immutable {
    fn drop(&mut self) {
        let _ = Command::new("chattr").arg("-i").arg(&self.0).status();
    }
}

#[test]
fn remove_dir_all_past_an_entry_that_cannot_go() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("tree");
    std::fs::create_dir_all(root.join("a/stuck dir")).unwrap();
    std::fs::create_dir_all(root.join("b/c")).unwrap();
    for i in 0..50 {
        std::fs::write(root.join(format!("a/f{i}")), b"x").unwrap();
        std::fs::write(root.join(format!("b/c/f{i}")), b"x").unwrap();
    }
    std::fs::write(root.join("a/stuck\nfile"), b"x").unwrap();
    let Some(_guard) = Immutable::new(&root.join("a/stuck\nfile")) else {
        eprintln!("skipped: chattr +i not possible here");
        return;
    };
    let _guard2 = Immutable::new(&root.join("a/stuck dir"));
    let err = ftw::remove_dir_all(&root).unwrap_err();
    // std's says EPERM of the first; ours names it, counts the rest, and removed all
    // else.
    assert_eq!(err.kind(), ErrorKind::PermissionDenied, "{err}");
    let shown = err.to_string();
    assert!(shown.contains("stuck"), "{shown}");
    let left: BTreeSet<_> = std_listing(&root).into_keys().collect();
    let expected: BTreeSet<_> = [
        root.clone(),
        root.join("a"),
        root.join("a/stuck\nfile"),
        root.join("a/stuck dir"),
    ]
    .into();
    assert_eq!(left, expected);
    let inner = err
        .get_ref()
        .and_then(|e| e.downcast_ref::<ftw::TreeError>());
    // Each stuck entry, then a and the root that could not go for them.
    assert!(inner.is_some_and(|t| t.count() >= 2), "{inner:?}");
}

#[test]
fn a_chain_of_255_byte_names_far_beyond_path_max() {
    // 400 levels of 255-byte names: paths of 100 KiB, 25 times PATH_MAX.
    let levels = 400;
    let long = "\u{e9}".repeat(127) + "z"; // 255 bytes, not ASCII
    let tmp = tempfile::tempdir().unwrap();
    let exe = std::env::current_exe().unwrap();
    let root = tmp.path().join("chain");
    std::fs::create_dir(&root).unwrap();
    named_chain(&root, levels, &long);

    let mut deepest = PathBuf::new();
    let mut count = 0;
    for e in WalkBuilder::new(&root) {
        let e = e.unwrap();
        if e.path().as_os_str().len() > deepest.as_os_str().len() {
            deepest = e.path().to_path_buf();
        }
        count += 1;
    }
    assert_eq!(count, 1 + levels + levels - 1);
    assert!(
        deepest.as_os_str().len() > (levels - 1) * 256,
        "{}",
        deepest.as_os_str().len()
    );
    assert!(deepest.ends_with(format!("{long}/f")) || deepest.ends_with(&long));
    assert_eq!(
        under_nofile(32, &exe, "size", &root, None).unwrap(),
        (levels - 1).to_string()
    );
    let copy = tmp.path().join("copy");
    under_nofile(32, &exe, "copy", &root, Some(&copy)).unwrap();
    assert_eq!(ftw::dir_size(&copy).unwrap(), (levels - 1) as u64);
    under_nofile(32, &exe, "remove", &copy, None).unwrap();
    under_nofile(32, &exe, "remove", &root, None).unwrap();
    assert!(std::fs::symlink_metadata(&root).is_err());
    assert!(std::fs::symlink_metadata(&copy).is_err());
}

#[test]
fn copy_dir_all_onto_itself_by_another_name_is_refused() {
    // cp: 'src' and 'src/../src' are the same file.
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    std::fs::create_dir_all(src.join("sub")).unwrap();
    std::fs::write(src.join("sub/f"), b"x").unwrap();
    symlink("src", tmp.path().join("alias")).unwrap();
    let before = snapshot(&src);
    let mut slash = src.clone().into_os_string();
    slash.push("/");
    for dst in [
        src.join("../src"),
        PathBuf::from(slash),
        src.join("."),
        tmp.path().join("alias"),
    ] {
        let r = ftw::copy_dir_all(&src, &dst);
        assert!(r.is_err(), "{dst:?}");
        assert_eq!(snapshot(&src), before, "{dst:?}");
    }
}

#[test]
fn two_removals_of_one_tree_at_once() {
    // Another removal of the same tree is no error: an entry already gone counts as
    // removed. Only the path itself may be missing for the later one.
    let tmp = tempfile::tempdir().unwrap();
    for round in 0..5 {
        let root = tmp.path().join(format!("tree{round}"));
        for i in 0..20 {
            let d = root.join(format!("d{i}/e"));
            std::fs::create_dir_all(&d).unwrap();
            for j in 0..100 {
                std::fs::write(d.join(format!("f{j}")), b"x").unwrap();
            }
        }
        let results = std::thread::scope(|s| {
            let a = s.spawn(|| ftw::remove_dir_all(&root));
            let b = s.spawn(|| ftw::remove_dir_all(&root));
            [a.join().unwrap(), b.join().unwrap()]
        });
        for r in &results {
            if let Err(e) = r {
                assert_eq!(e.kind(), ErrorKind::NotFound, "round {round}: {e}");
                let first = e.get_ref().and_then(|e| e.downcast_ref::<ftw::TreeError>());
                let path = first
                    .and_then(|t| t.first())
                    .map(|f| f.path().to_path_buf());
                assert_eq!(path.as_deref(), Some(root.as_path()), "round {round}: {e}");
            }
        }
        assert!(results.iter().any(|r| r.is_ok()), "{results:?}");
        assert!(std::fs::symlink_metadata(&root).is_err());
    }
}
