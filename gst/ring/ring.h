/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The producer's ring: N slots of one size on one device, each a block
 * exported once, with the state that decides which slot may be written.
 *
 * Slot states:
 *   FREE      nobody reads or writes it; cudaipc_ring_acquire() may pick it.
 *   WRITING   handed to the producer by acquire(), not yet published.
 *   PUBLISHED readable by the holders it was published to; it returns to
 *             FREE when the last holder released it, never sooner.
 *
 * Holders are leases (CudaIpcLease), one per client connection, embedded in
 * the caller's client struct and zero-initialised. A lease records which
 * slots of which generation the client holds, so a RELEASE for a slot the
 * client does not hold, or for a ring that no longer exists, is recognised
 * and refused without touching the ring's counts.
 *
 * Generations: every ring is built with a generation number that the caller
 * increases on each rebuild (a new slot size, say). Leases of an older
 * generation hold nothing in the new ring; releases naming it get -ESTALE.
 *
 * Which free slot acquire() picks (cudaipc_ring_set_reuse()):
 *  - OLDEST, the default on the cuda backend: the one published longest ago
 *    (round robin), so GPU work a consumer queued on a frame and did not
 *    wait for before releasing it finds it overwritten as late as possible;
 *  - NEWEST, the default on the host backend: the one published last, so
 *    the producer's memcpy goes to memory most likely still in the CPU's
 *    caches (docs/benchmarks.md, Paced). CPU readers are done with a frame
 *    when they release it.
 *
 * Not thread-safe: the caller serialises every call (the server does, with
 * its lock).
 * The ring owns its blocks; the blocks' descriptors own the exported fds.
 */
#pragma once

#include <glib.h>
#include "device/device.h"
#include "ring/block.h"
#include "wire/protocol.h"

G_BEGIN_DECLS


typedef struct _CudaIpcRing CudaIpcRing;

typedef enum
{
  CUDAIPC_SLOT_FREE,
  CUDAIPC_SLOT_WRITING,
  CUDAIPC_SLOT_PUBLISHED,
} CudaIpcSlotState;

typedef struct
{
  guint32 generation;           /* generation the mask below refers to */
  guint64 held;                 /* bit i: this lease holds slot i */
} CudaIpcLease;

/* @n_slots in 1..CUDAIPC_MAX_SLOTS; @slot_size rounded up to the
 * granularity; @max_alloc as for cudaipc_block_new(). */
CudaIpcRing *cudaipc_ring_new (CudaIpcDevice * dev, guint n_slots,
    guint64 slot_size, guint64 max_alloc, guint32 generation,
    GError ** error);
/* A ring is shared by reference: the server holds one, and so does each
 * buffer of a slot that upstream writes into (slot-pool.h), which may
 * outlive the ring's replacement or the server. Its slots' states are
 * the server's to change, under the server's lock; the blocks stay mapped
 * until the last reference goes. */
CudaIpcRing *cudaipc_ring_ref (CudaIpcRing * ring);
/* Drops a reference; the last frees the ring and its blocks (NULL is
 * ignored). */
void cudaipc_ring_unref (CudaIpcRing * ring);

guint cudaipc_ring_get_n_slots (const CudaIpcRing * ring);
guint64 cudaipc_ring_get_slot_size (const CudaIpcRing * ring);
guint32 cudaipc_ring_get_generation (const CudaIpcRing * ring);
CudaIpcDevice *cudaipc_ring_get_device (const CudaIpcRing * ring);
CudaIpcBlock *cudaipc_ring_get_block (const CudaIpcRing * ring, guint slot);

typedef enum
{
  CUDAIPC_REUSE_OLDEST,
  CUDAIPC_REUSE_NEWEST,
} CudaIpcReuse;

void cudaipc_ring_set_reuse (CudaIpcRing * ring, CudaIpcReuse reuse);
CudaIpcReuse cudaipc_ring_get_reuse (const CudaIpcRing * ring);

/* A free slot, now WRITING, or -EAGAIN when every slot is busy. Ties (slots
 * never published) go to the lowest index. */
gint cudaipc_ring_acquire (CudaIpcRing * ring);
/* WRITING -> FREE, for a frame that was not published after all. */
void cudaipc_ring_abort (CudaIpcRing * ring, guint slot);
/* WRITING -> PUBLISHED to @n_holders leases (each then holds the slot);
 * with no holders the slot goes straight back to FREE. Returns 0, or
 * -EINVAL if @slot is not WRITING. */
gint cudaipc_ring_publish (CudaIpcRing * ring, guint slot,
    CudaIpcLease * const *holders, guint n_holders);
/* Drops @lease's hold on @slot of @generation. Returns 0, -ESTALE (another
 * generation), -ERANGE (no such slot) or -ENOENT (the lease does not hold
 * it). A slot whose last holder released it becomes FREE. */
gint cudaipc_ring_release (CudaIpcRing * ring, CudaIpcLease * lease,
    guint slot, guint32 generation);
/* Drops every hold of @lease (a client that left); returns how many. */
guint cudaipc_ring_release_all (CudaIpcRing * ring, CudaIpcLease * lease);
gboolean cudaipc_ring_lease_holds (const CudaIpcRing * ring,
    const CudaIpcLease * lease, guint slot);
guint cudaipc_ring_lease_count (const CudaIpcRing * ring,
    const CudaIpcLease * lease);

CudaIpcSlotState cudaipc_ring_get_state (const CudaIpcRing * ring,
    guint slot);
guint cudaipc_ring_get_holders (const CudaIpcRing * ring, guint slot);
guint cudaipc_ring_get_n_free (const CudaIpcRing * ring);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (CudaIpcRing, cudaipc_ring_unref);

G_END_DECLS
