#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Which call chains end in given symbols, per thread, from perf
(docs/benchmarks.md, Fan-out at the floor: where the time goes).

Reads `perf script -F comm,tid,ip,sym` on stdin and, for each symbol
prefix in LEAVES (comma-separated), prints per thread how many of its
samples end in it, then the heaviest stacks (caller;...;leaf, the 20
frames nearest the leaf), so that a lock a thread spins on is named by
what took it.

  perf record -g -o run.data -- cudaipc-bench run ...
  perf script -i run.data -F comm,tid,ip,sym | \\
      perf-stacks.py rwsem_,osq_lock,finish_task_switch
"""
import collections
import sys


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    leaves = sys.argv[1].split(",")
    total = collections.Counter()
    stacks = collections.Counter()
    threads = collections.Counter()
    stack, head = [], None

    def flush():
        if head and stack:
            total[head] += 1
            for leaf in leaves:
                if stack[0].startswith(leaf):
                    stacks[(leaf, head, ";".join(reversed(stack[:20])))] += 1
                    threads[(leaf, head)] += 1

    for line in sys.stdin:
        if not line.strip():
            flush()
            stack, head = [], None
        elif not line[0].isspace():
            flush()
            stack = []
            parts = line.split()
            head = "%s:%s" % (parts[0], parts[1]) if len(parts) > 1 else line
        else:
            f = line.split()
            if len(f) >= 2:
                stack.append(f[1].split("+")[0])
    flush()
    for (leaf, t), n in threads.most_common(30):
        print("%-28s %-30s %6d of %6d (%.1f%%)" % (leaf, t, n, total[t],
                                                  100.0 * n / total[t]))
    print()
    for (leaf, t, s), n in stacks.most_common(40):
        print(n, leaf, t, s)
    return 0


if __name__ == "__main__":
    sys.exit(main())
