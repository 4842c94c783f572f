/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cudaipcsink: the producer. Copies each buffer into a free slot of a ring
 * on one device (CUDA VMM or memfd) and tells every connected cudaipcsrc
 * which slot holds which frame.
 *
 * Threads: the streaming thread (set_caps, render, event) and one I/O
 * thread started in start() and joined in stop(), which accepts clients,
 * runs their handshake and reads their RELEASEs. Both take the sink lock
 * (clients, ring, counters) and send to clients only while holding it, so
 * every client sees messages in one order. Only the I/O thread frees a
 * client; the streaming thread marks a client it cannot send to as dead and
 * wakes the I/O thread. Only the streaming thread replaces the ring; it
 * copies into a WRITING slot without the lock.
 *
 * Ownership: the element owns the listening socket, the wake-up eventfd,
 * the device, the ring (whose blocks own the exported fds) and each client
 * connection. Messages are posted, and GST_ELEMENT_WARNING/ERROR raised,
 * only with the sink lock released.
 */
#pragma once

#include <gst/gst.h>
#include <gst/base/gstbasesink.h>

G_BEGIN_DECLS

#define GST_TYPE_CU_IPC_SINK (gst_cu_ipc_sink_get_type ())
G_DECLARE_FINAL_TYPE (GstCuIpcSink, gst_cu_ipc_sink, GST, CU_IPC_SINK,
    GstBaseSink);

/* GstCuIpcSinkOnFull: what render() does when every slot is held. */
typedef enum
{
  GST_CU_IPC_SINK_ON_FULL_WAIT = 0,
  GST_CU_IPC_SINK_ON_FULL_DROP = 1,
} GstCuIpcSinkOnFull;

#define GST_TYPE_CU_IPC_SINK_ON_FULL (gst_cu_ipc_sink_on_full_get_type ())
GType gst_cu_ipc_sink_on_full_get_type (void);

GST_ELEMENT_REGISTER_DECLARE (cudaipcsink);

G_END_DECLS
