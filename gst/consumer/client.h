/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The consumer's side of the protocol: one connection at a time to a
 * producer (cuipcsink), as cuipcsrc uses it. docs/protocol.md is the
 * reference for the messages; this module decides what they mean.
 *
 * cudaipc_client_connect() connects to the producer's socket, trying again
 * while nobody listens there until a deadline, and runs the handshake: the
 * producer's HELLO first (version check), the producer's backend opened on
 * our device ordinal (UUID check for cuda), our HELLO. A mismatch sends BYE
 * with its reason and a readable text, then closes. A producer that accepts
 * and then leaves before its HELLO (one shutting down) is waited for again
 * as if nobody listened.
 *
 * cudaipc_client_receive() runs the receive loop: it keeps the ring's
 * import table (one CudaIpcSharedBlock per slot, imported once per
 * connection) and a bounded caps table, and returns only what the caller
 * acts on: a FRAME checked against its slot and caps (generation, slot,
 * size, planes and strides, and that we do not still hold the slot) as a
 * CudaIpcClientFrame with its GstMemory made, a serialized event parsed into
 * a GstEvent, or the end of the connection with the producer's BYE. Frames
 * beyond max-held are released at once and counted as dropped; empty frames
 * are released at once. Anything the producer gets wrong sends BYE
 * (PROTOCOL) with the reason, closes the connection and fails with a
 * CUDAIPC_ERROR_PROTOCOL error that names the socket. What is read ahead
 * of the caller (while it is busy, or behind a late frame) is bounded: at
 * most 256 items and 1 MiB of the messages they came in are queued, and
 * past that the socket holds the producer back.
 *
 * Threads: connect(), receive() and disconnect() belong to one thread at a
 * time (the streaming thread; start/stop in the state-change thread while
 * streaming is stopped). cancel(), uncancel(), set_max_held() and
 * get_stats() may be called from any thread: cancel() makes every wait in
 * connect() and receive() return CUDAIPC_CLIENT_CANCELLED promptly, until
 * uncancel(). free() from the owning thread once nothing else calls in.
 *
 * Release path: every frame's GstMemory holds a reference to a session that
 * the client shares with all of its frames. The session has the connection
 * and a send lock, so the last unref of a frame's memory, from any thread
 * and at any time, sends RELEASE (generation, slot, seq) to the producer.
 * Once that connection is gone (disconnect, a new connection, free) a
 * release sends nothing. The session outlives the client while frames live.
 *
 * GPU ordering (design.md, GPU ordering): the HELLO asks for
 * CUDAIPC_CAP_FENCE always. A RING with HAS_FENCE has its fence page
 * (fence-page.h) checked and mapped, kept with the imports and freed with
 * them; before a FRAME is handed out, receive() reads the slot's word on
 * the CPU until it is the frame's seq (no driver call; a word that does
 * not get there within 2 s of the FRAME's arrival ends the connection,
 * one past it or going back is a protocol error). That wait, and the one
 * on an event below, is receive()'s caller's: it ends at its deadline and
 * at cancel(), the frame kept at the head of what is to be received, and
 * nothing that reads ahead of the caller waits on a frame. With the cuda backend the HELLO also asks for
 * CUDAIPC_CAP_EVENTS unless events failed before on this client object
 * (a producer offers them only with ordering=events): a SLOT with
 * HAS_EVENT, on a connection without a fence page, has its legacy event
 * (fence.h) opened once per slot per connection, kept with the import and
 * freed with the import table. Before
 * a FRAME of that slot is handed out, receive() waits on its fence, with
 * the device's context pushed for the wait and popped after it: no
 * context of ours stays current on the receiving thread, which a thread
 * pool may give other work, or which may outlive the device.
 * A fence that cannot be opened or waited on (legacy CUDA IPC handles fail
 * across PID namespaces) marks the client object: receive() sends BYE
 * (PROTOCOL) saying that interprocess events are unavailable and that it
 * reconnects without them, and returns CLOSED with said_bye FALSE and that
 * text in bye_text; the next connect() asks for no events, and the producer
 * synchronises its copies on the host for this consumer.
 *
 * Ownership: the client owns its wake-up fd and its socket. A SLOT's fds
 * belong to the received message until the descriptor takes them (closed
 * whatever its verdict), and are closed right after the import: the
 * mapping pins the memory. Every fd that came with a refused message is
 * closed. The client holds one reference to each imported slot of the
 * current ring and drops them on a new ring or a disconnect; each frame's
 * memory holds another, so a slot stays mapped while any frame uses it.
 *
 * Errors are in the CUDAIPC_ERROR domain, with texts for the user.
 */
#pragma once

#include "consumer/client-types.h"

G_BEGIN_DECLS

/* Fails (CUDAIPC_ERROR_IO) only when the wake-up fd cannot be made. */
CudaIpcClient *cudaipc_client_new (GError ** error);
/* Disconnects (without BYE) if still connected. */
void cudaipc_client_free (CudaIpcClient * client);

void cudaipc_client_cancel (CudaIpcClient * client);
void cudaipc_client_uncancel (CudaIpcClient * client);

/* Connects to @path ("@name" for an abstract socket) as @name (NULL:
 * "cudaipcsrc-<pid>"; cut to CUDAIPC_MAX_NAME - 1 bytes), opening the
 * producer's backend on @device_id. @timeout_ms bounds the wait for a
 * producer and, again, for its HELLO (0: forever). Returns OK, CANCELLED or
 * ERROR (nothing stays open). Not while connected. */
CudaIpcClientStatus cudaipc_client_connect (CudaIpcClient * client,
    const gchar * path, const gchar * name, gint device_id, guint timeout_ms,
    GError ** error);
/* Whether a connection is open, or what one delivered is still to be
 * received (the background reader may have read the producer's last
 * frames, its EOS and its close while the caller was busy): connect again
 * only when this says FALSE. */
gboolean cudaipc_client_is_connected (CudaIpcClient * client);
/* The producer's backend, while connected. */
CudaIpcBackend cudaipc_client_get_backend (CudaIpcClient * client);

/* Waits for the next frame or event; @item is filled in on OK (type FRAME
 * or EVENT) and CLOSED (the bye fields), and is always safe to clear. On
 * CLOSED and ERROR the connection is already closed. */
CudaIpcClientStatus cudaipc_client_receive (CudaIpcClient * client,
    CudaIpcClientItem * item, GError ** error);
/* receive() that gives up at @deadline (monotonic microseconds; 0: never)
 * with TIMEOUT, the connection kept: a frame whose copy has not landed by
 * then stays queued, and comes first next time. */
CudaIpcClientStatus cudaipc_client_receive_until (CudaIpcClient * client,
    CudaIpcClientItem * item, gint64 deadline, GError ** error);
void cudaipc_client_item_clear (CudaIpcClientItem * item);

/* connect() makes the CUDA device (its context) before it connects, where
 * there is CUDA and no producer of this client used the host backend,
 * and keeps it for the next connections: this lets it go (an element's
 * stop()), and the next connect() makes one again. */
void cudaipc_client_release_device (CudaIpcClient * client);

/* Closes the connection, after BYE (@reason, @text) unless @text is NULL,
 * and forgets the ring, the caps and the device. No-op when closed. */
void cudaipc_client_disconnect (CudaIpcClient * client,
    CudaIpcByeReason reason, const gchar * text);

/* Whether a producer on another GPU than @device_id may be read through
 * peer access where that GPU allows it (default TRUE); without, such a
 * producer is refused with CUDAIPC_ERROR_DEVICE_MISMATCH. Read by
 * connect(). */
void cudaipc_client_set_peer_access (CudaIpcClient * client,
    gboolean allow);

/* How the producer's messages reach this consumer: on the socket (the
 * default), or through shared memory where the producer offers it
 * (wire/channel.h; the socket then carries the set-up, fds and the
 * producer's end). With SHARED_MEMORY a wait for the next frame reads
 * busily for @spin_us (0: none, at most CUDAIPC_MAX_SPIN_US) before it
 * sleeps. Read by connect(). */
typedef enum
{
  CUDAIPC_ANNOUNCE_SOCKET = 0,
  CUDAIPC_ANNOUNCE_SHARED_MEMORY = 1,
} CudaIpcAnnounce;
#define CUDAIPC_MAX_SPIN_US 1000
void cudaipc_client_set_announce (CudaIpcClient * client,
    CudaIpcAnnounce announce, guint spin_us);

/* Most frames held at once, handed out or read and waiting to be: 0 (the
 * default) no limit, CUDAIPC_MAX_HELD_AUTO the producer's ring less one (at
 * least 1: a syncing sink holds its last frame, one it waits to show and
 * the next, read meanwhile). A frame beyond it goes back to the producer at
 * once, counted as dropped: the oldest of those read and not handed out
 * yet, else the one that arrives. Read for each FRAME. */
#define CUDAIPC_MAX_HELD_AUTO (-1)
void cudaipc_client_set_max_held (CudaIpcClient * client, gint max_held);

/* Whether frames beyond max-held are dropped (design.md, Every frame or
 * the newest). */
typedef enum
{
  /* as the producer's stream (RING's LIVE bit): NONE when it is not live,
   * DOWNSTREAM when it is */
  CUDAIPC_LEAKY_AUTO = 0,
  /* never: every frame is kept until handed out, and a slow consumer
   * holds the producer back (max-held is not applied) */
  CUDAIPC_LEAKY_NONE = 1,
  /* over max-held, the oldest frame read and not handed out yet goes
   * back to the producer, else the one that arrives */
  CUDAIPC_LEAKY_DOWNSTREAM = 2,
} CudaIpcLeaky;

/* The default: CUDAIPC_LEAKY_AUTO. Read for each FRAME. */
void cudaipc_client_set_leaky (CudaIpcClient * client, CudaIpcLeaky leaky);
void cudaipc_client_get_stats (CudaIpcClient * client,
    CudaIpcClientStats * stats);
/* Of @info, only live and leaky (the others zero): any thread, without
 * waiting for the reader. */
void cudaipc_client_peek_policy (CudaIpcClient * client,
    CudaIpcClientInfo * info);
/* FALSE and all zero while not connected; the owning thread. */
gboolean cudaipc_client_get_info (CudaIpcClient * client,
    CudaIpcClientInfo * info);
/* Zeroes received, dropped, released, driver_calls, copy_waits,
 * copy_wait_ns and events_refused. */
void cudaipc_client_reset_stats (CudaIpcClient * client);
/* Why the first EVENT refused since the last call was (a new string), or
 * NULL where none was; any thread. */
gchar *cudaipc_client_take_event_refusal (CudaIpcClient * client);

G_END_DECLS
