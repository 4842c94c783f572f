/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The consumer's core, below its two front doors: cuipcsrc (plugin/) and
 * libcudaipc's cudaipc_consumer (api/api-consumer.c). A CudaIpcReader
 * owns the CudaIpcClient (client.h) and the settings that say how to use
 * it: the socket path, the name given to the producer, the device, peer
 * access, connect-timeout, reconnect, reconnect-timeout and max-held. The
 * rules both doors follow are written here once:
 *
 * - next() connects where needed: the first time since start() within
 *   connect-timeout, after a lost producer within reconnect-timeout, each
 *   bounded by the caller's deadline. A connection that timed out fails
 *   with a hint: start the producer, check socket-path, or raise the
 *   setting that applied.
 * - A producer that leaves without EOS is reconnected to when reconnect
 *   is set, unless it refused this consumer (a BYE other than NORMAL or
 *   TOO_SLOW): a refusal would only be repeated on the next connection.
 * - The texts: every failure is a GError in CUDAIPC_ERROR with the text
 *   for the user (the elements' words), and a debug text where there is
 *   more to say.
 *
 * next() returns what the caller acts on, as a CudaIpcReaderItem: a frame
 * or an event (the client's item), a new connection, a lost producer
 * (whether the reader reconnects, the reason text), or a failure. The
 * front doors do only their own work: cuipcsrc its caps, negotiation,
 * messages, GST_ELEMENT_ERROR and GST_ELEMENT_WARNING; the C API its
 * types, statuses and error strings. For cuipcsrc the reader also makes
 * each frame's buffer (layout, metas, flags), describes a connection,
 * says how many frames bound the latency and gathers the stats.
 *
 * Threads: the settings may be set and read from any thread (the
 * reader's lock); next() reads them for each connection, and max-held
 * also for each frame. start(), next(), stop(), make_buffer(),
 * describe_connection(), held_limit() and the client's get_info() belong
 * to one thread at a time (the streaming thread; start and stop in the
 * state-change thread while streaming is stopped). latency_frames() and
 * get_stats() may come from any thread, and so may cancel() and
 * uncancel(): cancel() makes every wait of next() return CANCELLED
 * promptly, until uncancel(). free() once nothing else calls in.
 *
 * Ownership: the reader owns its client (and through it the socket, the
 * imports and the wake-up fds), for its lifetime. An item owns what it
 * carries (a frame's memory: unreffing it releases the slot; an event;
 * texts) until cudaipc_reader_item_clear(); the caller may steal the
 * frame's memory or the event first. Frames outlive the reader as they
 * outlive the client.
 */
#pragma once

#include "consumer/client.h"
#include "common/hints.h"

G_BEGIN_DECLS

/* The settings' defaults, for cuipcsrc's properties and for
 * cudaipc_consumer_options_init() (and so the Python package). */
#define CUDAIPC_READER_DEFAULT_DEVICE_ID 0
#define CUDAIPC_READER_DEFAULT_CONNECT_TIMEOUT 10000
#define CUDAIPC_READER_DEFAULT_RECONNECT TRUE
/* a producer that restarts (a crash, an update, a camera pipeline that
 * starts again) is back within seconds to tens of seconds; one away
 * longer is gone, and a consumer that waited for ever would hang a
 * program that has no time-out of its own (OpenCV's read()): 0 waits for
 * ever (docs/design.md, Reconnecting) */
#define CUDAIPC_READER_DEFAULT_RECONNECT_TIMEOUT 30000
#define CUDAIPC_READER_DEFAULT_MAX_HELD CUDAIPC_MAX_HELD_AUTO
#define CUDAIPC_READER_DEFAULT_PEER_ACCESS TRUE
#define CUDAIPC_READER_DEFAULT_LEAKY CUDAIPC_LEAKY_AUTO
/* copy-threshold: -1, half the producer's ring (at least 1) */
#define CUDAIPC_COPY_THRESHOLD_AUTO (-1)
#define CUDAIPC_READER_DEFAULT_COPY_THRESHOLD CUDAIPC_COPY_THRESHOLD_AUTO

typedef struct _CudaIpcReader CudaIpcReader;

typedef enum
{
  CUDAIPC_READER_FRAME,         /* item.item: a frame (type FRAME) */
  CUDAIPC_READER_EVENT,         /* item.item: an event (type EVENT) */
  CUDAIPC_READER_CONNECTED,     /* connected: item.connections, backend */
  CUDAIPC_READER_LOST,          /* the producer left without EOS: item.why,
                                 * bye_reason, reconnecting; with
                                 * reconnecting, item.text is the warning,
                                 * else the error is set */
  CUDAIPC_READER_TIMEOUT,       /* nothing by the deadline */
  CUDAIPC_READER_CANCELLED,     /* cancel() */
  CUDAIPC_READER_CONNECT_FAILED,        /* error set: no connection (its
                                         * code says why: TIMEOUT,
                                         * PERMISSION, VERSION, ...) */
  CUDAIPC_READER_FAILED,        /* error set: the connection failed and is
                                 * closed (PROTOCOL: the producer broke the
                                 * protocol; BYE told it why) */
} CudaIpcReaderStatus;

typedef struct
{
  CudaIpcClientItem item;       /* FRAME and EVENT */
  /* CONNECTED */
  guint connections;            /* made since start(): 1 the first time */
  CudaIpcBackend backend;       /* the producer's */
  /* LOST */
  gboolean reconnecting;        /* the next next() connects again */
  const gchar *bye_reason;      /* the BYE's reason, "none" without one */
  gchar *why;                   /* how it left, for messages */
  gchar *text;                  /* with reconnecting: the warning */
  /* CONNECT_FAILED, FAILED, LOST: more for a debug log, or NULL */
  gchar *debug;
} CudaIpcReaderItem;

/* Never NULL: where the client cannot be made, start() says so. */
CudaIpcReader *cudaipc_reader_new (void);
/* Disconnects (BYE: the consumer stopped) and frees; NULL is fine. */
void cudaipc_reader_free (CudaIpcReader * reader);

/* Settings (any thread). NULL @path: none; NULL @name: "cudaipcsrc-<pid>".
 * max-held as cudaipc_client_set_max_held(), in effect at once;
 * keep-all (the C API's): frames beyond max-held are not dropped, the
 * producer is held back instead (the client's max-held is 0). */
void cudaipc_reader_set_socket_path (CudaIpcReader * reader,
    const gchar * path);
gchar *cudaipc_reader_dup_socket_path (CudaIpcReader * reader);
void cudaipc_reader_set_name (CudaIpcReader * reader, const gchar * name);
gchar *cudaipc_reader_dup_name (CudaIpcReader * reader);
/* The names the hints of its errors give the settings (hints.h): a
 * static table; NULL, the default: cuipcsrc's properties. */
void cudaipc_reader_set_setting_names (CudaIpcReader * reader,
    const CudaIpcSettingNames * names);
void cudaipc_reader_set_device_id (CudaIpcReader * reader, gint device_id);
gint cudaipc_reader_get_device_id (CudaIpcReader * reader);
void cudaipc_reader_set_peer_access (CudaIpcReader * reader,
    gboolean allow);
gboolean cudaipc_reader_get_peer_access (CudaIpcReader * reader);
/* How the producer's messages come (client.h, set_announce()), and the
 * busy read before a wait with SHARED_MEMORY. */
void cudaipc_reader_set_announce (CudaIpcReader * reader, gint announce);
gint cudaipc_reader_get_announce (CudaIpcReader * reader);
void cudaipc_reader_set_spin_us (CudaIpcReader * reader, guint spin_us);
guint cudaipc_reader_get_spin_us (CudaIpcReader * reader);
void cudaipc_reader_set_connect_timeout (CudaIpcReader * reader,
    guint timeout_ms);
guint cudaipc_reader_get_connect_timeout (CudaIpcReader * reader);
void cudaipc_reader_set_reconnect (CudaIpcReader * reader,
    gboolean reconnect);
gboolean cudaipc_reader_get_reconnect (CudaIpcReader * reader);
void cudaipc_reader_set_reconnect_timeout (CudaIpcReader * reader,
    guint timeout_ms);
guint cudaipc_reader_get_reconnect_timeout (CudaIpcReader * reader);
void cudaipc_reader_set_max_held (CudaIpcReader * reader, gint max_held);
gint cudaipc_reader_get_max_held (CudaIpcReader * reader);
void cudaipc_reader_set_keep_all (CudaIpcReader * reader, gboolean keep_all);
/* Whether frames beyond max-held are dropped (client.h). */
void cudaipc_reader_set_leaky (CudaIpcReader * reader, CudaIpcLeaky leaky);
CudaIpcLeaky cudaipc_reader_get_leaky (CudaIpcReader * reader);
/* How many slots the caller may hold before the next frames go out as
 * copies (cudaipc_reader_should_copy()): CUDAIPC_COPY_THRESHOLD_AUTO,
 * half the producer's ring (at least 1); 0: never copy. */
void cudaipc_reader_set_copy_threshold (CudaIpcReader * reader,
    gint threshold);
gint cudaipc_reader_get_copy_threshold (CudaIpcReader * reader);
/* The same by the names of cuipcsrc's properties ("socket-path",
 * "device-id", "connect-timeout", "reconnect", "reconnect-timeout",
 * "max-held", "client-name", "peer-access", "leaky-type",
 * "copy-threshold", "announce", "spin-us"), in GValues of their types
 * (string, int, uint, boolean, uint, int, string, boolean, enum, int,
 * enum, uint); FALSE for another name. */
gboolean cudaipc_reader_set_setting (CudaIpcReader * reader,
    const gchar * name, const GValue * value);
gboolean cudaipc_reader_get_setting (CudaIpcReader * reader,
    const gchar * name, GValue * value);

/* Takes the socket path for this run and counts connections and frames
 * from zero. Fails (CUDAIPC_ERROR_INVALID) without a socket path, or
 * (CUDAIPC_ERROR_IO) where the client could not be made. */
gboolean cudaipc_reader_start (CudaIpcReader * reader, GError ** error);
/* Disconnects (BYE: the consumer stopped) and lets the device go. */
void cudaipc_reader_stop (CudaIpcReader * reader);
/* The socket path of this run (from start() on). */
const gchar *cudaipc_reader_get_path (CudaIpcReader * reader);
/* The client, for its info and stats (borrowed). */
CudaIpcClient *cudaipc_reader_get_client (CudaIpcReader * reader);

/* Connects where needed, then waits for the next frame or event, until
 * @deadline (monotonic microseconds; 0: none). @item is filled in as the
 * status says and is always safe to clear; @error is set on
 * CONNECT_FAILED, FAILED and LOST without reconnecting. */
CudaIpcReaderStatus cudaipc_reader_next (CudaIpcReader * reader,
    gint64 deadline, CudaIpcReaderItem * item, GError ** error);
void cudaipc_reader_item_clear (CudaIpcReaderItem * item);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (CudaIpcReaderItem, cudaipc_reader_item_clear);

/* A buffer of @frame (its memory taken: unreffing the buffer releases the
 * slot) with its plane layout, flags and offsets; timestamps are the
 * caller's (timing.h), and so are the metas (@frame's meta, for
 * decode_metas()): they go onto the buffer that goes out, which may be
 * a copy or a wrapper of this one, where metas copied over would cost
 * as much as decoding them again. */
GstBuffer *cudaipc_reader_make_buffer (CudaIpcReader * reader,
    CudaIpcClientFrame * frame);
/* @meta, a FRAME's metas, decoded onto @buf (writable): those that break
 * a rule are dropped, counted as refused, and the first such frame of a
 * connection sets @metas_error, for the caller to report. */
void cudaipc_reader_decode_metas (CudaIpcReader * reader, GBytes * meta,
    GstBuffer * buf, GError ** metas_error);
/* "The producer 'NAME' (pid N) on PATH", for messages that blame it; the
 * owning thread. */
gchar *cudaipc_reader_describe_producer (CudaIpcReader * reader);
/* Why an EVENT of the producer was refused (it did not parse, or named
 * more new names than the process takes: media/peer-names.h), the first
 * time one is on a connection, for the caller to report; else NULL. The
 * events are dropped and counted in stats events-refused. */
gchar *cudaipc_reader_take_event_refusal (CudaIpcReader * reader);
/* The words both doors warn with of refused metas, or (@events) refused
 * events: "The producer 'NAME' (pid N) on PATH sent ...; ... go out". */
gchar *cudaipc_reader_refusal_text (CudaIpcReader * reader, gboolean events);
/* For a door with no messages of its own (the C API): the warnings of a
 * frame just made (@metas_error, as make_buffer() set it; may be NULL)
 * and of the events refused since, in the words cuipcsrc posts, one a
 * line; NULL where there are none. Each comes once a connection. */
gchar *cudaipc_reader_take_warnings (CudaIpcReader * reader,
    const GError * metas_error);
/* Whether @frame (just received) should go out as a copy in the
 * caller's own memory, its slot given back at once: the caller holds
 * copy-threshold slots or more already (downstream keeps frames: an
 * encoder's look-ahead, a queue, an appsink). The caller counts what it
 * copied with cudaipc_reader_count_copy(). */
gboolean cudaipc_reader_should_copy (CudaIpcReader * reader,
    const CudaIpcClientFrame * frame);
void cudaipc_reader_count_copy (CudaIpcReader * reader);
/* With a connection's first frame (its ring and @caps known): the
 * connection as a "cudaipcsrc-connected" structure, or
 * "cudaipcsrc-reconnected" after a lost producer (docs/elements.md);
 * NULL while not connected. */
GstStructure *cudaipc_reader_describe_connection (CudaIpcReader * reader,
    GstCaps * caps);
/* Frames the consumer may hold before it drops (any thread): max-held,
 * with auto the last ring's size less one (1 before any ring), 0 for no
 * limit. */
guint cudaipc_reader_latency_frames (CudaIpcReader * reader);
/* The counters as an "application/x-cudaipcsrc-stats" structure
 * (docs/elements.md), with the caller's @pushed and @output (any
 * thread). */
GstStructure *cudaipc_reader_get_stats (CudaIpcReader * reader,
    guint64 pushed, const gchar * output);

void cudaipc_reader_cancel (CudaIpcReader * reader);
void cudaipc_reader_uncancel (CudaIpcReader * reader);

/* The most frames the caller may hold at once: max-held, or with
 * CUDAIPC_MAX_HELD_AUTO the producer's ring less one (at least 1; of the
 * last ring seen, G_MAXUINT before any), G_MAXUINT for no limit. */
guint cudaipc_reader_held_limit (CudaIpcReader * reader);

G_END_DECLS
