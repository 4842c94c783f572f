/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A memory device: where ring slots live and how they are shared.
 *
 * Two backends sit behind one interface:
 *  - CUDAIPC_BACKEND_CUDA: CUDA virtual memory management (cuMemCreate with
 *    the POSIX fd handle type) on the device of a given ordinal; pointers are
 *    CUdeviceptr values in the device's primary context.
 *  - CUDAIPC_BACKEND_HOST: memfd shared memory; pointers are host addresses.
 *    It runs every pipeline on a machine without a GPU.
 *
 * A device is reference counted and may be used from any thread. Calls that
 * touch CUDA make the device's context (its primary context, unless
 * use_context() gave another) current for their duration (push/pop), so
 * callers need no context of their own; code that issues its own driver
 * calls brackets them with cudaipc_device_push/pop.
 */
#pragma once

#include <glib.h>
#include "device/cuda-types.h"
#include "wire/protocol.h"

G_BEGIN_DECLS

/* "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", as nvidia-smi -L shows it,
 * with its NUL */
#define CUDAIPC_UUID_STRING_LEN 41

typedef struct _CudaIpcDevice CudaIpcDevice;

const gchar *cudaipc_backend_name (CudaIpcBackend backend);
gboolean cudaipc_backend_from_name (const gchar * name,
    CudaIpcBackend * backend);

/* Opens @backend on device @ordinal (ignored by the host backend). Fails
 * with CUDAIPC_ERROR_NO_DRIVER, _NO_DEVICE or _NOT_SUPPORTED. */
CudaIpcDevice *cudaipc_device_new (CudaIpcBackend backend, gint ordinal,
    GError ** error);
/* The device of a producer whose backend setting is CUDAIPC_BACKEND_AUTO
 * (backend-auto.c): the cuda backend on @ordinal where CUDA is usable
 * there (the driver loads and initialises, the device exists and has
 * VMM with POSIX fd handles), else the host backend, with *@why (to
 * g_free(), may be NULL) saying what was missing. A failure of a usable
 * GPU (no room for a context, a driver call) is an error, not a reason
 * for host memory. Calls cuInit(): never before a fork(). */
CudaIpcDevice *cudaipc_device_new_auto (gint ordinal, gchar ** why,
    GError ** error);
CudaIpcDevice *cudaipc_device_ref (CudaIpcDevice * dev);
void cudaipc_device_unref (CudaIpcDevice * dev);

CudaIpcBackend cudaipc_device_get_backend (CudaIpcDevice * dev);
gint cudaipc_device_get_ordinal (CudaIpcDevice * dev);
/* Allocation granularity: sizes of physical allocations are multiples. */
guint64 cudaipc_device_get_granularity (CudaIpcDevice * dev);
/* The device UUID (all zero for the host backend). */
void cudaipc_device_get_uuid (CudaIpcDevice * dev,
    guint8 uuid[CUDAIPC_UUID_LEN]);
const gchar *cudaipc_device_get_name (CudaIpcDevice * dev);
/* Writes @uuid in the form nvidia-smi shows into @out. */
void cudaipc_uuid_format (const guint8 uuid[CUDAIPC_UUID_LEN],
    gchar out[CUDAIPC_UUID_STRING_LEN]);
/* The primary context (NULL for the host backend). */
CUcontext cudaipc_device_get_context (CudaIpcDevice * dev);

/* Makes @context, a context on this device, the one the device's calls
 * run in, instead of the primary context (cuda backend; once, before the
 * producer's first copy; another thread may push the device meanwhile and
 * gets either context). @owner keeps @context alive: the device calls
 * @release (@owner) once it is closed, after its last use of the context.
 * VMM memory, and host memory registered portable, are used alike from
 * every context of the device, whichever was current when they were made
 * (a ring may exist already); a CUDA event is not, and records only on a
 * stream of its own context. A copy from memory allocated in another
 * context goes through a slow path (about 290 us for a 3 MB frame on an
 * H200, against 13 us within one context): a producer copies in its
 * upstream's. */
void cudaipc_device_use_context (CudaIpcDevice * dev, CUcontext context,
    gpointer owner, GDestroyNotify release);

/* Makes the device's context current on this thread (no-op for host). */
gboolean cudaipc_device_push (CudaIpcDevice * dev, GError ** error);
void cudaipc_device_pop (CudaIpcDevice * dev);

/* Looks for the device whose UUID is @uuid among the devices this process
 * sees (cuda backend): TRUE with its @ordinal and whether memory allocated
 * on it can be mapped for @dev (the same device, or peer access from @dev
 * to it, cuDeviceCanAccessPeer); FALSE when none has that UUID, and always
 * for the host backend. */
gboolean cudaipc_device_find_peer (CudaIpcDevice * dev,
    const guint8 uuid[CUDAIPC_UUID_LEN], gint * ordinal,
    gboolean * can_access);

/* Free and total device memory in bytes (host: from /proc/meminfo). */
gboolean cudaipc_device_mem_info (CudaIpcDevice * dev, guint64 * free_bytes,
    guint64 * total_bytes, GError ** error);

/* Synchronous copies between host memory and a device pointer (a mapped
 * slot). Host backend: memcpy. */
gboolean cudaipc_device_write (CudaIpcDevice * dev, guintptr dst,
    const void *src, gsize size, GError ** error);
gboolean cudaipc_device_read (CudaIpcDevice * dev, void *dst,
    guintptr src, gsize size, GError ** error);

/* Rounds @size up to the granularity; 0 on overflow. */
guint64 cudaipc_device_round_up (CudaIpcDevice * dev, guint64 size);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (CudaIpcDevice, cudaipc_device_unref);

G_END_DECLS
