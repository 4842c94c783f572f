/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libcudaipc's frames as DLPack tensors (cudaipc.h): the tensor holds a
 * reference to its frame, which its deleter drops, so that whoever takes
 * it (torch, CuPy, a C++ framework) keeps the slot as long as it reads it.
 * The layout is dlpack.h's unversioned DLManagedTensor, which is ABI.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <glib.h>

#define CUDAIPC_COMPILATION
#include "api/cudaipc.h"

enum
{
  DL_CPU = 1,
  DL_CUDA = 2,
  DL_UINT = 1,
};

typedef struct
{
  int32_t device_type;
  int32_t device_id;
} DLDevice;

typedef struct
{
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
} DLDataType;

typedef struct
{
  void *data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t *shape;
  int64_t *strides;
  uint64_t byte_offset;
} DLTensor;

typedef struct DLManagedTensor DLManagedTensor;
struct DLManagedTensor
{
  DLTensor dl_tensor;
  void *manager_ctx;
  void (*deleter) (DLManagedTensor * self);
};

/* a tensor with its shape and strides */
typedef struct
{
  DLManagedTensor managed;
  int64_t shape[3];
  int64_t strides[3];
} Tensor;

static void
tensor_delete (DLManagedTensor * managed)
{
  cudaipc_frame_release (managed->manager_ctx);
  g_free (managed);
}

void *
cudaipc_frame_to_dlpack (cudaipc_frame * frame, int32_t plane)
{
  cudaipc_frame_info info = { sizeof (info), };
  cudaipc_plane p;
  Tensor *t;

  if (frame == NULL || plane < -1 ||
      cudaipc_frame_get_info (frame, &info) != CUDAIPC_STATUS_OK)
    return NULL;
  if (plane == -1) {
    p.data = info.data;
    p.ndim = 1;
    p.element_bits = 8;
    p.shape[0] = (int64_t) info.size;
    p.strides[0] = 1;
  } else if (cudaipc_frame_get_plane (frame, plane, &p) != CUDAIPC_STATUS_OK) {
    return NULL;
  }

  t = g_new0 (Tensor, 1);
  for (guint i = 0; i < p.ndim; i++) {
    t->shape[i] = p.shape[i];
    t->strides[i] = p.strides[i];
  }
  t->managed.dl_tensor.data = GSIZE_TO_POINTER (p.data);
  if (info.backend == CUDAIPC_BACKEND_TYPE_CUDA) {
    t->managed.dl_tensor.device.device_type = DL_CUDA;
    t->managed.dl_tensor.device.device_id = info.device_id;
  } else {
    t->managed.dl_tensor.device.device_type = DL_CPU;
  }
  t->managed.dl_tensor.ndim = p.ndim;
  t->managed.dl_tensor.dtype.code = DL_UINT;
  t->managed.dl_tensor.dtype.bits = p.element_bits;
  t->managed.dl_tensor.dtype.lanes = 1;
  t->managed.dl_tensor.shape = t->shape;
  t->managed.dl_tensor.strides = t->strides;
  t->managed.manager_ctx = cudaipc_frame_ref (frame);
  t->managed.deleter = tensor_delete;
  return t;
}

/* The capsule's side: the host's functions, given by the binding */

typedef int (*CapsuleIsValid) (void *capsule, const char *name);
typedef void *(*CapsuleGetPointer) (void *capsule, const char *name);

static CapsuleIsValid is_valid;
static CapsuleGetPointer get_pointer;

/* A capsule still named "dltensor" was never consumed (a consumer renames
 * it "used_dltensor"): its tensor is ours to delete. Runs with the
 * interpreter's lock held, as any capsule destructor. */
static void
capsule_destroy (void *capsule)
{
  CapsuleIsValid valid = g_atomic_pointer_get (&is_valid);
  CapsuleGetPointer get = g_atomic_pointer_get (&get_pointer);
  DLManagedTensor *managed;

  if (valid == NULL || get == NULL || !valid (capsule, "dltensor"))
    return;
  managed = get (capsule, "dltensor");
  if (managed != NULL && managed->deleter != NULL)
    managed->deleter (managed);
}

void *
cudaipc_dlpack_capsule_destructor (void *valid, void *get)
{
  g_return_val_if_fail (valid != NULL && get != NULL, NULL);

  g_atomic_pointer_set (&is_valid, valid);
  g_atomic_pointer_set (&get_pointer, get);
  return (void *) capsule_destroy;
}
