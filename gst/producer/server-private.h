/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Internal to the server (server.h has the contract). Six files share
 * this state, each with one job, calling downwards only:
 *
 *   server.c           life cycle, caps, events, what any thread calls,
 *                      the counters
 *   server-in-place.c  slots lent to upstream to write frames into
 *   server-publish.c   the publication path: a slot, written or lent,
 *                      to every ready client with its FRAME; abort()
 *   server-ring.c      the ring and its fences, waiting for a slot or a
 *                      client, dropping a stuck client meanwhile
 *   server-io.c        the I/O thread: accept, poll, handshake deadlines,
 *                      reaping, telling the callbacks
 *   server-client.c    one consumer as the server sees it: its state,
 *                      every message to it (HELLO, the ring, caps, events,
 *                      BYE) and from it (HELLO, RELEASE, BYE), dropping it
 *
 * server.c calls server-ring.c (the first fence page, the ring for new
 * caps) and server-io.c (the thread); server-in-place.c calls
 * server-ring.c (a slot) and server.c (references); server-publish.c,
 * server-ring.c and server-io.c call server-client.c, which calls none of
 * the others.
 */
#pragma once

#include "producer/server.h"
#include "wire/connection.h"
#include "wire/wake.h"
#include "ring/fence.h"
#include "ring/ring.h"
#include "ring/release-page.h"

G_BEGIN_DECLS

#include "common/debug.h"

/* A frame a client held of a ring when the ring was replaced. */
typedef struct
{
  guint32 generation;
  guint32 slot;
  guint64 seq;
} StaleFrame;

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
  GArray *stale;                /* StaleFrame: frames of replaced rings
                                 * it still held when they were replaced,
                                 * the frames of an old generation it may
                                 * still release (NULL: none yet) */
  gint64 hello_deadline;        /* monotonic time its HELLO is due by */
  gint64 last_release;          /* monotonic: its last RELEASE, or when it
                                 * joined */
  guint32 caps;                 /* HELLO capabilities in effect: its and ours */
  gboolean nonblocking;         /* its socket is: it may be read when dead */
  gboolean ready;               /* handshake done: gets frames and events */
  gboolean dead;                /* dropped: the I/O thread frees it */
  gchar *reason;                /* why it was dropped */
  gchar *warning;               /* a warning to give when it is freed */
  /* CUDAIPC_CAP_RELEASE_PAGE: made with its first RING, freed with it */
  CudaIpcReleasePage *page;
  guint64 page_released;        /* frames it gave back through the page */
  guint64 nudges;               /* RELEASE messages that only woke us: one
                                 * per frame given back through the page at
                                 * most */
} Client;

/* What the I/O thread tells the callbacks once the lock is released. */
typedef enum
{
  NOTICE_JOINED,
  NOTICE_LEFT,
  NOTICE_WARNING,
} NoticeType;

typedef struct
{
  NoticeType type;
  gchar *name;                  /* JOINED, LEFT */
  gint pid;
  gchar *text;                  /* LEFT: the reason; WARNING: user text */
  gchar *debug;                 /* WARNING */
} Notice;

struct _CudaIpcServer
{
  gint refcount;                /* atomic: the owner's, and each lent slot's */
  /* set in new(), constant until free() */
  CudaIpcDevice *dev;
  gchar *socket_name;
  gchar *name;
  guint n_slots;
  gint64 handshake_timeout;     /* microseconds */
  guint max_pending;            /* connections in their handshake: in all */
  guint max_pending_per_user;   /* and of one user */
  CudaIpcServerSyncFunc before_replace;
  gpointer before_replace_data;
  GArray *peer_uids;            /* guint: also allowed to connect */
  GArray *peer_gids;            /* guint: primary groups allowed */
  CudaIpcServerCallbacks callbacks;
  gpointer user_data;
  int listen_fd;                /* until stop() */
  CudaIpcSocketFile socket_file;        /* the file listen_fd is bound to */
  int wake_fd;
  GThread *thread;              /* until stop() */

  /* the lock: everything below */
  GMutex lock;
  GCond cond;                   /* slots freed, clients joined, flushing */
  GList *clients;               /* Client*, only the I/O thread frees them */
  GList *wakes;                 /* CudaIpcWake*, one a user whose clients
                                 * read through a channel (server-client.c) */
  guint next_client_id;
  gint64 client_timeout;        /* microseconds, 0: never */
  gint64 published_at[CUDAIPC_MAX_SLOTS];       /* monotonic, per slot */
  guint64 published_seq[CUDAIPC_MAX_SLOTS];     /* the frame in each slot */
  gboolean release_pages;       /* offer CUDAIPC_CAP_RELEASE_PAGE */
  gboolean pages_waiting;       /* the release pages' waiting flags are set */
  CudaIpcRing *ring;
  /* cuda backend: one per slot index, made with the first ring and kept
   * until stop() (consumers' opened handles must not outlive them); NULL
   * where one could not be made */
  CudaIpcOrdering ordering;
  CudaIpcFencePage *fence_page; /* AUTO (cuda backend) and FENCE */
  CudaIpcFence *fences[CUDAIPC_MAX_SLOTS];      /* EVENTS */
  gboolean fences_made;
  guint32 generation;
  gboolean retire_ring;         /* a consumer was dropped holding slots of
                                 * the ring: the next acquire() replaces it */
  guint64 rings_retired;
  gboolean live;                /* RING's LIVE bit */
  /* frames the in-place pool sent upstream to plain memory (no ring for
   * them), which render() will copy into a slot: while any is on its way
   * the pool lends a slot only where more are free than they need, else
   * upstream could hold every slot the consumers do not, queued behind
   * them, and their copies wait for ever */
  guint plain_lent;
  gboolean live_changed;        /* since the ring was built */
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
  guint8 *tx_buf;               /* publish(): a FRAME built once for all,
                                 * CUDAIPC_MAX_MESSAGE bytes */
  CudaIpcLease local;           /* slots published in place whose memory
                                 * the producer's pipeline still has */
  /* refusals at accept, warned of at most once a second */
  guint refused_unwarned;
  gint64 refused_warned_at;
  GQueue pinned;                /* server-pinned.c: retired rings charged
                                 * to the consumers dropped holding them */
};

static inline gboolean
client_is_ready (const Client * c)
{
  return c->ready && !c->dead;
}

/* Clients past their handshake; the lock is held. */
static inline guint
cudaipc_server_count_ready_locked (CudaIpcServer * s)
{
  guint n = 0;

  for (GList * l = s->clients; l; l = l->next) {
    if (client_is_ready (l->data))
      n++;
  }
  return n;
}

/* A slot lent for writing in place (server-in-place.c), published by
 * server-publish.c. */
struct _CudaIpcSlotTicket
{
  CudaIpcServer *server;        /* a reference */
  CudaIpcRing *ring;            /* a reference */
  guint slot;
  gboolean published;           /* under the server's lock */
};

/* The HELLO capabilities this producer offers: its fence page where it
 * has one, legacy interprocess events where its ordering is EVENTS, and
 * peer access with the cuda backend. */
static inline guint32
cudaipc_server_caps (const CudaIpcServer * s)
{
  /* a consumer that asks has its messages through shared memory */
  guint32 caps = CUDAIPC_CAP_CHANNEL;

  if (s->fence_page)
    caps |= CUDAIPC_CAP_FENCE;
  if (s->release_pages)
    caps |= CUDAIPC_CAP_RELEASE_PAGE;
  if (cudaipc_device_get_backend (s->dev) == CUDAIPC_BACKEND_CUDA) {
    caps |= CUDAIPC_CAP_PEER;
    if (s->ordering == CUDAIPC_ORDERING_EVENTS)
      caps |= CUDAIPC_CAP_EVENTS;
  }
  return caps;
}

/* server-ring.c, from new(): the fence page of AUTO (cuda backend) and
 * FENCE ordering; where AUTO cannot make it, frames are synchronised on
 * the host. FALSE (FENCE only) with @error. */
gboolean cudaipc_server_make_fence_page (CudaIpcServer * s,
    GError ** error);
/* server-ring.c, with the lock, on the producer thread: builds a new
 * ring where there is none, its slots are smaller than @size, or it was
 * retired or the stream's liveness changed (before_replace first, where
 * it replaces one), and sends it to the ready clients with the caps.
 * TRUE where the ring in use is fit or the new one is; FALSE with @error,
 * the ring in use unchanged. set_caps() calls it so that the ring exists
 * before upstream asks the in-place pool for a buffer, acquire() so that
 * a frame fits. */
gboolean cudaipc_server_ensure_ring_locked (CudaIpcServer * s, guint64 size,
    GError ** error);
/* server-ring.c, with the lock: a free slot of the ring for a frame of @size,
 * WRITING, waiting until @deadline_us as acquire() does. With @in_place
 * it neither builds nor replaces a ring (NO_RING instead), does not see
 * wake(), and a TIMEOUT is not counted as a dropped frame. Once stopped:
 * FLUSHING, or NO_RING with @in_place. FLUSHING as well once @cancel (may
 * be NULL) is set, looked at after each wake-up. */
CudaIpcServerStatus cudaipc_server_take_slot_locked (CudaIpcServer * s,
    guint64 size, gint64 deadline_us, gboolean in_place, const gint * cancel,
    guint * slot, GError ** error);
/* server-publish.c, with the lock: publishes @slot (WRITING) with @frame to the
 * ready clients, and to @local too where set; returns to how many
 * clients. */
guint cudaipc_server_publish_locked (CudaIpcServer * s, guint slot,
    CudaIpcFrameMsg * frame, CudaIpcLease * local);

/* server-io.c: the I/O thread's body (started by new()). */
gpointer cudaipc_server_io_thread (gpointer server);

/* server-client.c. Every function but client_free() is called with the
 * lock held; client_free() only by the I/O thread, on a client it took
 * out of the set. */

/* Makes the I/O thread look at the client set again (any thread). */
void cudaipc_server_wake_io (CudaIpcServer * s);
/* A client for the connection @fd just accepted (taken), added to the set
 * with its credentials: sent our HELLO, or, for a user who may not
 * connect, pins too many retired rings (server-pinned.c) or has one
 * connection too many in its handshake, a BYE and dropped
 * at once (before anything is read from it). Notices go to @notices. */
Client *cudaipc_server_client_new_locked (CudaIpcServer * s, int fd,
    GPtrArray * notices);
/* Closes @c's connection, after reading what it still sent where that
 * cannot block, and frees it. */
void cudaipc_server_client_free (Client * c);
/* Drops the wakes no client's channel uses any more. */
void cudaipc_server_prune_wakes_locked (CudaIpcServer * s);
/* Marks @c dead (its slots free again, the I/O thread frees it), after a
 * BYE of @bye_reason and @bye_text where @bye_text is set; @reason and
 * @warning are taken. */
void cudaipc_server_client_drop_locked (CudaIpcServer * s, Client * c,
    guint bye_reason, const gchar * bye_text, gchar * reason,
    gchar * warning);
/* Sends @msg to @c; a failure drops @c and returns FALSE. */
gboolean cudaipc_server_client_send_locked (CudaIpcServer * s, Client * c,
    const CudaIpcMsg * msg);
/* Sends @len bytes cudaipc_msg_build() made of a message of @type (no
 * fds) to @c, with @c's header sequence; as send_locked() otherwise. */
gboolean cudaipc_server_client_send_built_locked (CudaIpcServer * s,
    Client * c, guint32 type, guint8 * buf, gsize len);
/* Sends @msg to every ready client; returns to how many it went. */
guint cudaipc_server_client_send_to_ready_locked (CudaIpcServer * s,
    const CudaIpcMsg * msg);
/* Frees @c's holds of the current ring that its release page says it gave
 * back; returns how many. */
guint cudaipc_server_client_collect_locked (CudaIpcServer * s, Client * c);
/* The same for every ready client. */
guint cudaipc_server_collect_releases_locked (CudaIpcServer * s);
/* Before the current ring is replaced: what each client holds of it
 * becomes frames it may release later as of an old generation. */
void cudaipc_server_keep_stale_locked (CudaIpcServer * s);
/* Sets (or clears) the waiting flag of every release page, so that a
 * consumer that gives a frame back through its page also wakes us. */
void cudaipc_server_set_pages_waiting_locked (CudaIpcServer * s,
    gboolean waiting);
/* The current caps to @c (nothing before the first caps). */
gboolean cudaipc_server_client_send_caps_locked (CudaIpcServer * s, Client * c);
/* RING, one SLOT per slot with its fds, then the current CAPS. */
gboolean cudaipc_server_client_send_ring_locked (CudaIpcServer * s, Client * c);
/* Reads what @c sent until it would block (at most a bounded number of
 * messages), handling each; notices for the callbacks go to @notices. */
void cudaipc_server_client_read_locked (CudaIpcServer * s, Client * c,
    GPtrArray * notices);
/* A notice about @c (@reason for LEFT) for the callbacks. */
void cudaipc_server_client_queue_notice (GPtrArray * notices, NoticeType type,
    Client * c, const gchar * reason);
void cudaipc_server_notice_free (gpointer notice);

/* server-pinned.c, with the lock held: rings pinned by dropped consumers.
 * pin() charges @c's user with the current ring, retired because @c was
 * dropped as stuck while holding slots of it. pinned_refusal() forgets
 * the charges let go of (their process exited, or their time is up where
 * it cannot be watched) and returns why @c is refused where its user
 * pins CUDAIPC_MAX_PINNED_RINGS (2) rings or more, else NULL. */
void cudaipc_server_pin_locked (CudaIpcServer * s, Client * c);
gchar *cudaipc_server_pinned_refusal_locked (CudaIpcServer * s, Client * c);
void cudaipc_server_pinned_clear (CudaIpcServer * s);

G_END_DECLS
