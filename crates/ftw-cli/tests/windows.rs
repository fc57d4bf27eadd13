//! The Windows build, run under wine, against the Linux build on the same trees (seen
//! by wine through its `Z:` drive): the listings are equal, `ftw rm` leaves nothing,
//! `ftw du -s` adds the sizes, also past Linux's `PATH_MAX` (where what wine cannot
//! remove is reported); and the library's and the command's unit tests pass
//! under wine (the Windows backend's own tests: calls counted per directory and per
//! entry, both ways of stat, both dispositions).
//!
//! Needs the `x86_64-pc-windows-gnu` target (`rustup target add`), MinGW's linker
//! (`x86_64-w64-mingw32-gcc`, Debian's `gcc-mingw-w64-x86-64`) and wine (8 or later);
//! `.ci/run` installs them. Without them each test says why and passes, unless
//! `FTW_REQUIRE_WINE=1` (which `.ci/run` sets once it has them) makes that a failure.
//! The Windows binaries are built in a target directory of their own (the outer
//! `cargo test` holds the lock on its own).
//!
//! What cannot be compared: symbolic links (wine 8 shows a Unix link as what it
//! leads to, and hides a dangling one; the backend's link handling is tested on the
//! reparse tags in the library's tests), names that are not UTF-8 or that hold a
//! character Windows forbids (`\ : * ? " < > |`), and names that differ only by case.

#![cfg(target_os = "linux")]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

const TARGET: &str = "x86_64-pc-windows-gnu";

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn windows_target_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("windows")
}

fn runner() -> PathBuf {
    workspace().join(".ci/windows/runner.sh")
}

/// Why the Windows build cannot be run here, if it cannot.
fn missing() -> Option<String> {
    let ok = |cmd: &str, args: &[&str]| {
        Command::new(cmd)
            .args(args)
            .output()
            .is_ok_and(|o| o.status.success())
    };
    let sysroot = Command::new("rustc")
        .args(["--print", "sysroot"])
        .output()
        .ok()
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()));
    if !sysroot.is_some_and(|s| s.join("lib/rustlib").join(TARGET).is_dir()) {
        return Some(format!("no {TARGET} target (rustup target add {TARGET})"));
    }
    if !ok("x86_64-w64-mingw32-gcc", &["--version"]) {
        return Some("no x86_64-w64-mingw32-gcc (apt-get install gcc-mingw-w64-x86-64)".into());
    }
    if !Path::new("/usr/lib/wine/wine64").exists() && !ok("wine", &["--version"]) {
        return Some("no wine (apt-get install wine)".into());
    }
    None
}

/// Whether the test can go on; if not, says why (or fails, with FTW_REQUIRE_WINE=1).
fn can_run() -> bool {
    match missing() {
        None => true,
        Some(why) if std::env::var_os("FTW_REQUIRE_WINE").is_some_and(|v| v == "1") => {
            panic!("FTW_REQUIRE_WINE=1 but {why}")
        }
        Some(why) => {
            eprintln!("skipped: the Windows build cannot run here: {why}");
            false
        }
    }
}

fn cargo() -> Command {
    let mut c = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    c.current_dir(workspace())
        .env("CARGO_TARGET_DIR", windows_target_dir())
        .env(
            format!(
                "CARGO_TARGET_{}_RUNNER",
                TARGET.to_uppercase().replace('-', "_")
            ),
            runner(),
        );
    c
}

/// `ftw.exe`, built once for all the tests of this file.
fn ftw_exe() -> &'static Path {
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    EXE.get_or_init(|| {
        let out = cargo()
            .args(["build", "--target", TARGET, "-p", "ftw-cli", "--bin", "ftw"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "building ftw.exe failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let exe = windows_target_dir().join(TARGET).join("debug/ftw.exe");
        // A first run sets up the wine prefix (a minute on a fresh machine), and wine's
        // own processes may then write on its standard error ("Unhandled page fault
        // ... starting debugger"): that run's output is not one the tests compare.
        let _ = Command::new(runner()).arg(&exe).arg("-V").output();
        exe
    })
}

/// Runs `ftw.exe ARGS` under wine.
fn wine_ftw(args: &[&str]) -> Output {
    Command::new(runner())
        .arg(ftw_exe())
        .args(args)
        .output()
        .unwrap()
}

fn linux_ftw(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ftw"))
        .args(args)
        .output()
        .unwrap()
}

/// A Linux path as wine sees it: `Z:\tmp\x`.
fn z(p: &Path) -> String {
    format!("Z:{}", p.to_str().unwrap().replace('/', "\\"))
}

/// The NUL-separated paths of `out`, each less `prefix` and with `\` as `/`.
fn relative(out: &Output, prefix: &str) -> Vec<String> {
    assert!(
        out.status.success(),
        "exit {:?}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone())
        .expect("UTF-8 output")
        .split_terminator('\0')
        .map(|p| {
            let rel = p
                .strip_prefix(prefix)
                .unwrap_or_else(|| panic!("{p} not below {prefix}"));
            rel.replace('\\', "/")
        })
        .collect()
}

const SIZES: [usize; 7] = [0, 1, 100, 511, 4096, 12_345, 100_000];

/// The compared tree: non-ASCII names, hidden files and directories (a leading dot:
/// wine gives them the hidden attribute), a chain of 300 directories whose path passes
/// 1,000 characters, files of known sizes, a directory of 1,500 entries (several
/// batches), empty directories.
fn make_tree(root: &Path) {
    let dirs = [
        "Grüße",
        "日本語/サブ",
        "emoji 😀/x",
        ".hidden-dir/inner",
        "space name",
        "empty",
        "many",
        "sizes",
    ];
    for d in dirs {
        std::fs::create_dir_all(root.join(d)).unwrap();
    }
    for f in [
        "Grüße/straße.txt",
        "日本語/ファイル",
        "日本語/サブ/深い",
        "emoji 😀/x/🦀.rs",
        ".hidden",
        ".hidden-dir/inner/.also",
        "space name/a b c",
        "plain",
        "ñandú.md",
    ] {
        std::fs::write(root.join(f), f.as_bytes()).unwrap();
    }
    for i in 0..1500 {
        std::fs::write(root.join(format!("many/entry-{i:04}")), b"").unwrap();
    }
    for (i, s) in SIZES.iter().enumerate() {
        std::fs::write(root.join(format!("sizes/s{i}")), vec![b'x'; *s]).unwrap();
    }
    let mut p = root.join("chain");
    for i in 0..300 {
        p.push(format!("d{i:03}"));
    }
    std::fs::create_dir_all(&p).unwrap();
    std::fs::write(p.join("bottom"), b"deep").unwrap();
}

fn tree() -> tempfile::TempDir {
    let tmp = tempfile::Builder::new()
        .prefix("ftw-win")
        .tempdir()
        .unwrap();
    make_tree(&tmp.path().join("t"));
    tmp
}

#[test]
fn the_windows_build_lists_a_tree_as_the_linux_build_does() {
    if !can_run() {
        return;
    }
    let tmp = tree();
    let root = tmp.path().join("t");
    let lin = root.to_str().unwrap().to_string();
    let win = z(&root);
    let longest = relative(&linux_ftw(&["find", "-0", &lin]), &lin)
        .into_iter()
        .map(|p| p.len())
        .max()
        .unwrap();
    assert!(longest > 1000, "the chain's path: {longest} characters");
    // (args, whether the lines are paths below the root)
    let cases: [(&[&str], bool); 5] = [
        (&["find", "--sort", "-0"], true),
        (&["find", "--sort", "-0", "-t", "d"], true),
        // Each file's size, depth and name, in the sorted walk's order.
        (
            &["find", "--sort", "-t", "f", "--format", "%s %d %f\\0"],
            false,
        ),
        (
            &["find", "--sort", "-0", "-d", "2", "-n", "[^\\x00-\\x7f]"],
            true,
        ),
        // The parallel walk: the same set.
        (&["find", "-0", "-j", "4"], true),
    ];
    for (args, paths) in cases {
        let l = linux_ftw(&[args, &[lin.as_str()]].concat());
        let w = wine_ftw(&[args, &[win.as_str()]].concat());
        let prefix = |root: &str| {
            if paths {
                format!("{root}/")
            } else {
                String::new()
            }
        };
        let mut lines_l = relative(&l, &prefix(&lin));
        let mut lines_w = relative(&w, &prefix(&win));
        if !args.contains(&"--sort") {
            lines_l.sort();
            lines_w.sort();
        }
        assert!(lines_l.len() > 2, "ftw {args:?}: {lines_l:?}");
        assert_eq!(lines_w, lines_l, "ftw {args:?}");
        assert!(
            w.stderr.is_empty(),
            "{}",
            String::from_utf8_lossy(&w.stderr)
        );
    }
}

/// Copies the tree at `from` to `to` (directories and files).
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}

#[test]
fn the_windows_build_removes_a_copy_of_the_tree_entirely() {
    if !can_run() {
        return;
    }
    let tmp = tree();
    let copy = tmp.path().join("copy");
    copy_tree(&tmp.path().join("t"), &copy);
    let entries = relative(
        &linux_ftw(&["find", "-0", copy.to_str().unwrap()]),
        &format!("{}/", copy.display()),
    )
    .len();
    let out = wine_ftw(&["rm", "-v", &z(&copy)]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!copy.exists(), "the copy is gone");
    // Every entry and the copy itself, each once.
    assert_eq!(
        out.stdout
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .count(),
        entries + 1
    );
    assert!(tmp.path().join("t/chain").is_dir(), "the original stays");
}

#[test]
fn the_windows_build_adds_the_sizes_of_the_files() {
    if !can_run() {
        return;
    }
    let tmp = tree();
    let sizes = tmp.path().join("t/sizes");
    let out = wine_ftw(&["du", "-s", "-b", &z(&sizes)]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let sum: usize = SIZES.iter().sum();
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        format!("{sum}\t{}\n", z(&sizes))
    );
    // The whole tree: what the Linux build says, in bytes (apparent sizes: files only).
    let all = |out: Output| {
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout)
            .unwrap()
            .split('\t')
            .next()
            .unwrap()
            .to_string()
    };
    let root = tmp.path().join("t");
    assert_eq!(
        all(wine_ftw(&["du", "-s", "-b", &z(&root)])),
        all(linux_ftw(&["du", "-s", "-b", root.to_str().unwrap()]))
    );
}

#[test]
fn the_library_and_command_unit_tests_pass_under_wine() {
    if !can_run() {
        return;
    }
    let out = cargo()
        .args([
            "test", "--target", TARGET, "-p", "ftw", "-p", "ftw-cli", "--lib", "--bins",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The Windows backend's own tests ran (not filtered out, not compiled away).
    assert!(
        stdout.contains("sys::windows_tests::listing_costs"),
        "{stdout}"
    );
}

#[test]
fn options_that_mean_nothing_on_windows_say_so_and_the_run_goes_on() {
    if !can_run() {
        return;
    }
    let tmp = tree();
    let root = z(&tmp.path().join("t/sizes"));
    let out = wine_ftw(&["find", "-t", "p", "-t", "f", &root]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert_eq!(
        err,
        "ftw: warning: -t p: Windows directories hold no sockets, pipes or devices: nothing matches\n"
    );
    // -t f still matches.
    assert_eq!(
        out.stdout.iter().filter(|&&b| b == b'\n').count(),
        SIZES.len()
    );
    // -l: no user or group to name (no /etc/passwd, which Z:\etc\passwd would be
    // under wine, naming Linux's users): '-', and the sizes as listed.
    let out = wine_ftw(&["find", "-l", "--max-depth", "1", "-t", "f", &root]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(text.lines().count(), SIZES.len(), "{text}");
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        assert_eq!((f[2], f[3]), ("-", "-"), "{line}");
        assert!(!line.contains("root"), "{line}");
    }
    let out = wine_ftw(&["rm", "--chmod", &root]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--chmod: nothing to do on Windows"));
    assert!(!tmp.path().join("t/sizes").exists());
}

/// Runs `ftw.exe ARGS` under wine in the directory `cwd` (Z:'s current directory).
fn wine_ftw_in(cwd: &Path, args: &[&str]) -> Output {
    Command::new(runner())
        .current_dir(cwd)
        .arg(ftw_exe())
        .args(args)
        .output()
        .unwrap()
}

fn nul_lines(out: &Output) -> Vec<String> {
    assert!(
        out.status.success(),
        "exit {:?}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let s = String::from_utf8(out.stdout.clone()).unwrap();
    s.split_terminator('\0').map(str::to_string).collect()
}

#[test]
fn drive_relative_and_verbatim_roots_give_paths_that_name_their_files() {
    if !can_run() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path().join("d/e")).unwrap();
    std::fs::write(tmp.path().join("d/e/f"), b"x").unwrap();
    let run = |args: &[&str]| wine_ftw_in(tmp.path(), args);
    for j in ["1", "2"] {
        // `Z:` is Z's current directory: its entries are `Z:d` (`Z:/d` would be at the
        // drive's root).
        let got = nul_lines(&run(&["find", "--sort", "-0", "-j", j, "Z:"]));
        assert_eq!(got, ["Z:d", "Z:d/e", "Z:d/e/f"], "-j {j}");
        // A verbatim root: joined with `\`, as `/` is no separator there.
        let v = format!(r"\\?\{}", z(tmp.path()));
        let got = nul_lines(&run(&["find", "--sort", "-0", "-j", j, &v]));
        assert_eq!(
            got,
            [
                format!(r"{v}\d"),
                format!(r"{v}\d\e"),
                format!(r"{v}\d\e\f")
            ]
        );
        // A root ending with `\`: no second separator.
        let r = format!(r"{}\", z(tmp.path()));
        let got = nul_lines(&run(&["find", "--sort", "-0", "-j", j, "-t", "f", &r]));
        assert_eq!(got, [format!(r"{r}d/e/f")]);
        // What du shows leads to the files too.
        let got = run(&["du", "-a", "-j", j, &v]);
        let text = String::from_utf8(got.stdout).unwrap();
        assert!(text.contains(&format!("\t{v}\\d\\e\\f\n")), "{text}");
    }
    // `ftw rm Z:` is `ftw rm .`: refused (exit 1, as any PATH refused).
    let out = run(&["rm", "Z:"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("refusing to remove '.' or '..'"), "{err}");
    assert!(tmp.path().join("d/e/f").exists());
    // A message shows a Windows path as typed: `\` is no escape there.
    let missing = format!(r"{}\missing", z(tmp.path()));
    let out = run(&["rm", &missing]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.starts_with(&format!("ftw: {missing}: ")), "{err}");
    // `Z:d` is d in Z's current directory (not a stream of a file `Z`).
    let out = run(&["rm", "Z:d"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!tmp.path().join("d").exists());
}

/// Wine 8 shows a Unix symbolic link to a directory as that directory (no reparse
/// point): the backend must still not go through it, or `ftw rm` would remove what it
/// leads to, outside the tree, and a link to an ancestor would be walked forever.
#[test]
fn unix_links_to_directories_seen_through_wine_are_not_followed() {
    if !can_run() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (tree, outside) = (tmp.path().join("tree"), tmp.path().join("outside"));
    std::fs::create_dir_all(tree.join("d")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("precious"), b"keep").unwrap();
    std::fs::write(tree.join("d/f"), b"x").unwrap();
    std::os::unix::fs::symlink("../outside", tree.join("out")).unwrap();
    std::os::unix::fs::symlink("..", tree.join("d/up")).unwrap();
    for j in ["1", "3"] {
        // Listed as links (wine lists them as reparse points of no tag), not entered.
        let out = wine_ftw(&["find", "--sort", "-0", "-j", j, &z(&tree)]);
        let got = relative(&out, &format!("{}/", z(&tree)));
        assert_eq!(got, ["d", "d/f", "d/up", "out"], "-j {j}");
        let out = wine_ftw(&["find", "--sort", "-0", "-j", j, "-t", "l", &z(&tree)]);
        let got = relative(&out, &format!("{}/", z(&tree)));
        assert_eq!(got, ["d/up", "out"], "-j {j}");
        let out = wine_ftw(&["du", "-a", "-j", j, &z(&tree)]);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            !text.contains("precious") && !text.contains("up/d"),
            "{text}"
        );
    }
    // The link named itself, then the tree: what it leads to stays.
    wine_ftw(&["rm", &format!(r"{}\out", z(&tree))]);
    assert!(outside.join("precious").exists());
    let out = wine_ftw(&["rm", &z(&tree)]);
    assert_eq!(
        std::fs::read(outside.join("precious")).ok().as_deref(),
        Some(&b"keep"[..]),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A chain of `levels` directories of 200-character names below `root`, with a file
/// `fNNN` of NNN + 1 bytes at each level and `bottom` (5 bytes) in the last: made with
/// calls relative to each directory, as its path soon passes what a path may be.
fn deep_chain(root: &Path, levels: usize) {
    use rustix::fs::{Mode, OFlags};
    use std::io::Write;
    std::fs::create_dir(root).unwrap();
    let dir_flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let file_flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::CLOEXEC;
    let mode = Mode::from_raw_mode(0o755);
    let mut dir = rustix::fs::open(root, dir_flags, Mode::empty()).unwrap();
    let write = |dir: &std::os::fd::OwnedFd, name: &str, len: usize| {
        let fd = rustix::fs::openat(dir, name, file_flags, Mode::from_raw_mode(0o644)).unwrap();
        std::fs::File::from(fd).write_all(&vec![b'y'; len]).unwrap();
    };
    for i in 0..levels {
        let name = format!("{i:03}{}", "x".repeat(197));
        rustix::fs::mkdirat(&dir, name.as_str(), mode).unwrap();
        write(&dir, &format!("f{i:03}"), i + 1);
        dir = rustix::fs::openat(&dir, name.as_str(), dir_flags, Mode::empty()).unwrap();
    }
    write(&dir, "bottom", 5);
}

/// Past `PATH_MAX` (4,096 bytes: from depth 21 here) wine has no Unix name for a file,
/// and answers neither `GetFileAttributesExW` nor `GetFileInformationByHandle` there,
/// and removes nothing by the classic disposition (it removes by that name). The chain
/// ends past 34,000 characters, more than a Windows path holds: ftw goes by handles.
/// find lists it and its sizes as the Linux build does; du adds them; what rm cannot
/// remove is each reported by its path with a reason (status 1), never listed as
/// removed, and the rest goes.
#[test]
fn a_chain_past_path_max_is_listed_measured_and_removed_or_reported() {
    if !can_run() {
        return;
    }
    let tmp = tempfile::Builder::new()
        .prefix("ftw-win")
        .tempdir()
        .unwrap();
    let root = tmp.path().join("deep");
    let levels = 170;
    deep_chain(&root, levels);
    let (lin, win) = (root.to_str().unwrap().to_string(), z(&root));
    let lines = |out: &Output, prefix: &str| {
        let mut v = relative(out, prefix);
        v.sort();
        v
    };
    // The Linux build reaches every entry: what the Windows build must show.
    let template = ["--format", "%y %s %p\\0"];
    let want = lines(
        &linux_ftw(&[&["find"], &template[..], &[lin.as_str()]].concat()),
        "",
    );
    assert_eq!(want.len(), 2 * levels + 1);
    assert!(
        want.iter()
            .all(|l| l.split(' ').nth(2).unwrap().starts_with(&lin))
    );
    let longest = want.iter().map(String::len).max().unwrap();
    assert!(longest > 34_000, "{longest} characters");
    // Each entry, in the parallel walk, with its type and (for files) size: a
    // directory's size is what each system says of it.
    let shown = |l: &str, root: &str| {
        let (t, rest) = l.split_once(' ').unwrap();
        let (size, path) = rest.split_once(' ').unwrap();
        let size = if t == "f" { size } else { "-" };
        format!("{t} {size} {}", path.strip_prefix(root).unwrap())
    };
    let out = wine_ftw(&[&["find", "-j", "4"], &template[..], &[win.as_str()]].concat());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.is_empty(), "{}", &err[..err.len().min(2000)]);
    let win_root = win.replace('\\', "/");
    let got: Vec<String> = lines(&out, "")
        .iter()
        .map(|l| shown(l, &win_root))
        .collect();
    let want: Vec<String> = want.iter().map(|l| shown(l, &lin)).collect();
    let differs = got.iter().zip(&want).position(|(g, w)| g != w);
    assert!(
        got.len() == want.len() && differs.is_none(),
        "{} entries for {}; first difference: {:?}",
        got.len(),
        want.len(),
        differs.map(|i| (
            &got[i][..80.min(got[i].len())],
            &want[i][..80.min(want[i].len())]
        ))
    );
    // du: every file's bytes, as the Linux build adds them.
    let bytes = |out: Output| {
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "{}", &err[..err.len().min(2000)]);
        String::from_utf8(out.stdout)
            .unwrap()
            .split('\t')
            .next()
            .unwrap()
            .to_string()
    };
    let sum = (1..=levels).sum::<usize>() + 5;
    assert_eq!(bytes(linux_ftw(&["du", "-s", "-b", &lin])), sum.to_string());
    assert_eq!(bytes(wine_ftw(&["du", "-s", "-b", &win])), sum.to_string());
    // rm: what is left is each named by an error, with its reason; what -v lists as
    // removed is gone.
    let out = wine_ftw(&["rm", "-v", &win]);
    let removed: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| l.strip_prefix(&win).unwrap().replace('\\', "/"))
        .collect();
    let stderr = String::from_utf8(out.stderr).unwrap();
    let mut reported = Vec::new();
    for line in stderr.lines() {
        let (path, reason) = line
            .strip_prefix(&format!("ftw: {win}"))
            .and_then(|l| l.split_once(": "))
            .unwrap_or_else(|| panic!("not an entry's error: {line:?}\nstderr:\n{stderr}"));
        assert!(reason.contains("PATH_MAX"), "{reason}");
        reported.push(path.replace('\\', "/"));
    }
    reported.sort();
    // What is left, as the Linux build sees it: (is a directory, path below the root).
    let left: Vec<(bool, String)> = if root.exists() {
        let out = linux_ftw(&["find", "--sort", "--format", "%y %p\\0", &lin]);
        relative(&out, "")
            .iter()
            .map(|l| {
                let (t, p) = l.split_once(' ').unwrap();
                (t == "d", p.strip_prefix(&lin).unwrap().to_string())
            })
            .collect()
    } else {
        Vec::new()
    };
    let left_files: Vec<&String> = left.iter().filter(|(d, _)| !d).map(|(_, p)| p).collect();
    assert_eq!(
        reported.iter().collect::<Vec<_>>(),
        left_files,
        "reported, left"
    );
    // A directory is left only with something reported below it.
    for (_, d) in left.iter().filter(|(d, _)| *d) {
        let below = format!("{d}/");
        assert!(reported.iter().any(|r| r.starts_with(&below)), "{d}");
    }
    for r in &removed {
        assert!(
            !left.iter().any(|(_, p)| p == r),
            "listed as removed and left: {r}"
        );
    }
    // Each entry and the root: removed or left.
    let root_left = usize::from(root.exists());
    assert_eq!(removed.len() + left.len() + root_left, 2 * levels + 2);
    assert_eq!(out.status.code(), Some(if root_left == 0 { 0 } else { 1 }));
}

/// Names that Windows' path processing would change are files like any other below a
/// directory: `aux.txt`, `CON` and `NUL` are devices to `GetFullPathNameW` and it strips
/// a trailing dot or space (`x.` is `x`). Where ftw goes by path (`--sort`, whose
/// read-ahead keeps no handles; a root), it must still reach the file named, never a
/// device (a 0-byte "file") or nothing.
#[test]
fn device_names_and_trailing_dots_name_their_files_by_path_too() {
    if !can_run() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("t");
    std::fs::create_dir_all(root.join("d.")).unwrap();
    std::fs::write(root.join("aux.txt"), b"12345").unwrap();
    for link in ["CON", "NUL"] {
        std::fs::hard_link(root.join("aux.txt"), root.join(link)).unwrap();
    }
    std::fs::write(root.join("x."), b"abc").unwrap();
    std::fs::write(root.join("y "), b"ab").unwrap();
    std::fs::write(root.join("d./in"), b"a").unwrap();
    let (lin, win) = (root.to_str().unwrap().to_string(), z(&root));
    // Files' sizes and link counts (which take a call for each entry, by path with
    // --sort; a directory's are what each system says of it).
    let template = ["-t", "f", "--format", "%n %s %p\\0"];
    for sort in [&["--sort"][..], &["-j", "2"]] {
        let args = [&["find"], sort, &template[..]].concat();
        let mut want = relative(&linux_ftw(&[&args[..], &[lin.as_str()]].concat()), "");
        let mut got = relative(&wine_ftw(&[&args[..], &[win.as_str()]].concat()), "");
        for v in [&mut want, &mut got] {
            v.sort();
        }
        let got: Vec<String> = got
            .iter()
            .map(|l| l.replace(&win.replace('\\', "/"), ""))
            .collect();
        let want: Vec<String> = want.iter().map(|l| l.replace(&lin, "")).collect();
        assert_eq!(got, want, "{sort:?}");
    }
    // Each of them as a root, absolute or relative to Z's current directory.
    let mut roots = Vec::new();
    let mut want = Vec::new();
    for (name, line) in [
        ("aux.txt", "3 5 f"),
        ("CON", "3 5 f"),
        ("x.", "1 3 f"),
        ("y ", "1 2 f"),
        ("d.", "d"),
    ] {
        for r in [format!(r"{win}\{name}"), format!(r"Z:{name}")] {
            want.push(format!("{line} {r}"));
            roots.push(r);
        }
    }
    let args = [
        "find",
        "-d",
        "0",
        "--min-depth",
        "0",
        "--format",
        "%n %s %y %p\\0",
    ];
    let roots: Vec<&str> = roots.iter().map(String::as_str).collect();
    let got = nul_lines(&wine_ftw_in(&root, &[&args[..], &roots].concat()));
    let mut got: Vec<String> = got
        .into_iter()
        .map(|l| match l.split_once(" d ") {
            Some((_, path)) => format!("d {path}"),
            None => l,
        })
        .collect();
    got.sort();
    want.sort();
    assert_eq!(got, want);
    // A file written as a directory (`aux.txt\`) is an error, as on Linux.
    let slash = format!(r"{win}\aux.txt\");
    let out = wine_ftw(&["find", &slash]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.starts_with(&format!("ftw: {slash}: ")), "{err}");
    let out = wine_ftw(&["du", "-b", "-s", &format!(r"{win}\aux.txt")]);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("5\t{win}\\aux.txt\n")
    );
}

/// Wine 8 opens a Unix symbolic link as what it leads to whatever the flags
/// (`FILE_OPEN_REPARSE_POINT`, `OBJ_DONT_REPARSE`), shows a link to a file as that file,
/// and its classic disposition removes what the handle names: `ftw rm` removed a
/// link's target outside the tree and listed the link as removed. Each link must be
/// reported and kept, with what it leads to; so must a name holding `\` (which the
/// system would take for a path to another entry); and below a root whose name ends
/// with a dot (which wine's names leave out: `r.` is `r`), a link to the same name in
/// the sibling `r` must not be taken for the entry.
#[test]
fn rm_under_wine_never_removes_what_a_unix_link_leads_to() {
    if !can_run() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (tree, outside) = (tmp.path().join("tree"), tmp.path().join("outside"));
    std::fs::create_dir_all(tree.join("back")).unwrap();
    std::fs::create_dir_all(tree.join("back\\slash")).unwrap();
    std::fs::create_dir_all(outside.join("dir")).unwrap();
    for f in [
        "outside/keep",
        "outside/dir/keep",
        "tree/back/slash",
        "tree/f",
    ] {
        std::fs::write(tmp.path().join(f), b"keep").unwrap();
    }
    std::os::unix::fs::symlink("../outside/keep", tree.join("file-link")).unwrap();
    std::os::unix::fs::symlink("../outside/keep", tree.join("keep")).unwrap();
    std::os::unix::fs::symlink("../outside/dir", tree.join("dir-link")).unwrap();
    // `r.` and its sibling `r`, outside the tree `r.`.
    let (dotted, sibling) = (tmp.path().join("r."), tmp.path().join("r"));
    std::fs::create_dir_all(&dotted).unwrap();
    std::fs::create_dir_all(&sibling).unwrap();
    std::fs::write(sibling.join("f"), b"keep").unwrap();
    std::os::unix::fs::symlink("../r/f", dotted.join("f")).unwrap();
    let out = wine_ftw(&["rm", "-v", &z(&tree), &z(&dotted)]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    for f in ["outside/keep", "outside/dir/keep", "r/f"] {
        assert_eq!(
            std::fs::read(tmp.path().join(f)).ok().as_deref(),
            Some(&b"keep"[..]),
            "{f}: {err}"
        );
    }
    // Each kept entry is named with its reason, and none is listed as removed.
    let removed = String::from_utf8_lossy(&out.stdout);
    for name in ["file-link", "keep", "dir-link", "back\\slash"] {
        let path = format!("{}/{name}", z(&tree));
        assert!(err.contains(&format!("ftw: {path}: ")), "{name}: {err}");
        assert!(!removed.lines().any(|l| l == path), "{name}: {removed}");
        assert!(tree.join(name).symlink_metadata().is_ok(), "{name}");
    }
    assert!(
        err.contains(&format!("ftw: {}/f: not removed", z(&dotted))),
        "{err}"
    );
    // What could be removed was: the file and the directory `back` (with `back/slash`).
    assert!(
        !tree.join("f").exists() && !tree.join("back").exists(),
        "{err}"
    );
}

/// Each file below `root` with its contents, and each directory, as `rel: contents`
/// (sorted), read on Linux.
fn contents(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut todo = vec![root.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let rel = e.path().strip_prefix(root).unwrap().display().to_string();
            if e.file_type().unwrap().is_dir() {
                out.push(format!("{rel}/"));
                todo.push(e.path());
            } else {
                let data = std::fs::read(e.path()).unwrap();
                out.push(format!("{rel}: {}", String::from_utf8_lossy(&data)));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn the_windows_build_copies_a_tree_and_splits_paths_at_backslashes() {
    if !can_run() {
        return;
    }
    let tmp = tree();
    let t = tmp.path().join("t");
    let want = contents(&t);
    // A new directory, named with a trailing backslash (a directory to make).
    let fresh = tmp.path().join("fresh");
    let out = wine_ftw(&["cp", "-a", &z(&t), &format!("{}\\", z(&fresh))]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(contents(&fresh), want, "cp -a T FRESH\\");
    // Into an existing directory, written with a trailing backslash: DEST\t.
    let into = tmp.path().join("into");
    std::fs::create_dir(&into).unwrap();
    let out = wine_ftw(&["cp", &z(&t), &format!("{}\\", z(&into))]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(contents(&into.join("t")), want, "cp T INTO\\");
    // A file by a relative path with backslashes, into -t DIR: DIR\name.
    let out = wine_ftw_in(&t, &["cp", "-v", "-t", &z(&into), "Grüße\\straße.txt"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read(into.join("straße.txt")).unwrap(),
        b"Gr\xc3\xbc\xc3\x9fe/stra\xc3\x9fe.txt"
    );
}
