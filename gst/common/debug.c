/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The library's debug categories; debug.h has the contract.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "common/debug.h"

GST_DEBUG_CATEGORY (cudaipc_client_debug);
GST_DEBUG_CATEGORY (cudaipc_copier_debug);
GST_DEBUG_CATEGORY (cudaipc_device_debug);
GST_DEBUG_CATEGORY (cudaipc_gstcuda_debug);
GST_DEBUG_CATEGORY (cudaipc_memory_debug);
GST_DEBUG_CATEGORY (cudaipc_metas_debug);
GST_DEBUG_CATEGORY (cudaipc_publisher_debug);
GST_DEBUG_CATEGORY (cudaipc_server_debug);

void
cudaipc_debug_init (void)
{
  static gsize once = 0;

  if (g_once_init_enter (&once)) {
    GST_DEBUG_CATEGORY_INIT (cudaipc_client_debug, "cudaipcclient", 0,
        "CUDA IPC consumer: connection, protocol, frames");
    GST_DEBUG_CATEGORY_INIT (cudaipc_copier_debug, "cudaipccopier", 0,
        "CUDA IPC producer's copies into the ring");
    GST_DEBUG_CATEGORY_INIT (cudaipc_device_debug, "cudaipcdevice", 0,
        "CUDA IPC devices and memory backends");
    GST_DEBUG_CATEGORY_INIT (cudaipc_gstcuda_debug, "cudaipcgstcuda", 0,
        "GStreamer's CUDA library, bound at run time");
    GST_DEBUG_CATEGORY_INIT (cudaipc_memory_debug, "cudaipcmemory", 0,
        "CUDA IPC imported frame memory");
    GST_DEBUG_CATEGORY_INIT (cudaipc_metas_debug, "cudaipcmetas", 0,
        "CUDA IPC frame metadata on the wire");
    GST_DEBUG_CATEGORY_INIT (cudaipc_publisher_debug, "cudaipcpublisher", 0,
        "CUDA IPC producer: each frame into a slot and out to the consumers");
    GST_DEBUG_CATEGORY_INIT (cudaipc_server_debug, "cudaipcserver", 0,
        "CUDA IPC producer's server: sockets, clients, ring");
    g_once_init_leave (&once, 1);
  }
}
