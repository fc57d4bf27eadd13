#!/usr/bin/env bash
# Side-by-side benchmark of `ftw find` against find, bfs, fd and the floor yardstick.
#   bench/run.sh [TREES]     TREES: the folder of make-trees.sh (default /bench/trees)
# Needs the peers from ../shared/bench/setup-peers.sh (PATH gets /opt/peers/bin) and the
# trees from ../shared/bench/make-trees.sh. Writes a Markdown report to stdout and keeps
# hyperfine's JSON in bench/out/. Cold-cache runs drop the page cache (root only).
# Environment: RUNS (warm runs, default 5), COLD_RUNS (default 2), SKIP_COLD=1.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
TREES=${1:-/bench/trees}
RUNS=${RUNS:-5}
COLD_RUNS=${COLD_RUNS:-2}
export PATH="${PEERS:-/opt/peers}/bin:$PATH"
out="$here/out"
mkdir -p "$out"

(cd "$repo" && cargo build --release -q)
export PATH="$repo/target/release:$here:$PATH"
FTW=ftw
for t in floor bfs fd find hyperfine strace; do
  command -v "$t" >/dev/null || { echo "missing $t: run ../shared/bench/setup-peers.sh" >&2; exit 1; }
done
cd "$TREES"
[[ -d big/c24 && -d cra ]] || { echo "no trees in $TREES: run ../shared/bench/make-trees.sh" >&2; exit 1; }

# Optional peers, included where installed: bfs 4 with io_uring (../shared/bench/build-bfs4.sh)
# and a build of an earlier ftw as ftw-before (to show what a change did, in the same run).
opt() { command -v "${1%% *}" >/dev/null && printf '%s\n' "$@" || true; }
mapfile -t bfs4_warm < <(opt "bfs4 big")
mapfile -t bfs4_cold < <(opt "bfs4 big" "bfs4 -j32 big")
mapfile -t before_serial < <(opt "ftw-before find -j1 big")
mapfile -t before_default < <(opt "ftw-before find big")
mapfile -t before_sort < <(opt "ftw-before find --sort big")

# Two floors over the two halves of big at once: the 2-core parallel yardstick.
two_floors="two-floors.sh big"

echo "# ftw find benchmark, $(date -u +%Y-%m-%d)"
echo
echo "Machine: $(nproc) cores, $(free -g | awk '/Mem/ {print $2}') GiB, $(uname -sr), $(df -T "$TREES" | awk 'NR==2 {print $2}') under $TREES."
echo "Versions: ftw $(git -C "$repo" rev-parse --short HEAD)$(git -C "$repo" diff --quiet HEAD -- crates || echo '+changes'), $(find --version | head -1), bfs $(bfs --version | head -1 | awk '{print $2}'), $(command -v bfs4 >/dev/null && echo "bfs4 $(bfs4 --version | head -1 | awk '{print $2}'), ")$(fd --version), $(hyperfine --version)$(command -v ftw-before >/dev/null && echo ", ftw-before: ${FTW_BEFORE:-an earlier build}")."
echo "Output piped (hyperfine --output=pipe). Ratios are peer time / ftw time from this one run: above 1, ftw is faster."
echo

. "$here/lib.sh"

echo "## Warm cache, serial: \`cra\` (42k entries)"
echo
bench cra-serial "" "$((RUNS * 2))" "$FTW find -j1 cra" "floor -p cra" "find cra" "bfs cra" "fd -u -j1 . cra"
echo "## Warm cache, serial: \`big\` (1.01M entries)"
echo
bench big-serial "" "$RUNS" "$FTW find -j1 big" "floor -p big" "find big" "bfs big" "fd -u -j1 . big" "${before_serial[@]}"
echo "## Warm cache, defaults: \`big\`"
echo
bench big-default "" "$RUNS" "$FTW find big" "$two_floors" "fd -u . big" "bfs big" "${bfs4_warm[@]}" "$FTW find -j1 big" "${before_default[@]}"
echo "## Sorted output, warm cache: \`big\`"
echo
bench big-sort "" "$((RUNS * 3))" "$FTW find big" "$FTW find --sort big" "$FTW find --sort -j1 big" "${before_sort[@]}"
echo "## Warm cache, defaults: \`cra\`"
echo
bench cra-default "" "$((RUNS * 2))" "$FTW find cra" "fd -u . cra" "bfs cra"
echo "## Start-up: an empty directory"
echo
mkdir -p "$out/empty"
bench empty "" 50 "$FTW find $out/empty" "fd -u . $out/empty" "find $out/empty"

if [[ -z ${SKIP_COLD:-} && -w /proc/sys/vm/drop_caches ]]; then
  echo "## Cold cache (page cache dropped before each run): \`big\`"
  echo
  drop="sync; echo 3 > /proc/sys/vm/drop_caches"
  bench big-cold "sh -c '$drop'" "$COLD_RUNS" "$FTW find big" "$FTW find --sort big" "$FTW find -j1 big" "find big" "bfs big" "fd -u . big" "fd -u -j16 . big" "fd -u -j32 . big" "${bfs4_cold[@]}" "${before_default[@]}"
fi

echo "## Peak memory (max RSS), \`big\`"
echo
echo "| command | max RSS |"
echo "|---|---|"
for c in "$FTW find -j1 big" "$FTW find big" "$FTW find --sort big" "find big" "bfs big" "fd -u . big"; do
  kb=$( { /usr/bin/time -f %M $c >/dev/null; } 2>&1 | tail -1)
  echo "| \`$c\` | $((kb / 1024)) MiB ($kb KiB) |"
done
echo

echo "## System calls, \`cra\` ($(find cra -type d | wc -l) directories), strace -c -f"
echo
echo "| command | calls | per directory | openat | getdents64 | close | stat family | write |"
echo "|---|---|---|---|---|---|---|---|"
dirs=$(find cra -type d | wc -l)
for c in "$FTW find -j1 cra" "$FTW find cra" "floor -p cra" "find cra" "bfs cra"; do
  strace -c -f -o "$out/strace.txt" $c >/dev/null
  python3 - "$out/strace.txt" "$dirs" "$c" <<'PY'
import sys
calls = {}
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) >= 5 and f[0][0].isdigit() and f[-1] != "total":
        calls[f[-1]] = int(f[3])
total = sum(calls.values())
stat = sum(v for k, v in calls.items() if "stat" in k)
d = int(sys.argv[2])
g = lambda k: calls.get(k, 0)
print(f"| `{sys.argv[3]}` | {total} | {total/d:.2f} | {g('openat')} | {g('getdents64')} | {g('close')} | {stat} | {g('write')} |")
PY
done
