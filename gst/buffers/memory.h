/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * GstMemory for a frame in an imported ring slot (consumer side).
 *
 * A CudaIpcSharedBlock is an imported block with a reference count: the
 * source holds one reference per slot for as long as the connection lives,
 * and every GstMemory made from it holds another, so a slot stays mapped
 * until the last buffer that uses it is gone, even after the producer left
 * or rebuilt its ring.
 *
 * cudaipc_memory_new() wraps @size bytes at @offset of a shared block. When
 * the memory (not a sub-memory or copy) is freed, @release is called once,
 * from whichever thread dropped the last reference, with @release_data: the
 * source uses it to send RELEASE. @release_destroy frees @release_data.
 *
 * Mapping:
 *  - CUDAIPC_MAP_CUDA (equal to nvcodec's GST_MAP_CUDA) gives the device
 *    pointer (a CUdeviceptr in the device's primary context) for the cuda
 *    backend, or the host address for the host backend.
 *  - A plain map gives host memory: the host backend's own mapping, or for
 *    the cuda backend a host copy made on first map and kept until free.
 *  - Write maps are refused: the slot is shared with other consumers.
 * gst_memory_copy() gives an ordinary system memory copy; sharing gives a
 * sub-memory that keeps the parent alive.
 *
 * Thread-safety: as any GstMemory; the host copy is made under a lock.
 */
#pragma once

#include <gst/gst.h>
#include "ring/block.h"

G_BEGIN_DECLS

#define CUDAIPC_MAP_CUDA ((GstMapFlags) (GST_MAP_FLAG_LAST << 1))
#define CUDAIPC_MEMORY_TYPE "CudaIpcMemory"

typedef struct _CudaIpcSharedBlock CudaIpcSharedBlock;

typedef void (*CudaIpcReleaseFunc) (gpointer release_data);

/* Takes ownership of @block. */
CudaIpcSharedBlock *cudaipc_shared_block_new (CudaIpcBlock * block);
CudaIpcSharedBlock *cudaipc_shared_block_ref (CudaIpcSharedBlock * sb);
void cudaipc_shared_block_unref (CudaIpcSharedBlock * sb);
CudaIpcBlock *cudaipc_shared_block_get_block (CudaIpcSharedBlock * sb);

GstAllocator *cudaipc_allocator_get (void);

/* Returns NULL (with a GError) when @offset + @size lies outside the block. */
GstMemory *cudaipc_memory_new (CudaIpcSharedBlock * sb, gsize offset,
    gsize size, CudaIpcReleaseFunc release, gpointer release_data,
    GDestroyNotify release_destroy, GError ** error);
gboolean cudaipc_is_memory (GstMemory * mem);
/* The device pointer of the memory's first byte (offset included). */
guintptr cudaipc_memory_get_device_ptr (GstMemory * mem);
CudaIpcDevice *cudaipc_memory_get_device (GstMemory * mem);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (CudaIpcSharedBlock, cudaipc_shared_block_unref);

G_END_DECLS
