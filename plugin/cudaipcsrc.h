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
 * Ownership: the protocol side (connection, handshake, imports, caps
 * table, frame checks, the release path and its counters) is a
 * CudaIpcClient (gst/consumer/client.h) that the element owns for its lifetime; its
 * contract says who owns each fd, slot and frame. The element decides
 * about reconnecting and errors, negotiates caps, builds buffers (memory,
 * GstVideoMeta, timestamps) and pushes events. Where downstream works on
 * nvcodec's GstCudaMemory, a CudaIpcGstCudaOut (gst/buffers/gstcuda.h), made in
 * decide_allocation() for the caps negotiated, turns each frame into one.
 */
#pragma once

#include <gst/gst.h>
#include <gst/base/gstpushsrc.h>

#include "cudaipc-enums.h"

G_BEGIN_DECLS
#define GST_TYPE_CU_IPC_SRC (gst_cu_ipc_src_get_type ())
G_DECLARE_FINAL_TYPE (GstCuIpcSrc, gst_cu_ipc_src, GST, CU_IPC_SRC, GstPushSrc);


GST_ELEMENT_REGISTER_DECLARE (cudaipcsrc);
GST_ELEMENT_REGISTER_DECLARE (cuipcsrc);

G_END_DECLS
