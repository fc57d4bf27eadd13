#!/usr/bin/env bash
# ftw.el against what it replaces, timed inside Emacs (emacs --batch, benchmark-run),
# warm cache: ftw-directory-files-recursively against directory-files-recursively
# (REGEXP "", "\\.js\\'" with directories, and following links), and project-files of an
# ftw project against project.el's find-based listing with the same (default) ignores.
#   bench/emacs.sh [TREES]    TREES: the folder of make-trees.sh (default /bench/trees)
# One Emacs per measurement, so that its peak memory (VmHWM) is that call's. Prints a
# Markdown table per tree; with SAME=1 also checks that each pair gives the same list.
# Environment: TREE_NAMES (default "cra big"), RUNS (default 1), SAME=1.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
TREES=$(cd "${1:-/bench/trees}" && pwd)
RUNS=${RUNS:-1}
emacs=${EMACS:-emacs}

(cd "$repo" && cargo build --release -q -p ftw-cli)
ftw="${CARGO_TARGET_DIR:-$repo/target}/release/ftw"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$repo/editors/emacs/ftw.el" "$here/emacs.el" "$work/"
"$emacs" --batch -Q -L "$work" -f batch-byte-compile "$work/ftw.el" "$work/emacs.el" 2>/dev/null

run() {
  "$emacs" --batch -Q -L "$work" -l emacs \
    --eval "(setq ftw-program \"$ftw\")" --eval "$1"
}

echo "$("$emacs" --version | head -1), ftw $(git -C "$repo" rev-parse --short HEAD), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
for name in ${TREE_NAMES:-cra big}; do
  tree="$TREES/$name"
  # A warm cache.
  "$ftw" find "$tree" >/dev/null; find "$tree" >/dev/null
  echo "### $name"
  echo
  echo "| call | seconds | GCs | GC seconds | names | peak RSS (MiB) | built-in / ftw |"
  echo "|---|---|---|---|---|---|---|"
  for pair in "dfr-builtin dfr-ftw" "dfr-re-builtin dfr-re-ftw" \
              "dfr-follow-builtin dfr-follow-ftw" "project-find project-ftw"; do
    set -- $pair
    base=""
    for what in "$1" "$2"; do
      for _ in $(seq "$RUNS"); do
        line=$(run "(ftw-bench-one \"$tree\" '$what)")
        read -r w _ secs gcs gcsecs n hwm <<<"$line"
        ratio=""
        if [[ -z $base ]]; then base=$secs; else ratio=$(python3 -c "print(f'{$base/$secs:.1f}x')"); fi
        echo "| \`$w\` | $secs | $gcs | $gcsecs | $n | $((hwm / 1024)) | $ratio |"
      done
    done
  done
  echo
  [[ ${SAME:-} == 1 ]] && run "(ftw-bench-same \"$tree\")" && echo
done
