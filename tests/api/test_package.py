# SPDX-License-Identifier: LGPL-2.1-or-later
"""The Python package as a package (the api suite): its version is the
build's (meson's project version, CUDAIPC_VERSION here), and its namespace
is its API: every name __all__ lists exists, and nothing else public is
there (none of the modules it imports for itself).
"""

import os
import sys
import unittest

# Under the sanitizer pass the interpreter starts again with the
# sanitizer's runtime loaded.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "common"))
from sanitizer_preload import reexec_preloaded  # noqa: E402

reexec_preloaded()

import cudaipc  # noqa: E402

# what the package uses inside and must not offer as its own
IMPORTED = ("ctypes", "lib", "struct", "os", "threading", "warnings",
            "dlpack", "config")


class PackageTests(unittest.TestCase):
    def test_version_is_the_builds(self):
        self.assertEqual(cudaipc.__version__, os.environ["CUDAIPC_VERSION"])

    def test_all_names_exist(self):
        self.assertEqual(len(cudaipc.__all__), len(set(cudaipc.__all__)))
        for name in cudaipc.__all__:
            self.assertTrue(hasattr(cudaipc, name), name)
            # defined here, not re-exported from a private module
            self.assertEqual(getattr(cudaipc, name).__module__, "cudaipc",
                             name)

    def test_dir_is_the_api(self):
        names = dir(cudaipc)
        for name in IMPORTED:
            self.assertNotIn(name, names)
        public = sorted(n for n in names if not n.startswith("_"))
        self.assertEqual(public, sorted(cudaipc.__all__))

    def test_star_import_is_all(self):
        scope = {}
        exec("from cudaipc import *", scope)
        scope.pop("__builtins__")
        self.assertEqual(sorted(scope), sorted(cudaipc.__all__))


if __name__ == "__main__":
    unittest.main(verbosity=2)
