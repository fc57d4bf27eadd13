//! ftw at the terminal: names escaped on a terminal (under a pseudo-terminal made by
//! `script`) and byte-exact through a pipe, paths escaped in messages, standard output
//! closed or failing, forgiving parsing (empty paths, repeated flags, find's
//! spellings, negative numbers), colours from LS_COLORS, completions and the man page.
// Unix only: pseudo-terminals, file descriptors and GNU tools.
#![cfg(unix)]

mod common;

use common::{ftw_bin, run};
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::Path;
use std::process::{Command, Stdio};

/// Whether `program` is on PATH.
fn have(program: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// `s` quoted for sh.
fn sh(s: &[u8]) -> String {
    format!("'{}'", String::from_utf8_lossy(s).replace('\'', r"'\''"))
}

/// Runs `command` (a shell command line) with its standard output on a pseudo-terminal
/// (`script` from util-linux); what the terminal received, or `None` (said) without
/// `script`.
fn on_terminal(command: &str, env: &[(&str, &str)]) -> Option<(Vec<u8>, i32)> {
    if !have("script") {
        eprintln!("skipped: 'script' (util-linux) is not installed");
        return None;
    }
    let mut c = Command::new("script");
    c.args(["-qec", command, "/dev/null"])
        .stdin(Stdio::null())
        .env_remove("NO_COLOR")
        .env_remove("LS_COLORS");
    for (k, v) in env {
        c.env(k, v);
    }
    let r = run(&mut c);
    // The terminal turns each "\n" into "\r\n".
    let out = r
        .stdout
        .windows(2)
        .filter(|w| w != b"\r\n")
        .map(|w| w[0])
        .chain(r.stdout.last().copied())
        .collect();
    Some((out, r.code))
}

/// A hostile name: an escape sequence, a newline and a byte that is not UTF-8.
const HOSTILE: &[u8] = b"evil\x1b[31mRED\nline\xffend";
/// How it is shown on a terminal.
const SHOWN: &[u8] = b"evil\\x1b[31mRED\\nline\\xffend";

fn hostile_tree(root: &Path) {
    fs::create_dir_all(root).unwrap();
    fs::write(root.join(std::ffi::OsStr::from_bytes(HOSTILE)), b"x").unwrap();
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

#[test]
fn names_on_a_terminal_are_escaped_and_piped_they_are_exact() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path().join("t");
    hostile_tree(&t);
    let bin = ftw_bin();
    let tb = t.as_os_str().as_bytes();

    // Piped: the bytes as they are.
    let piped = run(Command::new(&bin).args(["find", "--sort"]).arg(&t));
    let mut expected = tb.to_vec();
    expected.push(b'/');
    expected.extend_from_slice(HOSTILE);
    expected.push(b'\n');
    assert_eq!(piped.stdout, expected);

    // On a terminal, with and without colours: escaped, never raw.
    for (flags, env) in [
        ("--color never", vec![]),
        ("", vec![("NO_COLOR", "1")]),
        ("--color always", vec![]),
    ] {
        let cmd = format!(
            "{} find --sort {flags} {}",
            sh(bin.as_os_str().as_bytes()),
            sh(tb)
        );
        let Some((out, code)) = on_terminal(&cmd, &env) else {
            return;
        };
        assert_eq!(code, 0);
        assert!(
            contains(&out, SHOWN),
            "{flags}: {}",
            String::from_utf8_lossy(&out)
        );
        assert!(!contains(&out, b"\x1b[31m"), "no raw escape sequence");
        assert!(!out.contains(&0xff), "no raw byte that is not UTF-8");
        if flags.is_empty() || flags.contains("never") {
            assert!(
                !out.contains(&0x1b),
                "no colour: {}",
                String::from_utf8_lossy(&out)
            );
        }
    }

    // The same for rm's and du's paths, and -l, --format.
    for args in ["rm -n", "du -a", "find -l", "find --format %f\\n"] {
        let words: Vec<String> = args.split(' ').map(|a| sh(a.as_bytes())).collect();
        let cmd = format!(
            "{} {} {}",
            sh(bin.as_os_str().as_bytes()),
            words.join(" "),
            sh(tb)
        );
        let Some((out, _)) = on_terminal(&cmd, &[("NO_COLOR", "1")]) else {
            return;
        };
        assert!(
            contains(&out, SHOWN),
            "{args}: {}",
            String::from_utf8_lossy(&out)
        );
        assert!(!out.contains(&0x1b) && !out.contains(&0xff), "{args}");
        // Piped: exact.
        let mut c = Command::new(&bin);
        c.args(args.split(' ')).arg(&t);
        let piped = run(&mut c);
        assert!(contains(&piped.stdout, HOSTILE), "{args} piped");
    }
}

#[test]
fn paths_in_messages_are_escaped_one_line_each() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join(std::ffi::OsStr::from_bytes(HOSTILE));
    for cmd in ["find", "du", "rm"] {
        let r = run(Command::new(ftw_bin()).arg(cmd).arg(&missing));
        assert_eq!(r.code, 1, "{cmd}: {}", r.stderr);
        let first = r.stderr.lines().next().unwrap_or_default();
        assert!(
            first.ends_with("evil\\x1b[31mRED\\nline\\xffend: No such file or directory"),
            "{cmd}: {}",
            r.stderr
        );
        assert!(!r.stderr.contains('\x1b'), "{cmd}: no raw escape");
    }
}

#[test]
fn an_empty_path_is_an_error_for_that_path_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().join("dir");
    fs::create_dir(&d).unwrap();
    fs::write(d.join("f"), b"x").unwrap();

    let r = run(Command::new(ftw_bin()).args(["find", ""]).arg(&d));
    assert_eq!(r.code, 1);
    assert_eq!(r.stderr, "ftw: '': No such file or directory\n");
    assert_eq!(
        r.stdout,
        [d.join("f").as_os_str().as_bytes(), b"\n"].concat()
    );

    let r = run(Command::new(ftw_bin()).args(["du", "-s", ""]).arg(&d));
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.starts_with("ftw: '': No such file or directory\n"),
        "{}",
        r.stderr
    );
    assert!(
        contains(&r.stdout, d.as_os_str().as_bytes()),
        "du counts dir"
    );

    let r = run(Command::new(ftw_bin()).args(["rm", ""]).arg(&d));
    assert_eq!(r.code, 1);
    assert_eq!(r.stderr, "ftw: '': No such file or directory\n");
    assert!(!d.exists(), "rm removes dir");
}

#[test]
fn a_closed_or_failing_standard_output_is_reported() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path().join("t");
    fs::create_dir(&t).unwrap();
    for i in 0..5000 {
        fs::write(t.join(format!("file-with-a-longish-name-{i:05}")), b"").unwrap();
    }
    let bin = sh(ftw_bin().as_os_str().as_bytes());
    let tq = sh(t.as_os_str().as_bytes());
    for args in ["find", "find -j1", "find --sort", "du -a", "rm -n"] {
        // Closed.
        let r = run(Command::new("sh").args(["-c", &format!("exec {bin} {args} {tq} >&-")]));
        assert_eq!(r.code, 1, "{args} >&-: {}", r.stderr);
        assert_eq!(
            r.stderr, "ftw: standard output: Bad file descriptor\n",
            "{args} >&-"
        );
        // Full.
        let full = fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let r = run(Command::new(ftw_bin())
            .args(args.split(' '))
            .arg(&t)
            .stdout(full));
        assert_eq!(r.code, 1, "{args} >/dev/full");
        assert_eq!(
            r.stderr, "ftw: standard output: No space left on device\n",
            "{args} >/dev/full"
        );
        // A reader gone away: quiet, 0.
        let mut child = Command::new(ftw_bin())
            .args(args.split(' '))
            .arg(&t)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{args} | (closed)");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            "",
            "{args} | (closed)"
        );
    }
    // rm -v with standard output closed still removes the tree, and says so with 1.
    let r = run(Command::new("sh").args(["-c", &format!("exec {bin} rm -v {tq} >&-")]));
    assert_eq!(r.code, 1);
    assert_eq!(r.stderr, "ftw: standard output: Bad file descriptor\n");
    assert!(!t.exists());
    // Nothing to write: a closed standard output is no error.
    let empty = tmp.path().join("empty");
    fs::create_dir(&empty).unwrap();
    let eq = sh(empty.as_os_str().as_bytes());
    let r = run(Command::new("sh").args(["-c", &format!("exec {bin} find {eq} >&-")]));
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
}

/// A tree: a, a/b, a/b/c, and file.rs, notes.txt at the top.
fn small_tree(t: &Path) {
    fs::create_dir_all(t.join("a/b/c")).unwrap();
    fs::write(t.join("file.rs"), b"").unwrap();
    fs::write(t.join("notes.txt"), b"").unwrap();
}

fn listing(args: &[&str], t: &Path) -> (Vec<u8>, i32) {
    let r = run(Command::new(ftw_bin()).args(args).arg(t));
    assert_eq!(r.stderr, "", "{args:?}");
    (r.stdout, r.code)
}

#[test]
fn a_repeated_flag_takes_its_last_value() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    small_tree(t);
    let two = listing(&["find", "--sort", "-d", "2"], t);
    assert_eq!(listing(&["find", "--sort", "-d", "1", "-d", "2"], t), two);
    assert_eq!(
        listing(&["find", "--sort", "--max-depth=3", "-d", "2"], t),
        two
    );
    let all = listing(&["find", "--sort"], t);
    assert_eq!(listing(&["find", "--sort", "-LL", "-s", "-s"], t), all);
    assert_eq!(listing(&["find", "--sort", "-L", "-L", "-0", "-0"], t).1, 0);
    // Options given several times to mean several values still add up.
    let (both, _) = listing(&["find", "--sort", "-e", "rs", "-e", "txt"], t);
    assert_eq!(
        String::from_utf8_lossy(&both).lines().count(),
        2,
        "{}",
        String::from_utf8_lossy(&both)
    );
    // du and rm too.
    let s = listing(&["du", "-s"], t);
    assert_eq!(listing(&["du", "-s", "-s"], t), s);
    assert_eq!(
        listing(&["du", "-d", "0", "-d", "1"], t),
        listing(&["du", "-d", "1"], t)
    );
    let r = run(Command::new(ftw_bin())
        .args(["rm", "-v", "-v", "-f", "-f"])
        .arg(t.join("a")));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(String::from_utf8_lossy(&r.stdout).lines().count(), 3);
}

#[test]
fn find_spellings_get_ftw_equivalents() {
    let cases: &[(&[&str], &str)] = &[
        (&["-maxdepth", "1"], "did you mean --max-depth 1?"),
        (&["-mindepth", "2"], "did you mean --min-depth 2?"),
        (&["-name", "*.rs"], "did you mean -g '*.rs'?"),
        (&["-iname", "x"], "did you mean -i -g x?"),
        (&["-type", "f"], "did you mean -t f?"),
        (&["-print0"], "did you mean -0?"),
        (&["-xdev"], "did you mean --one-file-system?"),
        (
            &["-path", "*/src/*.c"],
            "did you mean -p -g '**/src/**/*.c'?",
        ),
        (&["-regex", ".*\\.c"], "did you mean -p -n '^.*\\.c$'?"),
        (&["-size", "+10k"], "did you mean -S +10ki?"),
        (&["-mtime", "-2"], "did you mean --changed-within 2d?"),
        (
            &["-exec", "wc", "-c", "{}", ";"],
            "did you mean -x wc -c '{}' ';'?",
        ),
        (&["-exec", "wc", "{}", "+"], "did you mean -X wc '{}'?"),
        (&["-delete"], "did you mean -X rm --"),
        (&["-print"], "leave it out: ftw find prints each path"),
    ];
    for (args, hint) in cases {
        let r = run(Command::new(ftw_bin()).args(["find", "."]).args(*args));
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert!(r.stdout.is_empty(), "{args:?}: nothing listed");
        assert!(
            r.stderr
                .starts_with(&format!("ftw find: '{}' is find's spelling: ", args[0])),
            "{args:?}: {}",
            r.stderr
        );
        assert!(r.stderr.contains(hint), "{args:?}: {}", r.stderr);
    }
    let r = run(Command::new(ftw_bin()).args(["du", "-maxdepth", "1"]));
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("did you mean --max-depth 1?"),
        "{}",
        r.stderr
    );
    // Inside -x's command, after '--': not looked at.
    let tmp = tempfile::tempdir().unwrap();
    fs::write(tmp.path().join("f"), b"").unwrap();
    let r = run(Command::new(ftw_bin())
        .args(["find", "-x", "echo", "-name", ";"])
        .arg(tmp.path()));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(String::from_utf8_lossy(&r.stdout).starts_with("-name "));
    let r = run(Command::new(ftw_bin())
        .current_dir(tmp.path())
        .args(["find", "--", "-name"]));
    assert_eq!(r.code, 1, "-name is a path after --");
    assert!(
        r.stderr
            .starts_with("ftw: -name: No such file or directory"),
        "{}",
        r.stderr
    );
}

/// Every word of GNU find's expression language (findutils 4.9's manual: operators,
/// positional and normal options, tests, actions), each with an operand where it takes
/// one. Written out here, apart from ftw's own list, so a word ftw forgets fails.
const FIND_LANGUAGE: &[&[&str]] = &[
    &["!", "-name", "x"],
    &["(", "-name", "x", ")"],
    &[")"],
    &[","],
    &["-not", "-name", "x"],
    &["-a"],
    &["-and"],
    &["-o"],
    &["-or"],
    &["-daystart"],
    &["-follow"],
    &["-nowarn"],
    &["-warn"],
    &["-regextype", "posix-extended"],
    &["-depth"],
    &["-files0-from", "list"],
    &["-maxdepth", "1"],
    &["-mindepth", "1"],
    &["-mount"],
    &["-noleaf"],
    &["-xdev"],
    &["-ignore_readdir_race"],
    &["-noignore_readdir_race"],
    &["-help"],
    &["-version"],
    &["-amin", "1"],
    &["-anewer", "stamp"],
    &["-atime", "1"],
    &["-cmin", "1"],
    &["-cnewer", "stamp"],
    &["-context", "x"],
    &["-ctime", "1"],
    &["-empty"],
    &["-executable"],
    &["-false"],
    &["-fstype", "ext4"],
    &["-gid", "0"],
    &["-group", "root"],
    &["-ilname", "x"],
    &["-iname", "x"],
    &["-inum", "1"],
    &["-ipath", "x"],
    &["-iregex", "x"],
    &["-iwholename", "x"],
    &["-links", "1"],
    &["-lname", "x"],
    &["-mmin", "1"],
    &["-mtime", "1"],
    &["-name", "x"],
    &["-newer", "stamp"],
    &["-neweraa", "stamp"],
    &["-newerBt", "2024-01-01"],
    &["-newerct", "2024-01-01"],
    &["-newermt", "2024-01-01"],
    &["-newermm", "stamp"],
    &["-nogroup"],
    &["-nouser"],
    &["-path", "x"],
    &["-perm", "-644"],
    &["-readable"],
    &["-regex", "x"],
    &["-samefile", "stamp"],
    &["-size", "1"],
    &["-true"],
    &["-type", "f"],
    &["-uid", "0"],
    &["-used", "1"],
    &["-user", "root"],
    &["-wholename", "x"],
    &["-writable"],
    &["-xtype", "l"],
    &["-delete"],
    &["-exec", "type", "{}", ";"],
    &["-execdir", "type", "{}", "+"],
    &["-fls", "out"],
    &["-fprint", "out"],
    &["-fprint0", "out"],
    &["-fprintf", "out", "%p"],
    &["-ls"],
    &["-ok", "type", "{}", ";"],
    &["-okdir", "type", "{}", ";"],
    &["-print"],
    &["-print0"],
    &["-printf", "%p"],
    &["-prune"],
    &["-quit"],
];

#[test]
fn every_word_of_finds_language_is_refused() {
    // A tree where a misread word would show: files that a misread pattern would list,
    // paths named like find's words and operands, and on PATH a program 'type' that
    // leaves a mark when run (`-xtype` was once `-x type`).
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let tree = t.join("tree");
    fs::create_dir(&tree).unwrap();
    for name in ["x", "stamp", "ewer", "ot", "type", "list", "root"] {
        fs::write(tree.join(name), b"").unwrap();
    }
    let bin = t.join("bin");
    fs::create_dir(&bin).unwrap();
    let mark = t.join("ran");
    let program = bin.join("type");
    fs::write(
        &program,
        format!("#!/bin/sh\ntouch {}\n", sh(mark.as_os_str().as_bytes())),
    )
    .unwrap();
    fs::set_permissions(&program, fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    for words in FIND_LANGUAGE {
        // After the path, as find writes them, and before it.
        for (before, after) in [(&["."][..], *words), (*words, &["."][..])] {
            let r = run(Command::new(ftw_bin())
                .current_dir(&tree)
                .env("PATH", &path)
                .arg("find")
                .args(before)
                .args(after));
            let said = format!("{before:?} {after:?}: {}", r.stderr);
            assert_eq!(r.code, 2, "{said}");
            assert!(r.stdout.is_empty(), "{said}: nothing listed");
            assert!(
                r.stderr
                    .starts_with(&format!("ftw find: '{}' is find's", words[0])),
                "{said}"
            );
            assert_eq!(
                r.stderr.lines().count(),
                2,
                "{said}: one line and the help's"
            );
            assert!(!mark.exists(), "{said}: a command was run");
        }
    }
    // The same words as values of ftw's options, after '--' and inside -x's command
    // are not find's: -g takes '-not' as its glob, -n '-newer' as a regex.
    fs::write(tree.join("-not"), b"").unwrap();
    fs::write(tree.join("-newer"), b"").unwrap();
    for (args, listed) in [
        (&["-g", "-not", "."][..], "./-not\n"),
        (
            &["-g", "-*", "-d", "1", "--sort", "."],
            "./-newer\n./-not\n",
        ),
        (&["-n", "-newer", "."], "./-newer\n"),
        (&["-F", "!", "."], ""),
        (&["--", "-not"], ""),
    ] {
        let r = run(Command::new(ftw_bin())
            .current_dir(&tree)
            .arg("find")
            .args(args));
        assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
        assert_eq!(String::from_utf8_lossy(&r.stdout), listed, "{args:?}");
    }
    // A command glued to -x is never taken: '-xtype' is not '-x type', nor is '-Lxtype',
    // nor '--exec=env' followed by words checked as options, nor a word that is not
    // UTF-8; and a command given to a cluster ending in -x ends at ';' as -x's does.
    let odd = bin.join(std::ffi::OsStr::from_bytes(b"type\xff"));
    fs::copy(&program, &odd).unwrap();
    fs::set_permissions(&odd, fs::Permissions::from_mode(0o755)).unwrap();
    let cases: &[&[&[u8]]] = &[
        &[b"-xtype", b"l", b"."],
        &[b"-Lxtype", b"l", b"."],
        &[b"-Xtype", b"l", b"."],
        &[b"--exec=env", b"-xtype", b"."],
        &[b"--exec-batch=env", b"-newer", b"stamp", b"."],
        &[b"-0x", b"env", b"--", b";", b"-xtype", b"."],
        &[b"-Lx", b"echo", b"--", b";", b"-newer", b"stamp", b"."],
        &[b"-xtype\xff", b"."],
        &[b"-Lxtype\xff", b"."],
        &[b"-x", b"echo", b";", b"-xtype\xff", b"."],
        // find's '{} +' ends its -exec: here the words after it would be the
        // command's ('-not' an argument of rm), so it is refused, at the end too.
        &[b"-X", b"type", b"{}", b"+", b"-newer", b"stamp", b"."],
        &[b"-X", b"type", b"{}", b"+"],
        &[b"-x", b"type", b"{}", b"+", b";", b"."],
        &[b"-LX", b"type", b"-v", b"{}", b"+", b"-not", b"-g", b"x"],
        // A value glued to find's word by '=' is find's word all the same, never a
        // cluster ('-name=x' is not '-n ame=x', '-exec=type' not '-e xec=type').
        &[b"-name=x", b"."],
        &[b"-iname=X", b"."],
        &[b"-newer=stamp", b"."],
        &[b"-not=", b"-g", b"x"],
        &[b".", b"-exec=type"],
        &[b"-print=x"],
        &[b"-xtype=l", b"."],
        &[b"-mtime=1"],
    ];
    for words in cases {
        let words: Vec<&std::ffi::OsStr> = words
            .iter()
            .map(|w| std::ffi::OsStr::from_bytes(w))
            .collect();
        let r = run(Command::new(ftw_bin())
            .current_dir(&tree)
            .env("PATH", &path)
            .arg("find")
            .args(&words));
        assert_eq!(r.code, 2, "{words:?}: {}", r.stderr);
        assert!(r.stdout.is_empty(), "{words:?}: nothing listed");
        assert!(!mark.exists(), "{words:?}: a command was run");
    }
    // A word quoted in the message is escaped, never written raw: one line, no escape
    // sequence reaches the terminal.
    for words in [&["-x\x1b[31mred"][..], &["-exec", "echo\x1b]0;t\x07", ";"]] {
        let r = run(Command::new(ftw_bin()).arg("find").args(words));
        assert_eq!(r.code, 2, "{words:?}: {}", r.stderr);
        assert!(
            !r.stderr.contains('\x1b') && !r.stderr.contains('\x07'),
            "{:?}",
            r.stderr
        );
        assert!(r.stderr.contains("\\x1b"), "{:?}", r.stderr);
        assert_eq!(r.stderr.lines().count(), 2, "{:?}", r.stderr);
    }
    // Words of a command given to a cluster ending in -x are the command's.
    let r = run(Command::new(ftw_bin())
        .current_dir(&tree)
        .args(["find", "-Lx", "echo", "-not", ";", "-d", "1", "--sort", "."]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(String::from_utf8_lossy(&r.stdout).starts_with("-not ./-newer\n"));
    // du: a word of find's is never an option with its value glued ('-or' would write
    // the export to a file 'r'); a cluster of du's flags is du's ('-ls').
    let r = run(Command::new(ftw_bin())
        .current_dir(&tree)
        .args(["du", "-or", "."]));
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.starts_with("ftw du: '-or' is find's word"),
        "{}",
        r.stderr
    );
    assert!(!tree.join("r").exists(), "du -or wrote a file");
    let r = run(Command::new(ftw_bin())
        .current_dir(&tree)
        .args(["du", "-ls", "."]));
    assert_eq!(r.code, 0, "{}", r.stderr);
}

#[test]
fn negative_numbers_get_a_plain_message() {
    for args in [
        &["find", "-d", "-1"][..],
        &["find", "--max-depth", "-1"],
        &["find", "-j", "-2"],
        &["du", "-d", "-1"],
        &["rm", "-j", "-1", "x"],
    ] {
        let r = run(Command::new(ftw_bin()).args(args));
        assert_eq!(r.code, 2, "{args:?}");
        assert!(
            r.stderr.contains(&format!(
                "{} {}: a negative number; {} takes a number of 0 or more",
                args[1], args[2], args[1]
            )),
            "{args:?}: {}",
            r.stderr
        );
        assert!(
            !r.stderr.contains("'--"),
            "{args:?}: no '-- -1' tip: {}",
            r.stderr
        );
    }
}

#[test]
fn every_command_tells_its_version_and_ftw_alone_its_usage() {
    let version = run(Command::new(ftw_bin()).arg("--version"));
    assert_eq!(version.code, 0);
    let number = String::from_utf8_lossy(&version.stdout)
        .split_whitespace()
        .last()
        .unwrap()
        .to_string();
    for args in [["find", "-V"], ["rm", "--version"], ["du", "-V"]] {
        let r = run(Command::new(ftw_bin()).args(args));
        assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
        assert!(
            String::from_utf8_lossy(&r.stdout).contains(&number),
            "{args:?}"
        );
    }
    let alone = run(&mut Command::new(ftw_bin()));
    assert_eq!(alone.code, 2);
    assert!(alone.stdout.is_empty());
    for part in [
        "Usage: ftw",
        "Examples:",
        "ftw find -e rs src",
        "Commands: find, rm, du, cp.",
    ] {
        assert!(alone.stderr.contains(part), "{part}: {}", alone.stderr);
    }
    // The examples shown work.
    let r = run(Command::new(ftw_bin()).args(["find", "-e", "rs", "src"]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(contains(&r.stdout, b"src/main.rs\n"));
}

#[test]
fn completions_load_in_the_shells() {
    let bin = sh(ftw_bin().as_os_str().as_bytes());
    let r = run(Command::new("bash").args([
        "-c",
        &format!("source <({bin} --generate bash) && complete -p ftw"),
    ]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        contains(&r.stdout, b"complete -o"),
        "{}",
        String::from_utf8_lossy(&r.stdout)
    );
    assert!(contains(&r.stdout, b" ftw\n"));
    // Completing `ftw find -t ` offers the types.
    let r = run(Command::new("bash").args([
        "-c",
        &format!(
            "source <({bin} --generate bash) && COMP_WORDS=(ftw find -t '') && COMP_CWORD=3 \
             && COMP_LINE='ftw find -t ' && COMP_POINT=${{#COMP_LINE}} && _ftw ftw '' -t \
             && printf '%s\\n' \"${{COMPREPLY[@]}}\" | sort | tr '\\n' ' '"
        ),
    ]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        String::from_utf8_lossy(&r.stdout),
        "b c d e f l p s x ",
        "{}",
        r.stderr
    );
    // The script knows the commands and their options.
    let script = run(Command::new(ftw_bin()).args(["--generate", "bash"])).stdout;
    for word in [
        &b"--max-depth"[..],
        b"--color",
        b"--dry-run",
        b"--summarize",
    ] {
        assert!(contains(&script, word), "{}", String::from_utf8_lossy(word));
    }
    if have("zsh") {
        let r = run(Command::new("zsh").args([
            "-fc",
            &format!(
                "autoload -U compinit && compinit -u && source <({bin} --generate zsh) && echo ok"
            ),
        ]));
        assert_eq!(
            (r.code, r.stdout.as_slice()),
            (0, &b"ok\n"[..]),
            "{}",
            r.stderr
        );
    } else {
        eprintln!("skipped zsh: not installed");
    }
    if have("fish") {
        let r = run(Command::new("fish").args([
            "-c",
            &format!("{bin} --generate fish | source; complete -C'ftw fi'"),
        ]));
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert!(
            contains(&r.stdout, b"find"),
            "{}",
            String::from_utf8_lossy(&r.stdout)
        );
    } else {
        eprintln!("skipped fish: not installed");
    }
    for shell in ["elvish", "powershell"] {
        let r = run(Command::new(ftw_bin()).args(["--generate", shell]));
        assert_eq!(r.code, 0);
        assert!(contains(&r.stdout, b"max-depth"), "{shell}");
    }
    let r = run(Command::new(ftw_bin()).args(["--generate", "bash", "find"]));
    assert_eq!(r.code, 2, "--generate takes no command");
}

#[test]
fn the_man_page_renders_without_warnings() {
    if !have("groff") {
        eprintln!("skipped: groff is not installed (.ci/run installs groff-base)");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let page = tmp.path().join("ftw.1");
    let r = run(Command::new(ftw_bin()).args(["--generate", "man"]));
    assert_eq!(r.code, 0);
    fs::write(&page, &r.stdout).unwrap();
    let check = run(Command::new("groff")
        .args(["-man", "-Tutf8", "-ww", "-z"])
        .arg(&page));
    assert_eq!((check.code, check.stderr.as_str()), (0, ""));
    let text = run(Command::new("groff")
        .args(["-man", "-Tutf8", "-P-cbou"])
        .arg(&page)
        .env("GROFF_NO_SGR", "1"));
    assert_eq!(text.stderr, "");
    let text = String::from_utf8_lossy(&text.stdout);
    for part in [
        "FTW FIND",
        "FTW RM",
        "FTW DU",
        "--max-depth",
        "--dry-run",
        "EXAMPLES",
    ] {
        assert!(text.contains(part), "{part}");
    }
    assert!(
        text.contains("ftw rm -n node_modules | wc -l"),
        "examples kept as lines"
    );
    // Every command is a section of this page: no reference to pages that do not
    // exist, and each EXAMPLES heading once, not followed by the help's own.
    assert!(
        !text.contains("ftw-find(1)") && !text.contains("ftw-du(1)"),
        "{text}"
    );
    assert!(text.contains("see FTW FIND below"), "{text}");
    assert!(!text.contains("Examples:"), "a doubled heading:\n{text}");
}

/// A tree for colours: a directory, a link, an executable, a plain file.
fn colour_tree(t: &Path) {
    fs::create_dir_all(t.join("sub")).unwrap();
    fs::write(t.join("plain"), b"").unwrap();
    fs::write(t.join("run.sh"), b"#!/bin/sh\n").unwrap();
    fs::set_permissions(t.join("run.sh"), fs::Permissions::from_mode(0o755)).unwrap();
    symlink("plain", t.join("link")).unwrap();
    symlink("nowhere", t.join("dangling")).unwrap();
}

const LS_COLORS: &str = "di=35:ln=33:ex=31:or=41:*.sh=36";

fn sorted_lines(out: &[u8]) -> Vec<Vec<u8>> {
    let mut v: Vec<Vec<u8>> = out.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect();
    v.retain(|l| !l.is_empty());
    v.sort();
    v
}

#[test]
fn colours_are_those_of_ls_colors() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path().join("t");
    colour_tree(&t);
    let root = t.to_string_lossy().into_owned();
    let dir = format!("\x1b[35m{root}/\x1b[0m");
    let want = |name: &str, code: Option<&str>| match code {
        Some(c) => format!("{dir}\x1b[{c}m{name}\x1b[0m"),
        None => format!("{dir}{name}"),
    };
    let mut expected = [
        // or: the dangling link; ex before the .sh suffix, as ls.
        want("dangling", Some("41")),
        want("link", Some("33")),
        want("plain", None),
        want("run.sh", Some("31")),
        want("sub", Some("35")),
    ]
    .map(String::into_bytes)
    .to_vec();
    expected.sort();
    for j in ["--sort", "-j1", "-j2"] {
        let r = run(Command::new(ftw_bin())
            .args(["find", j, "--color", "always"])
            .arg(&t)
            .env("LS_COLORS", LS_COLORS)
            .env("NO_COLOR", "1"));
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert_eq!(
            sorted_lines(&r.stdout),
            expected,
            "{j}: {}",
            String::from_utf8_lossy(&r.stdout)
        );
    }
    // A suffix colours a file that is not executable.
    fs::set_permissions(t.join("run.sh"), fs::Permissions::from_mode(0o644)).unwrap();
    let r = run(Command::new(ftw_bin())
        .args(["find", "--color", "always", "-e", "sh"])
        .arg(&t)
        .env("LS_COLORS", LS_COLORS));
    assert_eq!(
        r.stdout,
        format!("{}\n", want("run.sh", Some("36"))).into_bytes()
    );
    // rm -n and du: by type.
    let r = run(Command::new(ftw_bin())
        .args(["rm", "-n", "--color", "always"])
        .arg(t.join("sub"))
        .env("LS_COLORS", LS_COLORS));
    assert_eq!(r.stdout, format!("{dir}\x1b[35msub\x1b[0m\n").into_bytes());
    let r = run(Command::new(ftw_bin())
        .args(["du", "-s", "--color", "always"])
        .arg(t.join("sub"))
        .env("LS_COLORS", LS_COLORS));
    assert!(
        String::from_utf8_lossy(&r.stdout).ends_with(&format!("\t{dir}\x1b[35msub\x1b[0m\n")),
        "{}",
        String::from_utf8_lossy(&r.stdout)
    );
}

#[test]
fn no_colour_is_byte_identical_to_the_plain_listing() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path().join("t");
    colour_tree(&t);
    hostile_tree(&t);
    for cmd in [
        &["find", "--sort"][..],
        &["find", "-l", "--sort"],
        &["du", "-a", "-j1"],
    ] {
        let plain = run(Command::new(ftw_bin())
            .args(cmd)
            .arg(&t)
            .env_remove("NO_COLOR"));
        let never = run(Command::new(ftw_bin())
            .args(cmd)
            .args(["--color", "never"])
            .arg(&t)
            .env("LS_COLORS", LS_COLORS));
        let no_color = run(Command::new(ftw_bin())
            .args(cmd)
            .args(["--color", "auto"])
            .arg(&t)
            .env("NO_COLOR", "1"));
        assert!(!plain.stdout.contains(&0x1b) || contains(&plain.stdout, HOSTILE));
        assert_eq!(never.stdout, plain.stdout, "{cmd:?}");
        assert_eq!(no_color.stdout, plain.stdout, "{cmd:?}");
    }
    // On a terminal, NO_COLOR turns auto off; --color always wins over it.
    let bin = sh(ftw_bin().as_os_str().as_bytes());
    let sub = sh(t.join("sub").as_os_str().as_bytes());
    let Some((out, _)) = on_terminal(
        &format!("{bin} find -d 0 --min-depth 0 {sub}"),
        &[("NO_COLOR", "1")],
    ) else {
        return;
    };
    assert!(!out.contains(&0x1b), "{}", String::from_utf8_lossy(&out));
    let (out, _) = on_terminal(&format!("{bin} find -d 0 --min-depth 0 {sub}"), &[]).unwrap();
    assert!(
        contains(&out, b"\x1b[1;34m"),
        "ls's default palette: {}",
        String::from_utf8_lossy(&out)
    );
    let (out, _) = on_terminal(
        &format!("{bin} find -d 0 --min-depth 0 --color always {sub}"),
        &[("NO_COLOR", "1")],
    )
    .unwrap();
    assert!(
        contains(&out, b"\x1b[1;34m"),
        "{}",
        String::from_utf8_lossy(&out)
    );
}

/// Runs `script` (a sh command line, `$F` being ftw) and gives its status and stderr.
fn sh_run(script: &str) -> common::Run {
    let bin = sh(ftw_bin().as_os_str().as_bytes());
    run(Command::new("sh").args(["-c", &format!("F={bin}; {script}")]))
}

#[test]
fn output_errors_of_commands_run_by_x_and_of_exports_are_reported() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path().join("t");
    small_tree(&t);
    let tq = sh(t.as_os_str().as_bytes());
    // What ftw writes itself (the output of -x's commands, collected; the export;
    // --generate; --help and -V): reported, 1.
    for args in [
        format!("find {tq} -x echo"),
        format!("du -o - {tq}"),
        "--generate bash".to_string(),
        "find --help".to_string(),
        "find -V".to_string(),
        "--help".to_string(),
    ] {
        let r = sh_run(&format!("exec $F {args} >/dev/full"));
        assert_eq!(
            (r.code, r.stderr.as_str()),
            (1, "ftw: standard output: No space left on device\n"),
            "{args} >/dev/full"
        );
        let r = sh_run(&format!("exec $F {args} >&-"));
        assert_eq!(
            (r.code, r.stderr.as_str()),
            (1, "ftw: standard output: Bad file descriptor\n"),
            "{args} >&-"
        );
    }
    // A command run on the terminal's own streams (-j1 -x, -X) finds standard output
    // closed as ftw did, not /dev/null in its place: echo says so, and fails.
    for x in ["-j1 -x", "-X"] {
        let r = sh_run(&format!("exec $F find {tq} {x} echo >&-"));
        assert_eq!(r.code, 1, "{x} echo >&-: {}", r.stderr);
        assert!(
            r.stderr.contains("Bad file descriptor"),
            "{x}: {}",
            r.stderr
        );
    }
    // Nothing written: no error.
    let r = sh_run(&format!("exec $F find {tq} -x true >&-"));
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
    let r = sh_run(&format!("exec $F find {tq} -x echo | head -c1 >/dev/null"));
    assert_eq!((r.code, r.stderr.as_str()), (0, ""), "a closed pipe");
}

#[test]
fn the_hint_to_match_names_is_a_command_that_works() {
    let tmp = tempfile::tempdir().unwrap();
    // Names that are not there, each as a shell would pass it.
    for name in [
        "a b;$(x)",
        "it's",
        "-weird",
        "a.b",
        "x\\",
        "no\x1b[31mpe",
        "nl\nx",
    ] {
        let t = tmp.path().join("t");
        let _ = fs::remove_dir_all(&t);
        fs::create_dir(&t).unwrap();
        let r = run(Command::new(ftw_bin())
            .args(["find", "--", name])
            .current_dir(&t));
        assert_eq!(r.code, 1, "{name:?}");
        let hint = r
            .stderr
            .split_once("(to match names: ftw find ")
            .and_then(|(_, h)| h.strip_suffix(")\n"))
            .unwrap_or_else(|| panic!("{name:?}: a hint: {}", r.stderr));
        assert!(
            !hint.chars().any(char::is_control),
            "{name:?}: the hint is escaped: {hint:?}"
        );
        // Made there, the hint's command finds the name, and that name alone.
        fs::write(t.join(name), b"").unwrap();
        fs::write(t.join("other"), b"").unwrap();
        fs::write(t.join("ab"), b"").unwrap();
        fs::write(t.join("axb"), b"").unwrap();
        let bin = sh(ftw_bin().as_os_str().as_bytes());
        let r = run(Command::new("sh")
            .args(["-c", &format!("{bin} find {hint}")])
            .current_dir(&t));
        assert_eq!(r.code, 0, "{name:?}: {hint}: {}", r.stderr);
        assert_eq!(
            r.stdout,
            [b"./", name.as_bytes(), b"\n"].concat(),
            "{name:?}: {hint}"
        );
    }
}

#[test]
fn line_separators_are_escaped_and_exports_hold_no_raw_controls() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path().join("t");
    fs::create_dir(&t).unwrap();
    fs::write(t.join("ls\u{2028}ps\u{2029}c1\u{9b}x"), b"").unwrap();
    let tq = sh(t.as_os_str().as_bytes());
    let bin = sh(ftw_bin().as_os_str().as_bytes());
    let Some((out, code)) = on_terminal(&format!("{bin} find {tq}"), &[]) else {
        return;
    };
    assert_eq!(code, 0);
    assert!(
        contains(&out, b"ls\\u{2028}ps\\u{2029}c1\\xc2\\x9bx"),
        "{}",
        String::from_utf8_lossy(&out)
    );
    // The export is data: exact once read, but no raw control for a terminal to obey.
    let r = run(Command::new(ftw_bin()).args(["du", "-o", "-"]).arg(&t));
    assert_eq!(r.code, 0);
    let text = String::from_utf8(r.stdout).unwrap();
    assert!(text.contains(r#""ls\u2028ps\u2029c1\u009bx""#), "{text}");
}

#[test]
fn a_negative_number_after_an_equals_sign_gets_the_plain_message() {
    for (args, word) in [
        (&["find", "--max-depth=-1"][..], "--max-depth=-1"),
        (&["du", "--max-depth=-3"], "--max-depth=-3"),
    ] {
        let r = run(Command::new(ftw_bin()).args(args));
        assert_eq!(r.code, 2, "{args:?}");
        assert!(
            r.stderr.contains(&format!("{word}: a negative number")),
            "{args:?}: {}",
            r.stderr
        );
    }
}

#[test]
fn commands_on_a_pipe_whose_reader_went_away_end_the_run_quietly() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path().join("t");
    fs::create_dir(&t).unwrap();
    for i in 0..300 {
        fs::write(t.join(format!("f{i}")), b"").unwrap();
    }
    let tq = sh(t.as_os_str().as_bytes());
    // echo, killed by SIGPIPE once head is gone, is no failure of the run's.
    for x in ["-j1 -x", "-x", "--sort -x"] {
        let r = run(Command::new("bash").args([
            "-c",
            &format!(
                "F={}; $F find {tq} {x} echo | head -1 >/dev/null; exit ${{PIPESTATUS[0]}}",
                sh(ftw_bin().as_os_str().as_bytes())
            ),
        ]));
        assert_eq!((r.code, r.stderr.as_str()), (0, ""), "{x} echo | head -1");
    }
}

/// What a terminal shows at the end of `bytes`: each line as overwritten by carriage
/// returns and erased by `ESC [ K` / `ESC [ 2K` (other sequences are left out), with
/// trailing blanks trimmed.
fn screen(bytes: &[u8]) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line: Vec<u8> = Vec::new();
    let mut col = 0;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\r' => col = 0,
            b'\n' => {
                lines.push(std::mem::take(&mut line));
                col = 0;
            }
            0x1b if bytes.get(i + 1) == Some(&b'[') => {
                let end = (i + 2..bytes.len())
                    .find(|&j| bytes[j].is_ascii_alphabetic())
                    .unwrap_or(bytes.len() - 1);
                match &bytes[i + 2..=end] {
                    b"2K" => line.clear(),
                    b"K" | b"0K" => line.truncate(col),
                    _ => {}
                }
                i = end;
            }
            b => {
                if col < line.len() {
                    line[col] = b;
                } else {
                    line.resize(col, b' ');
                    line.push(b);
                }
                col += 1;
            }
        }
        i += 1;
    }
    lines.push(line);
    lines
        .into_iter()
        .map(|l| String::from_utf8_lossy(&l).trim_end().to_string())
        .filter(|l| !l.is_empty())
        .collect()
}

#[test]
fn the_progress_line_leaves_messages_whole_and_nothing_behind() {
    // ftw rm on a terminal shows a progress line once the run has lasted 0.3 s (a
    // large tree, so that it usually does); the messages of the directories this user
    // cannot empty come through it, each on a line of its own, and at the end nothing
    // of the progress line is left on the screen. Whether or not the line was drawn,
    // what the terminal shows is the messages alone.
    if !common::is_root() {
        eprintln!("skipped: needs root, to make directories nobody cannot empty");
        return;
    }
    let u = common::Unprivileged::new("ftw-progress-");
    let mut blocked = Vec::new();
    for d in 0..40 {
        let dir = u.root.join(format!("d{d:02}"));
        fs::create_dir(&dir).unwrap();
        for f in 0..2500 {
            fs::write(dir.join(format!("f{f}")), b"").unwrap();
        }
        if d % 8 == 3 {
            // Owned by root, unreadable: nobody cannot empty it.
            let locked = dir.join("locked");
            fs::create_dir(&locked).unwrap();
            fs::write(locked.join("inside"), b"").unwrap();
            blocked.push(locked);
        }
    }
    let chown = Command::new("chown")
        .args(["-R", "65534:65534"])
        .arg(&u.root)
        .status()
        .unwrap();
    assert!(chown.success());
    for b in &blocked {
        std::os::unix::fs::chown(b, Some(0), Some(0)).unwrap();
        fs::set_permissions(b, fs::Permissions::from_mode(0o700)).unwrap();
    }
    let command = format!(
        "setpriv --reuid=65534 --regid=65534 --clear-groups -- {} rm {} >/dev/null",
        sh(u.bin.as_os_str().as_bytes()),
        sh(u.root.as_os_str().as_bytes())
    );
    let Some((shown, code)) = on_terminal(&command, &[]) else {
        return;
    };
    if shown.starts_with(b"setpriv:") {
        eprintln!("skipped: cannot switch to nobody");
        return;
    }
    assert_eq!(code, 1);
    let lines = screen(&shown);
    let raw = String::from_utf8_lossy(&shown);
    for b in &blocked {
        let named = format!("ftw: {}: Permission denied", b.display());
        assert!(
            lines.contains(&named),
            "{named:?} on a line of its own:\n{lines:#?}\nraw: {raw:?}"
        );
    }
    for l in &lines {
        assert!(
            l.starts_with("ftw: ") && !l.contains("ftw rm:"),
            "a message whole on its line, no progress left: {l:?}\nraw: {raw:?}"
        );
    }
}

#[test]
fn cp_shows_its_progress_with_the_time_left_on_a_terminal_and_none_piped() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    std::fs::create_dir(&src).unwrap();
    // Enough to last past the line's first 300 ms: many files, and data written.
    for i in 0..5_000 {
        std::fs::write(src.join(format!("f{i}")), [b'x'; 100]).unwrap();
    }
    let big = std::fs::File::create(src.join("big")).unwrap();
    big.set_len(256 << 20).unwrap();
    drop(big);
    let bin = ftw_bin();
    let cmd = format!(
        "{} cp -j1 --sparse=never {} {}",
        sh(bin.as_os_str().as_encoded_bytes()),
        sh(src.as_os_str().as_encoded_bytes()),
        sh(tmp.path().join("on-tty").as_os_str().as_encoded_bytes())
    );
    let Some((out, code)) = on_terminal(&cmd, &[]) else {
        return;
    };
    assert_eq!(code, 0, "{}", String::from_utf8_lossy(&out));
    let text = String::from_utf8_lossy(&out);
    assert!(text.contains("ftw cp: "), "no progress line: {text:?}");
    assert!(text.contains("/s)"), "no rate: {text:?}");
    assert!(text.contains(" left"), "no time left: {text:?}");
    // Piped: nothing but what cp says (nothing).
    let r = run(Command::new(&bin)
        .args(["cp", "-j1", "--sparse=never"])
        .arg(&src)
        .arg(tmp.path().join("piped")));
    assert_eq!((r.code, r.stderr.as_str(), r.stdout.len()), (0, "", 0));
}
