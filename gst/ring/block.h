/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A block: one buffer mapped into one contiguous address range, backed by
 * one or more physical allocations mapped in address order.
 *
 * Producer side, cudaipc_block_new(): creates the allocations (cuMemCreate
 * with the POSIX fd handle type, or memfd), reserves one range, maps each
 * allocation, sets read/write access, and exports every allocation once;
 * the exported fds live in the block's descriptor, which the block owns.
 * On the host backend each memfd is then sealed against writes
 * (F_SEAL_FUTURE_WRITE): the block's own mapping, at get_ptr(), is the
 * only writable one there will ever be, so the producer writes a slot
 * only through it, and what it sends its consumers they can only read.
 *
 * Consumer side, cudaipc_block_import(): imports each fd of a validated
 * descriptor, reserves one range, maps the allocations in address order and
 * sets access. Any failure part-way unmaps and releases what was done, in
 * reverse order. The descriptor stays the caller's (its fds may be closed
 * once the import returns: the mapping pins the memory).
 *
 * Teardown, cudaipc_block_free(): unmap, release, free the range.
 * Pointers are CUdeviceptr values (cuda) or host addresses (host).
 * A block is used by one thread at a time; free it with the device alive
 * (the block holds a device reference).
 */
#pragma once

#include <glib.h>
#include "device/device.h"
#include "ring/descriptor.h"

G_BEGIN_DECLS

typedef struct _CudaIpcBlock CudaIpcBlock;

/* Allocates a block of at least @size bytes (rounded up to the granularity),
 * split into allocations of at most @max_alloc bytes (0: one allocation). */
CudaIpcBlock *cudaipc_block_new (CudaIpcDevice * dev, guint64 size,
    guint64 max_alloc, GError ** error);
CudaIpcBlock *cudaipc_block_import (CudaIpcDevice * dev,
    const CudaIpcDescriptor * desc, GError ** error);
void cudaipc_block_free (CudaIpcBlock * block);

guintptr cudaipc_block_get_ptr (const CudaIpcBlock * block);
/* Usable size: the descriptor's size. */
guint64 cudaipc_block_get_size (const CudaIpcBlock * block);
/* Producer blocks only (NULL for imported ones): the exported fds. */
const CudaIpcDescriptor *cudaipc_block_get_descriptor (const CudaIpcBlock *
    block);
CudaIpcDevice *cudaipc_block_get_device (const CudaIpcBlock * block);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (CudaIpcBlock, cudaipc_block_free);

G_END_DECLS
