/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Internal to the client (client.h has the contract): its state, shared by
 *
 *   client.c           life cycle, waiting, receive() and the background
 *                      reader, disconnect()
 *   client-connect.c   connecting and the handshake
 *   client-messages.c  what each producer message means: the import and
 *                      caps tables, frames and their release path, events
 *   client-io.c        the transport: the session and its connection,
 *                      the cancellable waits, receiving a message, sending
 *                      RELEASE and BYE
 *
 * client.c calls into client-messages.c; client.c, client-connect.c and
 * client-messages.c call into client-io.c, which calls none of them.
 * client-messages.c does no I/O of its own.
 *
 * The right to read: the connection, the import and caps tables and the
 * receive state below are used by one thread at a time, the one holding
 * the right to read ("reading", under the reader lock): receive()'s caller,
 * or the background reader while receive() has not been called for
 * READER_DELAY. connect() runs while nobody reads (no connection);
 * disconnect() takes the right first.
 */
#pragma once

#include "consumer/client.h"
#include "wire/connection.h"
#include "ring/fence.h"
#include "ring/fence-page.h"
#include "ring/ring.h"
#include "ring/release-page.h"

G_BEGIN_DECLS

#include "common/debug.h"

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
  CudaIpcReleasePage *page;     /* this connection's, from its first RING */
  guint64 held_mask;            /* slots of @generation held by frames */
  guint held;                   /* frames of this connection not released */
  guint imports;                /* slots imported on this connection */
  guint64 received, dropped, released;
  guint64 discarded;            /* of dropped: frames the producer's drop
                                 * of this consumer came behind */
  guint64 dropped_told;         /* of dropped: those a frame handed out
                                 * since carried in its dropped_before */
  guint64 driver_calls;         /* made for frames: fence waits, context */
  guint64 copy_waits, copy_wait_ns;     /* client-types.h */
  guint64 events_refused;       /* EVENTs that were not handed out */
  gchar *event_refusal;         /* why the first one since the last
                                 * take_event_refusal() was not */
} Session;

/* What the background reader read and receive() has not handed out yet. */
typedef struct
{
  CudaIpcClientStatus status;
  CudaIpcClientItem item;
  GError *error;
  guint bytes;                  /* item.bytes when it was queued */
} Pending;

struct _CudaIpcClient
{
  int wake_fd;                  /* eventfd: cancel() wakes every wait */
  gint cancelled;               /* atomic */
  gint max_held;                /* atomic */
  gint leaky;                   /* atomic: CudaIpcLeaky */
  gint producer_live;           /* atomic: the current RING's LIVE bit */
  gint peer_access;             /* atomic: another GPU may be read */
  gint announce;                /* atomic: CudaIpcAnnounce */
  gint spin_us;                 /* atomic: with SHARED_MEMORY */
  gint peer;                    /* atomic: this connection does */
  Session *session;

  /* the receiving thread */
  gboolean recv_slept;          /* the last wait for a message slept: the
                                 * next one polls without a read first */
  gchar *path;                  /* of the current connection */
  CudaIpcConn *conn;            /* the session's, freed under its lock */
  CudaIpcDevice *dev;
  /* the CUDA device made before connecting (its context takes long under
   * contention, and the producer's handshake deadline runs meanwhile),
   * for device @ready_id; NULL where there is no CUDA, or after a producer
   * with the host backend (then none is made again) */
  CudaIpcDevice *ready_dev;
  gint ready_id;
  gboolean host_producer;
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
  gboolean fence;               /* this connection reads the fence page */
  gboolean release_page;        /* and was offered a release page */
  gboolean channel;             /* both asked for the announce channel */
  /* with the imports, and with the queued frames they order */
  CudaIpcCopyOrder *fences[CUDAIPC_MAX_SLOTS];  /* the slots' events */
  CudaIpcCopyOrder *fence_page; /* the current RING's */
  GHashTable *caps;             /* caps id -> CapsEntry */
  gboolean have_caps_in_use;
  guint32 caps_in_use;          /* caps id of the last frame handed out */
  gchar *producer_name;         /* from its HELLO */
  guint producer_pid;
  guint64 slot_size;            /* of the current ring */

  /* the background reader: the reader lock guards everything here */
  GMutex reader_lock;
  GCond reader_cond;            /* the right to read given back, an item
                                 * queued, cancel(), quit */
  gboolean reading;             /* a thread holds the right to read */
  guint waiting;                /* threads waiting for the right: the
                                 * background reader leaves it to them */
  gboolean in_receive;          /* receive() is waiting for an item */
  gint64 left_at;               /* monotonic: receive() last returned */
  gboolean reader_asleep;       /* the background reader waits for a change
                                 * of the above (not for a time): only then
                                 * does a change need to wake it */
  gboolean reader_quit;
  GThread *reader;              /* started by the first receive() */
  int reader_wake_fd;           /* eventfd: give back the right to read */
  GQueue pending;               /* Pending*, oldest first */
  gsize pending_bytes;          /* their bytes */
};

/* client-messages.c: the caps table */
GHashTable *cudaipc_client_caps_table_new (void);

/* client-messages.c: with the right to read. */
/* Reads one message and acts on it. @deadline: -1, the connection is
 * readable now; 0, wait as long as it takes (cancellable); else a
 * monotonic time, after which OK with no item. OK with an item of type
 * NONE: nothing to hand out. As receive() otherwise. */
CudaIpcClientStatus cudaipc_client_read_one (CudaIpcClient * client,
    gint64 deadline, CudaIpcClientItem * item, GError ** error);
/* Closes the connection (BYE @reason, @text unless @text is NULL) and
 * forgets the ring, the caps and the device. */
void cudaipc_client_close (CudaIpcClient * client, CudaIpcByeReason reason,
    const gchar * text);
/* Gives @item's frame back at once (any thread), counted as dropped. */
void cudaipc_client_drop_frame (CudaIpcClient * client,
    CudaIpcClientItem * item);
/* Frames of this connection not released: handed out and pending. */
guint cudaipc_client_held (CudaIpcClient * client);
/* The producer broke the protocol: BYE(PROTOCOL), closed, @error set
 * (CUDAIPC_ERROR_PROTOCOL) with the text; ERROR. */
/* *INDENT-OFF* */
CudaIpcClientStatus cudaipc_client_broken_producer (CudaIpcClient * client,
    GError ** error, const gchar * format, ...) G_GNUC_PRINTF (3, 4);
/* *INDENT-ON* */
/* An interprocess event could not be opened or waited on: BYE(PROTOCOL),
 * closed, and connected again without events; CLOSED, @item says why. */
CudaIpcClientStatus cudaipc_client_events_unavailable (CudaIpcClient *
    client, CudaIpcClientItem * item, const gchar * why);
/* The copy into @slot never completed: the connection is given up (the
 * caller reconnects or fails, as for a producer that left); CLOSED. */
CudaIpcClientStatus cudaipc_client_producer_stalled (CudaIpcClient * client,
    CudaIpcClientItem * item, guint slot, const gchar * why);

/* client-copy.c: a frame's copy order (takes @page or @event; @dev, a
 * reference taken, with @event) */
CudaIpcCopyOrder *cudaipc_copy_order_new (CudaIpcFencePage * page,
    CudaIpcFence * event, CudaIpcDevice * dev);
CudaIpcCopyOrder *cudaipc_copy_order_ref (CudaIpcCopyOrder * order);
/* Any thread: the last frame to let go of it may be dropped anywhere. */
void cudaipc_copy_order_unref (CudaIpcCopyOrder * order);
/* For a frame about to be handed out: waits until the producer's copy
 * into its slot has landed (its fence word, or its event), until
 * @deadline (monotonic µs; 0: none) or cancel(), and never past 2 s after
 * its FRAME came. OK: it has (the frame's ordering is dropped); TIMEOUT or
 * CANCELLED: not yet, @item untouched; CLOSED or ERROR, as receive(): the
 * frame was given back and the connection closed (a copy that never
 * landed, a word the producer got wrong, an event that failed). With the
 * right to read; no lock held. */
CudaIpcClientStatus cudaipc_client_wait_copy (CudaIpcClient * client,
    CudaIpcClientItem * item, gint64 deadline, GError ** error);

/* client-io.c: the session, shared by the client and its frames */
Session *cudaipc_session_new (void);
Session *cudaipc_session_ref (Session * s);
void cudaipc_session_unref (Session * s);
/* With the session lock and a connection: RELEASE, counted on success. */
gint cudaipc_session_send_release_locked (Session * s, guint32 generation,
    guint32 slot, guint64 seq);
/* With the session lock: closes the connection, if any, after BYE
 * (@reason, @text) unless @text is NULL; what the producer sent meanwhile
 * is read and dropped first, a bounded number of messages, so that it
 * reads the BYE. */
void cudaipc_session_hang_up_locked (Session * s, CudaIpcByeReason reason,
    const gchar * text);

/* client-io.c: waiting and the wire */
/* Waits until @fd (-1: none, a sleep that cancel() ends) is readable,
 * @deadline (monotonic µs, to the microsecond; 0: none) passes or cancel()
 * is called. Returns 1 (readable), 0 (time-out), -ECANCELED (cancelled)
 * or a negative errno. */
gint cudaipc_client_wait_readable (CudaIpcClient * client, int fd,
    gint64 deadline);
/* Receives one message, waiting as wait_readable() does (@deadline -1:
 * the connection is readable now, no wait); -ETIMEDOUT when @deadline
 * passes. @msg is always safe to cudaipc_msg_clear(). */
gint cudaipc_client_recv_msg (CudaIpcClient * client, CudaIpcConn * conn,
    CudaIpcMsg * msg, gint64 deadline);
gint cudaipc_client_send_bye (CudaIpcConn * conn, CudaIpcByeReason reason,
    const gchar * text);

G_END_DECLS
