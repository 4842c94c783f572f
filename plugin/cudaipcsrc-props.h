/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cuipcsrc's properties: their ids, their values (GstCuIpcSrcProps,
 * which the element keeps under its object lock), their defaults, and the
 * specs with their documentation (cudaipcsrc-props.c). The element sets
 * and reads them through these calls and does what they say.
 */
#pragma once

#include <glib-object.h>

#include "cudaipc-enums.h"
#include "consumer/client.h"

G_BEGIN_DECLS

enum
{
  PROP_0,
  PROP_SOCKET_PATH,
  PROP_DEVICE_ID,
  PROP_CONNECT_TIMEOUT,
  PROP_RECONNECT,
  PROP_RECONNECT_TIMEOUT,
  PROP_MAX_HELD,
  PROP_IS_LIVE,
  PROP_TIMESTAMP_MODE,
  PROP_CLIENT_NAME,
  PROP_STATS_INTERVAL,
  PROP_OUTPUT_MEMORY,
  PROP_PEER_ACCESS,
  PROP_STATS,
  N_PROPS
};

#define DEFAULT_SOCKET_PATH NULL
#define DEFAULT_DEVICE_ID 0
#define DEFAULT_CONNECT_TIMEOUT 10000
#define DEFAULT_RECONNECT TRUE
#define DEFAULT_RECONNECT_TIMEOUT 0
#define DEFAULT_MAX_HELD CUDAIPC_MAX_HELD_AUTO
#define DEFAULT_IS_LIVE TRUE
#define DEFAULT_TIMESTAMP_MODE GST_CU_IPC_SRC_TIMESTAMP_CLOCK
#define DEFAULT_CLIENT_NAME NULL
#define DEFAULT_STATS_INTERVAL 0
#define DEFAULT_OUTPUT_MEMORY GST_CU_IPC_SRC_OUTPUT_AUTO
#define DEFAULT_PEER_ACCESS TRUE

typedef struct
{
  gchar *socket_path;
  gint device_id;
  guint connect_timeout;
  gboolean reconnect;
  guint reconnect_timeout;
  gint max_held;
  GstCuIpcSrcTimestampMode timestamp_mode;
  gchar *client_name;
  guint stats_interval;
  GstCuIpcSrcOutputMemory output_memory;
  gboolean peer_access;
} GstCuIpcSrcProps;

/* Installs every property of the element on @klass. */
void gst_cu_ipc_src_props_install (GObjectClass * klass);
/* The defaults into @p; _clear() frees what @p holds. */
void gst_cu_ipc_src_props_init (GstCuIpcSrcProps * p);
void gst_cu_ipc_src_props_clear (GstCuIpcSrcProps * p);
/* FALSE for a property that is not a stored value (the element's own:
 * stats, counters). */
gboolean gst_cu_ipc_src_props_set (GstCuIpcSrcProps * p, guint prop_id,
    const GValue * value);
gboolean gst_cu_ipc_src_props_get (const GstCuIpcSrcProps * p,
    guint prop_id, GValue * value);

G_END_DECLS
