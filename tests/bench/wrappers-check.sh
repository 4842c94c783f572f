#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# cudaipc-bench runs its producers under --producer-wrapper and its
# consumers, the Python consumer too, under --consumer-wrapper
# (docs/benchmarks.md, Reproducing). Host backend, one small row.
#   wrappers-check.sh CUDAIPC-BENCH WRAP-MARK
set -eu
bench=$1 wrap=$2
dir=$(mktemp -d "${TMPDIR:-/tmp}/cudaipc-wrappers-XXXXXX")
trap 'rm -rf "$dir"' EXIT
marks=$dir/roles
if [ -n "${CUDAIPC_TOOL_PRELOAD:-}" ]; then
  # the sanitizer pass (tests/sanitize.sh): the interpreter loads the
  # sanitized libcudaipc, so it starts with the sanitizer's runtime (the
  # interpreter's leaks are its own, not checked)
  printf '#!/bin/sh\nLD_PRELOAD=%s ASAN_OPTIONS=detect_leaks=0 exec %s "$@"\n' \
    "$CUDAIPC_TOOL_PRELOAD" "${CUDAIPC_BENCH_PYTHON:-python3}" > "$dir/python"
  chmod +x "$dir/python"
  CUDAIPC_BENCH_PYTHON=$dir/python
  export CUDAIPC_BENCH_PYTHON
fi
"$bench" run --memory system --transports cudaipc --resolutions 320x240 \
  --consumers 1 --rates 0 --frames 60 --warmup 10 --seconds 5 --timeout 60 \
  --python-consumer --output "$dir/out.json" \
  --producer-wrapper "sh $wrap $marks producer" \
  --consumer-wrapper "sh $wrap $marks consumer"
cat "$marks"
fail=0
for want in "producer .*cudaipc-bench producer" \
    "consumer .*cudaipc-bench consumer" \
    "consumer .*bench-consumer.py consumer"; do
  grep -q "^$want" "$marks" || { echo "no role ran as '$want'"; fail=1; }
done
# every row ran and delivered every frame, the Python consumer's too
python3 - "$dir/out.json" <<'PY' || fail=1
import json, sys
rows = json.load(open(sys.argv[1]))["results"]
bad = [r["label"] for r in rows if r["status"] != "ok" or r["delivered"] != 1]
py = [r["label"] for r in rows if "Python consumer" in r["label"]]
print("rows:", [r["label"] for r in rows])
sys.exit(1 if bad or not py else 0)
PY
exit $fail
