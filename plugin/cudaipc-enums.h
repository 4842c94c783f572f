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
#include "device/device.h"

G_BEGIN_DECLS

/* GstCuIpcBackend: the values of CudaIpcBackend (device.h), nicks "host"
 * and "cuda". */
#define GST_TYPE_CU_IPC_BACKEND (gst_cu_ipc_backend_get_type ())
GType gst_cu_ipc_backend_get_type (void);

/* GstCuIpcSinkOnFull: what render() does when every slot is held. */
typedef enum
{
  GST_CU_IPC_SINK_ON_FULL_WAIT = 0,
  GST_CU_IPC_SINK_ON_FULL_DROP = 1,
} GstCuIpcSinkOnFull;

#define GST_TYPE_CU_IPC_SINK_ON_FULL (gst_cu_ipc_sink_on_full_get_type ())
GType gst_cu_ipc_sink_on_full_get_type (void);

/* GstCuIpcSinkOrdering: the values of CudaIpcOrdering (server.h). */
#define GST_TYPE_CU_IPC_SINK_ORDERING (gst_cu_ipc_sink_ordering_get_type ())
GType gst_cu_ipc_sink_ordering_get_type (void);

/* GstCuIpcSrcTimestampMode: how frames are stamped (docs/design.md). */
typedef enum
{
  GST_CU_IPC_SRC_TIMESTAMP_CLOCK = 0,
  GST_CU_IPC_SRC_TIMESTAMP_PASSTHROUGH = 1,
} GstCuIpcSrcTimestampMode;

#define GST_TYPE_CU_IPC_SRC_TIMESTAMP_MODE \
  (gst_cu_ipc_src_timestamp_mode_get_type ())
GType gst_cu_ipc_src_timestamp_mode_get_type (void);

/* GstCuIpcSrcOutputMemory: the memory frames go downstream in, with
 * CUDA memory caps (docs/elements.md). */
typedef enum
{
  GST_CU_IPC_SRC_OUTPUT_AUTO = 0,
  GST_CU_IPC_SRC_OUTPUT_IMPORTED = 1,
  GST_CU_IPC_SRC_OUTPUT_GST_CUDA = 2,
} GstCuIpcSrcOutputMemory;

#define GST_TYPE_CU_IPC_SRC_OUTPUT_MEMORY \
  (gst_cu_ipc_src_output_memory_get_type ())
GType gst_cu_ipc_src_output_memory_get_type (void);

/* GstCuIpcSrcLeakyType: the values of CudaIpcLeaky (client.h). */
#define GST_TYPE_CU_IPC_SRC_LEAKY_TYPE (gst_cu_ipc_src_leaky_type_get_type ())
GType gst_cu_ipc_src_leaky_type_get_type (void);

/* how a producer's messages reach cuipcsrc (CudaIpcAnnounce) */
#define GST_TYPE_CU_IPC_SRC_ANNOUNCE (gst_cu_ipc_src_announce_get_type ())
GType gst_cu_ipc_src_announce_get_type (void);

G_END_DECLS
