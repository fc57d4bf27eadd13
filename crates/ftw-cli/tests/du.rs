//! `ftw du` against GNU du (run with LC_ALL=C) on generated trees: hard links inside
//! and across subtrees and across PATH arguments, sparse files, symbolic links (never
//! followed unless -L), empty files and directories, odd names. Apparent sizes are
//! checked against a reference computed here (coreutils 9.2's rule: regular files and
//! links only), since the du installed may be older. The export is read back by ncdu
//! and gdu.
// Unix only: these tests build trees with Unix calls and compare with GNU tools;
// tests/windows.rs runs the Windows build under wine.
#![cfg(unix)]

mod common;

use common::*;
use std::ffi::OsStr;
use std::fs;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// Builds the test tree under `root`; with `cross`, hard links also join separate
/// subtrees (whose per-directory attribution depends on the walk's order).
fn build(root: &Path, cross: bool) {
    let p = |rel: &[u8]| root.join(OsStr::from_bytes(rel));
    for d in [
        &b"a/b/c"[..],
        b"a/empty",
        b"d e",
        b"new\nline",
        b"bad\xffname/sub",
        b"deep/1/2/3/4/5",
    ] {
        fs::create_dir_all(p(d)).unwrap();
    }
    let write = |rel: &[u8], len: usize| fs::write(p(rel), vec![7u8; len]).unwrap();
    write(b"a/f1", 5000);
    write(b"a/b/f2", 70_000);
    write(b"a/b/c/f3", 1);
    write(b"d e/empty file", 0);
    write(b"bad\xffname/h", 12_345);
    write(b"bad\xffname/sub/x y", 300_000);
    write(b"deep/1/2/3/4/5/leaf", 9000);
    write(b"top", 4097);
    // Sparse: a hole of 64 MiB, and one with 4 KiB written after 1 MiB of hole.
    fs::File::create(p(b"a/sparse"))
        .unwrap()
        .set_len(64 << 20)
        .unwrap();
    let mut f = fs::File::create(p(b"d e/partly")).unwrap();
    f.set_len(1 << 20).unwrap();
    use std::io::Seek;
    f.seek(std::io::SeekFrom::Start(1 << 20)).unwrap();
    f.write_all(&[1u8; 4096]).unwrap();
    drop(f);
    // Hard links within one directory.
    fs::hard_link(p(b"a/f1"), p(b"a/f1-again")).unwrap();
    fs::hard_link(p(b"bad\xffname/h"), p(b"bad\xffname/h2")).unwrap();
    fs::hard_link(p(b"top"), p(b"top2")).unwrap();
    if cross {
        fs::hard_link(p(b"a/b/f2"), p(b"d e/f2 link")).unwrap();
        fs::hard_link(p(b"a/f1"), p(b"new\nline/f1 again")).unwrap();
        fs::hard_link(p(b"deep/1/2/3/4/5/leaf"), p(b"a/b/c/leaf")).unwrap();
    }
    symlink("f1", p(b"a/link to file")).unwrap();
    symlink("b", p(b"a/link to dir")).unwrap();
    symlink("nowhere/at/all", p(b"dangling")).unwrap();
    symlink("../../a/b/f2", p(b"deep/1/long link name")).unwrap();
}

/// `du ARGS` with LC_ALL=C.
fn du(args: &[&OsStr]) -> Run {
    let r = run(Command::new("du").env("LC_ALL", "C").args(args));
    assert!(
        r.code == 0 || !r.stderr.is_empty(),
        "GNU du is needed for these tests"
    );
    r
}

/// `ftw du ARGS`, without the block size variables (stderr read lossily: it names
/// paths, which need not be UTF-8).
fn ftw_du(args: &[&OsStr]) -> Run {
    run(Command::new(ftw_bin())
        .arg("du")
        .env_remove("DU_BLOCK_SIZE")
        .env_remove("BLOCK_SIZE")
        .env_remove("BLOCKSIZE")
        .args(args))
}

fn os(v: &[&str]) -> Vec<PathBuf> {
    v.iter().map(PathBuf::from).collect()
}

fn args<'a>(opts: &'a [PathBuf], roots: &'a [PathBuf]) -> Vec<&'a OsStr> {
    opts.iter()
        .chain(roots.iter())
        .map(|p| p.as_os_str())
        .collect()
}

/// Lines (NUL-ended records if there is a NUL), sorted.
fn sorted_lines(out: &[u8]) -> Vec<Vec<u8>> {
    let end = if out.contains(&0) { 0 } else { b'\n' };
    let mut v: Vec<Vec<u8>> = out.split(|&b| b == end).map(<[u8]>::to_vec).collect();
    v.sort();
    v
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Compares `ftw du OPTS ROOTS` with `du OPTS ROOTS`: byte for byte (`exact`), or as
/// sorted lines.
fn same_as_du(opts: &[&str], roots: &[PathBuf], threads: &str, exact: bool) {
    let opts_v = os(opts);
    let theirs = du(&args(&opts_v, roots));
    let mut ours_opts = os(opts);
    ours_opts.push(PathBuf::from(format!("-j{threads}")));
    let ours = ftw_du(&args(&ours_opts, roots));
    let what = format!("ftw du {opts:?} -j{threads}");
    assert_eq!(ours.code, theirs.code, "{what}: {}", ours.stderr);
    if exact {
        assert_eq!(
            text(&ours.stdout),
            text(&theirs.stdout),
            "{what}, line for line"
        );
    } else {
        assert_eq!(
            sorted_lines(&ours.stdout),
            sorted_lines(&theirs.stdout),
            "{what}, sorted lines:\n{}\n---- du:\n{}",
            text(&ours.stdout),
            text(&theirs.stdout)
        );
    }
}

#[test]
fn du_totals_equal_gnu_du() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path().join("t");
    let other = tmp.path().join("other");
    build(&t, true);
    fs::create_dir(&other).unwrap();
    // Across PATH arguments: one more link to a file of the first tree, and a file.
    fs::hard_link(t.join("a/b/f2"), other.join("f2 from other")).unwrap();
    fs::write(other.join("own"), vec![1u8; 20_000]).unwrap();
    let one = [t.clone()];
    let two = [t.clone(), other.clone()];
    let reversed = [other.clone(), t.clone()];
    for threads in ["1", "2", "0"] {
        for opts in [
            &["-s", "-B1"][..],
            &["-s"],
            &["-sk"],
            &["-sm"],
            &["-sh"],
            &["-s", "--si"],
            &["-sBK"],
            &["-sBKB"],
            &["-sB", "3"],
            &["-slB1"],
            &["-s", "--inodes"],
            &["-s", "--inodes", "-l"],
            &["-sx", "-B1"],
            &["-sS", "-B1"],
        ] {
            same_as_du(opts, &one, threads, true);
            // Several PATHs: each counted once, in order, with -c's total.
            let mut with_total = opts.to_vec();
            with_total.push("-c");
            same_as_du(&with_total, &two, threads, true);
            same_as_du(&with_total, &reversed, threads, true);
        }
    }
}

#[test]
fn du_per_directory_equals_gnu_du() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path().join("t");
    build(&t, true);
    let one = [t.clone()];
    let opts_list: [&[&str]; 12] = [
        &[],
        &["-B1", "-d", "2"],
        &["-a", "-B1"],
        &["-a", "-d", "1"],
        &["-S", "-B1"],
        &["-S", "-a"],
        &["-l", "-a", "-B1"],
        &["--inodes", "-a"],
        &["-0", "-a"],
        &["-h", "-a"],
        &["-c", "-d", "3", "--si"],
        &["--exclude", "*f1*", "--exclude", "sub", "-a"],
    ];
    // One thread walks in du's order: the same lines in the same order, each file with
    // several links counted where du counts it.
    for opts in opts_list {
        same_as_du(opts, &one, "1", true);
    }
    // With several, the same lines in the same order, each file with links in several
    // directories counted where du counts it too (at its first name in du's order, not
    // where a worker met it first).
    let tmp2 = tempfile::tempdir().unwrap();
    let u = tmp2.path().join("u");
    build(&u, true);
    let one = [u.clone()];
    for threads in ["2", "0"] {
        for opts in opts_list {
            same_as_du(opts, &one, threads, true);
        }
    }
}

/// A tree of many directories, wide and deep, files of many sizes: where parallel
/// workers finish siblings out of order.
fn bushy(root: &Path) {
    let mut seed = 7u64;
    let mut next = move |n: u64| {
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        (seed >> 33) % n
    };
    let mut stack = vec![(root.to_path_buf(), 0)];
    while let Some((dir, depth)) = stack.pop() {
        fs::create_dir_all(&dir).unwrap();
        for i in 0..3 + next(8) {
            let p = dir.join(format!("e{i}"));
            if depth < 5 && next(100) < 45 {
                stack.push((p, depth + 1));
            } else {
                fs::write(p, vec![1u8; next(20_000) as usize]).unwrap();
            }
        }
    }
}

#[test]
fn du_parallel_prints_in_du_order() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path().join("t");
    bushy(&t);
    build(&t.join("built"), false);
    let one = [t.clone()];
    // Whatever the threads, du's lines in du's order: each directory after its
    // contents, in the order its directory lists them; again and again, as a run that
    // happens to finish in order proves nothing.
    for _ in 0..3 {
        for threads in ["2", "0", "8"] {
            for opts in [
                &[][..],
                &["-a"],
                &["-d", "2"],
                &["-a", "-d", "1"],
                &["-S", "-c"],
            ] {
                same_as_du(opts, &one, threads, true);
            }
        }
    }
}

/// `ftw du -j1 ARGS` and `du ARGS` (in `dir`, with `stdin`): the same output, status,
/// and messages but for the program's name.
fn same_words(dir: &Path, args: &[&str], stdin: &[u8]) {
    let go = |cmd: &mut Command| {
        use std::process::Stdio;
        let mut child = cmd
            .current_dir(dir)
            .env("LC_ALL", "C")
            .env("TZ", "Asia/Kolkata")
            .env_remove("TIME_STYLE")
            .env_remove("DU_BLOCK_SIZE")
            .env_remove("BLOCK_SIZE")
            .env_remove("BLOCKSIZE")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(stdin).unwrap();
        let out = child.wait_with_output().unwrap();
        // The program's name, and ftw's note that totals are incomplete, aside.
        let err: String = String::from_utf8_lossy(&out.stderr)
            .lines()
            .filter(|l| !l.starts_with("ftw: totals are incomplete"))
            .map(
                |l| match l.strip_prefix("ftw du: ").or(l.strip_prefix("ftw: ")) {
                    Some(rest) => format!("du: {rest}\n"),
                    None => format!("{l}\n"),
                },
            )
            .collect::<String>()
            .replace("Try 'ftw du --help'", "Try 'du --help'");
        (out.status.code(), text(&out.stdout), err)
    };
    let theirs = go(Command::new("du").args(args));
    let ours = go(Command::new(ftw_bin()).args(["du", "-j1"]).args(args));
    assert_eq!(ours, theirs, "ftw du {args:?}");
}

#[test]
fn du_takes_gnus_other_options_as_du_does() {
    let tmp = tempfile::tempdir().unwrap();
    let r = tmp.path();
    let t = r.join("t");
    build(&t, false);
    fs::write(r.join("patterns"), "*f1*  \n\n  \nsub\n").unwrap();
    symlink("t", r.join("lt")).unwrap();
    symlink("a", t.join("link to a")).unwrap();
    // Times of several days and years, and nanoseconds, for --time to tell apart.
    for (i, rel) in ["a/f1", "a/b/f2", "top", "d e", "bad\u{fffd}"]
        .iter()
        .enumerate()
    {
        let p = t.join(rel);
        if let Ok(f) = fs::File::options().write(true).open(&p) {
            let when = std::time::UNIX_EPOCH
                + Duration::from_secs(1_500_000_000 + 86_400 * 400 * i as u64)
                + Duration::from_nanos(123_456_789 * i as u64);
            f.set_modified(when).unwrap();
        }
    }
    let cases: &[&[&str]] = &[
        // Refusals, in du's words and with its status.
        &["-sa", "t"],
        &["-s", "-d", "1", "t"],
        &["-s", "-d", "0", "t"],
        &["-B", "-1", "t"],
        &["-B", "", "t"],
        &["-B", "0x", "t"],
        &["-B", "1.5K", "t"],
        &["--block-size=1Y", "t"],
        &["--bl=1Kx", "t"],
        &["-t", "1Kx", "t"],
        &["-t", "-0", "t"],
        &["--threshold=99999999999999999999", "t"],
        &["--time=foo", "t"],
        &["--time=", "t"],
        &["--time", "--time-style=posix-iso", "t"],
        &["--time", "--time-style=bogus", "t"],
        &["-X", "missing", "t"],
        &["--files0-from=missing"],
        &["--files0-from=patterns", "t"],
        &["--deref", "-s", "t"],
        // Accepted as du accepts them.
        &["-B", "0x10", "-s", "t"],
        &["-B", " +010", "-s", "t"],
        &["--human", "--tot", "-s", "t"],
        &["--time-style=bogus", "-s", "t"],
        &["-t", "20K", "t"],
        &["-t", "-5K", "-a", "t"],
        &["--threshold=1KB", "-a", "-c", "t"],
        &["-t", "2", "--inodes", "t"],
        &["-S", "-t", "8K", "t"],
        &["--time", "-a", "t"],
        &["--time", "--time-style=full-iso", "-a", "t"],
        &["--time", "--time-style=iso", "t"],
        &["--time", "--time-style=+%s.%N %A", "-d", "1", "t"],
        &[
            "--time",
            "--time-style=+%Ey %Od %% %%Ey %-d %_m %^a %::z",
            "-s",
            "t",
        ],
        &["--time-st=lo", "--time", "-S", "t"],
        &["--time=ctime", "-s", "t"],
        &["--time", "-c", "-t", "1G", "t/a", "t/top"],
        &["--time=use", "-s", "t"],
        &["-X", "patterns", "-a", "t"],
        &["--exclude-from=patterns", "--exclude", "top", "-a", "t"],
        &["-H", "-d", "1", "lt"],
        &["-D", "-s", "lt", "t/link to a"],
        &["--dereference-args", "-P", "-s", "lt"],
        &["-L", "-H", "-d", "1", "lt"],
        &["-s", "lt"],
    ];
    for args in cases {
        same_words(r, args, b"");
    }
    // An abbreviation that several options begin: refused as du refuses it (the
    // possibilities in ftw's order).
    let amb = run(Command::new(ftw_bin())
        .args(["du", "--s", "t"])
        .current_dir(r));
    assert_eq!(amb.code, 1);
    let said = &amb.stderr;
    assert!(
        said.starts_with("ftw du: option '--s' is ambiguous; possibilities: "),
        "{said}"
    );
    for o in ["'--si'", "'--separate-dirs'", "'--summarize'"] {
        assert!(said.contains(o), "{said}");
    }
    // --files0-from: names NUL-ended (the last one may not be), an empty one refused,
    // '-' refused on standard input, the others counted; an empty list counts nothing.
    fs::write(r.join("names"), b"t/a\0t/d e\0\0t/a\0t/top").unwrap();
    same_words(r, &["--files0-from=names", "-c"], b"");
    same_words(r, &["--files0-from", "-", "-s"], b"t/a\0-\0t/deep\0");
    same_words(r, &["--files0-from=-", "-c"], b"");
    // TIME_STYLE, as du reads it.
    for style in ["iso", "posix-full-iso", "locale", "+%Y%n%H", "+%Y\nignored"] {
        let run = |cmd: &mut Command| {
            run(cmd
                .current_dir(r)
                .env("LC_ALL", "C")
                .env("TZ", "UTC")
                .env("TIME_STYLE", style)
                .args(["--time", "t"]))
        };
        let ours = run(Command::new(ftw_bin()).args(["du", "-j1"]));
        let theirs = run(&mut Command::new("du"));
        assert_eq!(
            text(&ours.stdout),
            text(&theirs.stdout),
            "TIME_STYLE={style}"
        );
    }
}

/// A bind mount, undone when dropped.
struct Bind(PathBuf);

impl Drop for Bind {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn du_passes_a_directory_bind_mounted_below_itself_as_du_does() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path().join("t");
    build(&t.join("a"), false);
    fs::create_dir(t.join("a/loop")).unwrap();
    // (-L would report it, in ftw's words, not du's.)
    fs::remove_file(t.join("a/dangling")).unwrap();
    fs::create_dir_all(t.join("other/deeper")).unwrap();
    // a/loop shows a again: a directory that is its own ancestor.
    let mounted = Command::new("mount")
        .arg("--bind")
        .arg(t.join("a"))
        .arg(t.join("a/loop"))
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        eprintln!("skipped: mount --bind is not permitted here");
        return;
    }
    let _bind = Bind(t.join("a/loop"));
    let one = [t.clone()];
    // du neither counts nor enters it, and says nothing of a bind mount: the same
    // lines, status and (no) messages, whatever the threads.
    for threads in ["1", "0", "4"] {
        for opts in [
            &[][..],
            &["-a"],
            &["-L"],
            &["-S"],
            &["-x"],
            &["-s"],
            &["-d", "1"],
        ] {
            same_as_du(opts, &one, threads, true);
            let mut a: Vec<&str> = opts.to_vec();
            a.push("t");
            same_words(tmp.path(), &a, b"");
        }
        // Nor does the tree view or the export show it.
        let r = ftw_du(&[
            OsStr::new("--tree"),
            OsStr::new("-n"),
            OsStr::new("100"),
            t.as_os_str(),
        ]);
        assert!(!text(&r.stdout).contains("loop"), "{}", text(&r.stdout));
        let r = ftw_du(&[OsStr::new("-o"), OsStr::new("-"), t.as_os_str()]);
        assert!(!text(&r.stdout).contains("loop"), "{}", text(&r.stdout));
    }
}

#[test]
fn du_piped_prints_what_du_prints() {
    let tmp = tempfile::tempdir().unwrap();
    let u = tmp.path().join("u");
    build(&u, false);
    // No option: piped, ftw prints du's lines.
    let ours = ftw_du(&[u.as_os_str()]);
    let theirs = du(&[u.as_os_str()]);
    assert_eq!(ours.code, 0, "{}", ours.stderr);
    assert_eq!(sorted_lines(&ours.stdout), sorted_lines(&theirs.stdout));
    // Block sizes from the environment, as du reads them.
    for (var, value) in [
        ("DU_BLOCK_SIZE", "1"),
        ("BLOCK_SIZE", "human-readable"),
        ("BLOCKSIZE", "KB"),
    ] {
        let ours = run(Command::new(ftw_bin())
            .args(["du", "-j1"])
            .arg(&u)
            .env(var, value));
        let theirs = run(Command::new("du").arg(&u).env(var, value));
        assert_eq!(text(&ours.stdout), text(&theirs.stdout), "{var}={value}");
    }
    // A root written with a trailing slash, a root that is a file, a link, a link to a
    // directory (followed only with its slash), a missing one.
    let link = tmp.path().join("link to u");
    symlink(&u, &link).unwrap();
    let mut slashed = link.as_os_str().to_owned();
    slashed.push("/");
    let mut u_slash = u.as_os_str().to_owned();
    u_slash.push("//");
    for roots in [
        vec![u_slash.clone()],
        vec![u.join("top").into_os_string()],
        vec![link.clone().into_os_string()],
        vec![slashed.clone()],
        vec![u.join("dangling").into_os_string()],
        vec![
            u.join("missing").into_os_string(),
            u.join("a").into_os_string(),
        ],
    ] {
        for opts in [&["-j1", "-a"][..], &["-j1", "-sL"], &["-j2", "-s"]] {
            let mut ftw_args: Vec<&OsStr> = opts.iter().map(OsStr::new).collect();
            ftw_args.extend(roots.iter().map(|r| r.as_os_str()));
            let ours = ftw_du(&ftw_args);
            let du_args: Vec<&OsStr> = ftw_args
                .iter()
                .copied()
                .filter(|a| !a.as_bytes().starts_with(b"-j"))
                .collect();
            let theirs = du(&du_args);
            assert_eq!(
                ours.code, theirs.code,
                "{roots:?} {opts:?}: {}",
                ours.stderr
            );
            assert_eq!(
                text(&ours.stdout),
                text(&theirs.stdout),
                "{roots:?} {opts:?}"
            );
            assert_eq!(
                ours.stderr.lines().count(),
                theirs.stderr.lines().count() + usize::from(theirs.code != 0),
                "one line an error, and the note that totals are incomplete: {}",
                ours.stderr
            );
        }
    }
}

/// The apparent total by coreutils 9.2's rule: `st_size` of regular files and symbolic
/// links, each (device, inode) with several links once; from find.
fn apparent_reference(root: &Path, count_links: bool) -> u64 {
    let r = run(Command::new("find").arg(root).args([
        "(",
        "-type",
        "f",
        "-o",
        "-type",
        "l",
        ")",
        "-printf",
        "%D %i %n %s\\n",
    ]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let mut seen = std::collections::HashSet::new();
    let mut total = 0;
    for line in text(&r.stdout).lines() {
        let f: Vec<u64> = line.split(' ').map(|x| x.parse().unwrap()).collect();
        if count_links || f[2] == 1 || seen.insert((f[0], f[1])) {
            total += f[3];
        }
    }
    total
}

#[test]
fn du_apparent_sizes_count_files_and_links_only() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path().join("t");
    build(&t, true);
    let expect = apparent_reference(&t, false);
    let expect_l = apparent_reference(&t, true);
    let dirs = run(Command::new("find").arg(&t).args(["-type", "d"]))
        .stdout
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .count();
    assert!(dirs > 10);
    for threads in ["-j1", "-j2", "-j0"] {
        for (opts, want) in [
            (&["-sb"][..], expect),
            (&["-s", "--apparent-size", "-B1"], expect),
            (&["-sAB1"], expect),
            (&["-sbl"], expect_l),
        ] {
            let mut a: Vec<&OsStr> = opts.iter().map(OsStr::new).collect();
            a.push(OsStr::new(threads));
            a.push(t.as_os_str());
            let r = ftw_du(&a);
            assert_eq!(r.code, 0, "{}", r.stderr);
            assert_eq!(
                text(&r.stdout),
                format!("{want}\t{}\n", t.display()),
                "{opts:?} {threads}"
            );
        }
        // In KiB, rounded up as du rounds.
        let r = ftw_du(&[OsStr::new("-s"), OsStr::new("-A"), t.as_os_str()]);
        assert_eq!(
            text(&r.stdout),
            format!("{}\t{}\n", expect.div_ceil(1024), t.display())
        );
    }
    // du 9.1 adds the directories' sizes; ftw does not: the difference is theirs.
    let old = du(&[OsStr::new("-sb"), t.as_os_str()]);
    let old: u64 = text(&old.stdout)
        .split('\t')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(old >= expect, "du -sb {old} < reference {expect}");
}

#[test]
fn du_export_is_read_by_ncdu_and_gdu() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path().join("t");
    build(&t, true);
    let bytes = |r: &Run| -> u64 {
        text(&r.stdout)
            .split_whitespace()
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    let total = bytes(&ftw_du(&[OsStr::new("-sB1"), t.as_os_str()]));
    let apparent = bytes(&ftw_du(&[OsStr::new("-sb"), t.as_os_str()]));
    for extra in [&[][..], &["-j1"], &["-d", "1"], &["-d", "0"]] {
        let file = tmp.path().join("export.json");
        let mut a: Vec<&OsStr> = vec![OsStr::new("-o"), file.as_os_str()];
        a.extend(extra.iter().map(OsStr::new));
        a.push(t.as_os_str());
        let r = ftw_du(&a);
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert!(r.stdout.is_empty(), "the export alone is written");
        // ncdu reads it and exports it again: the sizes add up to the totals.
        let again = tmp.path().join("again.json");
        let n = run(Command::new("ncdu")
            .arg("-f")
            .arg(&file)
            .arg("-o")
            .arg(&again));
        assert_eq!(n.code, 0, "ncdu -f {extra:?}: {}", n.stderr);
        let json = fs::read_to_string(&again).unwrap();
        // Each file once, though the export names a hard-linked one at each name.
        let mut inodes = std::collections::HashSet::new();
        let entries: Vec<&str> = json
            .split('{')
            .skip(2)
            .filter(
                |e| match e.split("\"ino\":").nth(1).filter(|_| e.contains("hlnkc")) {
                    Some(ino) => inodes.insert(ino.split([',', '}']).next().unwrap().to_string()),
                    None => true,
                },
            )
            .collect();
        let sum = |key: &str| -> u64 {
            entries
                .iter()
                .flat_map(|e| e.split(key).skip(1))
                .map(|s| {
                    s.chars()
                        .take_while(char::is_ascii_digit)
                        .collect::<String>()
                        .parse::<u64>()
                        .unwrap()
                })
                .sum()
        };
        assert_eq!(sum("\"dsize\":"), total, "ncdu's disk usage {extra:?}");
        assert_eq!(
            sum("\"asize\":"),
            apparent,
            "ncdu's apparent size {extra:?}"
        );
        if extra != ["-d", "0"] {
            assert!(json.contains("new\\nline"), "names come back");
        }
        // gdu reads it too and finds the same total (for the whole tree: gdu takes a
        // directory's size from its entries, not from its own dsize, so a directory
        // folded below -d counts as empty there).
        if extra.contains(&"-d") {
            continue;
        }
        let g =
            run(Command::new("gdu")
                .arg("-f")
                .arg(&file)
                .args(["-n", "-p", "-s", "--no-prefix"]));
        assert_eq!(g.code, 0, "gdu -f {extra:?}: {}", g.stderr);
        assert_eq!(
            bytes(&g),
            total,
            "gdu's total {extra:?}: {}",
            text(&g.stdout)
        );
    }
    // '-' writes it to standard output.
    let r = ftw_du(&[OsStr::new("-o"), OsStr::new("-"), t.as_os_str()]);
    assert!(r.stdout.starts_with(b"[1,2,{\"progname\":\"ftw\""));
    assert!(
        r.stdout.is_ascii() || std::str::from_utf8(&r.stdout).is_ok(),
        "valid UTF-8"
    );
}

/// The entries of an ncdu export: each one's path and what ncdu says of it (a
/// directory's sizes aside: ncdu 1.18 counts a directory's apparent size, as du 9.1,
/// and ftw does not), sorted.
fn ncdu_entries(json: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack: Vec<String> = Vec::new();
    let mut chars = json.chars().peekable();
    let mut dir_next = false;
    // One JSON string, its escapes kept as written.
    let string = |chars: &mut std::iter::Peekable<std::str::Chars<'_>>| {
        let mut v = String::new();
        while let Some(c) = chars.next() {
            match c {
                '"' => break,
                '\\' => {
                    v.push(c);
                    v.extend(chars.next());
                }
                c => v.push(c),
            }
        }
        v
    };
    while let Some(c) = chars.next() {
        match c {
            '[' => dir_next = true,
            ']' => {
                stack.pop();
            }
            '"' => {
                string(&mut chars);
            }
            '{' => {
                let mut fields = Vec::new();
                let mut name = String::new();
                loop {
                    match chars.next() {
                        Some('"') => {
                            let key = string(&mut chars);
                            assert_eq!(chars.next(), Some(':'));
                            let value = if chars.peek() == Some(&'"') {
                                chars.next();
                                string(&mut chars)
                            } else {
                                let mut v = String::new();
                                while let Some(&c) = chars.peek().filter(|c| !",}".contains(**c)) {
                                    v.push(c);
                                    chars.next();
                                }
                                v
                            };
                            match key.as_str() {
                                "name" => name = value,
                                "asize" | "dsize" | "dev" if dir_next => {}
                                "dev" | "progname" | "progver" | "timestamp" => {}
                                _ => fields.push(format!("{key}={value}")),
                            }
                        }
                        Some('}') | None => break,
                        Some(_) => {}
                    }
                }
                if name.is_empty() {
                    dir_next = false;
                    continue; // the export's own metadata
                }
                let mut path = stack.join("/");
                path.push('/');
                path.push_str(&name);
                fields.sort();
                out.push(format!(
                    "{path}{} {}",
                    if dir_next { "/" } else { "" },
                    fields.join(" ")
                ));
                if dir_next {
                    stack.push(name);
                }
                dir_next = false;
            }
            _ => {}
        }
    }
    out.sort();
    out
}

#[test]
fn du_export_keeps_every_name_of_a_hard_linked_file() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path().join("t");
    build(&t, true);
    // A directory whose only file is a further name of one met first elsewhere.
    fs::create_dir(t.join("zz only a link")).unwrap();
    fs::hard_link(t.join("top"), t.join("zz only a link/top again")).unwrap();
    let theirs = run(Command::new("ncdu").arg("-o").arg("-").arg(&t));
    assert_eq!(theirs.code, 0, "ncdu -o: {}", theirs.stderr);
    let theirs = ncdu_entries(&text(&theirs.stdout));
    assert!(
        theirs
            .iter()
            .any(|e| e.contains("/zz only a link/top again") && e.contains("hlnkc=true"))
    );
    for threads in ["-j1", "-j0"] {
        let file = tmp.path().join("export.json");
        let r = ftw_du(&[
            OsStr::new(threads),
            OsStr::new("-o"),
            file.as_os_str(),
            t.as_os_str(),
        ]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        // As ncdu reads ours (and writes it again, in its own words): the same entries,
        // every name of each file with its inode, link count and hlnkc, as ncdu's own.
        let ours = run(Command::new("ncdu").arg("-f").arg(&file).arg("-o").arg("-"));
        assert_eq!(ours.code, 0, "ncdu -f: {}", ours.stderr);
        // (A byte that is not UTF-8 is written \u00XX, valid JSON, which ncdu reads back
        // as that character; ncdu's own export writes the byte as it is.)
        let ours = text(&ours.stdout).replace('\u{ff}', "\u{fffd}");
        assert_eq!(ncdu_entries(&ours), theirs, "{threads}");
    }
}

#[test]
fn du_tree_view_shows_the_largest_entries_escaped() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path().join("t");
    build(&t, false);
    fs::write(t.join("new\nline/big\x1b[31m"), vec![1u8; 3_000_000]).unwrap();
    let r = run(Command::new(ftw_bin())
        .args(["du", "--tree", "-n", "4", "--color", "never"])
        .arg(&t)
        .env("COLUMNS", "80"));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let out = text(&r.stdout);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 4, "{out}");
    assert!(lines[0].contains(&*t.to_string_lossy()) && lines[0].ends_with("100%"));
    assert!(lines[1].contains("new\\nline"), "{out}");
    assert!(lines[2].contains("big\\x1b[31m"), "{out}");
    assert!(!r.stdout.contains(&0x1b), "no raw escape: {out}");
    assert!(lines.iter().all(|l| l.chars().count() <= 80), "{out}");
    let sized = run(Command::new(ftw_bin())
        .args(["du", "--tree", "-n", "3", "--color", "always"])
        .arg(&t)
        .env("COLUMNS", "200"));
    assert!(sized.stdout.contains(&0x1b), "colour when asked");
    let plain = run(Command::new(ftw_bin())
        .args(["du", "--tree", "-n", "3"])
        .arg(&t)
        .env("COLUMNS", "200"));
    assert!(!plain.stdout.contains(&0x1b), "no colour when piped");
}

#[test]
fn du_errors_are_reported_and_the_rest_counted() {
    let un = Unprivileged::new("ftw-du-");
    let t = &un.root;
    fs::create_dir_all(t.join("open/sub")).unwrap();
    fs::create_dir_all(t.join("closed/inside")).unwrap();
    fs::write(t.join("open/f"), vec![1u8; 10_000]).unwrap();
    fs::write(t.join("closed/inside/g"), vec![1u8; 10_000]).unwrap();
    for d in ["open", "open/sub", "closed/inside"] {
        set_mode(&t.join(d), 0o755);
    }
    set_mode(&t.join("closed"), 0o000);
    let mut theirs = as_user(Path::new("/usr/bin/du"));
    let theirs = run(theirs.arg("-a").arg(t).env("LC_ALL", "C"));
    for threads in ["-j1", "-j2"] {
        let ours = run(as_user(&un.bin).args(["du", threads, "-a"]).arg(t));
        if Unprivileged::cannot_switch(&ours) {
            eprintln!("skipped: cannot switch users");
            return;
        }
        assert_eq!(ours.code, 1);
        assert_eq!(theirs.code, 1);
        assert_eq!(
            sorted_lines(&ours.stdout),
            sorted_lines(&theirs.stdout),
            "the rest is counted, the unreadable directory's own size too ({threads})"
        );
        if threads == "-j1" {
            assert_eq!(text(&ours.stdout), text(&theirs.stdout), "in du's order");
        }
        assert!(
            ours.stderr.contains("closed: Permission denied"),
            "{}",
            ours.stderr
        );
        assert!(
            ours.stderr.contains("totals are incomplete: 1 error"),
            "{}",
            ours.stderr
        );
    }
    set_mode(&t.join("closed"), 0o755);
}

/// The benchmark's tree of hard-linked copies, where the machine has it: the totals
/// equal du's, and with one thread (du's order, so each file counted in the copy du
/// counts it in), every directory's down to two levels.
#[test]
fn du_big_tree_equals_gnu_du() {
    let big = Path::new("/bench/trees/big");
    if !big.join("c24").is_dir() {
        eprintln!("skipped: no /bench/trees/big");
        return;
    }
    let roots = [big.to_path_buf()];
    for opts in [&["-sB1"][..], &["-slB1"], &["-s", "--inodes"]] {
        same_as_du(opts, &roots, "0", true);
    }
    same_as_du(&["-B1", "-d", "2"], &roots, "1", false);
}

#[test]
fn du_usage_errors() {
    // du's own refusals exit as du's do, with 1.
    let r = ftw_du(&[OsStr::new("-s"), OsStr::new("-d"), OsStr::new("1")]);
    assert_eq!(r.code, 1);
    let r = ftw_du(&[OsStr::new("-B"), OsStr::new("0")]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("invalid -B argument"), "{}", r.stderr);
    let r = ftw_du(&[OsStr::new("--help")]);
    assert_eq!(r.code, 0);
    assert!(text(&r.stdout).contains("--human-readable"));
}

/// Creates `n` entries under `root` quickly, in directories of 1,000 made on two
/// threads: in each, a file, 500 hard links to it (which the dedup set holds once) and
/// 499 empty files (distinct inodes).
fn many_entries(root: &Path, n: usize) {
    let per_dir = 1000;
    let dirs = n / per_dir;
    std::thread::scope(|scope| {
        for part in 0..2 {
            scope.spawn(move || {
                for d in (part..dirs).step_by(2) {
                    let dir = root.join(format!("d{d}"));
                    fs::create_dir(&dir).unwrap();
                    let seed = dir.join("0");
                    fs::write(&seed, b"x").unwrap();
                    for i in 1..per_dir {
                        let p = dir.join(format!("{i}"));
                        if i % 2 == 0 {
                            fs::File::create(p).unwrap();
                        } else {
                            fs::hard_link(&seed, p).unwrap();
                        }
                    }
                }
            });
        }
    });
}

#[test]
fn du_summary_of_two_million_entries_stays_small() {
    let n = 2_000_000;
    // On a tmpfs where there is one with room (entries are made ten times faster there
    // than on a journaled disk), else in the temporary directory.
    let shm = Path::new("/dev/shm");
    let roomy = rustix::fs::statvfs(shm).is_ok_and(|v| v.f_favail > 3 * n as u64 / 2);
    let tmp = if roomy {
        tempfile::tempdir_in(shm).unwrap()
    } else {
        tempfile::tempdir().unwrap()
    };
    let start = std::time::Instant::now();
    many_entries(tmp.path(), n);
    eprintln!("made {n} entries in {:?}", start.elapsed());
    let (status, out, peak) = with_peak_rss(
        Command::new(ftw_bin())
            .args(["du", "-s", "--inodes"])
            .arg(tmp.path()),
    );
    let out = text(&out);
    assert!(status.success());
    // The root, the directories, and in each its file (its links counted once) and
    // its 499 empty files.
    let dirs = n / 1000;
    let expect = 1 + dirs + dirs * 500;
    let counted: usize = out.split('\t').next().unwrap().parse().unwrap();
    assert_eq!(counted, expect, "{out}");
    eprintln!("peak RSS of ftw du -s over {n} entries: {peak} KiB");
    assert!(peak > 0 && peak < 64 * 1024, "{peak} KiB");
    let r = ftw_du(&[
        OsStr::new("-s"),
        OsStr::new("--inodes"),
        OsStr::new("-j1"),
        tmp.path().as_os_str(),
    ]);
    assert_eq!(text(&r.stdout), out);
    // du's lines of every entry (-a) are written as they come, not kept: 2,000,000
    // lines in the same memory.
    let (status, lines, peak) =
        with_peak_rss(Command::new(ftw_bin()).args(["du", "-a"]).arg(tmp.path()));
    assert!(status.success());
    let lines = lines.iter().filter(|&&b| b == b'\n').count();
    assert_eq!(lines, 1 + dirs + dirs * 500, "one line an entry counted");
    eprintln!("peak RSS of ftw du -a over {n} entries: {peak} KiB");
    assert!(peak > 0 && peak < 64 * 1024, "ftw du -a: {peak} KiB");
    // A reader that goes away ends it quietly.
    let (status, err) =
        close_after_first_bytes(Command::new(ftw_bin()).args(["du", "-a"]).arg(tmp.path()));
    assert!(status.success(), "{err}");
    assert!(err.is_empty(), "{err}");
}

#[test]
fn du_summary_of_one_huge_directory_on_many_workers_stays_small() {
    // One directory of 600,000 entries on 16 workers: its parts go out to whichever
    // worker is free, and every part handed out holds its entries until it is done.
    // Parts of 32,768 entries each took 18 MiB at -j16 (one per worker); the parts
    // handed out after the first are a quarter of that.
    let n = 600_000;
    let shm = Path::new("/dev/shm");
    let roomy = rustix::fs::statvfs(shm).is_ok_and(|v| v.f_favail > 3 * n as u64 / 2);
    let tmp = if roomy {
        tempfile::tempdir_in(shm).unwrap()
    } else {
        tempfile::tempdir().unwrap()
    };
    let dir = tmp.path().join("one");
    fs::create_dir(&dir).unwrap();
    std::thread::scope(|scope| {
        for part in 0..2 {
            let dir = &dir;
            scope.spawn(move || {
                for i in (part..n).step_by(2) {
                    fs::File::create(dir.join(format!("f{i}"))).unwrap();
                }
            });
        }
    });
    let (status, out, peak) = with_peak_rss(
        Command::new(ftw_bin())
            .args(["du", "-s", "--inodes", "-j16"])
            .arg(&dir),
    );
    assert!(status.success());
    let counted: usize = text(&out).split('\t').next().unwrap().parse().unwrap();
    assert_eq!(counted, n + 1);
    eprintln!("peak RSS of ftw du -s -j16 over one directory of {n} entries: {peak} KiB");
    assert!(peak > 0 && peak < 12 * 1024, "{peak} KiB");
}

mod random {
    //! Random trees (proptest): files of random sizes, directories, hard links to files
    //! made before, symbolic links; `ftw du -j 1` prints what du prints, byte for byte,
    //! and the parallel totals are du's.

    use super::*;
    use proptest::prelude::*;

    #[derive(Debug, Clone)]
    enum Kind {
        File(usize),
        Dir,
        /// A hard link to the n-th file made so far (modulo their count).
        HardLink(usize),
        Link(Vec<u8>),
    }

    fn entry() -> impl Strategy<Value = (Vec<Vec<u8>>, Kind)> {
        let name = prop::sample::select(vec![
            b"a".to_vec(),
            b"b".to_vec(),
            b"c d".to_vec(),
            b"\xff".to_vec(),
            b"n\nl".to_vec(),
        ]);
        let kind = prop_oneof![
            3 => (0usize..20_000).prop_map(Kind::File),
            3 => Just(Kind::Dir),
            2 => (0usize..100).prop_map(Kind::HardLink),
            1 => prop::sample::select(vec![b"a".to_vec(), b"..".to_vec(), b"nowhere".to_vec()])
                .prop_map(Kind::Link),
        ];
        (prop::collection::vec(name, 1..5), kind)
    }

    fn build(root: &Path, entries: &[(Vec<Vec<u8>>, Kind)]) {
        build_entries(
            root,
            entries.iter().map(|(comps, kind)| {
                let made = match kind {
                    Kind::File(len) => Made::File(*len),
                    Kind::Dir => Made::Dir,
                    Kind::HardLink(i) => Made::HardLink(*i),
                    Kind::Link(to) => Made::Link(PathBuf::from(OsStr::from_bytes(to))),
                };
                (&comps[..], made)
            }),
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]

        #[test]
        fn du_random_trees_equal_gnu_du(entries in prop::collection::vec(entry(), 1..40)) {
            let tmp = tempfile::tempdir().unwrap();
            let root = tmp.path().join("t");
            fs::create_dir(&root).unwrap();
            build(&root, &entries);
            for opts in [&["-a", "-B1"][..], &["-a", "-l"], &["-S", "--inodes"], &["-a", "-L", "-B1"]] {
                let mut a: Vec<&OsStr> = opts.iter().map(OsStr::new).collect();
                a.push(root.as_os_str());
                let theirs = du(&a);
                let mut ours_args = vec![OsStr::new("-j1")];
                ours_args.extend(a.iter().copied());
                let ours = ftw_du(&ours_args);
                prop_assert_eq!(ours.code, theirs.code, "{:?}: {}", opts, ours.stderr);
                prop_assert_eq!(text(&ours.stdout), text(&theirs.stdout), "{:?}", opts);
            }
            let theirs = du(&[OsStr::new("-sB1"), root.as_os_str()]);
            let ours = ftw_du(&[OsStr::new("-sB1"), root.as_os_str()]);
            prop_assert_eq!(text(&ours.stdout), text(&theirs.stdout));
        }
    }
}

#[test]
fn du_ignore_and_exclude_globs_leave_out_what_du_exclude_does() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("t");
    build(&root, false);
    fs::create_dir_all(root.join("a/build/deeper")).unwrap();
    fs::write(root.join("a/build/deeper/obj"), vec![7u8; 20_000]).unwrap();
    fs::write(root.join("a/x.log"), vec![7u8; 9_000]).unwrap();
    fs::write(root.join(".ignore"), "build/\n*.log\n").unwrap();
    let roots = [root.clone()];
    for threads in ["1", "0"] {
        let j = format!("-j{threads}");
        // -E: a name glob, as du's --exclude with the same names.
        let ours = ftw_du(&args(
            &os(&["-s", "-B1", &j, "-E", "build", "-E", "*.log"]),
            &roots,
        ));
        let theirs = du(&args(
            &os(&["-s", "-B1", "--exclude=build", "--exclude=*.log"]),
            &roots,
        ));
        assert_eq!(
            (ours.code, text(&ours.stdout)),
            (0, text(&theirs.stdout)),
            "-E {j}"
        );
        // --ignore: the .ignore file's rules; du is told the same names.
        let ours = ftw_du(&args(&os(&["-s", "-B1", &j, "--ignore"]), &roots));
        assert_eq!(
            (ours.code, text(&ours.stdout)),
            (0, text(&theirs.stdout)),
            "--ignore {j}"
        );
        // Without them, everything (the rules are only a file).
        let all = ftw_du(&args(&os(&["-s", "-B1", &j]), &roots));
        let du_all = du(&args(&os(&["-s", "-B1"]), &roots));
        assert_eq!(text(&all.stdout), text(&du_all.stdout));
        assert_ne!(
            text(&all.stdout),
            text(&theirs.stdout),
            "the test must exclude something"
        );
    }
}

/// Apparent sizes past 2^64 bytes: du's sums saturate and it prints `Infinity`; they
/// must not wrap to a small number. Needs a file system taking files of 2^63 - 1 bytes
/// (tmpfs, Btrfs, XFS): skipped where none is found.
#[test]
fn du_sizes_past_u64_are_infinity_not_wrapped() {
    let dir = ["/dev/shm", "/tmp"]
        .iter()
        .filter_map(|d| tempfile::tempdir_in(d).ok())
        .find(|t| {
            fs::File::create(t.path().join("a"))
                .and_then(|f| f.set_len(i64::MAX as u64))
                .is_ok()
        });
    let Some(tmp) = dir else {
        eprintln!("skipped: no file system here takes a file of 2^63 - 1 bytes");
        return;
    };
    let r = tmp.path();
    for name in ["b", "c"] {
        fs::File::create(r.join(name))
            .unwrap()
            .set_len(i64::MAX as u64)
            .unwrap();
    }
    let files: Vec<PathBuf> = ["a", "b", "c"].iter().map(|n| r.join(n)).collect();
    let mut with_total: Vec<&OsStr> = vec![OsStr::new("-bc")];
    with_total.extend(files.iter().map(|f| f.as_os_str()));
    for (opts, roots) in [
        (vec![OsStr::new("-sb")], vec![r.as_os_str()]),
        (
            vec![OsStr::new("-sb"), OsStr::new("-h")],
            vec![r.as_os_str()],
        ),
        (
            vec![OsStr::new("-b"), OsStr::new("-j1")],
            vec![r.as_os_str()],
        ),
        (with_total.clone(), vec![]),
    ] {
        let mut a = opts.clone();
        a.extend(roots);
        let out = ftw_du(&a);
        assert_eq!(out.code, 0, "{a:?}: {}", out.stderr);
        let last = text(&out.stdout).lines().last().unwrap().to_string();
        assert!(
            last.starts_with("Infinity\t"),
            "ftw du {a:?}: {}",
            text(&out.stdout)
        );
    }
    // The tree view: the root's total is past u64::MAX, and its children's shares add
    // up to no more than its 100%.
    for threads in ["-j1", "-j0"] {
        let out = ftw_du(&[
            OsStr::new("--tree"),
            OsStr::new("-b"),
            OsStr::new(threads),
            r.as_os_str(),
        ]);
        assert_eq!(out.code, 0, "{}", out.stderr);
        let shown = text(&out.stdout);
        let percents: Vec<u64> = shown
            .lines()
            .map(|l| {
                l.trim_end()
                    .trim_end_matches('%')
                    .rsplit(' ')
                    .next()
                    .unwrap()
                    .parse()
                    .unwrap()
            })
            .collect();
        assert_eq!(percents.len(), 4, "{shown}");
        assert_eq!(percents[0], 100, "{shown}");
        assert!(percents[1..].iter().sum::<u64>() <= 100, "{shown}");
    }
}

/// `ftw du -o - | head`: the export's reader going away ends it quietly, with status 0,
/// as du's lines do.
#[test]
fn du_export_to_a_closed_pipe_is_quiet() {
    let tmp = tempfile::tempdir().unwrap();
    // Enough entries for an export well past the pipe's and the writer's buffers.
    for i in 0..8000 {
        fs::write(tmp.path().join(format!("file number {i:05}")), b"").unwrap();
    }
    let (status, err) = close_after_first_bytes(
        Command::new(ftw_bin())
            .args(["du", "-o", "-"])
            .arg(tmp.path()),
    );
    assert!(err.is_empty(), "{err}");
    assert!(status.success(), "{status:?}");
}

/// A name with a bidirectional control (U+202E turns the rest of the line around on a
/// terminal, so that a name may show as another, and its size and bar are reversed)
/// is written escaped in the tree view.
#[test]
fn du_tree_view_escapes_bidirectional_controls() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path().join("t");
    fs::create_dir(&t).unwrap();
    fs::write(t.join("report\u{202e}fdp.exe"), vec![1u8; 50_000]).unwrap();
    fs::write(t.join("x\u{2067}y\u{200f}"), vec![1u8; 40_000]).unwrap();
    let r = run(Command::new(ftw_bin())
        .args(["du", "--tree", "-n", "3", "--color", "never"])
        .arg(&t)
        .env("COLUMNS", "100"));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let out = text(&r.stdout);
    assert!(out.contains("report\\u{202e}fdp.exe"), "{out}");
    assert!(out.contains("x\\u{2067}y\\u{200f}"), "{out}");
    for c in ['\u{202e}', '\u{2067}', '\u{200f}'] {
        assert!(!out.contains(c), "raw {c:?}: {out}");
    }
}

/// Wide characters (CJK: two columns each on a terminal) are fitted by the columns they
/// take: the bars of every line start in the same column, and no line is wider than
/// the terminal, whether a name is cut or not.
#[test]
fn du_tree_view_fits_wide_names_by_columns() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path().join("t");
    fs::create_dir(&t).unwrap();
    fs::write(t.join("日本語のファイル名"), vec![1u8; 60_000]).unwrap();
    fs::write(t.join("ascii-name"), vec![1u8; 50_000]).unwrap();
    fs::write(
        t.join("漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字"),
        vec![1u8; 40_000],
    )
    .unwrap();
    // The test's own count of columns: ideographs and kana two, the rest one.
    let columns = |s: &str| -> usize {
        s.chars()
            .map(|c| {
                if ('\u{3040}'..='\u{9fff}').contains(&c) {
                    2
                } else {
                    1
                }
            })
            .sum()
    };
    for width in [60usize, 100] {
        let r = run(Command::new(ftw_bin())
            .args(["du", "--tree", "-n", "4", "--color", "never"])
            .arg(&t)
            .env("COLUMNS", width.to_string()));
        assert_eq!(r.code, 0, "{}", r.stderr);
        let out = text(&r.stdout);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 4, "{out}");
        let bar_at: Vec<usize> = lines
            .iter()
            .map(|l| columns(&l[..l.find(" │").expect("a bar")]))
            .collect();
        assert!(
            bar_at.iter().all(|&c| c == bar_at[0]),
            "{width}: {bar_at:?}\n{out}"
        );
        assert!(lines.iter().all(|l| columns(l) <= width), "{width}:\n{out}");
        assert!(out.contains("日本語のファイル名"), "{out}");
        // At 60 columns the long name (56 columns) is cut; at 100 it is whole.
        assert_eq!(out.contains('…'), width == 60, "{out}");
    }
}
