#!/usr/bin/env bash
# Calls per entry of the Windows build, counted under wine's relay trace
# (WINEDEBUG=+relay): `ftw find -j 1` and `ftw du -s -j 1` against the std way
# (crates/ftw/examples/std_walk.rs: std::fs::read_dir and a symlink_metadata per
# entry), on a tree of DIRS directories of FILES empty files each.
#
#   bench/windows-calls.sh [DIRS] [FILES]     (default 4 250: 1,004 entries)
#
# Needs what tests/windows.rs needs (the x86_64-pc-windows-gnu target, MinGW, wine).
# The counts are of Win32 and NT file calls made by the program's thread that first
# names the tree (the others, wine's own service processes among them, are left out;
# the runs are serial: -j 1). Wall
# clock under wine says nothing about Windows: see bench/windows.ps1 for that.
set -euo pipefail
cd "$(dirname "$0")/.."
dirs=${1:-4}
files=${2:-250}
target=x86_64-pc-windows-gnu
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-target}
cargo build -q --release --target $target -p ftw-cli
cargo build -q --release --target $target -p ftw --example std_walk
bin=$CARGO_TARGET_DIR/$target/release
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/t"
for ((d = 0; d < dirs; d++)); do
  mkdir "$work/t/d$d"
  for ((f = 0; f < files; f++)); do : >"$work/t/d$d/f$f"; done
done
entries=$((dirs + dirs * files))
win="Z:$(echo "$work/t" | tr / '\\')"
api='Call (ntdll\.(NtCreateFile|NtOpenFile|NtQueryDirectoryFile|NtQueryDirectoryFileEx|NtQueryInformationFile|NtSetInformationFile|NtClose|NtQueryAttributesFile|NtQueryFullAttributesFile|NtQueryVolumeInformationFile)|KERNEL32\.(CreateFileW|GetFileAttributesExW|GetFileInformationByHandle|GetFileInformationByHandleEx|FindFirstFileExW|FindNextFileW|CloseHandle|GetFinalPathNameByHandleW))\('
count() { # NAME EXE ARGS...: the calls of the busiest thread, by name
  local name=$1
  shift
  WINEDEBUG=+relay .ci/windows/runner.sh "$@" >/dev/null 2>"$work/$name.relay"
  grep -oE "^[0-9a-f]+:$api" "$work/$name.relay" | sed 's/($//' >"$work/$name.calls"
  # The program's thread: the first to name the tree (relay shows wide strings).
  local tid
  tid=$(grep -m1 -F "$(basename "$work")" "$work/$name.relay" | cut -d: -f1)
  local total
  total=$(grep -c "^$tid:" "$work/$name.calls")
  printf '\n%s: %d file calls for %d entries (%.2f an entry)\n' "$name" "$total" "$entries" \
    "$(echo "$total / $entries" | bc -l)"
  grep "^$tid:" "$work/$name.calls" | cut -d' ' -f2 | sort | uniq -c | sort -rn
}
count "ftw find -j 1" "$bin/ftw.exe" find -j 1 "$win"
count "ftw du -s -j 1" "$bin/ftw.exe" du -s -j 1 "$win"
count "std read_dir + symlink_metadata" "$bin/examples/std_walk.exe" "$win"
