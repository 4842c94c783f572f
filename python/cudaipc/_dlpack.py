# SPDX-License-Identifier: LGPL-2.1-or-later
"""DLPack capsules for frames.

The tensor is libcudaipc's (cudaipc_frame_to_dlpack): it holds a reference
to its frame, which its deleter, called by whoever consumed the capsule
(torch, CuPy, NumPy), drops; the slot goes back only once that and the
frame's own release happened. The capsule's destructor is libcudaipc's
too: it deletes the tensor of a capsule nobody consumed. No Python code
runs when an array of a frame goes away.
"""

import ctypes

from ._lib import lib

KDL_CPU = 1
KDL_CUDA = 2

NAME = b"dltensor"

_api = ctypes.pythonapi
_api.PyCapsule_New.restype = ctypes.py_object
_api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p,
                               ctypes.c_void_p]
new_capsule = _api.PyCapsule_New

# the library's destructor, told this interpreter's capsule functions
DESTRUCTOR = lib.cudaipc_dlpack_capsule_destructor(
    ctypes.cast(_api.PyCapsule_IsValid, ctypes.c_void_p),
    ctypes.cast(_api.PyCapsule_GetPointer, ctypes.c_void_p))
if not DESTRUCTOR:
    raise ImportError("libcudaipc-1.0 has no DLPack capsule destructor")

to_dlpack = lib.cudaipc_frame_to_dlpack
