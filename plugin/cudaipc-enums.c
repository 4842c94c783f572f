/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "cudaipc-enums.h"

GType
gst_cu_ipc_backend_get_type (void)
{
  static gsize type = 0;
  static const GEnumValue values[] = {
    {CUDAIPC_BACKEND_HOST, "Shared host memory (memfd), no GPU needed",
        "host"},
    {CUDAIPC_BACKEND_CUDA, "CUDA virtual memory on the GPU", "cuda"},
    {0, NULL, NULL},
  };

  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstCuIpcBackend", values);

    g_once_init_leave (&type, t);
  }
  return (GType) type;
}
