/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cudaipcsrc: the consumer. Connects to a cudaipcsink, imports each slot of
 * its ring once per connection, and pushes every published frame as a
 * read-only GstMemory over the imported slot, with no copy and no driver
 * call per frame. When the last reference to a frame goes, the slot is
 * released to the producer.
 *
 * Threads: start() and stop() run in the state-change thread; create() in
 * the streaming thread, which alone receives from the connection. unlock()
 * may come from any thread: it cancels every wait of the client (connect,
 * poll). Frames are released from whichever thread drops the last
 * reference to their memory, possibly long after the element stopped or
 * reconnected.
 *
 * Ownership: the consumer's core is a CudaIpcReader (gst/consumer/reader.h)
 * that the element owns for its lifetime: the connection and its
 * settings, the rules for connecting again and the texts of the errors,
 * over a CudaIpcClient (gst/consumer/client.h) whose contract says who
 * owns each fd, slot and frame. The element does the GStreamer work: it
 * negotiates caps, builds buffers (memory, GstVideoMeta, timestamps),
 * pushes events, and posts the reader's news as messages, warnings and
 * errors. Where downstream works on nvcodec's GstCudaMemory, a
 * CudaIpcOutput (gst/consumer/output.h), set up in decide_allocation()
 * for the caps negotiated, turns each frame into one.
 */
#pragma once

#include <gst/gst.h>
#include <gst/base/gstpushsrc.h>

#include "cudaipc-enums.h"
#include "consumer/reader.h"
#include "consumer/output.h"
#include "consumer/downstream.h"
#include "common/ticker.h"

G_BEGIN_DECLS
#define GST_TYPE_CU_IPC_SRC (gst_cu_ipc_src_get_type ())
G_DECLARE_FINAL_TYPE (GstCuIpcSrc, gst_cu_ipc_src, GST, CU_IPC_SRC, GstPushSrc);

struct _GstCuIpcSrc
{
  GstPushSrc parent;

  /* the consumer's core and its settings (socket-path, device-id,
   * connect-timeout, reconnect, reconnect-timeout, max-held, client-name,
   * peer-access); NULL never */
  CudaIpcReader *reader;

  /* the element's own properties: object lock */
  GstCuIpcSrcTimestampMode timestamp_mode;
  guint stats_interval;
  GstCuIpcSrcOutputMemory output_memory;

  GstCaps *offer;               /* what get_caps offers once caps are known */
  guint64 pushed;               /* frames pushed since start() */

  /* start(), stop() and the streaming thread */
  gboolean announce;            /* post connected/reconnected with the
                                 * connection's first frame */
  CudaIpcBackend backend;       /* the producer's, once connected */
  GstClockTime frame_duration;  /* object lock: of the caps applied, or
                                 * NONE */
  GstCaps *out_caps;            /* the producer's caps now applied */
  /* timestamps, the producer's segment and events, in order */
  CudaIpcDownstream *downstream;
  CudaIpcTicker *ticker;        /* posts the stats every stats-interval */

  /* where frames go out: the imported slot or nvcodec's GstCudaMemory,
   * chosen in decide_allocation() for the caps negotiated */
  CudaIpcOutput *output;

  /* the streaming thread, from start(): what was said of dropped frames
   * and copies */
  gint64 drops_warned_at;       /* monotonic us of the last warning, or 0 */
  guint64 drops_unwarned;       /* dropped since */
  gboolean warned_copy;         /* that a frame could not be copied */
  gint paused;                  /* atomic: paused since the last frame:
                                 * frames dropped meanwhile are the
                                 * pause's, not downstream's (no warning) */
};

GST_ELEMENT_REGISTER_DECLARE (cudaipcsrc);
GST_ELEMENT_REGISTER_DECLARE (cuipcsrc);

G_END_DECLS
