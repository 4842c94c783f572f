/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cudaipcsink: the producer. Copies each buffer into a free slot of a ring
 * on one device (CUDA VMM or memfd) and tells every connected cudaipcsrc
 * which slot holds which frame.
 *
 * The sockets, the clients, the ring and its I/O thread are a
 * CudaIpcServer (gst/producer/server.h), made in start() and freed in stop(); the
 * element adds the properties, the copy of each buffer into the slot the
 * server hands out, timestamps and plane layout, and turns the server's
 * notices into bus messages and warnings.
 *
 * Threads: the streaming thread (set_caps, render, event) drives the
 * server; unlock()/unlock_stop() set its flushing state from another
 * thread; the server's callbacks post from its I/O thread. The object lock
 * guards the properties and the server pointer; no lock of the element is
 * held while the server is stopped, so its last callbacks can post.
 *
 * Ownership: the element owns the device and the server (which owns the
 * socket, the clients and the ring).
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
