//! `ftw find --ignore` against git itself: on generated repositories with nested
//! ignore files using every kind of rule, the files listed are what
//! `git ls-files --cached --others --exclude-standard` lists, serially and in parallel,
//! from the top and from a subdirectory.
// Unix only: these tests build trees with Unix calls and compare with GNU tools;
// tests/windows.rs runs the Windows build under wine.
#![cfg(unix)]

mod common;

use common::*;
use std::collections::BTreeSet;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::Command;

/// A small deterministic random source (xorshift), so that each seed makes one repo.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn pick<'a, T>(&mut self, v: &'a [T]) -> &'a T {
        &v[(self.next() % v.len() as u64) as usize]
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

const NAMES: &[&str] = &[
    "a",
    "b",
    "build",
    "src",
    "docs",
    "foo",
    "bar.log",
    "keep.log",
    "x.o",
    "main.rs",
    "lib.rs",
    "Makefile",
    "#hash",
    "!bang",
    "space name",
    "trail ",
    "cache",
    "node_modules",
    "a1",
    "b2",
    "[x]",
    "deep",
];

/// Rules of every kind, some naming the tree's names.
const RULES: &[&str] = &[
    "*.log",
    "!keep.log",
    "build/",
    "/src/a",
    "x.o",
    "**/cache",
    "docs/**",
    "a/**/b",
    "foo/",
    "[ab]1",
    "b[!a]",
    "[a-c]2",
    "\\#hash",
    "\\!bang",
    "trail\\ ",
    "space name",
    "# a comment",
    "",
    "node_modules",
    "!node_modules/keep",
    "deep/*",
    "!deep/main.rs",
    "/Makefile",
    "*.rs",
    "!lib.rs",
    "src/",
    "!src/",
    "**/foo/**",
    "a/",
    "/b",
];

/// Whether git is here to compare with; says why a test is skipped when not.
fn have_git() -> bool {
    let here = Command::new("git").arg("--version").output().is_ok();
    if !here {
        eprintln!("skipped: git is not installed");
    }
    here
}

fn git(dir: &Path, home: &Path) -> Command {
    let mut c = Command::new("git");
    c.current_dir(dir)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE");
    c
}

/// Makes a repository under `root`: directories three deep, files, `.gitignore` files
/// with random rules in some directories, `.git/info/exclude` and a global excludes file,
/// nothing staged (git would list a tracked file whatever the rules say).
fn make_repo(root: &Path, home: &Path, seed: u64) -> bool {
    make_repo_with(root, home, seed, &|rng| {
        let rules: Vec<&str> = (0..6).map(|_| *rng.pick(RULES)).collect();
        rules.join("\n") + "\n"
    })
}

/// Simple rules only (literal names, `*.ext`, literal endings, anchored literal paths,
/// directory-only and negated ones), which ftw compiles into hash lookups.
const SIMPLE_RULES: &[&str] = &[
    "*.log",
    "!keep.log",
    "build/",
    "/src/a",
    "x.o",
    "foo/",
    "node_modules",
    "!node_modules/",
    "/Makefile",
    "*.rs",
    "!lib.rs",
    "src/",
    "!src/",
    "a/",
    "/b",
    "deep/main.rs",
    "!a1",
    "*1",
    "cache",
    "!cache/",
    "/docs/",
    "b2",
];

/// Like [`make_repo`], with the rules of each `.gitignore` made by `rules`.
fn make_repo_with(root: &Path, home: &Path, seed: u64, rules: &dyn Fn(&mut Rng) -> String) -> bool {
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    std::fs::create_dir_all(root).unwrap();
    std::fs::create_dir_all(home.join(".config/git")).unwrap();
    let init = git(root, home).args(["init", "-q"]).status();
    if !init.is_ok_and(|s| s.success()) {
        return false;
    }
    let mut dirs = vec![root.to_path_buf()];
    for _ in 0..40 {
        let parent = rng.pick(&dirs).clone();
        if parent.components().count() - root.components().count() >= 3 {
            continue;
        }
        let d = parent.join(rng.pick(NAMES));
        if std::fs::create_dir_all(&d).is_ok() {
            dirs.push(d);
        }
    }
    for d in &dirs {
        for _ in 0..4 {
            let f = d.join(rng.pick(NAMES));
            if !f.exists() {
                std::fs::write(&f, b"x").unwrap();
            }
        }
        if rng.chance(45) {
            std::fs::write(d.join(".gitignore"), rules(&mut rng)).unwrap();
        }
    }
    let exclude: Vec<&str> = (0..2).map(|_| *rng.pick(RULES)).collect();
    std::fs::write(root.join(".git/info/exclude"), exclude.join("\n") + "\n").unwrap();
    let global: Vec<&str> = (0..2).map(|_| *rng.pick(RULES)).collect();
    std::fs::write(home.join(".config/git/ignore"), global.join("\n") + "\n").unwrap();
    true
}

/// The files git lists (`--cached --others --exclude-standard`), as paths relative to
/// the directory it ran in; a repository nested in the work tree (`inner/`) by its path.
fn git_files(dir: &Path, home: &Path) -> BTreeSet<Vec<u8>> {
    git_files_env(dir, home, &[])
}

/// Environment variables to set (`Some`) or remove (`None`).
type Env<'a> = Vec<(&'a str, Option<&'a str>)>;

/// Sets (`Some`) or removes (`None`) environment variables of `c`.
fn with_env<'c>(c: &'c mut Command, env: &[(&str, Option<&str>)]) -> &'c mut Command {
    for (k, v) in env {
        match v {
            Some(v) => c.env(k, v),
            None => c.env_remove(k),
        };
    }
    c
}

/// [`git_files`] with `env` set for git.
fn git_files_env(dir: &Path, home: &Path, env: &[(&str, Option<&str>)]) -> BTreeSet<Vec<u8>> {
    let out = with_env(&mut git(dir, home), env)
        .args([
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
        .split(|&b| b == 0)
        .filter(|r| !r.is_empty())
        .map(|r| r.strip_suffix(b"/").unwrap_or(r).to_vec())
        .collect()
}

/// The files and links ftw lists with --ignore, relative to `dir`, and the directories
/// it lists that are repositories (git shows one as one entry).
fn ftw_files(dir: &Path, home: &Path, threads: &str) -> BTreeSet<Vec<u8>> {
    ftw_files_env(dir, home, threads, &[])
}

/// [`ftw_files`] with `env` set for ftw.
fn ftw_files_env(
    dir: &Path,
    home: &Path,
    threads: &str,
    env: &[(&str, Option<&str>)],
) -> BTreeSet<Vec<u8>> {
    let mut c = Command::new(ftw_bin());
    c.current_dir(dir)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .args(["find", "-0", "--ignore", "-j", threads, "."]);
    let r = run(with_env(&mut c, env));
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
    records(&r.stdout)
        .into_iter()
        .filter(|p| p != b".")
        .map(|p| p.strip_prefix(b"./").unwrap_or(&p).to_vec())
        .filter(|p| {
            let path = dir.join(std::ffi::OsStr::from_bytes(p));
            let meta = std::fs::symlink_metadata(&path).unwrap();
            !meta.is_dir() || path.join(".git/HEAD").exists() || path.join(".git").is_file()
        })
        .collect()
}

fn show_set(s: &BTreeSet<Vec<u8>>) -> String {
    s.iter()
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .collect::<Vec<_>>()
        .join(", ")
}

#[test]
fn ignore_rules_list_what_git_lists() {
    compare_with_git(&|root, home, seed| make_repo(root, home, seed));
}

/// Ignore files of simple rules (hash lookups in ftw), a few contents shared by many
/// directories (compiled once in ftw, matched relative to each directory: `/b` in one
/// directory is not `/b` in another), each content holding negations.
#[test]
fn shared_simple_ignore_files_list_what_git_lists() {
    compare_with_git(&|root, home, seed| {
        let mut rng = Rng(seed.wrapping_mul(0x2545_f491_4f6c_dd1d) | 1);
        let contents: Vec<String> = (0..3)
            .map(|_| {
                let mut rules: Vec<&str> = (0..5).map(|_| *rng.pick(SIMPLE_RULES)).collect();
                rules.push(*rng.pick(&["!keep.log", "!lib.rs", "!src/", "!a1"]));
                rules.join("\n") + "\n"
            })
            .collect();
        make_repo_with(root, home, seed, &|rng: &mut Rng| {
            rng.pick(&contents).clone()
        })
    });
}

/// Makes repositories with `make` (seeds 1 to 30) and compares ftw's listing with git's,
/// from the top and from subdirectories, serially and in parallel.
fn compare_with_git(make: &dyn Fn(&Path, &Path, u64) -> bool) {
    if !have_git() {
        return;
    }
    let mut compared = 0;
    for seed in 1..=30u64 {
        let tmp = tempfile::tempdir().unwrap();
        let (root, home) = (tmp.path().join("repo"), tmp.path().join("home"));
        if !make(&root, &home, seed) {
            eprintln!("skipped: git init failed");
            return;
        }
        // From the top, and from each subdirectory of the top that git does not ignore
        // (rules above the root). A root named is listed even if a rule above it
        // ignores it, as fd and ripgrep do; git lists nothing there but what it tracks
        // (so the rules are asked with --no-index: check-ignore says nothing of a
        // directory with tracked paths below it).
        let mut starts = vec![root.clone()];
        for e in std::fs::read_dir(&root).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() && p.file_name() != Some(".git".as_ref()) {
                let ignored = git(&root, &home)
                    .args(["check-ignore", "-q", "--no-index"])
                    .arg(p.file_name().unwrap())
                    .status()
                    .unwrap();
                if !ignored.success() {
                    starts.push(p);
                }
            }
        }
        for start in &starts {
            let want = git_files(start, &home);
            for threads in ["1", "0", "3"] {
                let got = ftw_files(start, &home, threads);
                if got != want {
                    panic!(
                        "seed {seed}, from {}, -j{threads}:\nonly in ftw: {}\nonly in git: {}\n\
                         rules: {}",
                        start.display(),
                        show_set(&got.difference(&want).cloned().collect()),
                        show_set(&want.difference(&got).cloned().collect()),
                        String::from_utf8_lossy(
                            &Command::new("sh")
                                .arg("-c")
                                .arg(
                                    "find . -name .gitignore -print -exec cat {} \\; ; \
                                      cat .git/info/exclude"
                                )
                                .current_dir(&root)
                                .output()
                                .unwrap()
                                .stdout
                        )
                    );
                }
                compared += 1;
            }
        }
    }
    assert!(compared >= 150, "{compared} comparisons");
}

#[test]
fn ceilings_and_require_git() {
    let tmp = tempfile::tempdir().unwrap();
    let top = tmp.path().join("top");
    let sub = top.join("sub");
    std::fs::create_dir_all(&sub).unwrap();
    std::fs::write(top.join(".gitignore"), "*.log\n").unwrap();
    std::fs::write(sub.join("a.log"), "").unwrap();
    std::fs::write(sub.join("b.txt"), "").unwrap();
    std::fs::write(sub.join(".ftwignore"), "b.*\n").unwrap();
    let list = |args: &[&str], env: Option<&Path>| {
        let mut c = Command::new(ftw_bin());
        c.args(["find", "--sort", "-0", "-t", "f"])
            .args(args)
            .arg(&sub);
        if let Some(ceiling) = env {
            c.env("GIT_CEILING_DIRECTORIES", ceiling);
        }
        let r = run(&mut c);
        assert_eq!(r.code, 0, "{}", r.stderr);
        records(&r.stdout)
            .iter()
            .map(|p| String::from_utf8_lossy(&p[sub.as_os_str().len() + 1..]).into_owned())
            .collect::<Vec<_>>()
    };
    // Not a work tree: .gitignore files do not count, .ftwignore does.
    assert_eq!(list(&["--ignore"], None), [".ftwignore", "a.log"]);
    assert_eq!(
        list(&["--ignore", "--no-require-git"], None),
        [".ftwignore"]
    );
    // A work tree: the top's .gitignore counts below it...
    std::fs::create_dir(top.join(".git")).unwrap();
    assert_eq!(list(&["--ignore"], None), [".ftwignore"]);
    // ...unless the search for it stops below the top.
    assert_eq!(list(&["--ignore"], Some(&top)), [".ftwignore", "a.log"]);
    // Without --ignore, everything; --ignore-file alone applies its file.
    assert_eq!(list(&[], None), [".ftwignore", "a.log", "b.txt"]);
    let extra = tmp.path().join("extra");
    std::fs::write(&extra, "*.txt\n").unwrap();
    let extra_arg = extra.to_str().unwrap();
    assert_eq!(
        list(&["--ignore-file", extra_arg], None),
        [".ftwignore", "a.log"]
    );
    assert_eq!(list(&["--no-hidden"], None), ["a.log", "b.txt"]);
}

/// A repository nested in a work tree is one entry for git (`inner/`), not entered: ftw
/// lists the directory and nothing below it, serially and in parallel, from the top and
/// from a subdirectory. A directory whose `.git` is no repository is an ordinary one. A
/// root outside any work tree walks each repository below it as a work tree of its own:
/// only its own git rules count in it.
#[test]
fn a_nested_repository_is_one_entry() {
    if !have_git() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (top, home) = (tmp.path().join("top"), tmp.path().join("home"));
    let nested = top.join("src/nested");
    let deeper = nested.join("d/deeper");
    for d in [
        &nested.join("d"),
        &top.join("fake/.git"),
        &top.join("ign"),
        &home.join(".config/git"),
    ] {
        std::fs::create_dir_all(d).unwrap();
    }
    for dir in [&top, &nested, &top.join("ign/repo"), &deeper] {
        std::fs::create_dir_all(dir).unwrap();
        if !git(dir, &home)
            .args(["init", "-q"])
            .status()
            .is_ok_and(|s| s.success())
        {
            eprintln!("skipped: git init failed");
            return;
        }
    }
    // The outer tree's rules: not git's in the nested tree; .ignore files still count.
    std::fs::write(top.join(".gitignore"), "*.log\nign/\n").unwrap();
    std::fs::write(top.join(".git/info/exclude"), "outer-excl\n").unwrap();
    std::fs::write(nested.join(".git/info/exclude"), "inner-excl\n").unwrap();
    std::fs::write(nested.join("d/.gitignore"), "b.log\n").unwrap();
    std::fs::write(home.join(".config/git/ignore"), "/d/global\n").unwrap();
    for f in [
        "a.log",
        "d/b.log",
        "d/c.log",
        "outer-excl",
        "inner-excl",
        "d/global",
        "ok",
        "d/deeper/x",
    ] {
        std::fs::write(nested.join(f), "").unwrap();
    }
    for f in ["src/main.c", "fake/f", "fake/.git/g", "ign/repo/f", "a.log"] {
        std::fs::write(top.join(f), "").unwrap();
    }
    let want = git_files(&top, &home);
    assert!(want.contains(&b"src/nested"[..]), "{}", show_set(&want));
    assert!(want.contains(&b"fake/f"[..]), "{}", show_set(&want));
    let want_sub = git_files(&top.join("src"), &home);
    assert!(want_sub.contains(&b"nested"[..]), "{}", show_set(&want_sub));
    // Inside the nested repository, its own rules; deeper is one entry there.
    let want_inner = git_files(&nested, &home);
    assert!(want_inner.contains(&b"d/c.log"[..]) && want_inner.contains(&b"d/deeper"[..]));
    for threads in ["1", "0", "3"] {
        assert_eq!(
            show_set(&ftw_files(&top, &home, threads)),
            show_set(&want),
            "-j{threads}"
        );
        assert_eq!(
            show_set(&ftw_files(&top.join("src"), &home, threads)),
            show_set(&want_sub),
            "from src, -j{threads}"
        );
        assert_eq!(
            show_set(&ftw_files(&nested, &home, threads)),
            show_set(&want_inner),
            "from the nested repository, -j{threads}"
        );
        // From outside any work tree: each repository with its own git rules.
        let around: BTreeSet<Vec<u8>> = ftw_files(tmp.path(), &home, threads)
            .into_iter()
            .filter_map(|p| p.strip_prefix(b"top/").map(<[u8]>::to_vec))
            .collect();
        assert_eq!(
            show_set(&around),
            show_set(&want),
            "from outside, -j{threads}"
        );
    }
}

#[test]
fn an_unreadable_ignore_file_is_reported_and_fails_the_run() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    std::fs::create_dir_all(root.join("sub/.ignore")).unwrap();
    std::fs::write(root.join("sub/a"), "").unwrap();
    // A loop: no file can be read there.
    std::os::unix::fs::symlink(".ftwignore", root.join(".ftwignore")).unwrap();
    for threads in ["1", "0"] {
        let root_slash = format!("{}/", root.display());
        let r = run(Command::new(ftw_bin()).args(["find", "--ignore", "-j", threads, &root_slash]));
        // A directory named .ignore is no ignore file (git says nothing of one either).
        assert_eq!(
            r.stderr.trim_end(),
            format!("ftw: {root_slash}.ftwignore: ignore file: Too many levels of symbolic links"),
        );
        assert!(String::from_utf8_lossy(&r.stdout).contains("sub/a"));
        assert_eq!(r.code, 1, "-j{threads}");
    }
}

/// A submodule, whose `.git` is a file (`gitdir: ../.git/modules/sub`): a work tree of its
/// own, as git sees it, from inside it (the search for the work tree stops at its top),
/// with its `info/exclude` read from its git directory; from the superproject, one
/// entry.
#[test]
fn a_submodule_is_a_work_tree_with_its_own_rules() {
    if !have_git() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (lib, top, home) = (
        tmp.path().join("lib"),
        tmp.path().join("super"),
        tmp.path().join("home"),
    );
    for d in [&lib, &top, &home.join(".config/git")] {
        std::fs::create_dir_all(d).unwrap();
    }
    let ok = |c: &mut Command| c.status().is_ok_and(|s| s.success());
    std::fs::write(lib.join("README"), "x").unwrap();
    let made = ok(git(&lib, &home).args(["init", "-q"]))
        && ok(git(&lib, &home).args(["add", "README"]))
        && ok(git(&lib, &home).args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-qm",
            "init",
        ]))
        && ok(git(&top, &home).args(["init", "-q"]))
        && ok(git(&top, &home).args([
            "-c",
            "protocol.file.allow=always",
            "submodule",
            "add",
            "-q",
            "../lib",
            "sub",
        ]));
    if !made {
        eprintln!("skipped: git submodule add failed");
        return;
    }
    let sub = top.join("sub");
    assert!(sub.join(".git").is_file());
    let gitdir = top.join(".git/modules/sub");
    assert!(gitdir.is_dir());
    std::fs::create_dir_all(gitdir.join("info")).unwrap();
    std::fs::write(gitdir.join("info/exclude"), "inner-excl\n").unwrap();
    std::fs::write(top.join(".gitignore"), "*.log\n").unwrap();
    std::fs::write(top.join(".git/info/exclude"), "outer-excl\n").unwrap();
    std::fs::create_dir_all(sub.join("d")).unwrap();
    std::fs::write(sub.join("d/.gitignore"), "b.log\n").unwrap();
    for f in [
        "a.log",
        "d/b.log",
        "d/c.log",
        "outer-excl",
        "inner-excl",
        "d/inner-excl",
        "ok",
    ] {
        std::fs::write(sub.join(f), "").unwrap();
    }
    let want = git_files(&sub, &home);
    assert!(
        want.contains(&b"a.log"[..]) && !want.contains(&b"inner-excl"[..]),
        "{}",
        show_set(&want)
    );
    // From the superproject, the submodule is one entry (a gitlink in the index).
    let want_from_top = git_files(&top, &home);
    assert!(
        want_from_top.contains(&b"sub"[..]),
        "{}",
        show_set(&want_from_top)
    );
    for threads in ["1", "0"] {
        assert_eq!(
            show_set(&ftw_files(&sub, &home, threads)),
            show_set(&want),
            "from the submodule, -j{threads}"
        );
        assert_eq!(
            show_set(&ftw_files(&top, &home, threads)),
            show_set(&want_from_top),
            "from the superproject, -j{threads}"
        );
    }
}

/// Files git tracks where a rule ignores them (`git add -f`): git lists them, and so
/// does ftw, entering an ignored directory for them alone (what else it holds is still
/// ignored), for each version of the index.
#[test]
fn tracked_files_where_rules_ignore_them_are_listed() {
    if !have_git() {
        return;
    }
    for version in ["2", "3", "4"] {
        let tmp = tempfile::tempdir().unwrap();
        let (top, home) = (tmp.path().join("repo"), tmp.path().join("home"));
        std::fs::create_dir_all(home.join(".config/git")).unwrap();
        std::fs::create_dir_all(&top).unwrap();
        let ok = |args: &[&str]| {
            git(&top, &home)
                .args(args)
                .status()
                .is_ok_and(|s| s.success())
        };
        if !ok(&["init", "-q"]) {
            eprintln!("skipped: git init failed");
            return;
        }
        std::fs::write(top.join(".gitignore"), "build/\n*.o\nsrc/gen/\n").unwrap();
        let files = [
            "build/out.o",
            "build/untracked",
            "build/sub/deep.o",
            "build/sub/other",
            "build/nothing/x",
            "a.o",
            "b.o",
            "src/main.c",
            "src/gen/junk.c",
            "src/gen/inner/t.c",
            "src/gen/inner/u.c",
        ];
        for f in files {
            std::fs::create_dir_all(top.join(f).parent().unwrap()).unwrap();
            std::fs::write(top.join(f), "x").unwrap();
        }
        assert!(ok(&[
            "add",
            "-f",
            "build/out.o",
            "build/sub/deep.o",
            "a.o",
            "src/gen/inner/t.c",
        ]));
        assert!(ok(&["update-index", "--index-version", version]));
        for (start, tracked) in [
            (top.clone(), "build/sub/deep.o"),
            (top.join("src"), "gen/inner/t.c"),
        ] {
            let want = git_files(&start, &home);
            assert!(want.contains(tracked.as_bytes()), "{}", show_set(&want));
            for threads in ["1", "0", "3"] {
                assert_eq!(
                    show_set(&ftw_files(&start, &home, threads)),
                    show_set(&want),
                    "index v{version}, from {}, -j{threads}",
                    start.display()
                );
            }
        }
    }
}

/// Generated repositories (as for [`ignore_rules_list_what_git_lists`]) with a third of
/// their files tracked, ignored or not (`git add -f`), some indexes of version 4.
#[test]
fn generated_repositories_with_tracked_files_list_what_git_lists() {
    compare_with_git(&|root, home, seed| {
        if !make_repo(root, home, seed) {
            return false;
        }
        let mut rng = Rng(seed.wrapping_mul(0x5851_f42d_4c95_7f2d) | 1);
        let mut files = Vec::new();
        let mut dirs = vec![root.to_path_buf()];
        while let Some(d) = dirs.pop() {
            for e in std::fs::read_dir(&d).unwrap() {
                let p = e.unwrap().path();
                if p.file_name() == Some(".git".as_ref()) {
                    continue;
                }
                if p.is_dir() {
                    dirs.push(p);
                } else if rng.chance(33) {
                    files.push(p.strip_prefix(root).unwrap().to_owned());
                }
            }
        }
        let added = git(root, home)
            .args(["add", "-f", "--"])
            .args(&files)
            .status()
            .is_ok_and(|s| s.success());
        let version = if seed % 2 == 0 { "4" } else { "2" };
        added
            && git(root, home)
                .args(["update-index", "--index-version", version])
                .status()
                .is_ok_and(|s| s.success())
    });
}

/// git's excludes file as git finds it: `core.excludesFile` from the repository's
/// `.git/config` (absolute, relative to the top, `~/`), from `GIT_CONFIG_GLOBAL` (and
/// then not from `~/.gitconfig`), from the system's file unless `GIT_CONFIG_NOSYSTEM`;
/// by default `$XDG_CONFIG_HOME/git/ignore`, or `~/.config/git/ignore` without it; and
/// `core.ignoreCase`. Each against git with the same environment, from the top and a
/// subdirectory, serially and in parallel.
#[test]
fn excludes_file_and_ignore_case_are_read_as_git_reads_them() {
    if !have_git() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (top, home) = (tmp.path().join("repo"), tmp.path().join("home"));
    let xdg = tmp.path().join("xdg");
    let etc = tmp.path().join("etc");
    for d in [&top, &home.join(".config/git"), &xdg.join("git"), &etc] {
        std::fs::create_dir_all(d).unwrap();
    }
    let ok = |args: &[&str]| {
        git(&top, &home)
            .args(args)
            .status()
            .is_ok_and(|s| s.success())
    };
    if !ok(&["init", "-q"]) {
        eprintln!("skipped: git init failed");
        return;
    }
    let exts = [
        "cfg", "rel", "tilde", "home", "xdg", "global", "user", "sys", "log", "inc", "incb",
        "tuser",
    ];
    for dir in ["", "sub/"] {
        std::fs::create_dir_all(top.join(dir)).unwrap();
        for ext in exts {
            std::fs::write(top.join(format!("{dir}a.{ext}")), "").unwrap();
        }
        std::fs::write(top.join(format!("{dir}B.LOG")), "").unwrap();
        std::fs::create_dir_all(top.join(format!("{dir}Build"))).unwrap();
        std::fs::write(top.join(format!("{dir}Build/x")), "").unwrap();
    }
    let rules = |name: &str, ext: &str| {
        let p = tmp.path().join(name);
        std::fs::write(&p, format!("*.{ext}\n")).unwrap();
        p.to_str().unwrap().to_owned()
    };
    std::fs::write(home.join(".config/git/ignore"), "*.home\n").unwrap();
    std::fs::write(xdg.join("git/ignore"), "*.xdg\n").unwrap();
    std::fs::write(top.join(".gitignore"), "*.log\nbuild/\n").unwrap();
    std::fs::write(home.join("tilde-rules"), "*.tilde\n").unwrap();
    std::fs::write(top.join("rel-rules"), "*.rel\n").unwrap();
    let global = tmp.path().join("global-config");
    std::fs::write(
        &global,
        format!("[core]\n\texcludesFile = {}\n", rules("g", "global")),
    )
    .unwrap();
    std::fs::write(
        home.join(".gitconfig"),
        format!("[core]\n\texcludesfile = {}\n", rules("u", "user")),
    )
    .unwrap();
    let system = etc.join("gitconfig");
    std::fs::write(
        &system,
        format!("[core]\n\texcludesFile = {}\n", rules("s", "sys")),
    )
    .unwrap();
    let (global, system) = (global.to_str().unwrap(), system.to_str().unwrap());
    let xdg = xdg.to_str().unwrap();
    // Files that includeIf names: one whose condition holds, one whose does not.
    let included = tmp.path().join("included");
    std::fs::write(
        &included,
        format!("[core]\n\texcludesFile = {}\n", rules("i", "inc")),
    )
    .unwrap();
    let not_included = tmp.path().join("not-included");
    std::fs::write(&not_included, "[core]\n\tignoreCase = true\n").unwrap();
    let (included, not_included) = (included.to_str().unwrap(), not_included.to_str().unwrap());
    let git_dir = std::fs::canonicalize(top.join(".git")).unwrap();
    let git_dir = git_dir.to_str().unwrap();
    let branch = String::from_utf8(
        git(&top, &home)
            .args(["symbolic-ref", "--short", "HEAD"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let include_if =
        |condition: &str, path: &str| format!("[includeIf \"{condition}\"]\n\tpath = {path}\n");
    // '~user/': the user's home from the password file (not $HOME), if there is one.
    let user = String::from_utf8(Command::new("id").arg("-un").output().unwrap().stdout)
        .unwrap()
        .trim()
        .to_owned();
    let user_home = std::fs::read_to_string("/etc/passwd")
        .unwrap_or_default()
        .lines()
        .map(|l| l.split(':').collect::<Vec<_>>())
        .find(|f| f.len() >= 6 && f[0] == user)
        .map(|f| f[5].to_owned())
        .filter(|h| Path::new(h).is_dir());

    // (what is set, the environment, the repository's config lines)
    let mut cases: Vec<(&str, Env<'_>, String)> = vec![
        ("~/.gitconfig", vec![], String::new()),
        (
            "no user's config: ~/.config/git/ignore",
            vec![
                ("XDG_CONFIG_HOME", None),
                ("GIT_CONFIG_GLOBAL", Some("/dev/null")),
            ],
            String::new(),
        ),
        (
            "no user's config: $XDG_CONFIG_HOME/git/ignore",
            vec![
                ("XDG_CONFIG_HOME", Some(xdg)),
                ("GIT_CONFIG_GLOBAL", Some("/dev/null")),
            ],
            String::new(),
        ),
        (
            "GIT_CONFIG_GLOBAL",
            vec![("GIT_CONFIG_GLOBAL", Some(global))],
            String::new(),
        ),
        (
            "the system's",
            vec![
                ("GIT_CONFIG_NOSYSTEM", None),
                ("GIT_CONFIG_SYSTEM", Some(system)),
                ("GIT_CONFIG_GLOBAL", Some("/dev/null")),
            ],
            String::new(),
        ),
        (
            "GIT_CONFIG_NOSYSTEM",
            vec![
                ("GIT_CONFIG_NOSYSTEM", Some("1")),
                ("GIT_CONFIG_SYSTEM", Some(system)),
                ("GIT_CONFIG_GLOBAL", Some("/dev/null")),
            ],
            String::new(),
        ),
        (
            "the repository's",
            vec![],
            format!("[core]\n\texcludesFile = {}\n", rules("c", "cfg")),
        ),
        (
            "relative to the top",
            vec![],
            "[core]\n\texcludesFile = rel-rules\n".to_owned(),
        ),
        (
            "~/ in the repository's",
            vec![],
            "[core]\n\texcludesFile = \"~/tilde-rules\" # home\n".to_owned(),
        ),
        (
            "core.ignoreCase",
            vec![],
            "[core]\n\tignoreCase = true\n".to_owned(),
        ),
        (
            "GIT_CONFIG_GLOBAL empty: no user's config",
            vec![("XDG_CONFIG_HOME", None), ("GIT_CONFIG_GLOBAL", Some(""))],
            String::new(),
        ),
        (
            "includeIf gitdir: where it holds",
            vec![],
            include_if(&format!("gitdir:{git_dir}"), included)
                + &include_if("gitdir:/nowhere/", not_included),
        ),
        (
            "includeIf gitdir/i:, a directory, a relative pattern",
            vec![],
            include_if(
                &format!("gitdir/i:{}/", git_dir.to_uppercase()),
                &rules_config(tmp.path(), "incb"),
            ) + &include_if("gitdir:repo/.git", included)
                + &include_if(&format!("gitdir:{}/", git_dir.to_uppercase()), not_included),
        ),
        (
            "includeIf onbranch:",
            vec![],
            include_if(&format!("onbranch:{}", branch.trim()), included)
                + &include_if("onbranch:no-such-branch", not_included),
        ),
    ];
    if let Some(h) = &user_home {
        let up = "../".repeat(Path::new(h).components().count().saturating_sub(1));
        let rules = rules("tu", "tuser");
        cases.push((
            "~user/ in the repository's",
            vec![],
            format!(
                "[core]\n\texcludesFile = ~{user}/{up}{}\n",
                rules.trim_start_matches('/')
            ),
        ));
    }
    let config = top.join(".git/config");
    let base_config = std::fs::read_to_string(&config).unwrap();
    // ~/.gitconfig's file while nothing else is set.
    let plain = git_files(&top, &home);
    assert!(!plain.contains(&b"a.user"[..]), "{}", show_set(&plain));
    for (what, env, repo_config) in &cases {
        std::fs::write(&config, format!("{base_config}{repo_config}")).unwrap();
        for start in [top.clone(), top.join("sub")] {
            let want = git_files_env(&start, &home, env);
            if what != &"~/.gitconfig" {
                assert_ne!(want, plain, "{what}: git saw no difference");
            }
            for threads in ["1", "0", "3"] {
                assert_eq!(
                    show_set(&ftw_files_env(&start, &home, threads, env)),
                    show_set(&want),
                    "{what}, from {}, -j{threads}",
                    start.display()
                );
            }
        }
    }
}

/// A configuration file under `dir` that sets `core.excludesFile` to rules ignoring
/// `*.EXT`, by its path.
fn rules_config(dir: &Path, ext: &str) -> String {
    let rules = dir.join(format!("rules-{ext}"));
    std::fs::write(&rules, format!("*.{ext}\n")).unwrap();
    let config = dir.join(format!("config-{ext}"));
    std::fs::write(
        &config,
        format!("[core]\n\texcludesFile = {}\n", rules.display()),
    )
    .unwrap();
    config.to_str().unwrap().to_owned()
}

/// What the rules exclude is never opened, nor a nested repository's contents, nor what
/// an ignored directory entered for its tracked files holds besides them: each such
/// directory here is unreadable (mode 000) and ftw, run as a user whom that stops,
/// reports nothing, serially, sorted with threads reading ahead, and in parallel.
#[test]
fn what_git_leaves_out_is_never_opened() {
    if !have_git() {
        return;
    }
    let place = Unprivileged::new("ftw-ignore-open");
    let (top, home) = (place.root.clone(), place.tmp.path().join("home"));
    std::fs::create_dir_all(home.join(".config/git")).unwrap();
    let ok = |dir: &Path, args: &[&str]| {
        git(dir, &home)
            .args(args)
            .status()
            .is_ok_and(|s| s.success())
    };
    std::fs::create_dir_all(top.join("inner")).unwrap();
    if !ok(&top, &["init", "-q"]) || !ok(&top.join("inner"), &["init", "-q"]) {
        eprintln!("skipped: git init failed");
        return;
    }
    std::fs::write(top.join(".gitignore"), "build/\ngen/\n").unwrap();
    for d in ["build/sub", "gen/locked", "inner/secret", "src"] {
        std::fs::create_dir_all(top.join(d)).unwrap();
    }
    for f in ["gen/keep.c", "gen/junk.c", "src/a.c", "inner/f"] {
        std::fs::write(top.join(f), "").unwrap();
    }
    assert!(ok(&top, &["add", "-f", "gen/keep.c"]));
    for d in ["build", "gen/locked", "inner/secret"] {
        set_mode(&top.join(d), 0o000);
    }
    let want = git_files(&top, &home);
    assert!(want.contains(&b"gen/keep.c"[..]) && want.contains(&b"inner"[..]));
    for args in [&["-j1"][..], &["-j0"], &["-j3"], &["--sort", "-j4"]] {
        let r = run(as_user(&place.bin)
            .current_dir(&top)
            .env("HOME", &home)
            .env("XDG_CONFIG_HOME", home.join(".config"))
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .args(["find", "-0", "--ignore", "-t", "f", "-t", "l"])
            .args(args)
            .arg("."));
        if Unprivileged::cannot_switch(&r) {
            eprintln!("skipped: cannot run as another user");
            return;
        }
        assert_eq!((r.code, r.stderr.as_str()), (0, ""), "{args:?}");
        let got: BTreeSet<Vec<u8>> = records(&r.stdout)
            .into_iter()
            .map(|p| p.strip_prefix(b"./").unwrap_or(&p).to_vec())
            .collect();
        let files: BTreeSet<Vec<u8>> = want.iter().filter(|p| p != &b"inner").cloned().collect();
        assert_eq!(show_set(&got), show_set(&files), "{args:?}");
    }
}

/// A linked work tree (`git worktree add`): its git directory holds its index and HEAD,
/// and its configuration and `info/exclude` are the main repository's (its
/// `commondir`): what git lists there, ftw lists, from its top and a subdirectory.
#[test]
fn a_linked_work_tree_reads_the_common_config_and_exclude() {
    if !have_git() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (main, linked, home) = (
        tmp.path().join("main"),
        tmp.path().join("linked"),
        tmp.path().join("home"),
    );
    std::fs::create_dir_all(&main).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    let ok = |dir: &Path, args: &[&str]| {
        git(dir, &home)
            .args(args)
            .status()
            .is_ok_and(|s| s.success())
    };
    std::fs::write(main.join("a.c"), "").unwrap();
    if !(ok(&main, &["init", "-q"])
        && ok(&main, &["add", "a.c"])
        && ok(
            &main,
            &[
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "commit",
                "-qm",
                "a",
            ],
        )
        && ok(&main, &["worktree", "add", "-q", linked.to_str().unwrap()]))
    {
        eprintln!("skipped: git worktree add failed");
        return;
    }
    let rules = tmp.path().join("rules");
    std::fs::write(&rules, "*.cfg\n").unwrap();
    assert!(ok(
        &main,
        &["config", "core.excludesFile", rules.to_str().unwrap()]
    ));
    std::fs::write(main.join(".git/info/exclude"), "*.ex\n").unwrap();
    for dir in ["", "sub/"] {
        std::fs::create_dir_all(linked.join(dir)).unwrap();
        for name in ["b.cfg", "b.ex", "b.c"] {
            std::fs::write(linked.join(format!("{dir}{name}")), "").unwrap();
        }
    }
    for start in [linked.clone(), linked.join("sub")] {
        let want = git_files(&start, &home);
        assert!(
            !want
                .iter()
                .any(|p| p.ends_with(b".cfg") || p.ends_with(b".ex"))
        );
        for threads in ["1", "0", "3"] {
            assert_eq!(
                show_set(&ftw_files(&start, &home, threads)),
                show_set(&want),
                "from {}, -j{threads}",
                start.display()
            );
        }
    }
}
