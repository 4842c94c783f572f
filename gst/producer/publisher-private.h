/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Internal to the publisher (publisher.h has the contract). Two files
 * share this state, each with one job:
 *
 *   publisher.c        its life cycle, settings, caps, events, counters
 *   publisher-frame.c  one frame's way out: publish() and its steps
 *
 * publisher.c calls nothing of publisher-frame.c, nor it of publisher.c.
 */
#pragma once

#include "producer/publisher.h"
#include "common/ticker.h"
#include "common/debug.h"

G_BEGIN_DECLS

/* A frame's logs: in the front door's category, of its object */
#define PUB_LOG(pub, ...) \
    GST_CAT_LOG_OBJECT ((pub)->debug_category, (pub)->debug_object, \
        __VA_ARGS__)
#define PUB_DEBUG(pub, ...) \
    GST_CAT_DEBUG_OBJECT ((pub)->debug_category, (pub)->debug_object, \
        __VA_ARGS__)
#define PUB_INFO(pub, ...) \
    GST_CAT_INFO_OBJECT ((pub)->debug_category, (pub)->debug_object, \
        __VA_ARGS__)
#define PUB_WARNING(pub, ...) \
    GST_CAT_WARNING_OBJECT ((pub)->debug_category, (pub)->debug_object, \
        __VA_ARGS__)

struct _CudaIpcPublisher
{
  /* set in new(), constant until free() */
  CudaIpcDevice *dev;           /* a reference */
  /* backend=auto: why the device's backend was chosen; else NULL */
  gchar *backend_why;
  CudaIpcServer *server;
  CudaIpcPublisherCallbacks callbacks;
  gpointer user_data;
  gboolean buffers;             /* frames' bytes are GstBuffers' (a copier) */
  guint ring_size;              /* as configured, for error text */
  GstDebugCategory *debug_category;
  gpointer debug_object;
  GstElement *element;          /* messages go there, or NULL */
  CudaIpcTicker *ticker;        /* posts the stats; until stop() */

  /* the producer thread */
  CudaIpcMetaFilter *meta_filter;       /* of metas, read at new() */
  GByteArray *meta_blob;        /* the frame's metas: its FRAME borrows it */
  GstVideoInfo info;
  gboolean have_info;

  /* the settings: atomic, any thread */
  gint wait_when_full;
  guint full_timeout_ms;
  gint live;                    /* atomic */
  gint wait_for_connection;

  /* the counters, and the copier's going: under @lock */
  GMutex lock;
  CudaIpcCopier *copier;        /* until stop() */
  CudaIpcCopierCounts last_copies;      /* the stopped copier's */
  guint64 frames_in_place;
  CudaIpcMetaCounts metas;
};

G_END_DECLS
