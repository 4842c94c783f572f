/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Internal to the server (server.h has the contract): its state, shared by
 * server.c (life cycle, ring, producer thread, stats) and server-io.c (the
 * I/O thread: accept, handshake, client messages, drops, notices).
 */
#pragma once

#include "server.h"
#include "connection.h"
#include "fence.h"
#include "ring.h"

G_BEGIN_DECLS

GST_DEBUG_CATEGORY_EXTERN (cudaipc_server_debug);

typedef struct
{
  guint id;                     /* for logs */
  CudaIpcConn *conn;
  gchar *name;                  /* from its HELLO; "pid N" until then */
  gint pid;                     /* SO_PEERCRED */
  guint uid;
  guint gid;
  CudaIpcLease lease;
  guint64 sent;                 /* FRAMEs sent */
  guint64 released;             /* RELEASEs accepted (stale ones too) */
  guint stale_allowed;          /* frames of replaced rings it still held
                                 * when they were replaced: the RELEASEs of
                                 * an old generation it may still send */
  gint64 hello_deadline;        /* monotonic time its HELLO is due by */
  guint32 caps;                 /* HELLO capabilities in effect: its and ours */
  gboolean ready;               /* handshake done: gets frames and events */
  gboolean dead;                /* dropped: the I/O thread frees it */
  gchar *reason;                /* why it was dropped */
  gchar *warning;               /* a warning to give when it is freed */
} Client;

struct _CudaIpcServer
{
  /* set in new(), constant until free() */
  CudaIpcDevice *dev;
  gchar *socket_name;
  gchar *name;
  guint n_slots;
  CudaIpcServerCallbacks callbacks;
  gpointer user_data;
  int listen_fd;                /* until stop() */
  int wake_fd;
  GThread *thread;              /* until stop() */

  /* the lock: everything below */
  GMutex lock;
  GCond cond;                   /* slots freed, clients joined, flushing */
  GList *clients;               /* Client*, only the I/O thread frees them */
  guint next_client_id;
  gint64 handshake_timeout;     /* microseconds */
  gint64 client_timeout;        /* microseconds, 0: never */
  gint64 published_at[CUDAIPC_MAX_SLOTS];       /* monotonic, per slot */
  GArray *peer_uids;            /* guint: also allowed to connect */
  GArray *peer_gids;            /* guint: primary groups allowed */
  CudaIpcRing *ring;
  /* cuda backend: one per slot index, made with the first ring and kept
   * until stop() (consumers' opened handles must not outlive them); NULL
   * where one could not be made */
  CudaIpcFence *fences[CUDAIPC_MAX_SLOTS];
  gboolean fences_made;
  guint32 generation;
  gchar *caps_str;
  guint32 caps_id;
  guint64 min_slot_size;        /* a frame of the current caps */
  gchar *segment_str;           /* the last SEGMENT, for late joiners */
  gboolean eos;                 /* EOS forwarded, no flush since */
  guint64 seq;
  guint64 frames_published;
  guint64 frames_dropped;
  gboolean flushing;
  gboolean woken;               /* wake() not yet seen by a wait */
  gboolean quit;                /* the I/O thread must exit */
  gboolean stopped;
  GPtrArray *holders;           /* scratch for publish(): CudaIpcLease* */
};

static inline gboolean
client_is_ready (const Client * c)
{
  return c->ready && !c->dead;
}

/* The HELLO capabilities this producer offers: interprocess events with
 * the cuda backend. */
static inline guint32
cudaipc_server_caps (const CudaIpcServer * s)
{
  return cudaipc_device_get_backend (s->dev) == CUDAIPC_BACKEND_CUDA ?
      CUDAIPC_CAP_EVENTS | CUDAIPC_CAP_PEER : 0;
}

/* server-io.c */
gpointer cudaipc_server_io_thread (gpointer server);
/* Makes the I/O thread look at the client set again. */
void cudaipc_server_wake_io (CudaIpcServer * s);
/* Marks @c dead (its slots free again), with a BYE of @bye_reason and
 * @bye_text when @bye_text is set; @reason and @warning are taken. */
void cudaipc_server_drop_client_locked (CudaIpcServer * s, Client * c,
    guint bye_reason, const gchar * bye_text, gchar * reason,
    gchar * warning);
/* Sends @msg to @c; a failure drops @c. */
gboolean cudaipc_server_send_locked (CudaIpcServer * s, Client * c,
    const CudaIpcMsg * msg);

/* server.c */
gboolean cudaipc_server_peer_allowed_locked (CudaIpcServer * s, guint uid,
    guint gid);
/* Sends a client that just finished its handshake the ring, the caps, the
 * last segment and EOS; FALSE if it was dropped meanwhile. */
gboolean cudaipc_server_welcome_locked (CudaIpcServer * s, Client * c);

G_END_DECLS
