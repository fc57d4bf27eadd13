//! `ftw find`'s filters against GNU find with the equivalent predicates, on a tree whose
//! sizes, times and modes the test sets; exclusions that never open what they exclude;
//! usage errors.

mod common;

use common::*;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, SystemTime};

const DAY: u64 = 86_400;

/// A tree for the filters: extensions in both cases, sizes, times, modes, every type,
/// odd names, and directories named like files.
fn filter_tree(root: &Path, now: SystemTime) {
    let dirs = [
        "src/sub",
        "src/sub/deeper",
        "build/obj",
        "docs",
        "empty-dir",
        "sub.c",
        "new\nline",
        "bad-\u{e9}",
    ];
    for d in dirs {
        std::fs::create_dir_all(root.join(d)).unwrap();
    }
    let files: &[(&str, u64, u64, u32)] = &[
        // name, size, age in days, mode
        ("src/main.rs", 1200, 1, 0o644),
        ("src/LIB.RS", 5000, 3, 0o644),
        ("src/sub/a.c", 4096, 5, 0o644),
        ("src/sub/a.h", 4095, 8, 0o644),
        ("src/sub/deeper/foo-bar.txt", 0, 30, 0o644),
        ("build/obj/x.o", 100_000, 2, 0o644),
        ("build/obj/run", 7, 2, 0o755),
        ("build/tool.sh", 12, 400, 0o700),
        ("docs/README.TXT", 101, 9, 0o644),
        ("docs/notes.txt", 100, 11, 0o444),
        ("docs/a.b", 1, 1, 0o644),
        ("docs/axb", 1, 1, 0o644),
        ("new\nline/x.rs", 3, 1, 0o644),
        ("bad-\u{e9}/Foo.c", 50, 50, 0o644),
        ("empty", 0, 1, 0o644),
        ("archive.tar.gz", 2048, 4, 0o644),
    ];
    for &(name, size, age, mode) in files {
        let path = root.join(name);
        let f = std::fs::File::create(&path).unwrap();
        f.set_len(size).unwrap();
        // Ages a few hours off whole days, so that no bound falls on a file's time.
        f.set_modified(now - Duration::from_secs(age * DAY + 3 * 3600))
            .unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
    }
    symlink("src/main.rs", root.join("link.rs")).unwrap();
    symlink("src", root.join("link-dir")).unwrap();
    symlink("nowhere", root.join("dangling")).unwrap();
    let fifo = Command::new("mkfifo")
        .arg(root.join("pipe"))
        .status()
        .unwrap();
    assert!(fifo.success());
    let _ = std::os::unix::net::UnixListener::bind(root.join("sock")).unwrap();
}

/// `ftw find -0 ARGS ROOT` against `find ROOT -mindepth 1 PREDICATES`, as sorted sets,
/// serially and in parallel.
fn same(root: &Path, ftw_args: &[&str], find_predicates: &[&str]) {
    let mut find = Command::new("find");
    find.arg(root)
        .arg("-mindepth")
        .arg("1")
        .args(find_predicates);
    if !find_predicates.iter().any(|p| p.starts_with("-print")) {
        find.arg("-print0");
    }
    let want = run(&mut find);
    assert_eq!(want.code, 0, "find {find_predicates:?}: {}", want.stderr);
    let want = records(&want.stdout);
    assert!(
        !want.is_empty() || ftw_args.contains(&"--expect-none"),
        "{ftw_args:?}: find lists nothing: a useless comparison"
    );
    for threads in ["1", "0", "4"] {
        let mut cmd = Command::new(ftw_bin());
        cmd.args(["find", "-0", "-j", threads])
            .args(ftw_args)
            .arg(root);
        let r = run(&mut cmd);
        assert_eq!((r.code, r.stderr.as_str()), (0, ""), "{ftw_args:?}");
        assert_same(
            &format!("ftw find {ftw_args:?} -j{threads} against find {find_predicates:?}"),
            &records(&r.stdout),
            &want,
        );
    }
}

#[test]
fn each_filter_lists_what_find_lists() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("t");
    let now = SystemTime::now();
    filter_tree(&root, now);
    let at = |days: u64| {
        let t = now - Duration::from_secs(days * DAY);
        format!(
            "@{}",
            t.duration_since(SystemTime::UNIX_EPOCH).unwrap().as_secs()
        )
    };

    same(&root, &["-t", "f"], &["-type", "f"]);
    same(&root, &["-t", "d"], &["-type", "d"]);
    same(&root, &["-t", "l"], &["-type", "l"]);
    same(
        &root,
        &["-t", "p", "-t", "s"],
        &["(", "-type", "p", "-o", "-type", "s", ")"],
    );
    same(&root, &["-t", "x"], &["-type", "f", "-perm", "/111"]);
    same(&root, &["-t", "e"], &["-empty"]);
    same(&root, &["-t", "e", "-t", "d"], &["-type", "d", "-empty"]);
    same(
        &root,
        &["-t", "f", "-e", "rs"],
        &["-type", "f", "-iname", "*.rs"],
    );
    same(&root, &["-e", "rs"], &["-iname", "*.rs"]);
    same(
        &root,
        &["-e", "tar.gz", "-e", "o"],
        &["(", "-iname", "*.tar.gz", "-o", "-iname", "*.o", ")"],
    );
    // Sizes: regular files only; +N at least, -N at most, N exactly.
    same(&root, &["-S", "+4ki"], &["-type", "f", "-size", "+4095c"]);
    same(&root, &["-S", "-100"], &["-type", "f", "-size", "-101c"]);
    same(&root, &["-S", "4096"], &["-type", "f", "-size", "4096c"]);
    same(
        &root,
        &["-S", "+1k", "-S", "-5k"],
        &["-type", "f", "-size", "+999c", "-size", "-5001c"],
    );
    // Times: within a duration, before a duration ago, before and since a date.
    same(
        &root,
        &["--changed-within", "2d", "-t", "f"],
        &["-type", "f", "-newermt", &at(2)],
    );
    same(
        &root,
        &["--changed-before", "10d"],
        &["!", "-newermt", &at(10)],
    );
    same(
        &root,
        &["--changed-before", &at(7), "--changed-within", &at(31)],
        &["!", "-newermt", &at(7), "-newermt", &at(31)],
    );
    // Patterns: smart case, globs, regexes, fixed strings, several at once.
    same(&root, &["-g", "*.txt"], &["-iname", "*.txt"]);
    same(&root, &["-g", "*.TXT"], &["-name", "*.TXT"]);
    same(&root, &["-s", "-g", "*.txt"], &["-name", "*.txt"]);
    same(&root, &["-i", "-g", "*.TXT"], &["-iname", "*.TXT"]);
    same(&root, &["-n", "^a\\."], &["-iname", "a.*"]);
    same(
        &root,
        &["-n", "foo", "-F", "a.b"],
        &["(", "-iname", "*foo*", "-o", "-iname", "*a.b*", ")"],
    );
    same(&root, &["-n", "\\n"], &["-name", "*\n*"]);
    same(
        &root,
        &["-p", "-g", "**/src/*.rs"],
        &["-ipath", "*/src/*.rs", "!", "-ipath", "*/src/*/*"],
    );
    same(
        &root,
        &["-g", "*.c", "-t", "d"],
        &["-type", "d", "-iname", "*.c"],
    );
    // Depth, pruning, exclusion.
    same(
        &root,
        &["--exact-depth", "2"],
        &["-mindepth", "2", "-maxdepth", "2"],
    );
    same(
        &root,
        &["--prune", "-g", "sub*"],
        &["-iname", "sub*", "-prune", "-print0"],
    );
    same(
        &root,
        &["-E", "*.o", "-E", "build"],
        &[
            "(", "-name", "*.o", "-o", "-name", "build", ")", "-prune", "-o", "-print0",
        ],
    );
    same(
        &root,
        &["-E", "src/sub", "-t", "f"],
        &[
            "-path",
            "*/src/sub",
            "-prune",
            "-o",
            "-type",
            "f",
            "-print0",
        ],
    );
}

#[test]
fn an_excluded_directory_is_never_opened() {
    let place = Unprivileged::new("ftw-exclude");
    let (root, bin) = (&place.root, &place.bin);
    std::fs::create_dir_all(root.join("locked/inner")).unwrap();
    std::fs::create_dir_all(root.join("open")).unwrap();
    std::fs::write(root.join("open/f"), b"").unwrap();
    set_mode(&root.join("open"), 0o755);
    set_mode(&root.join("locked"), 0o000);
    let mut c = as_user(bin);
    c.args(["find", "-0"]).arg(root);
    let r = run(&mut c);
    if Unprivileged::cannot_switch(&r) {
        eprintln!("skipped: cannot run as an unprivileged user: {}", r.stderr);
        return;
    }
    assert_eq!(r.code, 1, "without -E the locked directory is an error");
    assert!(r.stderr.contains("Permission denied"), "{}", r.stderr);
    for glob in ["locked", "lock*", "tree/locked"] {
        let mut c = as_user(bin);
        c.args(["find", "-0", "-E", glob]).arg(root);
        let r = run(&mut c);
        assert_eq!((r.code, r.stderr.as_str()), (0, ""), "-E {glob}");
        let got = records(&r.stdout);
        assert_eq!(got.len(), 2, "-E {glob}: {}", show(&got));
    }
}

#[test]
fn bad_values_are_usage_errors_that_show_them() {
    let tmp = tempfile::tempdir().unwrap();
    for (args, shown) in [
        (&["-n", "a(b"][..], "a(b"),
        (&["-g", "[ab"], "[ab"),
        (&["-E", "{a,b"], "{a,b"),
        (&["-S", "10Q"], "10Q"),
        (&["-S", "+"], "'+'"),
        (&["-t", "q"], "'q'"),
        (&["--changed-within", "3 fortnights"], "3 fortnights"),
        (&["--changed-before", "2024-13-45"], "2024-13-45"),
    ] {
        let mut c = Command::new(ftw_bin());
        c.arg("find").args(args).arg(tmp.path());
        let r = run(&mut c);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert!(r.stderr.contains(shown), "{args:?}: {}", r.stderr);
        assert!(r.stdout.is_empty());
    }
}

#[test]
fn a_missing_root_that_looks_like_a_pattern_says_how_to_match_names() {
    let tmp = tempfile::tempdir().unwrap();
    let mut c = Command::new(ftw_bin());
    c.current_dir(tmp.path()).args(["find", "foo"]);
    let r = run(&mut c);
    assert_eq!(r.code, 1);
    assert_eq!(
        r.stderr,
        "ftw: foo: No such file or directory (to match names: ftw find -n foo)\n"
    );
    // A path is only a path.
    let r = run(Command::new(ftw_bin()).args(["find", "/nonexistent/foo"]));
    assert_eq!(
        r.stderr,
        "ftw: /nonexistent/foo: No such file or directory\n"
    );
}
