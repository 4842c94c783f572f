/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cudaipcsink: the producer. Copies each buffer into a free slot of a ring
 * on one device (CUDA VMM or memfd) and tells every connected cudaipcsrc
 * which slot holds which frame.
 *
 * A front door over the producer's core, a CudaIpcPublisher
 * (gst/producer/publisher.h) made in start() and freed in stop(), which
 * owns the device, the server (sockets, clients, ring, I/O thread) and
 * the copier, and sends each frame out. The element adds the properties,
 * caps, the allocation query and its in-place pool, contexts, and says
 * in GStreamer's words how each frame and notice went (flow returns, bus
 * messages, errors and warnings).
 *
 * Threads: the streaming thread (set_caps, render, event) drives the
 * publisher; unlock()/unlock_stop() set its flushing state and
 * set_property() its settings from other threads; the server's callbacks
 * post from its I/O thread. The object lock guards the properties and the
 * publisher pointer; no lock of the element is held while the publisher
 * stops, so the server's last callbacks can post.
 *
 * Ownership: the element owns the publisher (which owns the device, the
 * socket, the clients and the ring), and a reference on the device.
 */
#pragma once

#include <gst/gst.h>
#include <gst/base/gstbasesink.h>

#include "cudaipc-enums.h"

G_BEGIN_DECLS

#define GST_TYPE_CU_IPC_SINK (gst_cu_ipc_sink_get_type ())
G_DECLARE_FINAL_TYPE (GstCuIpcSink, gst_cu_ipc_sink, GST, CU_IPC_SINK,
    GstBaseSink);


GST_ELEMENT_REGISTER_DECLARE (cudaipcsink);
GST_ELEMENT_REGISTER_DECLARE (cuipcsink);

G_END_DECLS
