#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The test command. Installs what the build and tests need (Debian/Ubuntu,
# apt-get, when run as root), configures and builds in ./build, runs every
# meson test suite (libs, elements, gpu; gpu skips without a CUDA driver),
# and ends with one line: "N passed, N failed[, N skipped]", counted from
# meson's test log. Extra arguments go to `meson test` (e.g. --suite libs);
# without any, every suite but soak runs.
#
# Environment: BUILD_DIR (default: build), CUDAIPC_NO_APT=1 to skip apt-get.
set -euo pipefail

cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
./tests/build.sh

# The soak suite is long: it runs only when asked for (--suite soak).
if [ $# = 0 ]; then
  set -- --no-suite soak
fi

set +e
meson test -C "$build" --print-errorlogs --num-processes 2 "$@"
rc=$?
set -e

python3 - "$build/meson-logs/testlog.json" <<'PY'
import json, sys
counts = {"passed": 0, "failed": 0, "skipped": 0}
with open(sys.argv[1]) as f:
    for line in f:
        line = line.strip()
        if not line:
            continue
        result = json.loads(line).get("result")
        if result in ("OK", "EXPECTEDFAIL"):
            counts["passed"] += 1
        elif result == "SKIP":
            counts["skipped"] += 1
        else:
            counts["failed"] += 1
line = "%d passed, %d failed" % (counts["passed"], counts["failed"])
if counts["skipped"]:
    line += ", %d skipped" % counts["skipped"]
print(line)
PY
exit $rc
