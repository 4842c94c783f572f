/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What cudaipcsrc.c (the element's behaviour) and cudaipcsrc-props.c (its
 * properties: their specs and documentation, defaults, set and get) share:
 * the instance and the property ids.
 */
#pragma once

#include "cudaipcsrc.h"
#include "client.h"
#include "gstcuda.h"
#include "metas.h"
#include "ticker.h"

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

struct _GstCuIpcSrc
{
  GstPushSrc parent;

  /* properties, with the object lock */
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
  GstCaps *offer;               /* what get_caps offers once caps are known */
  guint64 pushed;               /* frames pushed since start() */
  CudaIpcMetaCounts metas;      /* object lock: since start() */
  gboolean warned_metas;        /* a refused meta was warned about on this
                                 * connection */

  /* the protocol side; NULL when its wake-up fd could not be made */
  CudaIpcClient *client;

  /* start(), stop() and the streaming thread */
  gchar *path;                  /* socket-path while started */
  guint connections;            /* made since start() */
  gboolean announce;            /* post connected/reconnected with the
                                 * connection's first frame */
  CudaIpcBackend backend;       /* the producer's, once connected */
  GstClockTime frame_duration;  /* object lock: of the caps applied, or
                                 * NONE */
  guint held_limit;             /* object lock: max-held in effect on the
                                 * connection, 0 before one */
  /* passthrough: the producer's last segment, and whether the running
   * time offset that lines it up with this pipeline is still to apply */
  GstSegment producer_segment;
  gboolean have_producer_segment;
  gboolean segment_needs_offset;
  GstCaps *out_caps;            /* the producer's caps now applied */
  gboolean pushed_any;          /* a buffer went out since start() */
  gboolean segment_pending;     /* new_segment() since the last buffer */
  GQueue pending_events;        /* waiting for the next buffer */
  CudaIpcTicker *ticker;        /* posts the stats every stats-interval */

  /* nvcodec interop: the pipeline's GstCudaContext (object lock: queries
   * read it from any thread), and the output into GstCudaMemory that
   * decide_allocation() chose for the current caps (streaming thread) */
  GObject *cuda_ctx;
  CudaIpcGstCudaOut *cuda_out;
  const gchar *output;          /* object lock: what cuda_out does */
};


/* cudaipcsrc-props.c */
void gst_cu_ipc_src_install_properties (GObjectClass * klass);
void gst_cu_ipc_src_init_properties (GstCuIpcSrc * self);

/* cudaipcsrc.c */
GstStructure *gst_cu_ipc_src_get_stats (GstCuIpcSrc * self);

G_END_DECLS
