/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cuipcsink's properties: their ids, their values (GstCuIpcSinkProps,
 * which the element keeps under its object lock), their defaults, and the
 * specs with their documentation (cudaipcsink-props.c). The element sets
 * and reads them through these calls and does what they say.
 */
#pragma once

#include <glib-object.h>

#include "cudaipc-enums.h"
#include "device/device.h"
#include "producer/server.h"

G_BEGIN_DECLS

enum
{
  PROP_0,
  PROP_SOCKET_PATH,
  PROP_SOCKET_MODE,
  PROP_BACKEND,
  PROP_DEVICE_ID,
  PROP_RING_SIZE,
  PROP_ON_FULL,
  PROP_ORDERING,
  PROP_FULL_TIMEOUT,
  PROP_WAIT_FOR_CONNECTION,
  PROP_CONSUMER_TIMEOUT,
  PROP_ALLOWED_USERS,
  PROP_ALLOWED_GROUPS,
  PROP_STATS_INTERVAL,
  PROP_METAS,
  PROP_IN_PLACE,
  PROP_NUM_CLIENTS,
  PROP_STATS,
  N_PROPERTIES
};

#define DEFAULT_SOCKET_PATH NULL
#define DEFAULT_SOCKET_MODE 0660
#define DEFAULT_BACKEND CUDAIPC_BACKEND_CUDA
#define DEFAULT_DEVICE_ID 0
#define DEFAULT_RING_SIZE 4
#define MIN_RING_SIZE 2
#define MAX_RING_SIZE CUDAIPC_MAX_SLOTS
#define DEFAULT_ON_FULL GST_CU_IPC_SINK_ON_FULL_WAIT
#define DEFAULT_ORDERING CUDAIPC_ORDERING_AUTO
#define DEFAULT_FULL_TIMEOUT 1000
#define DEFAULT_WAIT_FOR_CONNECTION FALSE
#define DEFAULT_CONSUMER_TIMEOUT 500
#define DEFAULT_ALLOWED_USERS NULL
#define DEFAULT_ALLOWED_GROUPS NULL
#define DEFAULT_STATS_INTERVAL 0
#define DEFAULT_METAS "all"
#define DEFAULT_IN_PLACE TRUE

typedef struct
{
  gchar *socket_path;
  guint socket_mode;
  CudaIpcBackend backend;
  gint device_id;
  guint ring_size;
  GstCuIpcSinkOnFull on_full;
  CudaIpcOrdering ordering;
  guint full_timeout;
  gboolean wait_for_connection;
  guint consumer_timeout;
  gchar *allowed_users;
  gchar *allowed_groups;
  guint stats_interval;
  gchar *metas;
  gboolean in_place;
} GstCuIpcSinkProps;

/* Installs every property of the element on @klass. */
void gst_cu_ipc_sink_props_install (GObjectClass * klass);
/* The defaults into @p; _clear() frees what @p holds. */
void gst_cu_ipc_sink_props_init (GstCuIpcSinkProps * p);
void gst_cu_ipc_sink_props_clear (GstCuIpcSinkProps * p);
/* FALSE for a property that is not a stored value (the element's own:
 * stats, counters). */
gboolean gst_cu_ipc_sink_props_set (GstCuIpcSinkProps * p, guint prop_id,
    const GValue * value);
gboolean gst_cu_ipc_sink_props_get (const GstCuIpcSinkProps * p,
    guint prop_id, GValue * value);

G_END_DECLS
