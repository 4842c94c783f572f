/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * GTypes of the enums the elements' properties share.
 *
 * The type names carry the GstCuIpc prefix: GStreamer's nvcodec registers
 * GstCudaIpc* types of its own, and two plugins registering one GType name
 * cannot be loaded in one process.
 */
#pragma once

#include <glib-object.h>
#include "device.h"

G_BEGIN_DECLS

/* GstCuIpcBackend: the values of CudaIpcBackend (device.h), nicks "host"
 * and "cuda". */
#define GST_TYPE_CU_IPC_BACKEND (gst_cu_ipc_backend_get_type ())
GType gst_cu_ipc_backend_get_type (void);

G_END_DECLS
