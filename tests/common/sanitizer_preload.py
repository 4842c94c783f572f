# SPDX-License-Identifier: LGPL-2.1-or-later
"""Python tests under the sanitizer pass (tests/sanitize.sh).

There the plugin and libcudaipc are built with AddressSanitizer, and an
interpreter that loads either (PyGObject, the cudaipc package) must start
with the sanitizer's runtime preloaded. The leaks of the interpreter and
of GStreamer's tools are theirs, so they are not checked; the build's own
programs (ipc-node) link the runtime themselves and keep the pass's
options.
"""

import os
import sys


def reexec_preloaded():
    """Under the pass, runs this script again with the runtime preloaded
    (once: it returns in the new process); elsewhere returns at once."""
    preload = os.environ.get("CUDAIPC_TOOL_PRELOAD")
    if not preload or os.environ.get("CUDAIPC_PY_PRELOADED") == "1":
        return
    os.execve(sys.executable, [sys.executable] + sys.argv,
              dict(os.environ, LD_PRELOAD=preload, CUDAIPC_PY_PRELOADED="1",
                   CUDAIPC_NODE_ASAN_OPTIONS=os.environ.get("ASAN_OPTIONS",
                                                            ""),
                   ASAN_OPTIONS="detect_leaks=0"))


def node_env():
    """The environment for the build's own programs: this process's,
    without the preload and with the pass's sanitizer options."""
    env = dict(os.environ)
    if os.environ.get("CUDAIPC_PY_PRELOADED") == "1":
        env.pop("LD_PRELOAD", None)
        env["ASAN_OPTIONS"] = os.environ["CUDAIPC_NODE_ASAN_OPTIONS"]
    return env
