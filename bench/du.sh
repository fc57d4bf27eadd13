#!/usr/bin/env bash
# Side-by-side benchmark of `ftw du` against du, diskus and dust.
#   bench/du.sh [TREES]     TREES: the folder of make-trees.sh (default /bench/trees)
# Needs diskus and dust in /opt/peers/bin (cargo install), hyperfine and strace. Writes a
# Markdown report to stdout and keeps hyperfine's JSON in bench/out/. Cold-cache runs
# drop the page cache (root only). Environment: RUNS (warm runs, default 5),
# COLD_RUNS (default 3), SKIP_COLD=1, FTW (the binary; default: a release build of the
# working tree into $CARGO_TARGET_DIR or target/).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
TREES=${1:-/bench/trees}
RUNS=${RUNS:-5}
COLD_RUNS=${COLD_RUNS:-3}
export PATH="${PEERS:-/opt/peers}/bin:$PATH"
out="$here/out"
mkdir -p "$out"
if [[ -z ${FTW:-} ]]; then
  (cd "$repo" && cargo build --release -q -p ftw-cli)
  FTW="${CARGO_TARGET_DIR:-$repo/target}/release/ftw"
fi
for t in diskus dust du hyperfine strace; do
  command -v "$t" >/dev/null || { echo "missing $t" >&2; exit 1; }
done
cd "$TREES"
[[ -d big ]] || { echo "no tree big in $TREES: run ../shared/bench/make-trees.sh" >&2; exit 1; }

echo "# ftw du benchmark, $(date -u +%Y-%m-%d)"
echo
echo "Machine: $(nproc) cores, $(free -g | awk '/Mem/ {print $2}') GiB, $(uname -sr), $(df -T "$TREES" | awk 'NR==2 {print $2}') under $TREES; \`big\`: $(find big | wc -l) entries, $(find big -type d | wc -l) directories."
echo "Versions: ftw $(git -C "$repo" rev-parse --short HEAD)$(git -C "$repo" diff --quiet HEAD -- crates || echo '+changes'), $(du --version | head -1), $(diskus --version), $(dust --version), $(hyperfine --version)."
echo "Output piped. Ratios are peer time / ftw time from this one run: above 1, ftw is faster."
echo
echo "Totals: ftw du -sB1 $("$FTW" du -sB1 big | cut -f1), du -sB1 $(du -sB1 big | cut -f1), diskus $(diskus big 2>/dev/null | awk '{print $1}')."
echo

. "$here/lib.sh"

echo "## Warm cache: \`big\`"
echo
bench du-warm "" "$RUNS" "$FTW du -s big" "du -s big" "diskus big" "dust -n 20 big" "$FTW du --tree -n 20 big" "$FTW du big" "$FTW du -s -j1 big"

if [[ -z ${SKIP_COLD:-} && -w /proc/sys/vm/drop_caches ]]; then
  echo "## Cold cache (page cache dropped before each run): \`big\`"
  echo
  drop="sync; echo 3 > /proc/sys/vm/drop_caches"
  bench du-cold "sh -c '$drop'" "$COLD_RUNS" "$FTW du -s big" "du -s big" "diskus big" "dust -n 20 big"
fi

echo "## Peak memory (max RSS), \`big\`"
echo
echo "| command | max RSS |"
echo "|---|---|"
for c in "$FTW du -s big" "$FTW du --tree -n 20 big" "$FTW du big" "$FTW du -o /dev/null big" "du -s big" "diskus big" "dust -n 20 big"; do
  /usr/bin/time -o "$out/rss.txt" -f %M $c >/dev/null 2>&1; kb=$(tail -1 "$out/rss.txt")
  echo "| \`$c\` | $((kb / 1024)) MiB ($kb KiB) |"
done
echo

echo "## System calls, \`big\`, strace -c -f"
echo
echo "| command | calls | openat | getdents64 | statx | newfstatat/fstat | close |"
echo "|---|---|---|---|---|---|---|"
for c in "$FTW du -s -j1 big" "du -s big" "diskus -j 1 big"; do
  strace -c -f -o "$out/strace.txt" $c >/dev/null 2>&1
  python3 - "$out/strace.txt" "$c" <<'PY'
import sys
calls = {}
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) >= 5 and f[0][0].isdigit() and f[-1] != "total":
        calls[f[-1]] = int(f[3])
g = lambda k: calls.get(k, 0)
total = sum(calls.values())
print(f"| `{sys.argv[2]}` | {total} | {g('openat')} | {g('getdents64')} | {g('statx')} | {g('newfstatat') + g('fstat') + g('lstat') + g('stat')} | {g('close')} |")
PY
done
