/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The library's debug categories, all registered at once by
 * cudaipc_debug_init(): the plugin calls it when it loads, so that
 * --gst-debug-help lists every category before anything runs, and each
 * module's entry point calls it too (for programs that use the library
 * without the plugin). Any thread; idempotent.
 */
#pragma once

#include <gst/gst.h>

G_BEGIN_DECLS

GST_DEBUG_CATEGORY_EXTERN (cudaipc_client_debug);
GST_DEBUG_CATEGORY_EXTERN (cudaipc_copier_debug);
GST_DEBUG_CATEGORY_EXTERN (cudaipc_device_debug);
GST_DEBUG_CATEGORY_EXTERN (cudaipc_gstcuda_debug);
GST_DEBUG_CATEGORY_EXTERN (cudaipc_memory_debug);
GST_DEBUG_CATEGORY_EXTERN (cudaipc_metas_debug);
GST_DEBUG_CATEGORY_EXTERN (cudaipc_publisher_debug);
GST_DEBUG_CATEGORY_EXTERN (cudaipc_server_debug);

void cudaipc_debug_init (void);

G_END_DECLS
