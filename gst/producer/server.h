/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The producer's server: the listening socket, the clients connected to it,
 * and the ring they share. cuipcsink is a thin element around it.
 *
 * What it does:
 *  - listens on a socket name (connection.h: a path or "@name"; a stale
 *    socket file is replaced, a live producer is CUDAIPC_ERROR_BUSY);
 *  - runs one I/O thread that accepts clients, sends them HELLO, checks
 *    theirs (version, backend, device UUID) and refuses a mismatch with
 *    BYE, drops a client that has not answered when the handshake timeout
 *    passes, reads RELEASEs, and drops a client that breaks the protocol or
 *    goes away, giving back every slot it held at once;
 *  - keeps the ring: built when caps are set, before the first frame, so
 *    that the first buffer upstream takes from the in-place pool is a
 *    slot (else by the first acquire); rebuilt with generation + 1 when
 *    new caps or a frame no longer fit, and when a consumer was dropped
 *    as stuck or too slow while it held slots (the old ring is retired,
 *    never written again: a frame that consumer still pushes, or holds
 *    downstream, stays as it was; each importer's mapping keeps the old
 *    memory until its last frame goes);
 *    RING, one SLOT per slot (its fds) and CAPS
 *    go to every ready client when a ring is built, and to each client when
 *    it joins, followed by the last SEGMENT and, after EOS, EOS;
 *  - publishes frames to every ready client and forwards serialized events
 *    in the same order;
 *  - waits for a free slot or for a client, until a deadline, flushing or a
 *    wake-up; and counts (cudaipc_server_get_stats).
 *
 * Threads:
 *  - The producer thread (a sink's streaming thread): set_caps,
 *    wait_for_client, acquire, publish, publish_fenced, get_fence,
 *    get_next_seq, abort, send_event and clear_eos, one call at a time.
 *    Only this thread replaces the ring, so the block acquire() hands out
 *    stays valid, and is written without any lock, until publish() or
 *    abort() of that slot.
 *  - Any thread, at any time between new() and free(): set_flushing, wake,
 *    set_client_timeout, peer_allowed, get_n_clients, get_stats,
 *    get_generation.
 *  - stop() and free(): once, with no producer-thread call in flight.
 *  - The I/O thread is internal: started by new(), ended by stop().
 *
 * The lock: one mutex guards the client set, the ring (slot states and
 * leases), the caps, the last segment, the EOS flag, the counters and the
 * flushing and wake-up flags. Messages to clients are sent only while it is
 * held, so every client sees frames and events in one order. Only the I/O
 * thread frees a client; another thread that cannot send to one marks it
 * dead (its slots are free from then on) and wakes the I/O thread.
 *
 * Callbacks: called from the I/O thread only, never with the lock held,
 * one at a time and in order; a callback may call the any-thread functions
 * but not stop() or free(). The last ones (client_left for every client
 * still there, with the reason "the producer stopped") come from the I/O
 * thread while stop() waits for it to end.
 *
 * Ownership: the server owns the listening socket (closed, and its file
 * removed, by stop()), its wake-up eventfd, each client's connection and
 * the ring, whose blocks own the exported fds: they cross to each client
 * once per slot, duplicated by the kernel, and stay ours; the fence page,
 * whose fd goes with each RING to the clients that read it, and, with
 * EVENTS ordering, the slots' events, whose handles go to the clients that
 * asked for them. It holds a
 * reference on the device. Strings passed in are copied. A slot belongs to
 * the producer thread from acquire() to publish() or abort(), then to the
 * clients it was published to until each has released it or left.
 *
 * Configuration: everything new() needs is in one CudaIpcServerConfig,
 * read before the I/O thread starts; only the stuck-client time-out
 * (set_client_timeout) may change while the server runs.
 *
 * Errors: new(), set_caps() and acquire() fail with a GError in
 * CUDAIPC_ERROR (new(): _BUSY, _INVALID, _LIMIT, _IO; set_caps(): _LIMIT,
 * or what acquire() gives; acquire(): what cudaipc_ring_new() or
 * before_replace gives).
 * Nothing a client does is an error of the server: that client is dropped
 * (with BYE and its reason where its socket still works) and the warning
 * callback says why.
 */
#pragma once

#include <gst/gst.h>
#include "ring/block.h"
#include "device/device.h"
#include "ring/fence.h"
#include "ring/fence-page.h"
#include "wire/protocol.h"
#include "ring/ring.h"

G_BEGIN_DECLS

typedef struct _CudaIpcServer CudaIpcServer;

/* How long a new connection may take to answer our HELLO. A consumer
 * opens its CUDA device first, and cuInit can take seconds. */
#define CUDAIPC_SERVER_HANDSHAKE_TIMEOUT_MS 10000
/* Connections that have not finished their handshake, at most: in all,
 * and of one user. A connection beyond them is closed at once. */
#define CUDAIPC_SERVER_MAX_PENDING 64
#define CUDAIPC_SERVER_MAX_PENDING_PER_USER 16

typedef struct
{
  /* A client finished its handshake. */
  void (*client_joined) (const gchar * name, gint pid, gpointer user_data);
  /* A client that had joined went away; @reason says why. */
  void (*client_left) (const gchar * name, gint pid, const gchar * reason,
      gpointer user_data);
  /* A peer was refused or dropped for a fault of its own, or could not be
   * sent to: @text is for users, @debug for logs. */
  void (*warning) (const gchar * text, const gchar * debug, gpointer user_data);
} CudaIpcServerCallbacks;

typedef enum
{
  CUDAIPC_SERVER_OK,            /* got what it waited for */
  CUDAIPC_SERVER_TIMEOUT,       /* the deadline passed first */
  CUDAIPC_SERVER_FLUSHING,      /* set_flushing (TRUE) */
  CUDAIPC_SERVER_WOKEN,         /* cudaipc_server_wake(): call again */
  CUDAIPC_SERVER_ERROR,         /* see the GError */
  CUDAIPC_SERVER_NO_RING,       /* acquire_in_place(): no ring for the frame
                                 * yet, see there */
} CudaIpcServerStatus;

/* How consumers learn that a frame's copy, queued on the producer's GPU
 * stream and maybe still in flight when its FRAME goes out, is done
 * (docs/design.md, GPU ordering). */
typedef enum
{
  /* the fence page where the producer's device can write it (cuda
   * backend), else as HOST; the host backend needs none */
  CUDAIPC_ORDERING_AUTO = 0,
  /* the fence page, on either backend (the host backend writes it on the
   * CPU); new() fails where it cannot be made */
  CUDAIPC_ORDERING_FENCE,
  /* legacy interprocess CUDA events, one per slot (cuda backend): only
   * for consumers in the producer's IPC and PID namespaces */
  CUDAIPC_ORDERING_EVENTS,
  /* every frame's copy completes on the host before its FRAME goes out */
  CUDAIPC_ORDERING_HOST,
} CudaIpcOrdering;

/* A producer's function the server calls with its lock held, on the
 * producer thread: it must not call into the server. @why says what it is
 * for; FALSE fails what the server was doing, with @error. */
typedef gboolean (*CudaIpcServerSyncFunc) (const gchar * why,
    gpointer user_data, GError ** error);

/* What new() needs. cudaipc_server_config_init() fills in the defaults;
 * the strings and arrays are copied by new(). */
typedef struct
{
  const gchar *socket_name;     /* a path or "@name" (connection.h) */
  guint mode;                   /* the socket file's mode (not for "@name");
                                 * default 0660 */
  guint n_slots;                /* slots of the ring, 1..CUDAIPC_MAX_SLOTS;
                                 * default 4 */
  const gchar *name;            /* goes to clients in HELLO, cut to
                                 * CUDAIPC_MAX_NAME - 1 bytes */
  /* Who may connect, from the SO_PEERCRED credentials checked when a
   * client connects, before anything is read from it: the producer's own
   * user, root, the users in @uids and the peers whose primary group is in
   * @gids (NULL: the producer's own group). Others get BYE PERMISSION and
   * are closed at once, with a warning (at most one a second). */
  const guint *uids;
  guint n_uids;
  const guint *gids;
  guint n_gids;
  /* How long a new connection may take to send its HELLO; default
   * CUDAIPC_SERVER_HANDSHAKE_TIMEOUT_MS. */
  guint handshake_timeout_ms;
  /* See cudaipc_server_set_client_timeout(); default 500. */
  guint client_timeout_ms;
  /* Connections allowed to be in their handshake at once, in all and per
   * user (defaults CUDAIPC_SERVER_MAX_PENDING, _PER_USER); a connection
   * beyond them gets BYE LOCAL and is closed at once. */
  guint max_pending;
  guint max_pending_per_user;
  /* Called before a ring is replaced, by set_caps() or acquire() (caps or
   * a frame that do not fit, a change of liveness, or a ring retired
   * because a consumer was dropped while it held slots): nothing may
   * write the old ring's slots once it returns, since the server lets go
   * of them (a copier waits for its copies in flight). FALSE fails that
   * set_caps() or acquire(). NULL: nothing to wait for. */
  CudaIpcServerSyncFunc before_replace;
  gpointer before_replace_data;
  /* default AUTO */
  CudaIpcOrdering ordering;
} CudaIpcServerConfig;

void cudaipc_server_config_init (CudaIpcServerConfig * config);

/* Listens on @config's socket and starts the I/O thread. @callbacks is
 * copied; any member may be NULL. */
CudaIpcServer *cudaipc_server_new (CudaIpcDevice * dev,
    const CudaIpcServerConfig * config,
    const CudaIpcServerCallbacks * callbacks, gpointer user_data,
    GError ** error);
/* Stops (if not yet) and drops the owner's reference. Slots lent for
 * writing in place hold references of their own: the rest is freed when
 * the last of them goes. */
void cudaipc_server_free (CudaIpcServer * server);
CudaIpcServer *cudaipc_server_ref (CudaIpcServer * server);
void cudaipc_server_unref (CudaIpcServer * server);
/* Says BYE (NORMAL) to every client, ends the I/O thread, closes and
 * removes the socket file (only while it is still the one it bound) and
 * frees the ring. Afterwards only the get_*
 * functions (with the counters as they were) and free() may be called. */
void cudaipc_server_stop (CudaIpcServer * server);

/* A stuck consumer must not hold the others back: when acquire() finds no
 * free slot, every client that holds two frames or more and kept an older
 * one @timeout_ms after a newer one came is dropped with BYE TOO_SLOW and a
 * warning, which gives its slots back (holding only its newest frame is
 * fine); a waiting acquire() looks again every 50 ms. 0: never. Applies at
 * once, to every client. */
void cudaipc_server_set_client_timeout (CudaIpcServer * server,
    guint timeout_ms);

/* Whether a peer of @uid and @gid may connect (the config's policy). */
gboolean cudaipc_server_peer_allowed (CudaIpcServer * server, guint uid,
    guint gid);

/* The caps of the frames that follow (gst_caps_to_string() form; shorter
 * than CUDAIPC_MAX_STRING, else CUDAIPC_ERROR_LIMIT and nothing changes).
 * A ring built from now on has slots of at least @frame_size bytes (0: no
 * minimum). With @frame_size, the ring for them is made now, where the
 * one in use does not fit them (or was retired, or the liveness changed):
 * before_replace first, as acquire() does, then RING, the SLOTs and these
 * caps to the ready clients; where the ring in use fits, the caps go to
 * them at once. The first ring of EVENTS ordering on the cuda backend
 * waits for the first acquire() (its events are of the context the first
 * frame may choose, copier.h). Clients without a ring get the caps with
 * it. FALSE where the ring cannot be made: "Cannot allocate a ring ..."
 * with acquire()'s error (a slot size over the limit is _LIMIT); the caps
 * are kept, nothing was sent, and the next acquire() tries again. */
gboolean cudaipc_server_set_caps (CudaIpcServer * server, const gchar * caps,
    guint64 frame_size, GError ** error);

/* Whether the stream is live (RING's LIVE bit, protocol.md): consumers'
 * default policy follows it. A ring built from now on carries it; where a
 * ring is in use and the value changes, the next set_caps() or acquire()
 * builds a new one (set it before set_caps()). FALSE until set. */
void cudaipc_server_set_live (CudaIpcServer * server, gboolean live);

/* Deadlines are g_get_monotonic_time() values: -1 waits as long as it
 * takes, a time already past does not wait. A wait also ends when
 * flushing is set (FLUSHING: it does until set_flushing (FALSE)), or on
 * cudaipc_server_wake() (WOKEN, once). */

/* Waits until at least one client is ready. */
CudaIpcServerStatus cudaipc_server_wait_for_client (CudaIpcServer * server,
    gint64 deadline_us);
/* Builds the ring if there is none or @size does not fit its slots, then
 * takes the free slot published longest ago: @slot and its @block (valid
 * until publish() or abort()). With every slot held it waits; TIMEOUT
 * counts the frame as dropped. ERROR: no ring could be built. */
CudaIpcServerStatus cudaipc_server_acquire (CudaIpcServer * server,
    guint64 size, gint64 deadline_us, guint * slot, CudaIpcBlock ** block,
    GError ** error);
/* Publishes @slot to every ready client (each then holds it until its
 * RELEASE) and sends them @frame. The caller fills in everything but
 * generation, slot, seq, caps_id and publish_time, which are written into
 * @frame here. Returns the number of clients it went to; with none the
 * slot is free again at once. */
guint cudaipc_server_publish (CudaIpcServer * server, guint slot,
    CudaIpcFrameMsg * frame);

/* GPU ordering (docs/design.md, GPU ordering). With AUTO (cuda backend)
 * or FENCE ordering, new() makes the fence page (fence-page.h) of the
 * first ring, and each later ring gets one of its own (a consumer behind
 * on its frames may still read the old ring's words); RING carries its
 * fd to the clients whose HELLO asked for
 * CUDAIPC_CAP_FENCE. After queueing a frame's copy, the producer signals
 * the slot's word with the number the frame's FRAME will carry
 * (get_next_seq()). With EVENTS ordering the server keeps one legacy
 * event (fence.h) per slot index, made with the first ring and kept
 * until stop(); SLOT carries its handle to the clients whose HELLO asked
 * for CUDAIPC_CAP_EVENTS. */

/* The current ring's fence page, or NULL (none made: HOST or EVENTS
 * ordering, the host backend with AUTO, or a device that cannot write it,
 * logged). Producer thread, from acquire() until stop(). */
CudaIpcFencePage *cudaipc_server_get_fence_page (CudaIpcServer * server);
/* The number the next publish() gives its frame (FRAME's seq). Numbers
 * only grow, and an aborted frame's is never given again: a fence word
 * signalled for it can never be taken for a later frame's. Producer
 * thread. */
guint64 cudaipc_server_get_next_seq (CudaIpcServer * server);

/* EVENTS ordering: @slot's event, or NULL (another ordering, or it could
 * not be made: logged once, with the reason). Producer thread, from
 * acquire() until stop(). */
CudaIpcFence *cudaipc_server_get_fence (CudaIpcServer * server, guint slot);

/* publish_fenced()'s @sync makes the copy into the slot complete before
 * it returns (a host stream synchronisation). */

/* publish() for a frame whose copy may still be in flight on the GPU, with
 * the fence page's word or @slot's event signalled after it. Under the
 * lock, so that no client that becomes ready meanwhile is missed, it calls
 * @sync first when that cannot order the frame for every ready client:
 * HOST ordering, no fence page and no event for the slot, or a ready
 * client that reads neither. When @sync fails the slot is given back
 * unpublished (as by abort()) and FALSE is returned with its error.
 * @n_clients (may be NULL): what publish() returns. */
gboolean cudaipc_server_publish_fenced (CudaIpcServer * server, guint slot,
    CudaIpcFrameMsg * frame, CudaIpcServerSyncFunc sync, gpointer user_data,
    guint * n_clients, GError ** error);
/* Gives an acquired slot back unpublished; its frame number is skipped. */
void cudaipc_server_abort (CudaIpcServer * server, guint slot);

/* Writing in place (docs/design.md, Writing in place): a free slot of the
 * current ring lent to upstream, which writes the frame into it; render()
 * then publishes the slot as it is. Any thread. On the cuda backend the
 * caller makes the frame complete first (cudaipc_copier_prepare_in_place()):
 * the slot's fence word is then set on the CPU.
 *
 * acquire_in_place() waits for a free slot until @deadline_us, as acquire()
 * does (stuck clients are dropped meanwhile), but it never builds or
 * replaces a ring, which only set_caps() and acquire() do, from the
 * streaming thread: NO_RING where there is no ring yet (no caps, or
 * EVENTS ordering's first ring), it is to be replaced, its slots are
 * smaller than @size, or the server was stopped (a pool that upstream kept
 * across a restart of the sink); NO_RING too, without a wait, while frames
 * upstream got as plain memory wait for render()'s copy and no more slots
 * are free than they need. Neither NO_RING nor TIMEOUT counts a frame
 * as dropped: the caller hands upstream other memory, and render() copies
 * that as usual. It sees neither wake() nor set_flushing(), which are the
 * sink's own (a state change flushes the sink and ends that at once):
 * FLUSHING once @cancel (may be NULL, upstream's pool flushing) is set and
 * kick() called. OK: @ticket lends the slot, which stays WRITING (no other
 * frame takes it) until the ticket is freed or the slot published. */
typedef struct _CudaIpcSlotTicket CudaIpcSlotTicket;

CudaIpcServerStatus cudaipc_server_acquire_in_place (CudaIpcServer * server,
    guint64 size, gint64 deadline_us, const gint * cancel,
    CudaIpcSlotTicket ** ticket, GError ** error);
/* Makes every wait look again at what ends it (acquire_in_place()'s
 * @cancel). */
void cudaipc_server_kick (CudaIpcServer * server);
/* Publishes the slot @ticket lends, with @frame as publish() does. The
 * producer's memory of the slot then holds it too, as a consumer would,
 * until the ticket is freed: no frame is written into it while any
 * buffer of the producer's own pipeline may still read it. FALSE, with
 * nothing published, where the ticket is of another server, a replaced
 * ring, or was published already: the caller copies the frame instead. */
gboolean cudaipc_server_publish_in_place (CudaIpcServer * server,
    CudaIpcSlotTicket * ticket, CudaIpcFrameMsg * frame, guint * n_clients);
/* The slot's memory, mapped and writable; valid until the ticket is
 * freed, the ring's replacement or the server's end notwithstanding. */
CudaIpcBlock *cudaipc_slot_ticket_get_block (const CudaIpcSlotTicket * ticket);
guint cudaipc_slot_ticket_get_slot (const CudaIpcSlotTicket * ticket);
/* The ring of the slot (the ticket's reference). */
CudaIpcRing *cudaipc_slot_ticket_get_ring (const CudaIpcSlotTicket * ticket);
/* Gives the slot back: unpublished, it is free again; published, the
 * producer's hold on it ends. Any thread, even after the server's
 * free(). */
void cudaipc_slot_ticket_free (CudaIpcSlotTicket * ticket);

/* Sends @event (EOS, SEGMENT, TAG or a custom downstream serialized event)
 * to every ready client as EVENT; @running_time is informational. A
 * SEGMENT is kept for clients that join later, and so is EOS until
 * clear_eos(). CUDAIPC_ERROR_LIMIT when the serialized event is not
 * shorter than CUDAIPC_MAX_STRING (nothing is sent). */
gboolean cudaipc_server_send_event (CudaIpcServer * server, GstEvent * event,
    GstClockTime running_time, GError ** error);
/* After a flush: clients that join no longer get EOS. */
void cudaipc_server_clear_eos (CudaIpcServer * server);

/* TRUE: every wait returns FLUSHING until FALSE is set again. */
void cudaipc_server_set_flushing (CudaIpcServer * server, gboolean flushing);
/* Ends the wait in progress, or else the next one, with WOKEN: the caller
 * changed what it waits for (a setting) and calls again. */
void cudaipc_server_wake (CudaIpcServer * server);

/* Clients past their handshake. */
guint cudaipc_server_get_n_clients (CudaIpcServer * server);
/* The current ring's generation (0 before the first ring). */
guint32 cudaipc_server_get_generation (CudaIpcServer * server);
/* One ready client's counters. */
typedef struct
{
  gchar *name;
  gint pid;
  guint64 frames_sent;
  guint64 frames_released;
  guint held;                   /* slots of the current ring it holds */
  gboolean events;              /* it waits on the slots' interprocess
                                 * events */
  gboolean fence;               /* it reads the fence page */
} CudaIpcServerClientStats;

/* The server's counters; cudaipc_server_stats_clear() frees what it
 * holds. */
typedef struct
{
  guint64 frames_published;
  guint64 frames_dropped;
  guint n_clients;
  guint32 generation;
  guint64 rings_retired;        /* replaced because a consumer was dropped
                                 * while it held slots */
  GArray *clients;              /* CudaIpcServerClientStats, one per ready
                                 * client; never NULL once filled in */
} CudaIpcServerStats;

/* Fills in @stats (@server NULL: every counter 0, no clients). */
void cudaipc_server_get_stats (CudaIpcServer * server,
    CudaIpcServerStats * stats);
void cudaipc_server_stats_clear (CudaIpcServerStats * stats);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (CudaIpcServer, cudaipc_server_free);

G_END_DECLS
