//! `ftw find --mpi` under `mpirun -n N` (N = 1 to 4) against the single process, on
//! hostile trees: names with newlines and bytes that are not UTF-8, a 3,000-level
//! chain, hard links, one subtree far larger than the rest, a 100,000-entry directory.
//! Built only with the feature `mpi` (`cargo test --release -p ftw-cli --features mpi
//! --test mpi`); needs Open MPI's `mpirun`. Every run has a time limit, so that a hang
//! fails the test instead of blocking it.
#![cfg(feature = "mpi")]

mod common;

use common::*;
use std::ffi::OsStr;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(120);

/// `mpirun -n N ftw ARGS` as root in a container may run it (the settings the README
/// gives), more ranks than cores allowed.
fn mpirun(n: usize, env: &[(&str, &str)], args: &[&OsStr]) -> Run {
    let mut cmd = Command::new("mpirun");
    cmd.args([
        "--oversubscribe",
        "--allow-run-as-root",
        "-n",
        &n.to_string(),
    ])
    .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
    .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    .env("OMPI_MCA_btl_vader_single_copy_mechanism", "none")
    .env("OMPI_MCA_rmaps_base_oversubscribe", "1");
    for (k, v) in env {
        cmd.env(k, v).args(["-x", k]);
    }
    cmd.arg(ftw_bin()).args(args);
    run_within(&mut cmd, LIMIT)
}

fn single(args: &[&OsStr]) -> Run {
    run_within(Command::new(ftw_bin()).args(args), LIMIT)
}

fn os(s: &str) -> &OsStr {
    OsStr::new(s)
}

/// The odd names, a deep chain, hard links and one big subtree beside small ones.
fn hostile(root: &Path) {
    odd_tree(root);
    chain(&root.join("plain"), 3000, "d", 500);
    let big = root.join("skewed/big");
    for i in 0..400 {
        let d = big.join(format!("s{i}/t"));
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("f.rs"), b"x").unwrap();
        std::fs::write(d.parent().unwrap().join("g\nh"), b"y").unwrap();
    }
    std::fs::create_dir_all(root.join("skewed/small")).unwrap();
    std::fs::write(root.join("skewed/small/one"), b"1").unwrap();
    std::fs::hard_link(root.join("skewed/small/one"), root.join("skewed/two")).unwrap();
}

/// The single process's output and status for `args` on `root`, and the same under
/// `mpirun -n N` with `--mpi`: equal, byte for byte when `sorted`, as sets of records
/// otherwise (`-0`).
fn compare(root: &Path, n: usize, args: &[&str], sorted: bool, env: &[(&str, &str)]) -> Run {
    let mut a: Vec<&OsStr> = args.iter().map(|s| os(s)).collect();
    a.push(root.as_os_str());
    let mut plain = vec![os("find")];
    plain.extend(&a);
    let mut dist = vec![os("find"), os("--mpi")];
    dist.extend(&a);
    let want = single(&plain);
    let got = mpirun(n, env, &dist);
    let what = format!("ftw find --mpi {args:?} on {n} ranks");
    assert_eq!(
        got.code, want.code,
        "{what}: status; stderr: {}",
        got.stderr
    );
    if sorted {
        if got.stdout != want.stdout {
            let g: Vec<_> = got.stdout.split(|&b| b == b'\n').collect();
            let w: Vec<_> = want.stdout.split(|&b| b == b'\n').collect();
            let first = g.iter().zip(&w).position(|(x, y)| x != y);
            panic!(
                "{what}: output differs ({} lines against {}; first at {first:?}: {:?} against {:?})",
                g.len(),
                w.len(),
                first.map(|i| String::from_utf8_lossy(g[i])),
                first.map(|i| String::from_utf8_lossy(w[i])),
            );
        }
    } else {
        assert_same(&what, &records(&got.stdout), &records(&want.stdout));
    }
    got
}

#[test]
fn sorted_output_is_the_single_process_s_byte_for_byte_on_1_to_4_ranks() {
    let tmp = tempfile::tempdir().unwrap();
    hostile(tmp.path());
    for n in 1..=4 {
        compare(tmp.path(), n, &["--sort"], true, &[]);
        compare(tmp.path(), n, &["-0"], false, &[]);
    }
}

#[test]
fn filters_depths_and_formats_are_the_single_process_s() {
    let tmp = tempfile::tempdir().unwrap();
    hostile(tmp.path());
    let cases: &[&[&str]] = &[
        &["--sort", "-t", "f", "-g", "*.rs"],
        &["--sort", "-d", "3"],
        &["--sort", "--min-depth", "3"],
        &["--sort", "--exact-depth", "2"],
        &["--sort", "-E", "/skewed", "-t", "d"],
        &["--sort", "--format", "%P %d %y\\n"],
        &["--sort", "-l"],
        &["--sort", "-0", "-n", "line"],
        &["--sort", "-t", "d", "--prune", "-g", "s1*"],
        &["--sort", "-S", "+1"],
    ];
    for args in cases {
        eprintln!("case {args:?}");
        compare(tmp.path(), 3, args, true, &[]);
    }
}

#[test]
fn every_job_moves_when_scattered_and_the_output_is_the_same() {
    let tmp = tempfile::tempdir().unwrap();
    hostile(tmp.path());
    let env = [("FTW_MPI_SCATTER", "1"), ("FTW_MPI_STATS", "1")];
    for n in [2, 4] {
        let got = compare(tmp.path(), n, &["--sort"], true, &env);
        let line = got
            .stderr
            .lines()
            .find(|l| l.starts_with("ftw: mpi:"))
            .unwrap_or_else(|| panic!("no stats line in {}", got.stderr));
        let number = |word: &str| -> u64 {
            let at = line.find(word).unwrap();
            line[..at]
                .trim_end()
                .rsplit(' ')
                .next()
                .unwrap()
                .parse()
                .unwrap()
        };
        let (jobs, sent, received) = (number(" jobs"), number(" sent"), number(" received"));
        assert!(sent > 0 && sent == received, "{line}");
        assert!(sent + 1 >= jobs, "every job but the root's moved: {line}");
    }
}

#[test]
fn twenty_runs_on_4_ranks_neither_hang_nor_differ() {
    let tmp = tempfile::tempdir().unwrap();
    hostile(tmp.path());
    for i in 0..20 {
        let args: &[&str] = if i % 2 == 0 { &["--sort"] } else { &["-0"] };
        compare(tmp.path(), 4, args, i % 2 == 0, &[]);
    }
}

#[test]
fn errors_are_reported_once_with_the_single_process_s_status() {
    let tmp = tempfile::tempdir().unwrap();
    hostile(tmp.path());
    let missing = tmp.path().join("missing");
    let got = compare(
        tmp.path(),
        3,
        &["--sort", missing.to_str().unwrap()],
        true,
        &[],
    );
    assert_eq!(got.code, 1);
    let lines = got.stderr.lines().filter(|l| l.contains("missing")).count();
    assert_eq!(lines, 1, "{}", got.stderr);
}

#[test]
fn a_directory_of_100000_entries() {
    let tmp = tempfile::tempdir().unwrap();
    let flat = tmp.path().join("flat");
    std::fs::create_dir(&flat).unwrap();
    for i in 0..100_000 {
        std::fs::File::create(flat.join(format!("{i}"))).unwrap();
    }
    std::fs::create_dir_all(tmp.path().join("other/x")).unwrap();
    compare(tmp.path(), 2, &["--sort"], true, &[]);
    compare(tmp.path(), 3, &["-0"], false, &[]);
}

#[test]
fn options_mpi_does_not_take_are_refused() {
    let got = mpirun(3, &[], &[os("find"), os("--mpi"), os("-L"), os(".")]);
    assert_eq!(got.code, 2, "{}", got.stderr);
    assert_eq!(
        got.stderr.matches("cannot be used with --mpi").count(),
        1,
        "said once, by rank 0: {}",
        got.stderr
    );
}

/// The hostile tree, with files of several links whose names lie in subtrees far apart
/// (so that, scattered, they are found on different ranks): one name 1,000 levels down
/// the chain, one beside the chain's top, one in the big subtree, one in a small one.
fn linked(root: &Path) {
    hostile(root);
    links(root, 1000);
}

/// The same with a chain of 40 levels, not 3,000: scattered, every job of the chain
/// waits on the one before it, moved between ranks, which is slow on a loaded machine.
fn linked_shallow(root: &Path) {
    odd_tree(root);
    chain(&root.join("plain"), 40, "d", 10);
    let big = root.join("skewed/big");
    for i in 0..400 {
        let d = big.join(format!("s{i}/t"));
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("f.rs"), b"x").unwrap();
        std::fs::write(d.parent().unwrap().join("g\nh"), b"y").unwrap();
    }
    std::fs::create_dir_all(root.join("skewed/small")).unwrap();
    std::fs::write(root.join("skewed/small/one"), b"1").unwrap();
    std::fs::hard_link(root.join("skewed/small/one"), root.join("skewed/two")).unwrap();
    links(root, 30);
}

/// Files of several links: one name `depth` levels down the chain.
fn links(root: &Path, depth: usize) {
    let mut deep = root.join("plain");
    for _ in 0..depth {
        deep.push("d");
    }
    std::fs::hard_link(root.join("skewed/small/one"), deep.join("hl")).unwrap();
    std::fs::hard_link(root.join("skewed/small/one"), root.join("plain/hl2")).unwrap();
    std::fs::write(root.join("skewed/big/s7/t/many"), vec![7u8; 20_000]).unwrap();
    for (i, at) in ["with space/m1", "skewed/big/s399/m2", "new\nline dir/m3"]
        .iter()
        .enumerate()
    {
        std::fs::hard_link(root.join("skewed/big/s7/t/many"), root.join(at)).unwrap();
        // A file whose links are all below the depth printed by -d 1.
        let sub = root.join(format!("skewed/big/s{}/t/deep", 100 + i));
        if i == 0 {
            std::fs::write(&sub, vec![1u8; 9_000]).unwrap();
        } else {
            std::fs::hard_link(root.join("skewed/big/s100/t/deep"), sub).unwrap();
        }
    }
}

/// `ftw du ARGS PATHS` against `mpirun -n N ftw du --mpi ARGS PATHS`: the same status,
/// the same standard output byte for byte. The run under mpirun is returned.
fn compare_du(paths: &[&Path], n: usize, args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut a: Vec<&OsStr> = args.iter().map(|s| os(s)).collect();
    a.extend(paths.iter().map(|p| p.as_os_str()));
    let mut plain = vec![os("du")];
    plain.extend(&a);
    let mut dist = vec![os("du"), os("--mpi")];
    dist.extend(&a);
    let want = single(&plain);
    let got = mpirun(n, env, &dist);
    let what = format!("ftw du --mpi {args:?} on {n} ranks {env:?}");
    assert_eq!(
        got.code, want.code,
        "{what}: status; stderr: {}",
        got.stderr
    );
    assert!(
        !want.stdout.is_empty(),
        "{what}: the single process printed nothing"
    );
    if got.stdout != want.stdout {
        let end = if args.contains(&"-0") { 0 } else { b'\n' };
        let g: Vec<_> = got.stdout.split(|&b| b == end).collect();
        let w: Vec<_> = want.stdout.split(|&b| b == end).collect();
        let first = g.iter().zip(&w).position(|(x, y)| x != y);
        panic!(
            "{what}: output differs ({} lines against {}; first at {first:?}: {:?} against {:?})",
            g.len(),
            w.len(),
            first.map(|i| String::from_utf8_lossy(g[i])),
            first.map(|i| String::from_utf8_lossy(w[i])),
        );
    }
    got
}

#[test]
fn du_is_the_single_process_s_byte_for_byte_on_1_to_4_ranks() {
    let tmp = tempfile::tempdir().unwrap();
    linked(tmp.path());
    let scatter = [("FTW_MPI_SCATTER", "1")];
    for n in 1..=4 {
        for args in [&[][..], &["-a"], &["-s", "-c"], &["-a", "-d", "1001"]] {
            compare_du(&[tmp.path()], n, args, &[]);
        }
        // Every job moved (the 3,000 levels one after another: slow).
        if n > 1 {
            compare_du(&[tmp.path()], n, &["-a"], &scatter);
        }
    }
}

#[test]
fn du_options_give_the_single_process_s_lines_with_every_job_moved() {
    let tmp = tempfile::tempdir().unwrap();
    linked_shallow(tmp.path());
    let env = [("FTW_MPI_SCATTER", "1"), ("FTW_MPI_STATS", "1")];
    let cases: &[&[&str]] = &[
        &["-d", "1"],
        &["-a", "-d", "2"],
        &["-a", "-d", "31"],
        &["--apparent-size", "-a"],
        &["-b", "-c"],
        &["-h", "-a"],
        &["--si", "-S"],
        &["-S", "-a", "-d", "1"],
        &["-l", "-a"],
        &["--inodes", "-a"],
        &["-a", "--time"],
        &["-S", "--time=ctime", "-d", "1"],
        &["-a", "-t", "5k"],
        &["-t", "-8k"],
        &["-x", "-k"],
        &["-a", "-0"],
        &["-a", "--exclude", "*.rs", "-E", "s1*"],
    ];
    for args in cases {
        eprintln!("case {args:?}");
        let got = compare_du(&[tmp.path()], 3, args, &env);
        let line = got
            .stderr
            .lines()
            .find(|l| l.starts_with("ftw: mpi:"))
            .unwrap_or_else(|| panic!("no stats line in {}", got.stderr));
        assert!(!line.contains(" 0 sent"), "jobs moved: {line}");
    }
}

#[test]
fn du_of_several_paths_counts_a_file_once_and_refuses_paths_inside_others() {
    let tmp = tempfile::tempdir().unwrap();
    linked_shallow(tmp.path());
    let r = tmp.path();
    let paths = [
        r.join("with space"),
        r.join("skewed"),
        r.join("plain/hl2"),
        r.join("plain/sub"),
        r.join("link-to-dir"),
    ];
    let paths: Vec<&Path> = paths.iter().map(|p| p.as_path()).collect();
    for n in [1, 2, 4] {
        compare_du(&paths, n, &["-c"], &[("FTW_MPI_SCATTER", "1")]);
        compare_du(&paths, n, &["-a", "-b"], &[]);
    }
    // -D: link-to-dir is plain, which holds a name of skewed/small/one.
    let got = compare_du(&[paths[0], paths[1], paths[4]], 2, &["-D", "-c"], &[]);
    assert_eq!(got.code, 0, "{}", got.stderr);
    let inside = [r.join("plain"), r.join("skewed/big")];
    for pair in [[&inside[1], &r.join("skewed")], [&inside[0], &inside[0]]] {
        let args = [
            os("du"),
            os("--mpi"),
            pair[0].as_os_str(),
            pair[1].as_os_str(),
        ];
        let got = mpirun(3, &[], &args);
        assert_eq!(got.code, 2, "{}", got.stderr);
        assert_eq!(
            got.stderr.matches("cannot be used with --mpi").count(),
            1,
            "said once: {}",
            got.stderr
        );
    }
}

#[test]
fn du_options_mpi_does_not_take_are_refused() {
    for opt in ["-L", "--tree", "--ignore", "--no-hidden", "-o"] {
        let got = mpirun(3, &[], &[os("du"), os("--mpi"), os(opt), os(".")]);
        assert_eq!(got.code, 2, "{opt}: {}", got.stderr);
        assert_eq!(
            got.stderr.matches("cannot be used with --mpi").count(),
            1,
            "{opt}: said once: {}",
            got.stderr
        );
    }
}

#[test]
fn du_reports_an_unreadable_directory_once_with_the_single_process_s_status() {
    let un = Unprivileged::new("ftw-du-mpi-");
    let t = &un.root;
    linked_shallow(t);
    std::fs::create_dir_all(t.join("closed/inside")).unwrap();
    std::fs::write(t.join("closed/inside/g"), vec![1u8; 10_000]).unwrap();
    std::fs::write(t.join("closed/f"), vec![1u8; 10_000]).unwrap();
    // Everything readable by nobody, but closed.
    let chmod = std::process::Command::new("chmod")
        .args(["-R", "a+rX"])
        .arg(t)
        .status()
        .unwrap();
    assert!(chmod.success());
    set_mode(&t.join("closed"), 0o000);
    for args in [&["-a"][..], &["-s"], &["-d", "1", "-c"]] {
        let mut plain = as_user(&un.bin);
        plain.arg("du").args(args).arg(t);
        let want = run_within(&mut plain, LIMIT);
        if Unprivileged::cannot_switch(&want) {
            eprintln!("skipped: cannot switch users");
            return;
        }
        assert_eq!(want.code, 1, "{}", want.stderr);
        for n in [1, 3] {
            // mpirun itself as the user: its ranks, as another user, could not reach
            // its session's files.
            let mut cmd = as_user(Path::new("mpirun"));
            cmd.args(["--oversubscribe", "-n", &n.to_string()])
                .env("OMPI_MCA_btl_vader_single_copy_mechanism", "none")
                .env("OMPI_MCA_rmaps_base_oversubscribe", "1")
                .env("FTW_MPI_SCATTER", "1")
                .args(["-x", "FTW_MPI_SCATTER"])
                .arg(&un.bin)
                .args(["du", "--mpi"])
                .args(args)
                .arg(t);
            let got = run_within(&mut cmd, LIMIT);
            let what = format!("du --mpi {args:?} on {n} ranks");
            assert_eq!(got.code, want.code, "{what}: {}", got.stderr);
            assert_eq!(got.stdout, want.stdout, "{what}");
            let said = |s: &str| s.matches("closed: Permission denied").count();
            assert_eq!(said(&want.stderr), 1, "{}", want.stderr);
            assert_eq!(said(&got.stderr), 1, "{what}: once: {}", got.stderr);
            assert_eq!(
                got.stderr.matches("totals are incomplete: 1 error").count(),
                1,
                "{what}: {}",
                got.stderr
            );
        }
    }
    set_mode(&t.join("closed"), 0o755);
}

/// Every path below `root` (relative to it), sorted: what a removal left.
fn left(root: &Path) -> Vec<Vec<u8>> {
    let mut all = Vec::new();
    let mut todo = vec![root.to_path_buf()];
    while let Some(d) = todo.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            let rel = p.strip_prefix(root).unwrap();
            all.push(rel.as_os_str().as_encoded_bytes().to_vec());
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                todo.push(p);
            }
        }
    }
    all.sort();
    all
}

/// The lines of standard error that are ftw's own errors (not mpirun's, not warnings),
/// sorted.
fn error_lines(stderr: &str) -> Vec<String> {
    let mut v: Vec<String> = stderr
        .lines()
        .filter(|l| l.starts_with("ftw: ") && !l.starts_with("ftw: warning:"))
        .filter(|l| !l.starts_with("ftw: mpi:"))
        .map(str::to_string)
        .collect();
    v.sort();
    v
}

/// `ftw rm [-v] ARGS` in `single` against `mpirun -n N ftw rm --mpi [-v] ARGS` in
/// `dist` (two copies of the same trees, named alike relative to each): the same
/// status, the same error lines (each once), the same paths printed by -v (as sets),
/// the same left behind. The run under mpirun is returned.
fn compare_rm(
    single_dir: &Path,
    dist_dir: &Path,
    n: usize,
    args: &[&OsStr],
    env: &[(&str, &str)],
) -> Run {
    let mut plain = vec![os("rm"), os("-v")];
    plain.extend(args);
    let mut dist = vec![os("rm"), os("--mpi"), os("-v")];
    dist.extend(args);
    let want = run_within(
        Command::new(ftw_bin()).args(&plain).current_dir(single_dir),
        LIMIT,
    );
    let mut cmd = mpirun_cmd(n, env);
    cmd.arg(ftw_bin()).args(&dist).current_dir(dist_dir);
    let got = run_within(&mut cmd, LIMIT);
    let what = format!("ftw rm --mpi {args:?} on {n} ranks {env:?}");
    assert_eq!(
        got.code, want.code,
        "{what}: status; stderr: {}",
        got.stderr
    );
    assert_eq!(
        error_lines(&got.stderr),
        error_lines(&want.stderr),
        "{what}: errors; stderr: {}",
        got.stderr
    );
    assert_same(&what, &records_nl(&got.stdout), &records_nl(&want.stdout));
    assert_eq!(left(dist_dir), left(single_dir), "{what}: what is left");
    got
}

/// The lines of `out`, split at newlines (names with a newline split alike on both
/// sides).
fn records_nl(out: &[u8]) -> Vec<Vec<u8>> {
    let mut v: Vec<Vec<u8>> = out
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(<[u8]>::to_vec)
        .collect();
    v.sort();
    v
}

/// `mpirun -n N` with the settings of [`mpirun`], the program and its arguments to add.
fn mpirun_cmd(n: usize, env: &[(&str, &str)]) -> Command {
    let mut cmd = Command::new("mpirun");
    cmd.args([
        "--oversubscribe",
        "--allow-run-as-root",
        "-n",
        &n.to_string(),
    ])
    .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
    .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    .env("OMPI_MCA_btl_vader_single_copy_mechanism", "none")
    .env("OMPI_MCA_rmaps_base_oversubscribe", "1");
    for (k, v) in env {
        cmd.env(k, v).args(["-x", k]);
    }
    cmd
}

/// The statistics line's numbers: jobs, sent, received.
fn stats(stderr: &str) -> (u64, u64, u64) {
    let line = stderr
        .lines()
        .find(|l| l.starts_with("ftw: mpi:"))
        .unwrap_or_else(|| panic!("no stats line in {stderr}"));
    let number = |word: &str| -> u64 {
        let at = line.find(word).unwrap();
        line[..at]
            .trim_end()
            .rsplit(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    (number(" jobs"), number(" sent"), number(" received"))
}

#[test]
fn rm_removes_what_the_single_process_removes_on_1_to_4_ranks() {
    for n in 1..=4 {
        let tmp = tempfile::tempdir().unwrap();
        let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
        for d in [&a, &b] {
            std::fs::create_dir(d).unwrap();
            // Names with newlines and bytes that are not UTF-8, a 3,000-level chain,
            // links (never followed), a skewed tree; a second tree and a file as PATHs.
            hostile(&d.join("tree"));
            std::fs::create_dir_all(d.join("other/x/y")).unwrap();
            std::fs::write(d.join("other/x/y/z"), b"z").unwrap();
            std::fs::write(d.join("file"), b"f").unwrap();
            std::os::unix::fs::symlink(d.join("other"), d.join("tree/plain/to-other")).unwrap();
        }
        let got = compare_rm(&a, &b, n, &[os("tree"), os("other/"), os("file")], &[]);
        assert_eq!(got.code, 0, "{}", got.stderr);
        assert!(left(&b).is_empty(), "{n} ranks: {:?}", left(&b));
    }
}

#[test]
fn rm_errors_and_refusals_are_the_single_process_s_said_once() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    for d in [&a, &b] {
        std::fs::create_dir(d).unwrap();
        std::fs::create_dir_all(d.join("tree/plain/sub")).unwrap();
        std::fs::write(d.join("tree/plain/sub/f"), b"f").unwrap();
        std::fs::write(d.join("tree/plain/g"), b"g").unwrap();
        std::fs::create_dir_all(d.join("tree/rest/deep")).unwrap();
        std::fs::write(d.join("file"), b"f").unwrap();
        std::os::unix::fs::symlink("tree", d.join("link")).unwrap();
    }
    // PATHs inside one another (removed in order), a missing one, '.', '..', '/', a
    // file named as a directory, a link named with a slash.
    let args = [
        "tree/plain",
        "tree",
        "missing",
        ".",
        "tree/..",
        "/",
        "file/",
        "link/",
    ];
    let args: Vec<&OsStr> = args.iter().map(|s| os(s)).collect();
    for n in [1, 3] {
        for d in [&a, &b] {
            let _ = std::fs::remove_dir_all(d.join("tree"));
            std::fs::create_dir_all(d.join("tree/plain/sub")).unwrap();
            std::fs::write(d.join("tree/plain/sub/f"), b"f").unwrap();
            std::fs::create_dir_all(d.join("tree/rest/deep")).unwrap();
        }
        let got = compare_rm(&a, &b, n, &args, &[]);
        assert_eq!(got.code, 1, "{}", got.stderr);
        for said in [
            "ftw: missing: No such",
            "ftw: .: refusing",
            "ftw: tree/..: refusing",
            "ftw: /: it is the root",
        ] {
            assert_eq!(
                got.stderr.matches(said).count(),
                1,
                "{said}: once: {}",
                got.stderr
            );
        }
    }
    // The same with -f: nothing said of what is missing.
    let got = compare_rm(&a, &b, 2, &[os("-f"), os("missing"), os("file/x")], &[]);
    assert_eq!(got.code, 0, "{}", got.stderr);
}

#[test]
fn rm_options_mpi_does_not_take_are_refused_once() {
    for opt in ["-n", "--chmod", "-i", "--interactive=sometimes"] {
        let got = mpirun(
            3,
            &[],
            &[os("rm"), os("--mpi"), os(opt), os("nothing-here")],
        );
        assert_eq!(got.code, 2, "{opt}: {}", got.stderr);
        assert_eq!(
            got.stderr
                .lines()
                .filter(|l| l.starts_with("ftw: rm:"))
                .count(),
            1,
            "{opt}: said once: {}",
            got.stderr
        );
    }
}

#[test]
fn rm_of_an_unreadable_directory_as_the_single_process_says_it() {
    for n in [1, 3] {
        let un = Unprivileged::new("ftw-rm-mpi-");
        let (a, b) = (un.root.join("a"), un.root.join("b"));
        for d in [&a, &b] {
            std::fs::create_dir(d).unwrap();
            let t = d.join("tree");
            odd_tree(&t);
            std::fs::create_dir_all(t.join("closed/inside")).unwrap();
            std::fs::write(t.join("closed/inside/g"), b"g").unwrap();
            std::fs::write(t.join("closed/f"), b"f").unwrap();
            std::fs::create_dir_all(t.join("closed-empty")).unwrap();
            std::fs::create_dir_all(t.join("ro/sub")).unwrap();
            std::fs::write(t.join("ro/file"), b"r").unwrap();
            std::fs::create_dir_all(t.join("x/y")).unwrap();
        }
        if is_root() {
            let chown = Command::new("chown")
                .args(["-R", "65534:65534"])
                .arg(&un.root)
                .status()
                .unwrap();
            assert!(chown.success());
        }
        for d in [&a, &b] {
            set_mode(&d.join("tree/closed"), 0o000);
            set_mode(&d.join("tree/closed-empty"), 0o000);
            set_mode(&d.join("tree/ro"), 0o555);
        }
        let mut plain = as_user(&un.bin);
        plain.args(["rm", "-v", "tree"]).current_dir(&a);
        let want = run_within(&mut plain, LIMIT);
        if Unprivileged::cannot_switch(&want) {
            eprintln!("skipped: cannot switch users");
            return;
        }
        assert_eq!(want.code, 1, "{}", want.stderr);
        // mpirun itself as the user: its ranks, as another user, could not reach its
        // session's files. Every job moved.
        let mut cmd = as_user(Path::new("mpirun"));
        cmd.args(["--oversubscribe", "-n", &n.to_string()])
            .env("OMPI_MCA_btl_vader_single_copy_mechanism", "none")
            .env("OMPI_MCA_rmaps_base_oversubscribe", "1")
            .env("FTW_MPI_SCATTER", "1")
            .args(["-x", "FTW_MPI_SCATTER"])
            .arg(&un.bin)
            .args(["rm", "--mpi", "-v", "tree"])
            .current_dir(&b);
        let got = run_within(&mut cmd, LIMIT);
        let what = format!("rm --mpi on {n} ranks");
        assert_eq!(got.code, want.code, "{what}: {}", got.stderr);
        assert_eq!(
            error_lines(&got.stderr),
            error_lines(&want.stderr),
            "{what}: {}",
            got.stderr
        );
        assert_same(&what, &records_nl(&got.stdout), &records_nl(&want.stdout));
        assert_eq!(left(&b), left(&a), "{what}: what is left");
        // Each error once: the unreadable directory (not empty), the two entries of the
        // read-only one.
        for said in [
            "tree/closed: Permission denied",
            "tree/ro/file: Permission denied: its directory tree/ro is not writable",
            "tree/ro/sub: Permission denied: its directory tree/ro is not writable",
        ] {
            assert_eq!(want.stderr.matches(said).count(), 1, "{}", want.stderr);
            assert_eq!(
                got.stderr.matches(said).count(),
                1,
                "{what}: {}",
                got.stderr
            );
        }
        assert_eq!(
            got.stderr.matches("warning: --chmod").count(),
            1,
            "{what}: {}",
            got.stderr
        );
        for d in [&a, &b] {
            set_mode(&d.join("tree/closed"), 0o755);
            set_mode(&d.join("tree/ro"), 0o755);
        }
    }
}

#[test]
fn rm_with_every_job_moved_sends_as_many_as_it_receives() {
    let env = [("FTW_MPI_SCATTER", "1"), ("FTW_MPI_STATS", "1")];
    for n in [2, 4] {
        let tmp = tempfile::tempdir().unwrap();
        let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
        for d in [&a, &b] {
            std::fs::create_dir(d).unwrap();
            linked_shallow(&d.join("tree"));
        }
        let got = compare_rm(&a, &b, n, &[os("tree")], &env);
        assert_eq!(got.code, 0, "{}", got.stderr);
        let (jobs, sent, received) = stats(&got.stderr);
        assert!(
            sent > 0 && sent == received,
            "{n} ranks: {jobs} {sent} {received}"
        );
        assert!(
            sent + 1 >= jobs,
            "every job but the root's moved: {jobs} {sent}"
        );
        assert!(left(&b).is_empty());
    }
}

#[test]
fn rm_of_a_directory_of_100000_entries() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    for d in [&a, &b] {
        let flat = d.join("tree/flat");
        std::fs::create_dir_all(&flat).unwrap();
        for i in 0..100_000 {
            std::fs::File::create(flat.join(format!("{i}"))).unwrap();
        }
        std::fs::create_dir_all(d.join("tree/other/x")).unwrap();
    }
    let got = compare_rm(&a, &b, 3, &[os("tree")], &[]);
    assert_eq!(got.code, 0, "{}", got.stderr);
    assert_eq!(got.stdout.iter().filter(|&&c| c == b'\n').count(), 100_004);
}

#[test]
fn rm_never_follows_directories_swapped_for_links_on_1_to_4_ranks() {
    for n in 1..=4 {
        let tmp = tempfile::tempdir().unwrap();
        let canary = tmp.path().join("canary");
        std::fs::create_dir_all(canary.join("keep/deeper")).unwrap();
        for i in 0..20 {
            std::fs::write(canary.join(format!("keep/c{i}")), b"canary").unwrap();
        }
        std::fs::write(canary.join("keep/deeper/c"), b"canary").unwrap();
        let before = left(&canary);
        let tree = tmp.path().join("tree");
        let mut targets = Vec::new();
        for i in 0..30 {
            for j in 0..15 {
                let d = tree.join(format!("w{i}/s{j}"));
                std::fs::create_dir_all(d.join("sub/inner")).unwrap();
                for k in 0..6 {
                    std::fs::write(d.join(format!("f{k}")), b"x").unwrap();
                    std::fs::write(d.join(format!("sub/g{k}")), b"x").unwrap();
                }
                std::fs::write(d.join("sub/inner/h"), b"x").unwrap();
                targets.push(d);
            }
        }
        // The first entry a removal meets: the swaps start when it is gone.
        std::fs::write(tree.join("0-first"), b"x").unwrap();
        // Shuffled (a fixed permutation).
        let len = targets.len();
        let targets: Vec<_> = (0..len)
            .map(|i| targets[(i * 7919) % len].clone())
            .collect();
        let first = tree.join("0-first");
        let canary2 = canary.join("keep");
        let swapper = std::thread::spawn(move || {
            let start = std::time::Instant::now();
            while first.exists() && start.elapsed() < Duration::from_secs(60) {
                std::thread::sleep(Duration::from_micros(50));
            }
            let mut swapped = 0;
            for d in &targets {
                let is_dir = std::fs::symlink_metadata(d).is_ok_and(|m| m.is_dir());
                if is_dir {
                    let old = d.with_extension("old");
                    if std::fs::rename(d, &old).is_ok()
                        && std::os::unix::fs::symlink(&canary2, d).is_ok()
                    {
                        swapped += 1;
                    }
                }
                std::thread::sleep(Duration::from_micros(100));
            }
            swapped
        });
        let got = mpirun(n, &[], &[os("rm"), os("--mpi"), tree.as_os_str()]);
        let swapped = swapper.join().unwrap();
        eprintln!("{n} ranks: {swapped} directories swapped for links during the removal");
        assert_eq!(left(&canary), before, "{n} ranks: the canary was touched");
        for i in 0..20 {
            assert_eq!(
                std::fs::read(canary.join(format!("keep/c{i}"))).unwrap(),
                b"canary"
            );
        }
        assert_eq!(got.code, 0, "{n} ranks: {}", got.stderr);
        assert!(
            std::fs::symlink_metadata(&tree).is_err(),
            "{n} ranks: left {:?}",
            left(&tree)
        );
    }
}
