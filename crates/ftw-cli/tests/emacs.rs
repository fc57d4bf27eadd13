//! The Emacs front end (editors/emacs/ftw.el): its ERT tests, run with this build of ftw.
//! Skipped, with a message, when Emacs is not installed.
// Unix only: these tests build trees with Unix calls and compare with GNU tools;
// tests/windows.rs runs the Windows build under wine.
#![cfg(unix)]

use std::path::Path;
use std::process::Command;

#[test]
fn emacs_front_end() {
    let emacs = std::env::var_os("EMACS").unwrap_or_else(|| "emacs".into());
    if Command::new(&emacs).arg("--version").output().is_err() {
        eprintln!("skipped: emacs is not installed (ftw.el's ERT tests need it)");
        return;
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../editors/emacs/run-tests.sh");
    let out = Command::new("bash")
        .arg(&script)
        .arg(env!("CARGO_BIN_EXE_ftw"))
        .env("EMACS", &emacs)
        .output()
        .expect("run editors/emacs/run-tests.sh");
    assert!(
        out.status.success(),
        "{} failed ({}):\n{}\n{}",
        script.display(),
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
