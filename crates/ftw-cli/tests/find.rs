//! `ftw find` against GNU find, on trees made to be awkward.
// Unix only: these tests build trees with Unix calls and compare with GNU tools;
// tests/windows.rs runs the Windows build under wine.
#![cfg(unix)]

mod common;

use common::*;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::Command;

/// The thread counts every differential test runs with (0: ftw's own choice).
const THREADS: &[&str] = &["1", "2", "8", "0"];

/// Compares `ftw find` with `find` on `root` for one set of options, with every thread
/// count.
fn compare(root: &Path, ftw_args: &[&str], find_opts: &[&str], find_tests: &[&str]) {
    let (theirs, fr) = gnu_find(root, find_opts, find_tests);
    for j in THREADS {
        let mut args = ftw_args.to_vec();
        args.extend(["-j", j]);
        let (ours, r) = ftw_find(root, &args);
        assert_same(
            &format!("ftw find {args:?} vs find {find_opts:?} {find_tests:?}"),
            &ours,
            &theirs,
        );
        let (errors, code) = find_expectation(&fr);
        assert_eq!(
            r.code, code,
            "exit status of ftw {args:?} (stderr: {})",
            r.stderr
        );
        assert_eq!(
            error_count(&r.stderr),
            errors,
            "as many errors as find: ftw said {:?}, find said {:?}",
            r.stderr,
            fr.stderr
        );
    }
}

#[test]
fn odd_names_and_links_match_find() {
    let tmp = tempfile::tempdir().unwrap();
    odd_tree(tmp.path());
    compare(tmp.path(), &[], &["-H"], &["-mindepth", "1"]);
}

#[test]
fn follow_links_matches_find_dash_l() {
    let tmp = tempfile::tempdir().unwrap();
    odd_tree(tmp.path());
    // Links to files, directories, dangling, looping, and to ancestors: find -L prints
    // dangling links, reports loops as errors and does not print them.
    compare(tmp.path(), &["-L"], &["-L"], &["-mindepth", "1"]);
}

#[test]
fn depth_limits_match_find() {
    let tmp = tempfile::tempdir().unwrap();
    odd_tree(tmp.path());
    for d in ["0", "1", "2", "3"] {
        compare(
            tmp.path(),
            &["--max-depth", d],
            &["-H"],
            &["-mindepth", "1", "-maxdepth", d],
        );
    }
    for d in ["0", "2", "3", "9"] {
        compare(tmp.path(), &["--min-depth", d], &["-H"], &["-mindepth", d]);
    }
    compare(
        tmp.path(),
        &["--min-depth", "2", "-d", "3", "-L"],
        &["-L"],
        &["-mindepth", "2", "-maxdepth", "3"],
    );
}

#[test]
fn trailing_slash_and_dot_roots_print_like_find() {
    let tmp = tempfile::tempdir().unwrap();
    odd_tree(tmp.path());
    let mut slash = tmp.path().as_os_str().as_bytes().to_vec();
    slash.push(b'/');
    compare(p(&slash), &[], &["-H"], &["-mindepth", "1"]);
    let (ours, r) = {
        let out = Command::new(ftw_bin())
            .current_dir(tmp.path().join("plain"))
            .args(["find", "-0"])
            .output()
            .unwrap();
        (records(&out.stdout), out.status)
    };
    assert!(r.success());
    let theirs = records(
        &Command::new("find")
            .current_dir(tmp.path().join("plain"))
            .args([".", "-mindepth", "1", "-print0"])
            .output()
            .unwrap()
            .stdout,
    );
    assert_same("ftw find (default root .)", &ours, &theirs);
    assert!(ours.iter().all(|r| r.starts_with(b"./")));
}

#[test]
fn ten_thousand_level_chain_matches_find() {
    let tmp = tempfile::tempdir().unwrap();
    let made = chain(tmp.path(), 10_000, "d", 1);
    let mut find = Command::new("find");
    find.arg(tmp.path()).args(["-mindepth", "1", "-print0"]);
    let (theirs, fcode, ferr) = fingerprint(&mut find);
    assert_eq!(fcode, 0, "find failed: {ferr}");
    assert_eq!(theirs.0, made);
    for j in THREADS {
        let mut ours = Command::new(ftw_bin());
        ours.args(["find", "-0", "-j", j]).arg(tmp.path());
        let (ours, code, err) = fingerprint(&mut ours);
        assert_eq!(code, 0, "ftw -j {j} failed: {err}");
        assert_eq!(
            ours, theirs,
            "ftw -j {j}: the listing of the chain differs from find's"
        );
    }
    remove_chain(tmp.path(), "d");
}

#[test]
fn hundred_thousand_entry_directory_matches_find() {
    let tmp = tempfile::tempdir().unwrap();
    let big = tmp.path().join("big");
    std::fs::create_dir(&big).unwrap();
    for i in 0..100_000u32 {
        // Names of varied length, some with odd bytes.
        let name = match i % 5 {
            0 => format!("f{i}"),
            1 => format!("file number {i} with spaces"),
            2 => format!("{i:0>40}"),
            3 => format!("x\t{i}"),
            _ => format!("{i}.txt"),
        };
        std::fs::File::create(big.join(name)).unwrap();
    }
    std::fs::create_dir(big.join("\u{1F600} sub")).unwrap();
    std::fs::write(big.join("\u{1F600} sub/inner"), b"").unwrap();
    compare(tmp.path(), &[], &["-H"], &["-mindepth", "1"]);
}

#[test]
fn a_deep_comb_lists_completely_with_a_small_fd_limit() {
    // Every level holds a directory still to visit after the one descended into, so the
    // walk must keep, close and reopen handles: with `ulimit -n 32` that is the only way.
    let tmp = tempfile::tempdir().unwrap();
    let mut dir = tmp.path().to_path_buf();
    for i in 0..200 {
        std::fs::create_dir(dir.join("z-later")).unwrap();
        std::fs::write(dir.join(format!("z-later/f{i}")), b"").unwrap();
        dir.push("a");
        std::fs::create_dir(&dir).unwrap();
    }
    let (theirs, _) = gnu_find(tmp.path(), &[], &["-mindepth", "1"]);
    for sort in [false, true] {
        let args = if sort { "--sort" } else { "" };
        let r = run(&mut ftw_find_under("-n 32", args, tmp.path()));
        assert_eq!(r.code, 0, "stderr: {}", r.stderr);
        assert_same("comb under ulimit -n 32", &records(&r.stdout), &theirs);
    }
}

/// Directories with a single subdirectory share their handle with it beyond the
/// others' limit (so that chains open one level at a time): on a tree alternating one
/// and two subdirectories a level, those shares must not pile up with the depth.
#[test]
fn alternating_single_and_double_levels_under_ulimit_n_32() {
    let tmp = tempfile::tempdir().unwrap();
    let mut dir = tmp.path().to_path_buf();
    for _ in 0..600 {
        dir.push("s");
        std::fs::create_dir_all(dir.join("w/l")).unwrap();
        dir.push("w");
    }
    let (theirs, _) = gnu_find(tmp.path(), &[], &["-mindepth", "1"]);
    for threads in ["0", "2", "8"] {
        let args = format!("-j {threads}");
        let r = run(&mut ftw_find_under("-n 32", &args, tmp.path()));
        assert_eq!(r.code, 0, "-j {threads}: {}", r.stderr);
        assert_same(
            &format!("-j {threads} under ulimit -n 32"),
            &records(&r.stdout),
            &theirs,
        );
    }
}

#[test]
fn twenty_thousand_levels_under_ulimit_64() {
    let tmp = tempfile::tempdir().unwrap();
    chain(tmp.path(), 20_000, "d", 0);
    let mut cmd = ftw_find_under("-n 64", "", tmp.path());
    let (count, longest, code, err) = count_and_longest(&mut cmd);
    assert_eq!(code, 0, "ftw failed: {err}");
    assert_eq!(count, 20_000);
    let mut want = tmp.path().as_os_str().as_bytes().to_vec();
    for _ in 0..20_000 {
        want.extend_from_slice(b"/d");
    }
    assert_eq!(longest.len(), want.len());
    assert!(longest == want, "the deepest path is the chain's end");
    remove_chain(tmp.path(), "d");
}

/// Following links keeps a chain of ancestors (to find loops): on a deep tree it must be
/// let go of without recursion, whatever the stack's size, in every walker, and take
/// memory in proportion to the depth.
#[test]
fn follow_links_on_twenty_thousand_levels_under_ulimit_s_256() {
    let tmp = tempfile::tempdir().unwrap();
    chain(tmp.path(), 20_000, "d", 0);
    for args in ["-L", "-L -j1", "-L -j4"] {
        let mut cmd = ftw_find_under("-s 256", args, tmp.path());
        // Memory is read once the whole chain is being walked: what a walk keeps per
        // directory above the one it reads must not grow with the depth of each.
        let (mut count, mut longest, mut peak) = (0, 0, 0);
        let (code, err) = stream_records(&mut cmd, |r, pid| {
            count += 1;
            longest = longest.max(r.len());
            if count == 19_990 {
                peak = peak_rss_kib(pid);
            }
        });
        assert_eq!(code, 0, "ftw find {args} failed: {err}");
        assert_eq!(count, 20_000, "ftw find {args}");
        assert_eq!(longest, tmp.path().as_os_str().len() + 2 * 20_000);
        assert!(
            peak < 64 * 1024,
            "ftw find {args}: {peak} KiB on 20,000 levels"
        );
    }
    remove_chain(tmp.path(), "d");
}

#[test]
fn every_command_works_on_a_main_stack_of_16_kib() {
    // Parsing the command line alone takes more than 16 KiB of stack: ftw moves to a
    // thread of its own (`ls` itself crashes under this limit).
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("t");
    std::fs::create_dir(&root).unwrap();
    odd_tree(&root);
    let under = |args: &str| {
        let mut cmd = Command::new("sh");
        cmd.arg("-c")
            .arg(format!("ulimit -s 16 && exec \"$0\" {args}"))
            .arg(ftw_bin())
            .arg(&root)
            // The environment is on that stack too: cargo's would fill it.
            .env_clear()
            .env("PATH", "/usr/bin:/bin");
        run(&mut cmd)
    };
    let r = under("--version");
    assert_eq!(r.code, 0, "ftw --version: {}", r.stderr);
    let plain: &[&str] = &["-H"];
    for (args, opts) in [
        ("find -0 \"$1\"", plain),
        ("find -0 -j1 \"$1\"", plain),
        ("find -0 --sort \"$1\"", plain),
        ("find -0 -L \"$1\"", &["-L"]),
    ] {
        let (theirs, fr) = gnu_find(&root, opts, &["-mindepth", "1"]);
        let r = under(args);
        let what = format!("ftw {args}, ulimit -s 16");
        assert_same(&what, &records(&r.stdout), &theirs);
        assert_eq!(
            error_count(&r.stderr),
            error_count(&fr.stderr),
            "{what}: {}",
            r.stderr
        );
    }
    let free = ftw(&[OsStr::new("du"), OsStr::new("-s"), root.as_os_str()]);
    let r = under("du -s \"$1\"");
    assert_eq!((r.code, &r.stdout), (0, &free.stdout), "du: {}", r.stderr);
    let r = under("rm \"$1\"");
    assert_eq!(r.code, 0, "ftw rm: {}", r.stderr);
    assert!(!root.exists(), "the tree is gone");
}

#[test]
fn a_main_stack_of_16_kib_with_no_thread_to_spare_is_raised_to_the_hard_limit() {
    // Under `ulimit -u 1` no thread can be started (the limit binds nobody, not root):
    // ftw stays on the main thread, whose soft limit of 16 KiB it raises (the hard one
    // allows it) rather than overflow it while parsing the command line.
    if !is_root() {
        println!("skipped: not root");
        return;
    }
    let u = Unprivileged::new("ftw-stack");
    odd_tree(&u.root);
    let under = |args: &str| {
        let mut cmd = Command::new("bash");
        cmd.arg("-c")
            .arg(format!(
                "ulimit -u 1 && exec setpriv --reuid=65534 --regid=65534 --clear-groups \
                 -- prlimit --stack=16384: -- \"$0\" {args}"
            ))
            .arg(&u.bin)
            .arg(&u.root)
            // The environment is on that stack too: cargo's would fill it.
            .env_clear()
            .env("PATH", "/usr/bin:/bin");
        run_within(&mut cmd, std::time::Duration::from_secs(60))
    };
    let r = under("--version");
    if Unprivileged::cannot_switch(&r) || r.stderr.contains("prlimit:") {
        println!("skipped: cannot run as nobody under prlimit: {}", r.stderr);
        return;
    }
    assert_eq!(r.code, 0, "ftw --version: {}", r.stderr);
    let (theirs, _) = gnu_find(&u.root, &["-H"], &["-mindepth", "1"]);
    for args in ["find -0 \"$1\"", "find -0 --sort \"$1\""] {
        let r = under(args);
        let what = format!("ftw {args}, ulimit -Ss 16 -u 1");
        assert_eq!(r.code, 0, "{what}: {}", r.stderr);
        assert_same(&what, &records(&r.stdout), &theirs);
    }
    // A main stack that cannot be raised: under 64 KiB a warning says it may be too
    // small; 256 KiB is enough for every command, and nothing is said of it. 48 KiB for
    // the warned case: the kernel starts the stack up to 8 KiB below its top at random,
    // and find --sort needs about 36 KiB (at 32 KiB it overflowed 2 runs in 3).
    for (hard, warned) in [("262144", false), ("49152", true)] {
        let mut cmd = Command::new("bash");
        cmd.arg("-c")
            .arg(format!(
                "ulimit -u 1 && exec setpriv --reuid=65534 --regid=65534 --clear-groups \
                 -- prlimit --stack={hard}:{hard} -- \"$0\" find -0 --sort \"$1\""
            ))
            .arg(&u.bin)
            .arg(&u.root)
            .env_clear()
            .env("PATH", "/usr/bin:/bin");
        let r = run_within(&mut cmd, std::time::Duration::from_secs(60));
        let what = format!("ftw find --sort, a stack of {hard} bytes, ulimit -u 1");
        assert_eq!(r.code, 0, "{what}: {}", r.stderr);
        assert_same(&what, &records(&r.stdout), &theirs);
        assert_eq!(
            r.stderr.contains("main stack"),
            warned,
            "{what}: {}",
            r.stderr
        );
    }
}

/// The error lines of a run, the warnings apart: (errors, warnings).
fn errors_and_warnings(stderr: &str) -> (Vec<&str>, Vec<&str>) {
    stderr
        .lines()
        .filter(|l| l.starts_with("ftw: "))
        .partition(|l| !l.starts_with("ftw: warning: "))
}

/// Runs `ftw find` where no thread can be started, or only a few: under `ulimit -u`
/// (RLIMIT_NPROC, which binds an unprivileged user only, hence nobody when the tests run
/// as root). The walk runs with the threads it has, down to the main thread alone, and
/// lists what a serial walk lists, with one warning at most.
#[test]
fn a_limit_on_threads_changes_nothing_that_is_listed() {
    let place = Unprivileged::new("ftw-nproc");
    let (root, bin) = (&place.root, &place.bin);
    for i in 0..40 {
        let d = root.join(format!("d{i}/sub"));
        std::fs::create_dir_all(&d).unwrap();
        for k in 0..20 {
            std::fs::write(d.join(format!("f{k}")), b"").unwrap();
        }
    }
    let mut bitten = false;
    for tree in [root.as_path(), Path::new("/usr")] {
        let mut c = as_user(bin);
        c.args(["find", "-0", "-j", "1"]).arg(tree);
        let serial = run(&mut c);
        if Unprivileged::cannot_switch(&serial) {
            eprintln!(
                "skipped: cannot run as an unprivileged user: {}",
                serial.stderr
            );
            return;
        }
        let want = records(&serial.stdout);
        let (want_errors, _) = errors_and_warnings(&serial.stderr);
        if tree == root.as_path() {
            assert_eq!((serial.code, want.len()), (0, 40 * 22), "{}", serial.stderr);
        }
        for limit in ["1", "3"] {
            for threads in [&[][..], &["-j", "8"]] {
                let mut c = as_user(Path::new("prlimit"));
                c.arg(format!("--nproc={limit}"))
                    .arg("--")
                    .arg(bin)
                    .args(["find", "-0"])
                    .args(threads)
                    .arg(tree);
                let r = run_within(&mut c, std::time::Duration::from_secs(300));
                let what = format!("{} under ulimit -u {limit}, {threads:?}", tree.display());
                assert_same(&what, &records(&r.stdout), &want);
                assert_eq!(r.code, serial.code, "{what}: {}", r.stderr);
                let (errors, warnings) = errors_and_warnings(&r.stderr);
                let mut sorted = errors.clone();
                sorted.sort();
                let mut want_sorted = want_errors.clone();
                want_sorted.sort();
                assert_eq!(sorted, want_sorted, "{what}");
                assert!(warnings.len() <= 1, "{what}: {}", r.stderr);
                for w in &warnings {
                    assert!(
                        w.starts_with("ftw: warning: cannot start a thread: "),
                        "{w}"
                    );
                }
                if limit == "1" && warnings.len() == 1 {
                    bitten = true;
                    assert!(
                        warnings[0].ends_with("running with 1 thread"),
                        "{what}: {}",
                        warnings[0]
                    );
                }
            }
        }
    }
    if !bitten {
        eprintln!("skipped in part: ulimit -u 1 did not keep ftw from starting threads here");
    }
}

#[test]
fn missing_root_is_an_error_for_that_root_only() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("kept"), b"").unwrap();
    let missing = tmp.path().join("no such dir");
    let r = ftw(&[
        OsStr::new("find"),
        missing.as_os_str(),
        tmp.path().as_os_str(),
    ]);
    assert_eq!(r.code, 1);
    assert_eq!(
        r.stderr,
        format!("ftw: {}: No such file or directory\n", missing.display())
    );
    assert_eq!(
        r.stdout,
        format!("{}/kept\n", tmp.path().display()).into_bytes()
    );
}

#[test]
fn a_file_root_lists_nothing_below_it_and_itself_at_min_depth_0() {
    let tmp = tempfile::tempdir().unwrap();
    let f = tmp.path().join("file");
    std::fs::write(&f, b"").unwrap();
    let r = ftw(&[OsStr::new("find"), f.as_os_str()]);
    assert_eq!((r.code, r.stdout.len()), (0, 0), "{}", r.stderr);
    let r = ftw(&[
        OsStr::new("find"),
        OsStr::new("--min-depth"),
        OsStr::new("0"),
        f.as_os_str(),
    ]);
    assert_eq!(r.stdout, format!("{}\n", f.display()).into_bytes());
}

/// Runs `ftw find` as an unprivileged user, so that a mode-000 directory really is
/// unreadable even when the tests run as root (where chmod denies nothing).
#[test]
fn unreadable_directory_is_reported_and_the_rest_listed() {
    let place = Unprivileged::new("ftw-perm");
    let (root, bin) = (&place.root, &place.bin);
    std::fs::create_dir_all(root.join("locked/inner")).unwrap();
    std::fs::create_dir_all(root.join("open/deeper")).unwrap();
    std::fs::write(root.join("open/deeper/file"), b"").unwrap();
    std::fs::write(root.join("zfile"), b"").unwrap();
    set_mode(&root.join("open"), 0o755);
    set_mode(&root.join("open/deeper"), 0o755);
    set_mode(&root.join("locked"), 0o000);
    let unprivileged = || as_user(bin);
    let mut cmd = unprivileged();
    cmd.arg("find").arg(root);
    let r = run(&mut cmd);
    // The unreadable directory as a root, printed at --min-depth 0 and then reported.
    let locked = root.join("locked");
    let mut as_root = Vec::new();
    for j in ["1", "2"] {
        let mut c = unprivileged();
        c.args(["find", "--min-depth", "0", "-j", j]).arg(&locked);
        as_root.push((j, run(&mut c)));
    }
    set_mode(&locked, 0o755);
    if Unprivileged::cannot_switch(&r) {
        eprintln!(
            "skipped: cannot run as an unprivileged user here: {}",
            r.stderr
        );
        return;
    }
    assert_eq!(
        r.stderr,
        format!("ftw: {}/locked: Permission denied\n", root.display())
    );
    assert_eq!(r.code, 1);
    let mut got: Vec<&[u8]> = r
        .stdout
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .collect();
    got.sort();
    let want: Vec<String> = ["locked", "open", "open/deeper", "open/deeper/file", "zfile"]
        .iter()
        .map(|s| format!("{}/{s}", root.display()))
        .collect();
    assert_eq!(got, want.iter().map(|s| s.as_bytes()).collect::<Vec<_>>());
    for (j, r) in as_root {
        assert_eq!(
            r.stdout,
            format!("{}\n", locked.display()).into_bytes(),
            "-j {j}"
        );
        assert_eq!(
            r.stderr,
            format!("ftw: {}: Permission denied\n", locked.display()),
            "-j {j}"
        );
        assert_eq!(r.code, 1, "-j {j}");
    }
}

/// A directory that can be read but not searched (mode 0o644, as an unprivileged
/// user): its entries are listed, but their metadata cannot be had. A template that
/// shows it reports each such entry, never prints zeros in its place, and goes on.
#[test]
fn format_and_filters_report_an_entry_whose_metadata_cannot_be_had() {
    let place = Unprivileged::new("ftw-fmt");
    let (root, bin) = (&place.root, &place.bin);
    std::fs::create_dir_all(root.join("blind")).unwrap();
    std::fs::write(root.join("blind/f"), b"12345").unwrap();
    std::fs::write(root.join("seen"), b"123").unwrap();
    set_mode(&root.join("blind"), 0o644);
    let mut runs = Vec::new();
    for j in ["1", "2"] {
        // (the options, what the entry that can be seen gives)
        let cases = [
            (
                vec!["--format", "%s %p\\n"],
                format!("3 {}/seen\n", root.display()),
            ),
            (vec!["-l", "-t", "f"], " 3 ".to_string()),
            // Filters that need the metadata: the same error, not a silent "no match".
            (vec!["-S", "+2"], format!("{}/seen\n", root.display())),
            (vec!["-t", "x"], String::new()),
            (vec!["-t", "e", "-t", "f"], String::new()),
            (
                vec!["--changed-within", "1d"],
                format!("{}/seen\n", root.display()),
            ),
        ];
        for (opts, seen) in cases {
            let mut c = as_user(bin);
            c.args(["find", "-j", j]).args(&opts).arg(root);
            runs.push((format!("-j {j} {opts:?}"), seen, run(&mut c)));
        }
    }
    set_mode(&root.join("blind"), 0o755);
    if Unprivileged::cannot_switch(&runs[0].2) {
        eprintln!(
            "skipped: cannot run as an unprivileged user here: {}",
            runs[0].2.stderr
        );
        return;
    }
    for (what, seen, r) in &runs {
        assert_eq!(
            r.stderr,
            format!("ftw: {}/blind/f: Permission denied\n", root.display()),
            "{what}"
        );
        assert_eq!(r.code, 1, "{what}");
        let out = String::from_utf8_lossy(&r.stdout);
        assert!(!out.contains("blind/f"), "{what}: {out}");
        assert!(out.contains(seen.as_str()), "{what}: {out}");
    }
}

#[test]
fn closed_pipe_ends_quietly_with_status_0() {
    let tmp = tempfile::tempdir().unwrap();
    for i in 0..3000 {
        std::fs::File::create(tmp.path().join(format!("{i:0>200}"))).unwrap();
    }
    let mut cmd = Command::new(ftw_bin());
    cmd.args(["find", "-j", "1"]).arg(tmp.path());
    let (status, err) = close_after_first_bytes(&mut cmd);
    assert!(status.success(), "status {status:?}, stderr {err:?}");
    assert_eq!(err, "");
}

#[test]
fn sort_gives_each_directory_sorted_and_its_contents_after_it() {
    let tmp = tempfile::tempdir().unwrap();
    odd_tree(tmp.path());
    let run_sorted = || {
        ftw(&[
            OsStr::new("find"),
            OsStr::new("--sort"),
            OsStr::new("-0"),
            tmp.path().as_os_str(),
        ])
    };
    let first = run_sorted();
    assert_eq!(first.code, 0);
    // Expected: a depth-first walk by std::fs with each directory's names sorted.
    fn expect(dir: &Path, out: &mut Vec<u8>) {
        let mut names: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        names.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
        for n in names {
            let path = dir.join(&n);
            out.extend_from_slice(path.as_os_str().as_bytes());
            out.push(0);
            if std::fs::symlink_metadata(&path).unwrap().is_dir() {
                expect(&path, out);
            }
        }
    }
    let mut want = Vec::new();
    expect(tmp.path(), &mut want);
    assert!(
        first.stdout == want,
        "ftw --sort:\n{}",
        show(
            &first
                .stdout
                .split(|&b| b == 0)
                .map(|s| s.to_vec())
                .collect::<Vec<_>>()
        )
    );
    for j in THREADS {
        let again = ftw(&[
            OsStr::new("find"),
            OsStr::new("--sort"),
            OsStr::new("-0"),
            OsStr::new("-j"),
            OsStr::new(j),
            tmp.path().as_os_str(),
        ]);
        assert!(again.stdout == want, "--sort -j {j} gives the same bytes");
    }
}

#[test]
fn newline_and_nul_terminators() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("a"), b"").unwrap();
    std::fs::write(tmp.path().join("b c"), b"").unwrap();
    let r = ftw(&[
        OsStr::new("find"),
        OsStr::new("--sort"),
        tmp.path().as_os_str(),
    ]);
    let d = tmp.path().display();
    assert_eq!(
        String::from_utf8(r.stdout).unwrap(),
        format!("{d}/a\n{d}/b c\n")
    );
    let r = ftw(&[
        OsStr::new("find"),
        OsStr::new("--sort"),
        OsStr::new("--print0"),
        tmp.path().as_os_str(),
    ]);
    assert_eq!(
        String::from_utf8(r.stdout).unwrap(),
        format!("{d}/a\0{d}/b c\0")
    );
}

#[test]
fn usage_errors_exit_2() {
    let r = ftw(&[
        OsStr::new("find"),
        OsStr::new("--max-depth"),
        OsStr::new("many"),
    ]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("--max-depth"), "{}", r.stderr);
    let r = ftw(&[OsStr::new("frobnicate")]);
    assert_eq!(r.code, 2);
}

/// A mount point below a directory: printed, not entered (as `find -xdev`). Uses a
/// mount the machine has (such as /dev/shm under /dev); skipped where there is none.
#[test]
fn one_file_system_prints_mount_points_and_does_not_enter_them() {
    let info = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let mount = info
        .lines()
        .filter_map(|l| l.split_whitespace().nth(4))
        .map(Path::new)
        .find(|m| {
            let parent = m.parent().unwrap_or(Path::new("/"));
            parent != Path::new("/")
                && !m.starts_with("/proc")
                && !m.starts_with("/sys")
                && !m.starts_with("/tmp")
                && parent.is_dir()
        });
    let Some(mount) = mount else {
        eprintln!("skipped: no mount point below a directory other than / here");
        return;
    };
    let parent = mount.parent().unwrap();
    let (theirs, fr) = gnu_find(parent, &["-H"], &["-xdev", "-mindepth", "1"]);
    for j in THREADS {
        let (ours, r) = ftw_find(parent, &["--one-file-system", "-j", j]);
        assert_same(
            &format!("ftw find --one-file-system -j {j} {}", parent.display()),
            &ours,
            &theirs,
        );
        assert_eq!(r.code, fr.code, "{}", r.stderr);
        let m = mount.as_os_str().as_bytes();
        assert!(
            ours.iter().any(|p| p == m),
            "the mount point {} is printed",
            mount.display()
        );
        let mut below = m.to_vec();
        below.push(b'/');
        assert!(
            !ours.iter().any(|p| p.starts_with(&below)),
            "nothing below {} is printed",
            mount.display()
        );
    }
}

/// Unmounts when dropped, whatever the test did.
struct Mounted(std::path::PathBuf);

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn one_file_system_does_not_open_mount_points() {
    // A file system mounted with mode 700: an unprivileged user cannot open it, and with
    // --one-file-system need not (find -xdev decides from the entry, before opening).
    if !is_root() {
        eprintln!("skipped: mounting needs root");
        return;
    }
    let place = Unprivileged::new("ftw-xdev");
    let (root, bin) = (&place.root, &place.bin);
    std::fs::create_dir_all(root.join("mnt")).unwrap();
    std::fs::create_dir_all(root.join("a/b")).unwrap();
    std::fs::write(root.join("a/b/f"), b"").unwrap();
    set_mode(&root.join("a"), 0o755);
    set_mode(&root.join("a/b"), 0o755);
    let mnt = root.join("mnt");
    let ok = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "mode=700", "tmpfs"])
        .arg(&mnt)
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("skipped: cannot mount a tmpfs here");
        return;
    }
    let _mounted = Mounted(mnt.clone());
    std::fs::write(mnt.join("inside"), b"").unwrap();
    let mut f = as_nobody(Path::new("find"));
    f.arg(root).args(["-mindepth", "1", "-xdev", "-print0"]);
    let fr = run(&mut f);
    if Unprivileged::cannot_switch(&fr) {
        eprintln!("skipped: cannot run as an unprivileged user: {}", fr.stderr);
        return;
    }
    assert_eq!((fr.code, fr.stderr.as_str()), (0, ""));
    let mut theirs = records(&fr.stdout);
    theirs.sort();
    assert_eq!(theirs.len(), 4, "mnt, a, a/b, a/b/f");
    for args in [
        &["-j", "1"][..],
        &["-j", "2"],
        &["-j", "8"],
        &[],
        &["--sort"],
    ] {
        let mut c = as_nobody(bin);
        c.args(["find", "-0", "--one-file-system"])
            .args(args)
            .arg(root);
        let r = run(&mut c);
        assert_eq!((r.code, r.stderr.as_str()), (0, ""), "{args:?}");
        let mut ours = records(&r.stdout);
        ours.sort();
        assert_same(&format!("--one-file-system {args:?}"), &ours, &theirs);
    }
}

#[test]
fn a_directory_readable_but_not_searchable_lists_its_entries_with_any_options() {
    // Mode 444: its names can be read, but nothing in it can be opened or stat'ed. find
    // prints every name and reports the subdirectories it cannot enter; so must ftw,
    // also when it asks for each directory's identity (-L, --one-file-system).
    let place = Unprivileged::new("ftw-444");
    let (root, bin) = (&place.root, &place.bin);
    std::fs::create_dir_all(root.join("r/s1")).unwrap();
    std::fs::create_dir_all(root.join("r/s2")).unwrap();
    std::fs::write(root.join("r/f"), b"").unwrap();
    set_mode(&root.join("r"), 0o444);
    for (ours_opts, their_opts) in [
        (&["--one-file-system"][..], &["-xdev"][..]),
        (&["-L"], &[]),
        (&["-L", "--one-file-system"], &["-xdev"]),
    ] {
        let mut f = as_user(Path::new("find"));
        if ours_opts.contains(&"-L") {
            f.arg("-L");
        }
        f.arg(root)
            .args(["-mindepth", "1", "-print0"])
            .args(their_opts);
        let fr = run(&mut f);
        if Unprivileged::cannot_switch(&fr) {
            eprintln!("skipped: cannot run as an unprivileged user: {}", fr.stderr);
            break;
        }
        let mut theirs = records(&fr.stdout);
        theirs.sort();
        assert_eq!(theirs.len(), 4, "r, r/f, r/s1, r/s2: {}", fr.stderr);
        for j in ["1", "2", "0"] {
            for sort in [false, true] {
                let mut c = as_user(bin);
                c.args(["find", "-0", "-j", j]).args(ours_opts);
                if sort {
                    c.arg("--sort");
                }
                let r = run(c.arg(root));
                let what = format!("{ours_opts:?} -j {j} sort {sort}");
                let mut ours = records(&r.stdout);
                ours.sort();
                assert_same(&what, &ours, &theirs);
                assert_eq!(r.code, fr.code, "{what}: {}", r.stderr);
                assert_eq!(error_count(&r.stderr), error_count(&fr.stderr), "{what}");
            }
        }
    }
    set_mode(&root.join("r"), 0o755);
}

/// Without the feature `mpi`, `--mpi` is a usage error that says how to build with it.
#[cfg(not(feature = "mpi"))]
#[test]
fn mpi_without_the_feature_says_how_to_build_it() {
    let r = ftw(&[OsStr::new("find"), OsStr::new("--mpi"), OsStr::new(".")]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("built without MPI") && r.stderr.contains("--features mpi"),
        "{}",
        r.stderr
    );
    assert!(r.stdout.is_empty());
}

/// `--order paths` and `--order emacs`: every entry `ftw find` lists, once, the same
/// with every thread count; `paths` in the order of the whole paths (bytes, for the
/// paths that are UTF-8: code points then); `emacs` with each directory after its
/// contents. (The ERT tests of editors/emacs compare `emacs` with Emacs itself.)
#[test]
fn order_paths_and_emacs_list_every_entry_in_their_order() {
    let tmp = tempfile::tempdir().unwrap();
    odd_tree(tmp.path());
    let root = tmp.path().to_str().unwrap();
    let (all, _) = ftw_find(tmp.path(), &[]);
    for order in ["paths", "emacs"] {
        let mut first: Option<Vec<Vec<u8>>> = None;
        for j in THREADS {
            // In the order printed (ftw_find sorts).
            let r = run(Command::new(ftw_bin())
                .args(["find", "-0", "--order", order, "-j", j])
                .arg(tmp.path()));
            let ours: Vec<Vec<u8>> = r
                .stdout
                .split(|&b| b == 0)
                .filter(|x| !x.is_empty())
                .map(<[u8]>::to_vec)
                .collect();
            let mut set = ours.clone();
            set.sort();
            assert_eq!(
                show(&set),
                show(&all),
                "--order {order} -j {j}: {}",
                r.stderr
            );
            match &first {
                None => first = Some(ours),
                Some(f) => assert_same(&format!("--order {order} -j {j}"), &ours, f),
            }
        }
        let ours = first.unwrap();
        let utf8: Vec<&Vec<u8>> = ours
            .iter()
            .filter(|p| std::str::from_utf8(p).is_ok())
            .collect();
        if order == "paths" {
            assert!(utf8.windows(2).all(|w| w[0] < w[1]), "{}", show(&ours));
        } else {
            // Each directory comes after everything below it.
            for (i, p) in ours.iter().enumerate() {
                let mut below = p.clone();
                below.push(b'/');
                assert!(
                    !ours[i + 1..].iter().any(|q| q.starts_with(&below)),
                    "{} before its contents",
                    String::from_utf8_lossy(p)
                );
            }
        }
        assert!(ours.iter().all(|p| p.starts_with(root.as_bytes())));
    }
}

/// `--mark-dirs`: a '/' after each directory's name, and, in `emacs` order, after a
/// link to a directory's (not after one to a file, nor a dangling one), in every style.
#[cfg(unix)]
#[test]
fn order_mark_dirs_marks_directories_and_links_to_them() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    std::fs::create_dir_all(t.join("d/e")).unwrap();
    std::fs::write(t.join("d/f"), "").unwrap();
    std::fs::write(t.join("g"), "").unwrap();
    std::os::unix::fs::symlink("d", t.join("ld")).unwrap();
    std::os::unix::fs::symlink("g", t.join("lg")).unwrap();
    std::os::unix::fs::symlink("nowhere", t.join("dangling")).unwrap();
    let root = t.to_str().unwrap();
    let list = |args: &[&str]| {
        let r = run(Command::new(ftw_bin()).arg("find").args(args).arg(t));
        assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
        String::from_utf8(r.stdout).unwrap()
    };
    let lines = list(&["--order", "emacs", "--mark-dirs"]);
    let want: Vec<String> = ["d/e/", "d/f", "d/", "ld/", "dangling", "g", "lg"]
        .iter()
        .map(|p| format!("{root}/{p}"))
        .collect();
    assert_eq!(lines.lines().collect::<Vec<_>>(), want);
    assert_eq!(
        list(&[
            "--order",
            "emacs",
            "--lisp",
            "--group",
            "--mark-dirs",
            "-d",
            "1"
        ]),
        format!("(\"{root}/\" \"d/\" \"ld/\" \"dangling\" \"g\" \"lg\")\n")
    );
    assert!(
        list(&["--order", "emacs", "--lisp", "--mark-dirs"]).contains(&format!("\"{root}/d/\"\n"))
    );
    // In `paths` order, the directories (a link is not entered).
    let paths = list(&["--order", "paths", "--mark-dirs", "-0"]);
    let paths: Vec<&str> = paths.split('\0').filter(|p| !p.is_empty()).collect();
    assert!(
        paths.contains(&format!("{root}/d/e/").as_str()),
        "{paths:?}"
    );
    assert!(paths.contains(&format!("{root}/ld").as_str()), "{paths:?}");
    // Without it, no mark.
    assert!(!list(&["--order", "emacs"]).contains("/\n"));
}
