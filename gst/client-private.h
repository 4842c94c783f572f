/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Internal to the client (client.h has the contract): its state, shared by
 * client.c (life cycle, waiting, the release path, the receive loop) and
 * client-connect.c (connecting and the handshake).
 */
#pragma once

#include "client.h"
#include "connection.h"
#include "fence.h"
#include "ring.h"

G_BEGIN_DECLS

GST_DEBUG_CATEGORY_EXTERN (cudaipc_client_debug);

/* What the client and its frames' release callbacks share. The lock
 * serialises sends on the connection (the receiving thread and releases
 * from any thread) and guards everything here. */
typedef struct
{
  gint refcount;
  GMutex lock;
  CudaIpcConn *conn;            /* NULL while not connected */
  guint64 serial;               /* grows with every connection */
  guint32 generation;           /* the current ring's */
  guint64 held_mask;            /* slots of @generation held by frames */
  guint held;                   /* frames of this connection not released */
  guint imports;                /* slots imported on this connection */
  guint64 received, dropped, released;
  guint64 driver_calls;         /* made for frames: fence waits, context */
} Session;

struct _CudaIpcClient
{
  int wake_fd;                  /* eventfd: cancel() wakes every wait */
  gint cancelled;               /* atomic */
  gint max_held;                /* atomic */
  gint peer_access;             /* atomic: another GPU may be read */
  gint peer;                    /* atomic: this connection does */
  Session *session;

  /* the receiving thread */
  gchar *path;                  /* of the current connection */
  CudaIpcConn *conn;            /* the session's, freed under its lock */
  CudaIpcDevice *dev;
  CudaIpcBackend backend;
  gboolean discont;
  gboolean have_ring;
  guint32 generation;
  guint n_slots;
  CudaIpcSharedBlock *slots[CUDAIPC_MAX_SLOTS];
  /* GPU ordering (cuda backend) */
  gboolean events_failed;       /* an event failed on this client object:
                                 * later HELLOs leave CUDAIPC_CAP_EVENTS out */
  gboolean events;              /* this connection waits on events */
  CudaIpcFence *fences[CUDAIPC_MAX_SLOTS];      /* with the imports */
  GHashTable *caps;             /* caps id -> CapsEntry */
  gboolean have_caps_in_use;
  guint32 caps_in_use;          /* caps id of the last frame handed out */
};

/* client.c */
/* Waits until @fd (-1: none) is readable, @deadline (monotonic µs, 0: none)
 * passes or cancel() is called. Returns 1 (readable), 0 (time-out),
 * -ECANCELED (cancelled) or a negative errno. */
gint cudaipc_client_wait_readable (CudaIpcClient * client, int fd,
    gint64 deadline);
/* Receives one message, waiting as wait_readable() does; -ETIMEDOUT when
 * @deadline passes. @msg is always safe to cudaipc_msg_clear(). */
gint cudaipc_client_recv_msg (CudaIpcClient * client, CudaIpcConn * conn,
    CudaIpcMsg * msg, gint64 deadline);
gint cudaipc_client_send_bye (CudaIpcConn * conn, CudaIpcByeReason reason,
    const gchar * text);

G_END_DECLS
