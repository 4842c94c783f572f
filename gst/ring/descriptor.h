/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A descriptor of one shareable buffer (a ring slot): one fd per physical
 * allocation in address order, the size of each allocation, and the buffer's
 * usable size (at most the sum of the allocation sizes).
 *
 * Ownership: a descriptor owns its fds and closes them when freed.
 * cudaipc_descriptor_new_from_fds() takes ownership of every fd it is given,
 * on success and on failure alike (on failure they are closed), which is
 * what a receiver of untrusted fds wants: nothing leaks whatever the check
 * that failed.
 *
 * Everything in a descriptor built from received data is untrusted until
 * from_fds() accepted it. The checks, in order, each with its own message:
 *  - 1 <= n_fds <= CUDAIPC_MAX_ALLOCS;
 *  - every allocation size > 0 and a multiple of the device granularity;
 *  - the sum of sizes <= CUDAIPC_MAX_SLOT_SIZE (no overflow);
 *  - 0 < size <= sum of sizes;
 *  - every fd open and of the kind the backend exports (host: a memfd
 *    sealed against shrinking and against writes by its consumers,
 *    F_SEAL_FUTURE_WRITE, at least as large as its allocation; cuda: not
 *    a regular file, socket, pipe or directory).
 * Nothing is mapped by this module; see block.h for import.
 *
 * Not thread-safe; a descriptor is used by one thread at a time.
 */
#pragma once

#include <glib.h>
#include "device/device.h"
#include "wire/protocol.h"

G_BEGIN_DECLS


typedef struct _CudaIpcDescriptor CudaIpcDescriptor;

/* Validates and wraps @n_fds fds (ownership taken, see above) with their
 * @sizes and the buffer @size, for the backend and granularity of @dev.
 * Fails with CUDAIPC_ERROR_INVALID or CUDAIPC_ERROR_LIMIT. */
CudaIpcDescriptor *cudaipc_descriptor_new_from_fds (CudaIpcDevice * dev,
    int *fds, const guint64 * sizes, guint n_fds, guint64 size,
    GError ** error);
void cudaipc_descriptor_free (CudaIpcDescriptor * desc);

guint cudaipc_descriptor_get_n_fds (const CudaIpcDescriptor * desc);
/* Borrowed: the descriptor keeps ownership. */
const int *cudaipc_descriptor_get_fds (const CudaIpcDescriptor * desc);
const guint64 *cudaipc_descriptor_get_sizes (const CudaIpcDescriptor * desc);
guint64 cudaipc_descriptor_get_size (const CudaIpcDescriptor * desc);
/* Sum of the allocation sizes. */
guint64 cudaipc_descriptor_get_total (const CudaIpcDescriptor * desc);
CudaIpcBackend cudaipc_descriptor_get_backend (const CudaIpcDescriptor *
    desc);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (CudaIpcDescriptor, cudaipc_descriptor_free);

/* Internal, for block.c (producer side): wraps fds this process exported
 * itself, without validation. Takes ownership of the @n_fds fds (1..
 * CUDAIPC_MAX_ALLOCS); like new_from_fds() it leaves -1 in each entry of
 * @fds it took, and copies @sizes. @size must not exceed their sum. */
CudaIpcDescriptor *cudaipc_descriptor_new_owned (CudaIpcBackend backend,
    int *fds, const guint64 * sizes, guint n_fds, guint64 size);

G_END_DECLS
