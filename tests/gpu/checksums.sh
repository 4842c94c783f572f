# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Sourced by the gpu tests that compare checksumsink's output: the
# checksums a pipeline printed, and what else it said (its last lines),
# for the message of a failing case.

sums() { grep -Eo '[0-9a-f]{40}' "$1" || true; }
said() { grep -vE '[0-9a-f]{40}' "$1" | tail -n 20 || true; }
