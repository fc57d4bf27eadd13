#!/usr/bin/env bash
# Side-by-side benchmark of `ftw cp -a` against cp -a, cpz and xcp -r, each copying a
# warm source to a fresh destination (removed and synced in hyperfine's --prepare), on
# the trees' own file system and again with the destination on a tmpfs (no disk cost).
#   bench/cp.sh [TREES]     TREES: the folder of make-trees.sh (default /bench/trees)
# Destinations go to $SCRATCH (default: TREES/../scratch, the same file system as the
# trees) and $TMPFS (default /dev/shm, skipped where it is not a tmpfs).
# Needs the peers from ../shared/bench/setup-peers.sh and the trees from make-trees.sh.
# Writes a Markdown report to stdout and keeps hyperfine's JSON in bench/out/.
# Environment: RUNS (default 5), SKIP_CRA=1, SKIP_BIG=1, SKIP_FILES=1, SKIP_TMPFS=1.
#
# Also, untimed: the system calls per entry of ftw cp -a and cp -a (strace -c -f) and
# ftw's peak RSS on big, and whether the copies are exact (rsync -naHAX --checksum).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
TREES=$(cd "${1:-/bench/trees}" && pwd)
SCRATCH=${SCRATCH:-$(dirname "$TREES")/scratch}
TMPFS=${TMPFS:-/dev/shm}
RUNS=${RUNS:-5}
export PATH="${PEERS:-/opt/peers}/bin:$PATH"
out="$here/out"
mkdir -p "$out" "$SCRATCH"

(cd "$repo" && cargo build --release -q -p ftw-cli)
# The binary just built, wherever cargo puts it (CARGO_TARGET_DIR too).
export PATH="${CARGO_TARGET_DIR:-$repo/target}/release:$PATH"
[[ $(command -v ftw) == "${CARGO_TARGET_DIR:-$repo/target}/release/ftw" ]] || { echo "ftw was not built" >&2; exit 1; }
for t in cpz xcp hyperfine strace rsync; do
  command -v "$t" >/dev/null || { echo "missing $t: run ../shared/bench/setup-peers.sh" >&2; exit 1; }
done
cd "$TREES"
[[ -d big && -d cra ]] || { echo "no trees in $TREES: run make-trees.sh" >&2; exit 1; }

echo "# ftw cp benchmark, $(date -u +%Y-%m-%d)"
echo
echo "Machine: $(nproc) cores, $(free -g | awk '/Mem/ {print $2}') GiB, $(uname -sr), $(df -T "$SCRATCH" | awk 'NR==2 {print $2}') under $SCRATCH."
echo "Versions: ftw $(git -C "$repo" rev-parse --short HEAD)$(git -C "$repo" diff --quiet HEAD -- crates || echo '+changes'), $(cp --version | head -1), cpz $(cpz --version 2>/dev/null | awk '{print $NF}'), $(xcp --version 2>/dev/null | head -1), $(hyperfine --version)."
echo "Each run copies a warm source to a destination removed and synced by --prepare. Ratios are each command's time / ftw cp's: above 1, ftw is faster."
echo

. "$here/lib.sh"

# One comparison: NAME, the source, the destination's folder, runs.
compare() {
  local name=$1 src=$2 dir=$3 runs=$4
  local D=$dir/cp-bench
  find "$src" -type f -exec cat {} + >/dev/null 2>&1 || true # warm
  bench "$name" "sh -c 'rm -rf $D; sync'" "$runs" \
    "ftw cp -a $src $D" "cp -a $src $D" "cpz $src $D" "xcp -r $src $D" "ftw cp -a -j1 $src $D"
  rm -rf "$D"
  ftw cp -a "$src" "$D"
  if [[ -n $(rsync -naHAX --checksum --itemize-changes "$src/" "$D/") ]]; then
    echo "**ftw cp -a's copy of $src differs from it (rsync -naHAX --checksum).**"
    echo
  fi
  rm -rf "$D"
}

if [[ -z ${SKIP_CRA:-} ]]; then
  echo "## \`cra\` (42k entries, 360 MB)"
  echo
  compare cp-cra cra "$SCRATCH" "$RUNS"
  [[ -z ${SKIP_TMPFS:-} && $(stat -f -c %T "$TMPFS") == tmpfs ]] && {
    echo "### destination on a tmpfs"
    echo
    compare cp-cra-tmpfs cra "$TMPFS" "$RUNS"
  }
fi

if [[ -z ${SKIP_BIG:-} ]]; then
  echo "## \`big\` (1.01M entries, 24 hard-linked copies: hard links kept)"
  echo
  compare cp-big big "$SCRATCH" "$RUNS"
  D=$SCRATCH/cp-bench
  rm -rf "$D"
  /usr/bin/time -f '%M' -o "$out/cp-big-rss" ftw cp -a big "$D"
  echo "ftw cp -a big: peak RSS $(($(cat "$out/cp-big-rss") / 1024)) MiB."
  echo
  rm -rf "$D"
fi

if [[ -z ${SKIP_FILES:-} ]]; then
  F=$SCRATCH/cp-files
  mkdir -p "$F"
  [[ -f $F/2g ]] || head -c 2G /dev/urandom >"$F/2g"
  [[ -f $F/sparse ]] || { truncate -s 8G "$F/sparse"; dd if=/dev/urandom of="$F/sparse" bs=1M count=1 seek=4096 conv=notrunc status=none; }
  echo "## one 2 GiB file"
  echo
  bench cp-2g "sh -c 'rm -f $F/copy; sync'" "$RUNS" \
    "ftw cp $F/2g $F/copy" "cp --reflink=never $F/2g $F/copy"
  echo "## a sparse 8 GiB file holding 1 MiB"
  echo
  bench cp-sparse "sh -c 'rm -f $F/copy; sync'" "$RUNS" \
    "ftw cp $F/sparse $F/copy" "cp $F/sparse $F/copy"
  rm -f "$F/copy"
fi

echo "## System calls per entry (cra, strace -c -f)"
echo
D=$SCRATCH/cp-bench
entries=$(find cra | wc -l)
for c in "ftw cp -a -j1" "cp -a"; do
  rm -rf "$D"
  calls=$(strace -c -f -o /dev/stdout $c cra "$D" | awk '$NF == "total" {print $4}')
  echo "- \`$c\`: $calls calls, $(python3 -c "print(f'{$calls / $entries:.2f}')") per entry"
done
rm -rf "$D"
