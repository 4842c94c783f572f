#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# wrap-mark.sh FILE ROLE COMMAND...: a wrapper for cudaipc-bench's
# --producer-wrapper and --consumer-wrapper in tests: writes ROLE and the
# command to FILE, then runs the command in its place.
file=$1 role=$2
shift 2
echo "$role $*" >> "$file"
exec "$@"
