/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A sink's side of writing in place (docs/design.md, Writing in place):
 * the in-place pool it proposes upstream (slot-pool.h), the on-full wait
 * that pool applies, the GstCudaContext the cuda backend's pool is made
 * in, and the pool upstream was last told of. cuipcsink keeps one from
 * init to finalize and calls it from its GstBaseSink vfuncs.
 *
 * Threads and locking:
 *  - start() and reset() from the element's start() and stop();
 *    propose() on the thread of the allocation query (upstream's);
 *    set_wait() from any thread (a property setter, which may hold the
 *    element's object lock: the offer's lock is taken inside it, never
 *    the other way round); check() on the streaming thread, within
 *    render(). The server, the last pool proposed, the wait and the stale
 *    pool are under the offer's lock, never held while a pool is proposed,
 *    an event pushed or a query answered.
 *  - The context, as nvcodec's elements keep theirs: set_context() from
 *    any thread, context_query() from any thread, propose() and
 *    reset_context() each read or write it in place, unlocked, through
 *    libgstcuda (gstcuda.h). It must be the same field each time:
 *    libgstcuda's ensure_context, within propose(), posts need-context,
 *    and the context the application sets in answer (set_context(), maybe
 *    on that very thread) is looked for there.
 *
 * Ownership: the element and its sink pad are borrowed (the element owns
 * the offer). The offer holds a reference on the server and on the last
 * pool proposed, until reset(), and on the context, until
 * reset_context(); the stale pool is only compared, never dereferenced.
 */
#pragma once

#include <gst/gst.h>
#include "device/device.h"
#include "producer/server.h"

G_BEGIN_DECLS

typedef struct _CudaIpcSlotOffer CudaIpcSlotOffer;

/* The offer of the sink @element, whose sink pad is @pad; its debug lines
 * go to @category (NULL: the library's). */
CudaIpcSlotOffer *cudaipc_slot_offer_new (GstElement * element, GstPad * pad,
    GstDebugCategory * category);
void cudaipc_slot_offer_free (CudaIpcSlotOffer * offer);

/* The sink started: pools lend slots of @server (a reference is taken),
 * on @dev's backend and device. */
void cudaipc_slot_offer_start (CudaIpcSlotOffer * offer,
    CudaIpcServer * server, CudaIpcDevice * dev);
/* Between start() and reset(): proposes, in the allocation @query, a pool
 * of the server's slots (cudaipc_slot_pool_propose(), with the offer's
 * context), kept as the last one proposed and waiting as set_wait() last
 * said; where none fits, nothing is added and the last pool proposed is
 * kept. Else nothing. */
void cudaipc_slot_offer_propose (CudaIpcSlotOffer * offer, GstQuery * query);
/* on-full and full-timeout (cudaipc_slot_pool_set_wait()): for the pool
 * proposed, now and at every propose(). */
void cudaipc_slot_offer_set_wait (CudaIpcSlotOffer * offer, gboolean wait,
    guint timeout_ms);

/* For the element's set_context: takes a "gst.cuda.context" of device
 * @device_id. The element chains up itself. */
void cudaipc_slot_offer_set_context (CudaIpcSlotOffer * offer,
    GstContext * context, gint device_id);
/* For the element's query: answers a context query for a CUDA context
 * with the offer's, else with one over device @device_id's primary
 * context made now (-1: the host backend, none), which the offer keeps:
 * a decoder going to READY upstream shares the context the ring is in
 * (cudaipc_gstcuda_answer_context_query()). TRUE when answered. */
gboolean cudaipc_slot_offer_context_query (CudaIpcSlotOffer * offer,
    GstQuery * query, gint device_id);

/* For render(), before @buf is published: where @buf is of an in-place
 * pool of ours that is not the last proposed (one of before a restart of
 * the sink, which lends no slot any more), asks upstream, once for that
 * pool, to query the allocation again (a RECONFIGURE event). */
void cudaipc_slot_offer_check (CudaIpcSlotOffer * offer, GstBuffer * buf);

/* The sink stops: forgets the server and the pool proposed (upstream may keep it, and
 * its buffers, for longer: their slots stay mapped, and a pool of a
 * stopped server lends no more). */
void cudaipc_slot_offer_reset (CudaIpcSlotOffer * offer);
/* Once the sink's publisher is gone: lets go of the context, asked for
 * again by the next allocation query. */
void cudaipc_slot_offer_reset_context (CudaIpcSlotOffer * offer);

G_END_DECLS
