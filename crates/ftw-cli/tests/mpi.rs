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
