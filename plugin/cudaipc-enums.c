/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The enum types of the elements' properties.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "cudaipc-enums.h"
#include "consumer/client.h"
#include "producer/server.h"

GType
gst_cu_ipc_backend_get_type (void)
{
  static gsize type = 0;
  static const GEnumValue values[] = {
    {CUDAIPC_BACKEND_HOST, "Shared host memory (memfd), no GPU needed",
        "host"},
    {CUDAIPC_BACKEND_CUDA, "CUDA virtual memory on the GPU", "cuda"},
    {CUDAIPC_BACKEND_AUTO, "cuda where a CUDA device is usable, else host, "
          "decided at start", "auto"},
    {0, NULL, NULL},
  };

  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstCuIpcBackend", values);

    g_once_init_leave (&type, t);
  }
  return (GType) type;
}

GType
gst_cu_ipc_sink_on_full_get_type (void)
{
  static gsize type = 0;
  static const GEnumValue values[] = {
    {GST_CU_IPC_SINK_ON_FULL_WAIT,
        "Wait for a free slot, at most full-timeout", "wait"},
    {GST_CU_IPC_SINK_ON_FULL_DROP, "Drop the frame at once", "drop"},
    {0, NULL, NULL},
  };

  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstCuIpcSinkOnFull", values);

    g_once_init_leave (&type, t);
  }
  return (GType) type;
}

GType
gst_cu_ipc_sink_ordering_get_type (void)
{
  static gsize type = 0;
  static const GEnumValue values[] = {
    {CUDAIPC_ORDERING_AUTO, "The fence page where the GPU can write it, "
          "else a host synchronisation per frame", "auto"},
    {CUDAIPC_ORDERING_FENCE, "The fence page, or fail to start (also with "
          "backend=host, which writes it on the CPU)", "fence"},
    {CUDAIPC_ORDERING_EVENTS, "Legacy interprocess CUDA events: consumers "
          "must share the producer's IPC and PID namespaces", "events"},
    {CUDAIPC_ORDERING_HOST, "Synchronise each frame's copy on the host "
          "before publishing it", "host"},
    {0, NULL, NULL},
  };

  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstCuIpcSinkOrdering", values);

    g_once_init_leave (&type, t);
  }
  return (GType) type;
}

GType
gst_cu_ipc_src_timestamp_mode_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_CU_IPC_SRC_TIMESTAMP_CLOCK,
          "Map the producer's clock time to this pipeline's running time",
        "clock"},
    {GST_CU_IPC_SRC_TIMESTAMP_PASSTHROUGH,
          "Push the producer's PTS, DTS and segments unchanged",
        "passthrough"},
    {0, NULL, NULL},
  };

  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstCuIpcSrcTimestampMode", values);
    g_once_init_leave (&type, t);
  }
  return type;
}

GType
gst_cu_ipc_src_output_memory_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_CU_IPC_SRC_OUTPUT_AUTO,
          "GstCudaMemory where downstream offers a CUDA buffer pool, else "
          "the imported slot", "auto"},
    {GST_CU_IPC_SRC_OUTPUT_IMPORTED,
        "Always the imported slot, no copy", "imported"},
    {GST_CU_IPC_SRC_OUTPUT_GST_CUDA,
        "Always nvcodec's GstCudaMemory", "gst-cuda"},
    {0, NULL, NULL},
  };

  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstCuIpcSrcOutputMemory", values);
    g_once_init_leave (&type, t);
  }
  return type;
}

GType
gst_cu_ipc_src_announce_get_type (void)
{
  static gsize type = 0;
  static const GEnumValue values[] = {
    {CUDAIPC_ANNOUNCE_SOCKET, "A message on the socket for each frame",
        "socket"},
    {CUDAIPC_ANNOUNCE_SHARED_MEMORY, "Through a page of shared memory "
          "beside the socket, where the producer offers it",
        "shared-memory"},
    {0, NULL, NULL},
  };

  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstCuIpcSrcAnnounce", values);

    g_once_init_leave (&type, t);
  }
  return (GType) type;
}

GType
gst_cu_ipc_src_leaky_type_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {CUDAIPC_LEAKY_AUTO, "As the producer's stream: never drop when it is "
          "not live, drop the oldest when it is", "auto"},
    {CUDAIPC_LEAKY_NONE, "Never drop: a slow consumer holds the producer "
          "back", "none"},
    {CUDAIPC_LEAKY_DOWNSTREAM, "Drop the oldest frames waiting beyond "
          "max-held", "downstream"},
    {0, NULL, NULL},
  };

  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstCuIpcSrcLeakyType", values);
    g_once_init_leave (&type, t);
  }
  return type;
}
