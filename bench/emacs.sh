#!/usr/bin/env bash
# ftw.el against what it replaces, timed inside Emacs (emacs --batch, benchmark-run),
# warm cache: ftw-directory-files-recursively against directory-files-recursively
# (REGEXP "", "\\.js\\'" with directories, following links, and a PREDICATE function),
# project-files of an ftw project against project.el's find-based listing with the same
# (default) ignores, and, on a Git work tree (a copy of cra, a .gitignore in each
# directory, `git add`ed), project-files of the VC project by ftw (--ignore) against
# the VC backend (git ls-files).
#   bench/emacs.sh [TREES]    TREES: the folder of make-trees.sh (default /bench/trees)
# One Emacs per measurement, so that its peak memory (VmHWM, what /usr/bin/time %M
# reports) is that call's. Rounds are interleaved: each round runs every pair, the
# built-in then ftw. Prints each measurement, then per tree a Markdown table of the
# medians (min-max) over the rounds; with SAME=1 also checks that each pair gives the
# same list.
# Environment: TREE_NAMES (default "cra big"), RUNS (rounds, default 3), SAME=1,
# GIT_TREE (default $SCRATCH/emacs-gitcra, made if missing; "" to skip), SCRATCH
# (default TREES/../scratch).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
TREES=$(cd "${1:-/bench/trees}" && pwd)
SCRATCH=${SCRATCH:-$(dirname "$TREES")/scratch}
RUNS=${RUNS:-3}
emacs=${EMACS:-emacs}
GIT_TREE=${GIT_TREE-$SCRATCH/emacs-gitcra}

(cd "$repo" && cargo build --release -q -p ftw-cli)
ftw="${CARGO_TARGET_DIR:-$repo/target}/release/ftw"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$repo/editors/emacs/ftw.el" "$here/emacs.el" "$work/"
"$emacs" --batch -Q -L "$work" -f batch-byte-compile "$work/ftw.el" "$work/emacs.el" 2>/dev/null

if [[ -n $GIT_TREE && ! -d $GIT_TREE/.git ]]; then
  mkdir -p "$(dirname "$GIT_TREE")"
  rm -rf "$GIT_TREE"
  cp -a "$TREES/cra" "$GIT_TREE"
  git -C "$GIT_TREE" init -q
  find "$GIT_TREE" -path "$GIT_TREE/.git" -prune -o -type d -print | while read -r d; do
    printf '*.map\n*.d.ts\n!index.d.ts\n__tests__/\n/build\n' > "$d/.gitignore"
  done
  git -C "$GIT_TREE" add -A
fi

run() {
  "$emacs" --batch -Q -L "$work" -l emacs \
    --eval "(setq ftw-program \"$ftw\")" --eval "$1"
}

# table FILE: the medians (min-max) of the lines in FILE, a row per call.
table() {
  python3 - "$1" <<'PY'
import sys, statistics as st
rows = {}
order = []
for line in open(sys.argv[1]):
    w, _, secs, gcs, gcsecs, n, hwm, cpu = line.split()
    if w not in rows:
        rows[w] = []
        order.append(w)
    rows[w].append((float(secs), int(gcs), float(gcsecs), int(n), int(hwm) / 1024, float(cpu)))
def m(xs, f="{:.3f}"):
    return f.format(st.median(xs)) + (" (" + f.format(min(xs)) + "-" + f.format(max(xs)) + ")" if len(xs) > 1 else "")
print("| call | rounds | seconds, median (min-max) | CPU seconds | GCs | GC seconds | names | peak RSS MiB | built-in / ftw (medians: time, CPU) |")
print("|---|---|---|---|---|---|---|---|---|")
base = None
for i, w in enumerate(order):
    r = rows[w]
    secs = [x[0] for x in r]; cpu = [x[5] for x in r]
    ratio = ""
    if i % 2 == 0:
        base = (st.median(secs), st.median(cpu))
    else:
        ratio = f"{base[0] / st.median(secs):.1f}x, {base[1] / st.median(cpu):.1f}x"
    print(f"| `{w}` | {len(r)} | {m(secs)} | {m(cpu)} | {m([x[1] for x in r], '{:.0f}')} | "
          f"{m([x[2] for x in r])} | {r[0][3]} | {m([x[4] for x in r], '{:.0f}')} | {ratio} |")
PY
}

echo "$("$emacs" --version | head -1), ftw $(git -C "$repo" rev-parse --short HEAD), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $RUNS rounds"
echo
trees=""
for name in ${TREE_NAMES:-cra big}; do trees+=" $TREES/$name"; done
[[ -n $GIT_TREE ]] && trees+=" $GIT_TREE"
for tree in $trees; do
  if [[ $tree == "$GIT_TREE" ]]; then
    pairs="project-vc project-vc-ftw"
  else
    pairs="dfr-builtin dfr-ftw dfr-re-builtin dfr-re-ftw dfr-follow-builtin dfr-follow-ftw dfr-pred-builtin dfr-pred-ftw project-find project-ftw"
  fi
  # A warm cache.
  "$ftw" find "$tree" >/dev/null; find "$tree" >/dev/null
  echo "### $(basename "$tree")"
  echo
  lines="$work/lines"
  : > "$lines"
  for round in $(seq "$RUNS"); do
    for what in $pairs; do
      line=$(run "(ftw-bench-one \"$tree\" '$what)")
      echo "    round $round: $line (load $(cut -d' ' -f1 /proc/loadavg))"
      echo "$line" >> "$lines"
    done
  done
  echo
  table "$lines"
  echo
  if [[ ${SAME:-} == 1 ]]; then
    set -- $pairs
    same=""
    while (($#)); do same+="($1 . $2) "; shift 2; done
    run "(ftw-bench-same \"$tree\" '($same))" | sed 's/^/    /'
    echo
  fi
done
