//! `ftw find`'s filters against GNU find with the equivalent predicates, on a tree whose
//! sizes, times and modes the test sets; exclusions that never open what they exclude;
//! usage errors.
// Unix only: these tests build trees with Unix calls and compare with GNU tools;
// tests/windows.rs runs the Windows build under wine.
#![cfg(unix)]

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
    // A glob that starts with '/' is anchored at the PATH: '/src' is the root's own
    // 'src', '/sub*' the root's entries only (not src/sub), '/src/sub' one directory.
    let r = root.to_str().unwrap();
    for (glob, below) in [("/src", "src"), ("/sub*", "sub*"), ("/src/sub", "src/sub")] {
        let path = format!("{r}/{below}");
        same(
            &root,
            &["-E", glob],
            &["-path", &path, "-prune", "-o", "-print0"],
        );
        // The whole absolute path, as it always was.
        same(
            &root,
            &["-E", &path],
            &["-path", &path, "-prune", "-o", "-print0"],
        );
    }
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
        (&["-e", ""], "''"),
        (&["-e", ".."], "'..'"),
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
        "ftw: foo: No such file or directory (to match names: ftw find -F foo)\n"
    );
    // A path is only a path.
    let r = run(Command::new(ftw_bin()).args(["find", "/nonexistent/foo"]));
    assert_eq!(
        r.stderr,
        "ftw: /nonexistent/foo: No such file or directory\n"
    );
}

fn files_tree(root: &Path, n: usize, name_len: usize) -> Vec<Vec<u8>> {
    let mut want = Vec::new();
    for i in 0..n {
        let dir = root.join(format!("d{}", i % 7));
        std::fs::create_dir_all(&dir).unwrap();
        let name = format!("{i:0>width$}.txt", width = name_len);
        let path = dir.join(&name);
        std::fs::write(&path, b"").unwrap();
        want.push(path.into_os_string().into_encoded_bytes());
    }
    want.sort();
    want
}

#[test]
fn exec_runs_a_command_per_entry_with_its_output_together() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("t");
    let want = files_tree(&root, 300, 4);
    for threads in ["0", "4", "1"] {
        let mut c = Command::new(ftw_bin());
        c.args(["find", "-j", threads, "-t", "f", "-x", "sh", "-c"])
            .arg("printf 'A %s\\n' \"$1\"; printf 'B %s|%s|%s\\n' \"$2\" \"$3\" \"$4\"")
            .args(["sh", "{}", "{/}", "{//}", "{/.}", ";"])
            .arg(&root);
        let r = run(&mut c);
        assert_eq!((r.code, r.stderr.as_str()), (0, ""), "-j{threads}");
        let out = String::from_utf8(r.stdout).unwrap();
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 2 * want.len(), "-j{threads}");
        let mut seen = Vec::new();
        for pair in lines.chunks(2) {
            // Each command's two lines stay together.
            let path = pair[0].strip_prefix("A ").unwrap();
            let p = Path::new(path);
            let expect = format!(
                "B {}|{}|{}",
                p.file_name().unwrap().to_str().unwrap(),
                p.parent().unwrap().display(),
                p.file_stem().unwrap().to_str().unwrap()
            );
            assert_eq!(pair[1], expect, "-j{threads}");
            seen.push(path.as_bytes().to_vec());
        }
        seen.sort();
        assert_same("commands run", &seen, &want);
    }
    // With --sort, in that order (the PATH before -x, whose command takes the rest).
    let lines = |out: &[u8], end: u8| -> Vec<Vec<u8>> {
        out.split(|&b| b == end)
            .filter(|l| !l.is_empty())
            .map(<[u8]>::to_vec)
            .collect()
    };
    let mut c = Command::new(ftw_bin());
    c.args(["find", "--sort", "-t", "f"])
        .arg(&root)
        .args(["-x", "echo"]);
    let ran = run(&mut c);
    let mut c = Command::new(ftw_bin());
    c.args(["find", "-0", "--sort", "-t", "f"]).arg(&root);
    let listed = run(&mut c);
    assert_eq!(lines(&ran.stdout, b'\n'), lines(&listed.stdout, 0));
    assert_eq!(lines(&listed.stdout, 0).len(), want.len());
}

#[test]
fn exec_failures_make_the_exit_status() {
    let tmp = tempfile::tempdir().unwrap();
    files_tree(tmp.path(), 5, 1);
    let r = run(Command::new(ftw_bin())
        .args(["find", "-t", "f", "-x", "false"])
        .arg(tmp.path()));
    assert_eq!((r.code, r.stderr.as_str()), (1, ""));
    let r = run(Command::new(ftw_bin())
        .args(["find", "-t", "f", "-X", "true"])
        .arg(tmp.path()));
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
    let r = run(Command::new(ftw_bin())
        .args(["find", "-t", "f", "-x", "/nonexistent/ftw-cmd"])
        .arg(tmp.path()));
    assert_eq!(r.code, 1);
    assert_eq!(
        r.stderr,
        "ftw: /nonexistent/ftw-cmd: No such file or directory\n"
    );
}

#[test]
fn exec_batch_splits_at_the_argument_limit() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("t");
    // 3,000 paths of some 120 bytes: more than one argument list holds under a 256 KiB
    // stack limit (a quarter of it, at least 128 KiB).
    let want = files_tree(&root, 3000, 80);
    let mut c = Command::new("sh");
    c.arg("-c")
        .arg("ulimit -s 256 && exec \"$0\" find -t f -X sh -c 'printf \"%s\\0\" \"$@\"; echo batch >&2' sh {} \\; \"$1\"")
        .arg(ftw_bin())
        .arg(&root);
    let r = run(&mut c);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let batches = r.stderr.lines().filter(|l| *l == "batch").count();
    assert!(batches >= 2, "{batches} batch(es)");
    assert!(batches <= 4, "{batches} batches: too many");
    assert_same("paths given to -X", &records(&r.stdout), &want);
}

#[test]
fn format_writes_what_find_printf_writes() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("t");
    filter_tree(&root, SystemTime::now());
    // Every time part find knows, of each of the three times; widths, flags and
    // precisions as C's printf lays out a string.
    let parts: String = "@+aAbBcCdDeFgGhHIjklmMnpPrRsStTuUVwWxXyYzZ%"
        .chars()
        .flat_map(|k| ['%', 'T', k, '|', '%', 'A', k, '|', '%', 'C', k, '|'])
        .collect();
    let with_parts = format!("%p|{parts}\\0");
    // Reading a directory may set its access time once (relatime): read them all first,
    // so that both tools see the same.
    run(Command::new("find").arg(&root).arg("-ls"));
    let templates = [
        "%p|%f|%h|%d|%y|%s|%m|%M|%n|%u|%g|%U|%G|%t|%T@|%l\\0",
        "%P|%i|%k|%10s|%-10f|%.3p|%5d|%-3y|%#m|%+4n|%010s|%.0f|%-4P.\\0",
        // %d and %m are integers to find: zeros, signs, precision as digits.
        "%05d|%.3d|%+d|% d|%.0d|%-+4d|%05m|%.0m|%010.2m|%#5m|%+m\\0",
        // '0' is the start of a width, after the flags '-', '+', ' ', '#'.
        // A template that starts with '-' is the value of --format, as of -printf.
        "-%p|-%f\\0",
        "%-05d|%+05d|% 05d|%#05m|%-#06m|%+ 05d|%- 5d|%00005d|%-05s|%#05d\\0",
        &with_parts,
    ];
    for (template, threads, follow) in templates.iter().flat_map(|t| {
        [("1", false), ("0", false), ("1", true), ("0", true)].map(|(j, f)| (*t, j, f))
    }) {
        let mut c = Command::new(ftw_bin());
        c.args(["find", "-j", threads, "--format", template])
            .args(follow.then_some("-L"))
            .arg(&root);
        let r = run(&mut c);
        assert_eq!((r.code, r.stderr.as_str()), (0, ""));
        let mut f = Command::new("find");
        f.args(follow.then_some("-L"))
            .arg(&root)
            .args(["-mindepth", "1", "-printf", template]);
        let want = run(&mut f);
        assert_same(
            &format!("--format {template} -j{threads} -L{follow} against find -printf"),
            &records(&r.stdout),
            &records(&want.stdout),
        );
    }
    // A root (--min-depth 0) as find writes it, whatever its slashes.
    let cwd = tmp.path();
    std::fs::create_dir_all(cwd.join("q/b")).unwrap();
    let absolute = root.to_str().unwrap();
    for r in [
        absolute, "q/b/", "q/b", "q/b//", "/", "//", "/tmp", "/tmp/", "//tmp", "./q", "./q/", "q",
        "q/", "q//",
    ] {
        let template = "[%p][%f][%h][%P][%d]\\n";
        let want = run(Command::new("find").current_dir(cwd).args([
            r,
            "-maxdepth",
            "0",
            "-printf",
            template,
        ]));
        let got = run(Command::new(ftw_bin()).current_dir(cwd).args([
            "find",
            "--min-depth",
            "0",
            "-d",
            "0",
            "--format",
            template,
            r,
        ]));
        assert_eq!(got.stdout, want.stdout, "root {r}");
    }
}

#[test]
fn a_root_given_as_a_link_is_shown_and_filtered_as_find_dash_h_takes_it() {
    // A link given as a root leads to what it names (find -H), unless it dangles: the
    // size filter and --format agree on it, with every thread count.
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    std::fs::write(t.join("big"), vec![0u8; 5000]).unwrap();
    std::fs::create_dir(t.join("dir")).unwrap();
    std::os::unix::fs::symlink("big", t.join("to-file")).unwrap();
    std::os::unix::fs::symlink("dir", t.join("to-dir")).unwrap();
    std::os::unix::fs::symlink("nowhere", t.join("dangling")).unwrap();
    let roots: Vec<_> = ["to-file", "to-dir", "dangling"]
        .iter()
        .map(|n| t.join(n))
        .collect();
    for (ours, theirs) in [
        (
            vec!["--format", "%p %y %s\\n"],
            vec!["-printf", "%p %y %s\\n"],
        ),
        // -S selects regular files only.
        (
            vec!["-S", "+1k"],
            vec!["-type", "f", "-size", "+1k", "-print0"],
        ),
        (
            vec!["-S", "-9k"],
            vec!["-type", "f", "-size", "-9k", "-print0"],
        ),
        (vec!["-t", "l"], vec!["-type", "l", "-print0"]),
    ] {
        let mut f = Command::new("find");
        f.arg("-H")
            .args(&roots)
            .args(["-maxdepth", "0"])
            .args(&theirs);
        let want = run(&mut f);
        assert_eq!(want.code, 0, "{}", want.stderr);
        for j in ["1", "0"] {
            let mut c = Command::new(ftw_bin());
            c.args(["find", "-0", "--min-depth", "0", "-d", "0", "-j", j])
                .args(&ours)
                .args(&roots);
            let r = run(&mut c);
            assert_eq!((r.code, r.stderr.as_str()), (0, ""), "{ours:?}");
            let (mut a, mut b) = (records(&r.stdout), records(&want.stdout));
            if ours[0] == "--format" {
                (a, b) = (lines(&r.stdout), lines(&want.stdout));
            }
            assert_same(&format!("ftw find {ours:?} -j {j}"), &a, &b);
        }
    }
}

/// Sorted lines.
fn lines(out: &[u8]) -> Vec<Vec<u8>> {
    let mut v: Vec<Vec<u8>> = out
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(<[u8]>::to_vec)
        .collect();
    v.sort();
    v
}

#[test]
fn long_lines_of_devices_show_their_numbers_as_ls_does() {
    use std::os::unix::fs::FileTypeExt;
    let devices: Vec<&str> = ["/dev/null", "/dev/zero", "/dev/loop0"]
        .into_iter()
        .filter(|d| {
            std::fs::symlink_metadata(d)
                .is_ok_and(|m| m.file_type().is_char_device() || m.file_type().is_block_device())
        })
        .collect();
    if devices.is_empty() {
        eprintln!("skipped: no device file in /dev");
        return;
    }
    let squeeze = |s: &[u8]| {
        String::from_utf8_lossy(s)
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    for dev in devices {
        let r =
            run(Command::new(ftw_bin()).args(["find", "-l", "--min-depth", "0", "-d", "0", dev]));
        assert_eq!((r.code, r.stderr.as_str()), (0, ""));
        let ls = Command::new("ls")
            .env("LC_ALL", "C")
            .args(["-ld", dev])
            .output()
            .unwrap();
        let want = squeeze(&ls.stdout);
        // ls writes "major, minor" where a file's size goes.
        assert!(want.contains(", "), "{want}");
        assert_eq!(squeeze(&r.stdout), want);
    }
}

#[test]
fn long_lines_are_what_ls_writes() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("t");
    filter_tree(&root, SystemTime::now());
    // An old file: ls writes its year instead of its time.
    let old = root.join("docs/old");
    std::fs::File::create(&old)
        .unwrap()
        .set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000_000))
        .unwrap();
    let mut c = Command::new(ftw_bin());
    c.args(["find", "-l", "-E", "new*", "-E", "bad*"])
        .arg(&root);
    let r = run(&mut c);
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
    let squeeze = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let out = String::from_utf8(r.stdout).unwrap();
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines.len() > 20);
    for line in lines {
        let path = line
            .split(" -> ")
            .next()
            .unwrap()
            .rsplit(' ')
            .next()
            .unwrap();
        let ls = Command::new("ls")
            .env("LC_ALL", "C")
            .args(["-ld", path])
            .output()
            .unwrap();
        let want = String::from_utf8(ls.stdout).unwrap();
        assert_eq!(squeeze(line), squeeze(&want), "{path}");
    }
}
