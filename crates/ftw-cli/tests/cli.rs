//! Snapshots of the command line's surface: every command's `--help`, `--version`,
//! `ftw` alone, and README's `ftw find` examples on the tree they show, each a file in
//! `tests/cmd/` compared whole (trycmd), so that any change to what a user sees shows
//! as a diff to review. `TRYCMD=overwrite cargo test --release -p ftw-cli --test cli`
//! rewrites the snapshots after a wanted change.

#[test]
fn cli() {
    let cases = trycmd::TestCases::new();
    cases
        .default_bin_name("ftw")
        .register_bin("ftw", trycmd::cargo::cargo_bin!("ftw"))
        .case("tests/cmd/*.toml");
    // The README examples run on a tree with a symbolic link, which a Windows checkout
    // may not hold.
    #[cfg(unix)]
    cases.case("tests/cmd/*.md");
}
