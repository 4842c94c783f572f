/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The producer's core, below both front doors: cuipcsink (render()) and
 * libcudaipc's cudaipc_producer (api-producer.c). A frame, a GstBuffer,
 * goes out through one sequence, cudaipc_publisher_publish():
 *
 *   wait for a consumer   only with wait-for-connection
 *   acquire a slot        or take the in-place slot the buffer already
 *                         is (slot-pool.h), published as it is where the
 *                         server still can; else, as on-full says: wait
 *                         until full-timeout for a free slot, or drop
 *   copy or write         the buffer's memories by the copier (copier.h),
 *                         or bytes at a pointer, complete on return
 *   describe              timestamps, flags, plane layout (its video meta
 *                         or the caps'), metas, capture time
 *   publish               to every ready client (server.h), fenced after
 *                         the copier's copy where it has one
 *
 * and says how it went in a CudaIpcPublishResult, which each front door
 * turns into its own words: a GstFlowReturn and element errors, or a
 * cudaipc_status and error text. The defaults both front doors share
 * (the element's properties, cudaipc_producer_options_init()) are
 * defined here.
 *
 * Threads:
 *  - The producer thread (a sink's streaming thread, the program's
 *    thread that publishes): set_caps, publish, send_event, clear_eos,
 *    one call at a time.
 *  - Any thread, from new() to free(): the setters (on-full,
 *    wait-for-connection, consumer-timeout: they apply to a wait in
 *    progress), set_flushing, get_server, get_n_clients, get_generation,
 *    get_stats.
 *  - stop() and free(): once, with no producer-thread call in flight; the
 *    server's last callbacks run during stop(), so the caller holds no
 *    lock they take.
 *  - The callbacks: the server's from its I/O thread (server.h);
 *    capture_time and flushing on the producer thread, within publish().
 *
 * Ownership: the publisher owns the device (a reference), the server
 * (its socket, clients, ring and their fds) and the copier, which holds
 * each buffer it copied until its copy has landed. A frame's buffer is
 * the caller's: publish() takes no reference of its own but the
 * copier's. A slot is the publisher's from acquire to publish or abort,
 * inside publish(); an in-place slot is its buffer's (its ticket).
 */
#pragma once

#include <gst/gst.h>
#include <gst/video/video.h>
#include "device/device.h"
#include "metas/metas.h"
#include "producer/server.h"
#include "producer/copier.h"

G_BEGIN_DECLS

/* The defaults the element's properties and cudaipc_producer_options
 * share. */
#define CUDAIPC_PUBLISHER_DEFAULT_SOCKET_MODE 0660
#define CUDAIPC_PUBLISHER_DEFAULT_BACKEND CUDAIPC_BACKEND_AUTO
#define CUDAIPC_PUBLISHER_DEFAULT_DEVICE_ID 0
#define CUDAIPC_PUBLISHER_DEFAULT_RING_SIZE 4
#define CUDAIPC_PUBLISHER_MIN_RING_SIZE 2
#define CUDAIPC_PUBLISHER_MAX_RING_SIZE CUDAIPC_MAX_SLOTS
/* on-full: wait for a free slot (TRUE) or drop the frame at once */
#define CUDAIPC_PUBLISHER_DEFAULT_WAIT_WHEN_FULL TRUE
#define CUDAIPC_PUBLISHER_DEFAULT_FULL_TIMEOUT_MS 1000
#define CUDAIPC_PUBLISHER_DEFAULT_WAIT_FOR_CONNECTION FALSE
#define CUDAIPC_PUBLISHER_DEFAULT_CONSUMER_TIMEOUT_MS 500

typedef struct _CudaIpcPublisher CudaIpcPublisher;

/* What new() needs; cudaipc_publisher_config_init() fills in the
 * defaults. Strings and arrays are copied. */
typedef struct
{
  CudaIpcBackend backend;
  gint device_id;               /* cuda backend */
  const gchar *socket_name;     /* a path or "@name" (connection.h) */
  guint socket_mode;
  guint ring_size;
  const gchar *name;            /* goes to clients in HELLO */
  /* who may connect besides the producer's user, root and group: names
   * or ids, comma separated (credentials.h); NULL: nobody else */
  const gchar *allowed_users;
  const gchar *allowed_groups;
  /* which metas travel (metas.h, cudaipc_meta_filter_new()); NULL: every
   * one this side can carry */
  const gchar *metas;
  CudaIpcOrdering ordering;
  /* TRUE: frames come as GstBuffers whose memories the copier copies
   * (on the cuda backend on its own stream, published fenced), and may
   * be slots of the in-place pool. FALSE: frames come as bytes at a
   * pointer (CudaIpcPublisherFrame's data), written and complete before
   * they go out. */
  gboolean copier;
  /* the settings the setters change later */
  gboolean wait_when_full;
  guint full_timeout_ms;        /* 0: as long as it takes; live streams
                                 * only (set_live()) */
  gboolean wait_for_connection;
  guint consumer_timeout_ms;    /* 0: never */
  /* where publish() logs (NULL: the library's "cudaipcpublisher"), and
   * of which object (may be NULL; not referenced) */
  GstDebugCategory *debug_category;
  gpointer debug_object;
  /* the element the producer runs in (not referenced: it outlives the
   * publisher), or NULL. The publisher posts its element messages on it,
   * "cudaipcsink-client-joined" and "-left" from the server's I/O thread
   * (and notifies its "num-clients" then), and, every stats_interval_ms
   * (0: never) until stop(), "cudaipcsink-stats" and one
   * "cudaipcsink-client-stats" per consumer from a thread of its own. */
  GstElement *element;
  guint stats_interval_ms;
} CudaIpcPublisherConfig;

void cudaipc_publisher_config_init (CudaIpcPublisherConfig * config);
/* For a config that owns its strings (an element's properties): @dest
 * as @src with copies of its strings, and those freed (set NULL). */
void cudaipc_publisher_config_copy (CudaIpcPublisherConfig * dest,
    const CudaIpcPublisherConfig * src);
void cudaipc_publisher_config_clear (CudaIpcPublisherConfig * config);

typedef struct
{
  /* the server's notices, from its I/O thread (server.h); any may be
   * NULL */
  CudaIpcServerCallbacks server;
  /* The frame's capture time, CLOCK_MONOTONIC ns, for its @pts (FRAME's
   * clock_time). NULL: the time it is described at. */
  GstClockTime (*capture_time) (GstClockTime pts, gpointer user_data);
  /* A wait for a consumer or a slot ended because the producer flushes:
   * TRUE to wait again (once it may go on; a time limit starts again),
   * FALSE to give up, and publish() says FLUSHING. NULL: give up. */
  gboolean (*flushing) (gpointer user_data);
} CudaIpcPublisherCallbacks;

/* Which part of new() failed, in the order new() goes. */
typedef enum
{
  CUDAIPC_PUBLISHER_FAILED_NONE,
  CUDAIPC_PUBLISHER_FAILED_METAS,       /* metas does not parse */
  CUDAIPC_PUBLISHER_FAILED_PEERS,       /* allowed_users or _groups */
  CUDAIPC_PUBLISHER_FAILED_SOCKET_NAME, /* none given */
  CUDAIPC_PUBLISHER_FAILED_DEVICE,      /* device.h's errors */
  CUDAIPC_PUBLISHER_FAILED_COPIER,      /* no copy stream could be made */
  CUDAIPC_PUBLISHER_FAILED_SERVER,      /* server.h's errors */
} CudaIpcPublisherFailed;

/* A publisher as @config says: the device opened, the copier, then the
 * server, listening at once. NULL with @error, and @failed (may be NULL)
 * saying which part failed. */
CudaIpcPublisher *cudaipc_publisher_new (const CudaIpcPublisherConfig *
    config, const CudaIpcPublisherCallbacks * callbacks, gpointer user_data,
    CudaIpcPublisherFailed * failed, GError ** error);
/* What new() gave as @error, for the part that @failed with @config,
 * said for a user (returned) and, in @debug, the settings it concerns
 * by the element's property names; each a string to g_free(). */
gchar *cudaipc_publisher_failure_text (CudaIpcPublisherFailed failed,
    const GError * error, const CudaIpcPublisherConfig * config,
    gchar ** debug);
/* Waits for every copy in flight (the copier goes), then stops the
 * server (server.h). Afterwards get_stats() gives the counters as they
 * were; only the any-thread getters and free() may be called. */
void cudaipc_publisher_stop (CudaIpcPublisher * pub);
/* stop() if not yet, and frees; NULL is ignored. */
void cudaipc_publisher_free (CudaIpcPublisher * pub);

/* The server (the in-place pools lend its slots) and the device, the
 * publisher's: valid until free(). */
CudaIpcServer *cudaipc_publisher_get_server (CudaIpcPublisher * pub);
CudaIpcDevice *cudaipc_publisher_get_device (CudaIpcPublisher * pub);

/* The settings; any thread, a wait in progress sees them at once. */
void cudaipc_publisher_set_on_full (CudaIpcPublisher * pub,
    gboolean wait_when_full, guint full_timeout_ms);
void cudaipc_publisher_set_wait_for_connection (CudaIpcPublisher * pub,
    gboolean wait);
void cudaipc_publisher_set_consumer_timeout (CudaIpcPublisher * pub,
    guint timeout_ms);
/* The setters' settings (on-full, wait-for-connection, consumer-timeout)
 * that @now has otherwise than @was, the config new() was given; every
 * one of them where @was is NULL. */
void cudaipc_publisher_apply_settings (CudaIpcPublisher * pub,
    const CudaIpcPublisherConfig * was, const CudaIpcPublisherConfig * now);
/* TRUE: every wait ends (the flushing callback says what next). */
void cudaipc_publisher_set_flushing (CudaIpcPublisher * pub,
    gboolean flushing);

/* Whether the stream is live (a camera, not a file): consumers keep
 * every frame of one that is not, and the newest of one that is
 * (design.md, Every frame or the newest). Set before the first frame,
 * and again where it changes (then the ring is replaced). Not live, a
 * wait for a free slot with wait_when_full has no time limit: only the
 * caller's own (CudaIpcPublisherFrame's full_timeout_ms) ends it. FALSE
 * until set (the stats say which); any thread. */
void cudaipc_publisher_set_live (CudaIpcPublisher * pub, gboolean live);

/* The caps of the frames that follow (fixed raw video), and their
 * layout @info (the plane layout of a frame without a video meta, the
 * slots' least size). The ring for them is made now (server.h), so that
 * the first buffer upstream takes from the in-place pool is a slot.
 * FALSE: they cannot be shared (CUDAIPC_ERROR_LIMIT: too long, or frames
 * too large for a slot), or no ring could be made for them (the ring's
 * error, "Cannot allocate a ring ..."). */
gboolean cudaipc_publisher_set_caps (CudaIpcPublisher * pub,
    GstCaps * caps, const GstVideoInfo * info, GError ** error);

/* One frame. */
typedef struct
{
  /* timestamps, flags, offsets, metas and video meta of the frame; with
   * a copier also its bytes (its memories, or the in-place slot it is) */
  GstBuffer *buffer;
  /* without a copier, the bytes: @size at @data, device memory of the
   * publisher's device where @on_device, else host memory */
  guintptr data;
  guint64 size;
  gboolean on_device;
  /* how long to wait for a free slot with wait_when_full; 0: the
   * publisher's full_timeout_ms where the stream is live, as long as it
   * takes where it is not */
  guint full_timeout_ms;
  /* refuse (INVALID) a frame whose metas do not all fit in a FRAME,
   * before a slot is taken; else they are left out and counted */
  gboolean all_metas;
} CudaIpcPublisherFrame;

typedef enum
{
  CUDAIPC_PUBLISH_OK,           /* published, copied or in place */
  CUDAIPC_PUBLISH_DROPPED,      /* every slot held as long as on-full
                                 * allows: dropped, and counted so */
  CUDAIPC_PUBLISH_FLUSHING,     /* flushing, and the callback gave up */
  CUDAIPC_PUBLISH_INVALID,      /* all_metas, and not all of them fit */
  CUDAIPC_PUBLISH_NO_CONTEXT,   /* the copies could not move into the
                                 * CUDA context of the buffer's memory */
  CUDAIPC_PUBLISH_NO_RING,      /* no ring could be made for it */
  CUDAIPC_PUBLISH_WRITE_FAILED, /* the copy into the slot failed: the
                                 * slot was given back */
  CUDAIPC_PUBLISH_SYNC_FAILED,  /* finishing the copy failed: the slot
                                 * was given back unpublished */
} CudaIpcPublishResult;

/* What became of a frame. */
typedef struct
{
  guint slot;                   /* from the slot on: its slot */
  guint64 seq;                  /* published: its FRAME's number */
  guint64 size;                 /* published: its bytes */
  guint n_clients;              /* published: to how many clients */
  gboolean in_place;            /* published as upstream wrote it */
  CudaIpcMetaCounts metas;      /* its metas, once counted (it went out
                                 * or the copier took it) */
} CudaIpcPublished;

/* Publishes @frame (see above); @out (filled in every case) and @error
 * (for NO_CONTEXT, NO_RING, WRITE_FAILED and SYNC_FAILED) say how it
 * went. */
CudaIpcPublishResult cudaipc_publisher_publish (CudaIpcPublisher * pub,
    const CudaIpcPublisherFrame * frame, CudaIpcPublished * out,
    GError ** error);

/* A failed publish() of @frame, @res neither OK, DROPPED nor FLUSHING,
 * with the @out and @error it gave, said for a user (returned) and in
 * @debug (may be NULL); each a string to g_free(). */
gchar *cudaipc_publisher_result_text (CudaIpcPublisher * pub,
    CudaIpcPublishResult res, const CudaIpcPublisherFrame * frame,
    const CudaIpcPublished * out, const GError * error, gchar ** debug);

/* Forwards @event (server.h, send_event) to every ready client. */
gboolean cudaipc_publisher_send_event (CudaIpcPublisher * pub,
    GstEvent * event, GstClockTime running_time, GError ** error);
/* After a flush: clients that join no longer get EOS. */
void cudaipc_publisher_clear_eos (CudaIpcPublisher * pub);

guint cudaipc_publisher_get_n_clients (CudaIpcPublisher * pub);
guint32 cudaipc_publisher_get_generation (CudaIpcPublisher * pub);

/* The counters; cudaipc_publisher_stats_clear() frees what they hold. */
typedef struct
{
  CudaIpcServerStats server;
  CudaIpcCopierCounts copies;
  guint64 frames_in_place;      /* published as upstream wrote them */
  CudaIpcMetaCounts metas;      /* of the frames that went out */
  gboolean live;                /* set_live() */
  /* the ring's backend, "cuda" or "host" (static; NULL: no publisher),
   * and with backend=auto why it was chosen (owned) */
  const gchar *backend;
  gchar *backend_why;
} CudaIpcPublisherStats;

/* Fills in @stats (@pub NULL: every counter 0). */
void cudaipc_publisher_get_stats (CudaIpcPublisher * pub,
    CudaIpcPublisherStats * stats);
void cudaipc_publisher_stats_clear (CudaIpcPublisherStats * stats);
/* @stats as the structure of cuipcsink's stats property, named @name
 * (its fields are documented there), with one "cudaipcsink-client"
 * structure per client: added to @clients, or, with @clients NULL, in
 * its "client-stats" array. */
GstStructure *cudaipc_publisher_stats_to_structure (const
    CudaIpcPublisherStats * stats, const gchar * name, GPtrArray * clients);

/* The stats property's structure: the counters of @pub, or @last where
 * @pub is NULL (those of a stopped one); @clients as above. */
GstStructure *cudaipc_publisher_stats_structure (CudaIpcPublisher * pub,
    const CudaIpcPublisherStats * last, GPtrArray * clients);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (CudaIpcPublisher, cudaipc_publisher_free);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (CudaIpcPublisherConfig,
    cudaipc_publisher_config_clear);

G_END_DECLS
