#!/usr/bin/env bash
# Builds the bcryptprimitives.dll stand-in (see bcryptprimitives.c for why) into
# $1 (default: .ci/windows/out). Needs x86_64-w64-mingw32-gcc (Debian's
# gcc-mingw-w64-x86-64).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:-$here/out}"
mkdir -p "$out"
if [[ ! -f "$out/bcryptprimitives.dll" || "$here/bcryptprimitives.c" -nt "$out/bcryptprimitives.dll" ]]; then
  x86_64-w64-mingw32-gcc -shared -O2 -o "$out/bcryptprimitives.dll" \
    "$here/bcryptprimitives.c" "$here/bcryptprimitives.def" -ladvapi32
fi
echo "$out/bcryptprimitives.dll"
