//! The way ftw is measured against: a tree walked with `std::fs::read_dir` and a
//! `symlink_metadata` per entry (what most walkers do on Windows, where `DirEntry`'s
//! file type is known but not the link's nature without it). Prints each path and the
//! count. Used by BENCHMARKS.md's call counts (under wine's relay trace) and by
//! `bench/windows.ps1` on a real Windows host.
//!
//! ```sh
//! cargo run --release --example std_walk -p ftw -- DIR
//! ```

use std::io::Write;
use std::path::PathBuf;

fn main() {
    let root = PathBuf::from(std::env::args_os().nth(1).unwrap_or_else(|| ".".into()));
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let mut stack = vec![root];
    let mut n = 0u64;
    while let Some(dir) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            let Ok(m) = std::fs::symlink_metadata(&p) else {
                continue;
            };
            n += 1;
            let _ = writeln!(out, "{}", p.display());
            if m.is_dir() {
                stack.push(p);
            }
        }
    }
    let _ = out.flush();
    eprintln!("{n} entries");
}
