/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The producer's copy of each frame into a ring slot, and its publication
 * (docs/design.md, GPU ordering). A sink's render() reads:
 *
 *   cudaipc_server_acquire ()
 *   cudaipc_copier_copy ()          into the acquired slot
 *   cudaipc_copier_publish ()       (or cudaipc_server_abort () on error)
 *
 * and the server is made with cudaipc_copier_wait_all () as its
 * before_replace (server.h): a ring is replaced only once every copy into
 * it has landed.
 *
 * cuda backend: every memory of the frame is copied, in order and
 * contiguously, on the copier's own non-blocking CUDA stream, device to
 * device from nvcodec's GstCudaMemory and host to device from anything
 * else; the slot's word of the server's fence page is signalled with the
 * frame's number after the copy (or, with EVENTS ordering, the slot's
 * event recorded) and the frame is published at once. Each consumer waits
 * on that before reading; only where that cannot order a frame (HOST
 * ordering, no fence page and no event, a ready consumer that reads
 * neither) does publish() synchronise the stream on the host first. The
 * upstream buffer stays referenced (pending) until the fence word (read
 * on the CPU, no driver call) or the event says the copy is done, and is
 * let go of once the frame copy() found that in is published: freeing a
 * buffer (its metas, say) is no part of the next frame's way out. With
 * max_pending copies in flight copy() waits for them. Where the first frame is
 * nvcodec memory of the copier's device, adopt_context() moves the device
 * into that memory's CUDA context (a copy across contexts takes a slow
 * path), before any copy. The ring may exist by then (the server makes it
 * when caps are set): its VMM slots, and the fence page (registered
 * portable), serve every context of the device. The slots' legacy events
 * (EVENTS ordering) do not, so the server makes that ordering's first
 * ring, and its events, at the first acquire(), after the move.
 *
 * host backend: memcpy, nothing pending (with FENCE ordering the fence
 * word is stored after it); publish() is the server's.
 *
 * write_now() needs no copier: a copy from a pointer that is complete on
 * return, for a producer whose frames are not GstBuffers.
 *
 * Threads: one thread, the producer's (a sink's streaming thread), calls
 * everything but get_counts(), which any thread may call.
 *
 * Ownership: the copier holds a reference on the device and on each
 * pending buffer; the fences are the server's, borrowed until the server
 * stops, so free() the copier (it waits for every copy in flight and
 * lets go of every buffer) before the server stops or frees its ring.
 * A context adopted from upstream is kept alive by the device itself
 * (cudaipc_device_use_context()).
 *
 * Errors: GErrors in CUDAIPC_ERROR (_CUDA for a driver call, with the
 * CUresult's name; _IO for memory that cannot be mapped). After a failed
 * copy() nothing reads the buffer or writes the slot any more: the caller
 * aborts the slot.
 */
#pragma once

#include <gst/gst.h>
#include "ring/block.h"
#include "device/device.h"
#include "producer/server.h"

G_BEGIN_DECLS

typedef struct _CudaIpcCopier CudaIpcCopier;

/* What the copier did since new(). */
typedef struct
{
  guint64 driver_calls;         /* CUDA driver calls */
  guint64 host_syncs;           /* stream synchronisations on the host, the
                                 * fallback where a fence cannot order */
  guint64 copies_from_gpu;      /* memories copied device to device */
  guint64 copies_from_host;     /* memories copied from host memory */
} CudaIpcCopierCounts;

/* A copier for @dev (its backend decides the copy); at most @max_pending
 * copies in flight (at least 1). Fails with CUDAIPC_ERROR_CUDA when no
 * stream can be made. */
CudaIpcCopier *cudaipc_copier_new (CudaIpcDevice * dev, guint max_pending,
    GError ** error);
/* Waits for every copy in flight and frees; NULL is ignored. */
void cudaipc_copier_free (CudaIpcCopier * copier);

/* With the first frame, before its copy (later calls do nothing): where
 * @buf's memory is nvcodec's GstCudaMemory of the copier's device, the
 * device and the copies move into that memory's CUDA context. Anything
 * else leaves all as it is. FALSE only where the stream could not be made
 * again in the new context: then no copy can run. */
gboolean cudaipc_copier_adopt_context (CudaIpcCopier * copier,
    GstBuffer * buf, GError ** error);

/* A CudaIpcServerSyncFunc for the server's before_replace, @copier its
 * data: waits for every copy in flight (cuda backend), and lets go of the
 * buffers they read. On the producer thread, under the server's lock. */
gboolean cudaipc_copier_wait_all (const gchar * why, gpointer copier,
    GError ** error);

/* Copies @buf into @slot of @server's ring, whose @block acquire() gave;
 * @copied: the bytes written. */
gboolean cudaipc_copier_copy (CudaIpcCopier * copier, GstBuffer * buf,
    CudaIpcServer * server, guint slot, CudaIpcBlock * block,
    guint64 * copied, GError ** error);

/* Publishes @slot, copied into by copy(), with @frame (see
 * cudaipc_server_publish ()); @n_clients: to how many it went. FALSE:
 * the host synchronisation it needed failed, and the slot was given back
 * unpublished. */
gboolean cudaipc_copier_publish (CudaIpcCopier * copier,
    CudaIpcServer * server, guint slot, CudaIpcFrameMsg * frame,
    guint * n_clients, GError ** error);

/* Before a slot that upstream wrote into (the in-place pool, slot-pool.h)
 * is published with cudaipc_server_publish_in_place(): waits for what
 * nvcodec's memory of @buf says is still pending on upstream's stream, and
 * for the fence words this copier's stream has still to write, so that
 * the server may set the slot's word on the CPU. FALSE: a wait failed
 * (publish it copied instead). */
gboolean cudaipc_copier_prepare_in_place (CudaIpcCopier * copier,
    GstBuffer * buf, GError ** error);

void cudaipc_copier_get_counts (CudaIpcCopier * copier,
    CudaIpcCopierCounts * counts);

/* Without a copier (libcudaipc's producer): @size bytes at @src, device
 * memory of @dev where @on_device, else host memory, into the slot at
 * @dst, complete on return. Device to device on the legacy default
 * stream, synchronised, so that it runs after what the caller queued
 * there; host memory with cudaipc_device_write(); memcpy on the host
 * backend, where device memory is CUDAIPC_ERROR_INVALID. Any thread that
 * owns the slot. */
gboolean cudaipc_copier_write_now (CudaIpcDevice * dev, guintptr dst,
    guintptr src, gsize size, gboolean on_device, GError ** error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (CudaIpcCopier, cudaipc_copier_free);

G_END_DECLS
