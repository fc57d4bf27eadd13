# Shared by the bench/ scripts (sourced): `bench NAME PREPARE RUNS CMD...` runs
# hyperfine (without a shell where it can, output piped, PREPARE before each run if
# given), keeps its JSON in $out/NAME.json and prints a Markdown table of mean, user,
# sys and each command's time against the first's.
bench() {
  local name=$1 prepare=$2 runs=$3; shift 3
  local args=()
  [[ -n $prepare ]] && args+=(--prepare "$prepare")
  local warmup=1
  [[ -n $prepare ]] && warmup=0
  hyperfine -N -w "$warmup" -r "$runs" --output=pipe "${args[@]}" \
    --export-json "$out/$name.json" "$@" >/dev/null 2>&1 ||
    hyperfine -w "$warmup" -r "$runs" --output=pipe "${args[@]}" \
      --export-json "$out/$name.json" "$@" >/dev/null
  python3 - "$out/$name.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"]
base = r[0]["mean"]
print("| command | mean | user | sys | ratio to the first |")
print("|---|---|---|---|---|")
for x in r:
    cmd = x["command"] if len(x["command"]) < 90 else x["command"][:87] + "..."
    print(f"| `{cmd}` | {x['mean']:.3f} s ± {x['stddev'] or 0:.3f} | {x['user']:.2f} | {x['system']:.2f} | {x['mean']/base:.2f} |")
PY
  echo
}
