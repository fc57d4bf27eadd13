#!/usr/bin/env bash
# Side-by-side benchmark of `ftw rm` against rm -rf, rmz and the floor_rm yardstick, each
# run on a fresh copy of a tree (hyperfine --prepare).
#   bench/rm.sh [TREES]     TREES: the folder of make-trees.sh (default /bench/trees)
# Copies go to $SCRATCH (default: TREES/../scratch, the same file system as the trees).
# Needs the peers from ../shared/bench/setup-peers.sh and the trees from make-trees.sh.
# Writes a Markdown report to stdout and keeps hyperfine's JSON in bench/out/.
# Environment: RUNS (default 5), BIG_RUNS (default RUNS), SKIP_CRA=1, SKIP_BIG=1,
# SKIP_DEEP=1.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
TREES=$(cd "${1:-/bench/trees}" && pwd)
SCRATCH=${SCRATCH:-$(dirname "$TREES")/scratch}
RUNS=${RUNS:-5}
export PATH="${PEERS:-/opt/peers}/bin:$PATH"
out="$here/out"
mkdir -p "$out" "$SCRATCH"

(cd "$repo" && cargo build --release -q)
export PATH="$repo/target/release:$PATH"
for t in rmz floor_rm hyperfine strace; do
  command -v "$t" >/dev/null || { echo "missing $t: run ../shared/bench/setup-peers.sh" >&2; exit 1; }
done
deep_maker=$(cd "$repo/.." && pwd)/shared/bench/make-deep.py
[[ -f $deep_maker ]] || deep_maker=${DEEP_MAKER:?set DEEP_MAKER to make-deep.py}
cd "$TREES"
[[ -d big && -d cra && -d flat ]] || { echo "no trees in $TREES: run make-trees.sh" >&2; exit 1; }
S=$SCRATCH/rm-bench
rm -rf "$S"

echo "# ftw rm benchmark, $(date -u +%Y-%m-%d)"
echo
echo "Machine: $(nproc) cores, $(free -g | awk '/Mem/ {print $2}') GiB, $(uname -sr), $(df -T "$SCRATCH" | awk 'NR==2 {print $2}') under $SCRATCH ($(findmnt -no OPTIONS -T "$SCRATCH"))."
echo "Versions: ftw $(git -C "$repo" rev-parse --short HEAD)$(git -C "$repo" diff --quiet HEAD -- crates || echo '+changes'), $(rm --version | head -1), rmz $(rmz --version 2>/dev/null | awk '{print $NF}'), $(hyperfine --version)."
echo "Each run removes a fresh copy made by --prepare (then sync, so that no writeback of the copy is timed). Ratios are peer time / ftw time from this one run: above 1, ftw is faster."
echo

. "$here/lib.sh"

if [[ -z ${SKIP_CRA:-} ]]; then
  echo "## \`cra\` copy (42k entries, 360 MB)"
  echo
  bench rm-cra "sh -c 'rm -rf $S; cp -a cra $S; sync'" "$((RUNS * 2))" \
    "ftw rm $S" "rmz $S" "rm -rf $S" "floor_rm $S" "ftw rm -j1 $S"
fi

if [[ -z ${SKIP_BIG:-} ]]; then
  echo "## \`big\` copy (1.01M entries, cp -al: hard links, so no data blocks are freed)"
  echo
  bench rm-big "sh -c 'rm -rf $S; cp -al big $S; sync'" "${BIG_RUNS:-$RUNS}" \
    "ftw rm $S" "rmz $S" "rm -rf $S" "floor_rm $S" "ftw rm -j1 $S"
fi

echo "## \`flat\` copy (100,000 files in one directory)"
echo
bench rm-flat "sh -c 'rm -rf $S; cp -a flat $S; sync'" "$RUNS" \
  "ftw rm $S" "rmz $S" "rm -rf $S" "floor_rm $S" "ftw rm -j1 $S"

if [[ -z ${SKIP_DEEP:-} ]]; then
  echo "## Deep chains (a file in each level), made fresh by make-deep.py"
  echo
  echo "Linear in depth means the 2× chain takes 2× the time. floor_rm holds a descriptor"
  echo "per level and fails past the open-file limit; rmz opens full paths (ENAMETOOLONG)."
  echo
  for levels in 5000 10000; do
    bench "rm-deep-$levels" "sh -c 'rm -rf $S; python3 $deep_maker $S $levels; sync'" "$RUNS" \
      "ftw rm -j1 $S" "ftw rm $S" "rm -rf $S"
  done
  tfs=$SCRATCH/rm-tmpfs
  mkdir -p "$tfs"
  if mount -t tmpfs -o size=2g ftw-bench "$tfs" 2>/dev/null; then
    echo "### The same on a tmpfs (no journal, no disk)"
    echo
    for levels in 50000 100000; do
      bench "rm-deep-tmpfs-$levels" "sh -c 'rm -rf $tfs/d; python3 $deep_maker $tfs/d $levels'" "$RUNS" \
        "ftw rm -j1 $tfs/d" "ftw rm $tfs/d" "rm -rf $tfs/d"
    done
    bench "rm-deep-tmpfs-ulimit" "sh -c 'rm -rf $tfs/d; python3 $deep_maker $tfs/d 100000'" "$RUNS" \
      "sh -c 'ulimit -n 32; exec ftw rm -j1 $tfs/d'" "sh -c 'ulimit -n 32; exec ftw rm $tfs/d'"
    umount "$tfs"
  fi
fi

echo "## Peak memory (max RSS)"
echo
echo "| command | max RSS |"
echo "|---|---|"
for tree in cra big; do
  for c in "ftw rm" "ftw rm -j1" "rmz" "rm -rf"; do
    rm -rf "$S"; cp -al "$tree" "$S"; sync
    kb=$( { /usr/bin/time -f %M $c "$S" >/dev/null; } 2>&1 | tail -1)
    echo "| \`$c\` ($tree copy) | $((kb / 1024)) MiB ($kb KiB) |"
  done
done
echo

entries=$(find cra | wc -l)
echo "## System calls, \`cra\` copy ($entries entries), strace -c -f"
echo
echo "| command | calls | per entry | unlinkat | openat | getdents64 | close | stat family | failed |"
echo "|---|---|---|---|---|---|---|---|---|"
for c in "ftw rm -j1" "ftw rm" "floor_rm" "rm -rf" "rmz"; do
  rm -rf "$S"; cp -al cra "$S"; sync
  strace -c -f -o "$out/strace.txt" $c "$S" >/dev/null
  python3 - "$out/strace.txt" "$entries" "$c" <<'PY'
import sys
calls, errors = {}, 0
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) >= 5 and f[0][0].isdigit() and f[-1] != "total":
        calls[f[-1]] = int(f[3])
        if len(f) == 6:
            errors += int(f[4])
total = sum(calls.values())
stat = sum(v for k, v in calls.items() if "stat" in k)
n = int(sys.argv[2])
g = lambda k: calls.get(k, 0)
print(f"| `{sys.argv[3]}` | {total} | {total/n:.3f} | {g('unlinkat')} | {g('openat')} | {g('getdents64')} | {g('close')} | {stat} | {errors} |")
PY
done
echo
rm -rf "$S"
