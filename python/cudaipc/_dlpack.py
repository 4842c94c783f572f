# SPDX-License-Identifier: LGPL-2.1-or-later
"""DLPack capsules for frames, in ctypes (no compiled extension).

A capsule holds a DLManagedTensor whose manager context keeps the frame it
views alive: the frame's slot is released only once every consumer of the
capsule (a torch or CuPy array) called its deleter, or the capsule was
dropped unused.
"""

import ctypes
import struct

KDL_CPU = 1
KDL_CUDA = 2
KDL_UINT = 1


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8),
                ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class DLManagedTensor(ctypes.Structure):
    pass


DLManagedTensor._fields_ = [
    ("dl_tensor", DLTensor),
    ("manager_ctx", ctypes.c_void_p),
    ("deleter", ctypes.c_void_p),
]

_NAME = b"dltensor"
_api = ctypes.pythonapi
_api.PyCapsule_New.restype = ctypes.py_object
_api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p,
                               ctypes.c_void_p]
_api.PyCapsule_IsValid.restype = ctypes.c_int
_api.PyCapsule_IsValid.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
_new_capsule = _api.PyCapsule_New
_is_valid = _api.PyCapsule_IsValid
_get_pointer = _api.PyCapsule_GetPointer

# a DLManagedTensor's address -> what it keeps alive (the owner, the
# memory of the tensor itself)
_live = {}

# the deleter gets the DLManagedTensor's address as a plain integer: no
# structure to build for it
_Deleter = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


@_Deleter
def _deleter(managed):
    _live.pop(managed, None)


_CapsuleDestructor = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


@_CapsuleDestructor
def _capsule_destructor(capsule):
    # a capsule nobody consumed still has its name: we delete it
    if _is_valid(capsule, _NAME):
        _live.pop(_get_pointer(capsule, _NAME), None)


def live_count():
    """Capsules and arrays from them still alive (for tests)."""
    return len(_live)


# DLManagedTensor on a 64-bit machine: the DLTensor (data, device type
# and id, ndim, dtype code, bits and lanes, shape, strides, byte_offset),
# manager_ctx, deleter; then our shape and strides arrays. One packer a
# number of dimensions, made once.
_HEAD = struct.Struct("=QiiiBBHQQQQQ")
assert _HEAD.size == ctypes.sizeof(DLManagedTensor)
_PACKERS = [struct.Struct("=QiiiBBHQQQQQ%dq" % (2 * n)) for n in range(4)]
_DELETER = ctypes.cast(_deleter, ctypes.c_void_p).value
_DESTRUCTOR = ctypes.cast(_capsule_destructor, ctypes.c_void_p).value


def capsule(owner, data, shape, strides, device_type, device_id):
    """A "dltensor" capsule of uint8 elements at @data, @shape and
    @strides in elements, which keeps @owner alive until released."""
    ndim = len(shape)
    packer = _PACKERS[ndim]
    mem = ctypes.create_string_buffer(packer.size)
    base = ctypes.addressof(mem)
    packer.pack_into(mem, 0, data, device_type, device_id, ndim, KDL_UINT, 8,
                     1, base + _HEAD.size, base + _HEAD.size + 8 * ndim, 0,
                     base, _DELETER, *shape, *strides)
    _live[base] = (owner, mem)
    return _new_capsule(base, _NAME, _DESTRUCTOR)
