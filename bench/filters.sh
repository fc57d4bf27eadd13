#!/usr/bin/env bash
# What filters and ignore rules cost `ftw find`, side by side with fd and find given the
# same work, warm cache, output piped.
#   bench/filters.sh [TREES]   TREES: the folder of make-trees.sh (default /bench/trees)
# Builds a git work tree from `cra` with a .gitignore in every directory under
# $SCRATCH (default TREES/../scratch). Needs the peers of ../shared/bench/setup-peers.sh
# and its emacs-find.sh / emacs-fd.sh (the editor's default ignore list).
# Environment: RUNS (default 5).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
TREES=$(cd "${1:-/bench/trees}" && pwd)
SCRATCH=${SCRATCH:-$(dirname "$TREES")/scratch}
RUNS=${RUNS:-5}
shared=${SHARED_BENCH:-$(cd "$repo/.." && pwd)/shared/bench}
export PATH="${PEERS:-/opt/peers}/bin:$PATH"
out="$here/out"
mkdir -p "$out" "$SCRATCH"
(cd "$repo" && cargo build --release -q)
export PATH="${CARGO_TARGET_DIR:-$repo/target}/release:$PATH"
for t in fd find git hyperfine; do
  command -v "$t" >/dev/null || { echo "missing $t" >&2; exit 1; }
done
[[ -f $shared/emacs-find.sh && -f $shared/emacs-fd.sh ]] || { echo "set SHARED_BENCH to the folder of emacs-find.sh" >&2; exit 1; }
cd "$TREES"

# The editor's default ignore list (emacs-find.sh holds it), as ftw -E globs.
dirs=$(sed -n 's/^dirs=(\(.*\))$/\1/p' "$shared/emacs-find.sh")
files=$(sed -n 's/^files=(\(.*\))$/\1/p' "$shared/emacs-find.sh")
eval "dirs=($dirs)"
eval "files=($files)"
ex=""
for g in "${dirs[@]}" "${files[@]}"; do ex+=" -E '$g'"; done
nglobs=$(( ${#dirs[@]} + ${#files[@]} ))

# A git work tree from cra, a .gitignore in every directory.
gt=$SCRATCH/gitcra
if [[ ! -d $gt/.git ]]; then
  rm -rf "$gt"
  cp -a cra "$gt"
  git -C "$gt" init -q
  find "$gt" -path "$gt/.git" -prune -o -type d -print | while read -r d; do
    printf '*.map\n*.d.ts\n!index.d.ts\n__tests__/\n/build\n' > "$d/.gitignore"
  done
fi

echo "# ftw find filters benchmark, $(date -u +%Y-%m-%d)"
echo
echo "Machine: $(nproc) cores, $(uname -sr). Versions: ftw $(git -C "$repo" rev-parse --short HEAD), $(fd --version), $(find --version | head -1), $(hyperfine --version). Output piped; warm cache. Ratios: time / the first command's time."
echo

. "$here/lib.sh"

echo "## The editor's ignore list ($nglobs globs) on \`big\`"
echo
bench emacs "" "$RUNS" "ftw find -t f -0 big" "ftw find -t f -0 $ex big" "bash $shared/emacs-fd.sh big" "bash $shared/emacs-find.sh big"
echo "## A name pattern on \`big\`"
echo
bench pattern "" "$RUNS" "ftw find -0 big" "ftw find -0 -n 'x[0-9]+\\.js\$' big" "ftw find -0 -g '*.json' big" "fd -u -0 'x[0-9]+\\.js\$' big"
echo "## --ignore on a git work tree (\`cra\` with a .gitignore in every directory)"
echo
bench ignore "" "$RUNS" "ftw find -0 $gt" "ftw find -0 --ignore $gt" "ftw find -0 --ignore --no-hidden $gt" "fd -0 . $gt" "fd -u -0 . $gt"
