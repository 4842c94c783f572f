/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What a consumer source sends downstream besides its frames, and in
 * which order: each frame's timestamps (this pipeline's running time
 * from the capture time, each PTS after the one before since reset(), or
 * the producer's own in passthrough), the producer's segment in
 * passthrough, moved onto this pipeline's running time with the first
 * frame after it, by one offset for the connection, and the producer's
 * other events, held until the next buffer so that they go out after
 * caps and segment (basesrc queues TAG and custom events itself; other
 * types go out, in order, ahead of the segment basesrc sends again). EOS
 * sends what is held first. cuipcsrc keeps one for its basesrc.
 *
 * Threads: everything from the streaming thread; reset() also from
 * start() and stop(), while streaming is stopped.
 *
 * Ownership: the downstream belongs to its source, which it does not
 * hold a reference on; it owns the events it holds. event() takes its
 * event.
 */
#pragma once

#include <gst/gst.h>
#include <gst/base/gstbasesrc.h>

#include "wire/protocol.h"

G_BEGIN_DECLS

typedef struct _CudaIpcDownstream CudaIpcDownstream;

CudaIpcDownstream *cudaipc_downstream_new (GstBaseSrc * src);
void cudaipc_downstream_free (CudaIpcDownstream * downstream);
/* Nothing pushed, no segment of the producer's, no event held. */
void cudaipc_downstream_reset (CudaIpcDownstream * downstream);
/* A new connection: the producer's segment is moved again, by an offset
 * measured anew. */
void cudaipc_downstream_connected (CudaIpcDownstream * downstream);

/* Takes an event of the producer's: GST_FLOW_EOS for EOS. A SEGMENT is
 * the producer's only with @passthrough (in clock mode the source keeps
 * its own live segment). */
GstFlowReturn cudaipc_downstream_event (CudaIpcDownstream * downstream,
    GstEvent * event, gboolean passthrough);
/* The timestamps of @buf, of frame @f. */
void cudaipc_downstream_stamp (CudaIpcDownstream * downstream,
    const CudaIpcFrameMsg * f, GstBuffer * buf, gboolean passthrough);
/* Right before a buffer goes out: the events held go first. */
void cudaipc_downstream_buffer_out (CudaIpcDownstream * downstream);

G_END_DECLS
