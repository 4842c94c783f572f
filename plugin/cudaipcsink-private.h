/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What cudaipcsink.c (the element's behaviour) and cudaipcsink-props.c
 * (its properties: their specs and documentation, defaults, set and get)
 * share: the instance and the property ids.
 */
#pragma once

#include <gst/video/video.h>

#include "cudaipcsink.h"
#include "cudaipc-enums.h"
#include "copier.h"
#include "device.h"
#include "metas.h"
#include "server.h"
#include "ticker.h"

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

struct _GstCuIpcSink
{
  GstBaseSink parent;

  /* properties, object lock */
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

  /* object lock; set in start(), cleared in stop() */
  CudaIpcServer *server;
  CudaIpcCopier *copier;        /* the copies into the ring (copier.h) */
  /* the stopped server's and copier's counters */
  CudaIpcServerStats last_stats;
  CudaIpcCopierCounts last_counts;

  /* streaming thread, from start() to stop() */
  CudaIpcDevice *dev;
  GstVideoInfo info;
  gboolean have_info;
  CudaIpcMetaFilter *meta_filter;       /* of metas, read at start() */
  GByteArray *meta_blob;        /* the frame's metas on the wire */
  gboolean warned_metas;        /* that some were left out */
  CudaIpcMetaCounts meta_counts;        /* object lock */

  /* posts the counters every stats-interval; start() to stop() */
  CudaIpcTicker *ticker;
};


/* cudaipcsink-props.c */
void gst_cu_ipc_sink_install_properties (GObjectClass * klass);
void gst_cu_ipc_sink_init_properties (GstCuIpcSink * self);

/* cudaipcsink.c: the stats property (object lock held) */
GstStructure *gst_cu_ipc_sink_get_stats_locked (GstCuIpcSink * self);

G_END_DECLS
