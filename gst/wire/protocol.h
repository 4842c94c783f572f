/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The wire protocol between cuipcsink (server) and cuipcsrc (client).
 * docs/protocol.md is the reference: byte layouts, limits, sequence.
 *
 * A message is one SOCK_SEQPACKET datagram: a 16-byte little-endian header
 * (type u16, n_fds u16, payload length u32, sequence u32, reserved u32 = 0)
 * then the payload. Encoding and decoding use GstByteWriter/GstByteReader
 * with a bounds check before every field; nothing received is ever cast to
 * a struct. Each message type has one build/parse pair in protocol.c.
 *
 * Return values: >= 0 on success, negative errno on failure:
 *   -EMSGSIZE          payload, string or count beyond a limit (or a build
 *                      that does not fit the buffer)
 *   -EBADMSG           truncated payload, trailing bytes, bad string, a
 *                      field out of range
 *   -EPROTO            bad header: unknown type, reserved bits set, length
 *                      that disagrees with the datagram, wrong fd count
 *   -EPROTONOSUPPORT   (HELLO only) a version this build does not speak
 *
 * Ownership: cudaipc_msg_parse() takes ownership of the fds that arrived
 * with the datagram, always: on success they belong to the message (closed
 * by cudaipc_msg_clear()), on failure they are closed before it returns.
 * Strings of a parsed message are allocated and freed by cudaipc_msg_clear().
 * A message built for sending borrows its strings and fds: the caller keeps
 * them and does not call cudaipc_msg_clear() on it.
 *
 * Pure functions; any thread.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The limits of what crosses the wire. The memory code is built to them
 * (device.h, descriptor.h, ring.h include this header for them); the wire
 * format depends on nothing else of this library. */

/* A GPU's UUID, as cuDeviceGetUuid gives it. */
#define CUDAIPC_UUID_LEN 16
/* Physical allocations (file descriptors) per slot. */
#define CUDAIPC_MAX_ALLOCS 16
/* Largest buffer a peer may describe: 4 GiB. */
#define CUDAIPC_MAX_SLOT_SIZE (G_GUINT64_CONSTANT (4) << 30)
/* Slots per ring. */
#define CUDAIPC_MAX_SLOTS 64

/* The memory a ring lives in, as HELLO names it (device.h opens them).
 * AUTO is a producer's setting, never a ring's: it becomes HOST or CUDA
 * when the ring's device opens (cudaipc_device_new_auto()), and a HELLO
 * that names it is refused. */
typedef enum
{
  CUDAIPC_BACKEND_HOST = 0,
  CUDAIPC_BACKEND_CUDA = 1,
  CUDAIPC_BACKEND_AUTO = 2,
} CudaIpcBackend;

#define CUDAIPC_PROTOCOL_VERSION 5
#define CUDAIPC_HEADER_SIZE 16
/* where the header's sequence number is (a guint32, little endian) */
#define CUDAIPC_HEADER_SEQ_OFFSET 8
#define CUDAIPC_MAX_PAYLOAD (64 * 1024)
#define CUDAIPC_MAX_MESSAGE (CUDAIPC_HEADER_SIZE + CUDAIPC_MAX_PAYLOAD)
#define CUDAIPC_MAX_MSG_FDS CUDAIPC_MAX_ALLOCS
#define CUDAIPC_MAX_PLANES 4
/* Bytes of metadata one FRAME carries at most (metas.h). */
#define CUDAIPC_MAX_META_BYTES (32 * 1024)
/* Longest string field, NUL included (caps, serialized events). */
#define CUDAIPC_MAX_STRING (32 * 1024)
/* Longest client or server name, NUL included. */
#define CUDAIPC_MAX_NAME 256

typedef enum
{
  CUDAIPC_MSG_HELLO = 1,        /* both ways, first message */
  CUDAIPC_MSG_RING = 2,         /* server: a new ring (generation) */
  CUDAIPC_MSG_SLOT = 3,         /* server: one slot's descriptor, with fds */
  CUDAIPC_MSG_CAPS = 4,         /* server: caps for the frames that follow */
  CUDAIPC_MSG_FRAME = 5,        /* server: a slot holds a frame */
  CUDAIPC_MSG_RELEASE = 6,      /* client: done with a frame */
  CUDAIPC_MSG_EVENT = 7,        /* server: a serialized event (EOS, ...) */
  CUDAIPC_MSG_BYE = 8,          /* both ways: closing, with a reason */
  CUDAIPC_MSG_CHANNEL = 9,      /* server: the announce channel, two fds */
} CudaIpcMsgType;

#define CUDAIPC_MSG_TYPE_LAST CUDAIPC_MSG_CHANNEL

/* HELLO capability bits */
#define CUDAIPC_CAP_EVENTS (1u << 0)    /* legacy interprocess CUDA events */
#define CUDAIPC_CAP_PEER (1u << 1)      /* a consumer on another GPU, with
                                         * peer access to the producer's */
#define CUDAIPC_CAP_FENCE (1u << 2)     /* the ring's fence page */
#define CUDAIPC_CAP_RELEASE_PAGE (1u << 3)      /* releases through a page
                                                 * (ring/release-page.h) */
#define CUDAIPC_CAP_CHANNEL (1u << 4)   /* messages to the consumer through
                                         * shared memory (wire/channel.h) */
#define CUDAIPC_CAPS_KNOWN (CUDAIPC_CAP_EVENTS | CUDAIPC_CAP_PEER | \
    CUDAIPC_CAP_FENCE | CUDAIPC_CAP_RELEASE_PAGE | CUDAIPC_CAP_CHANNEL)
/* The fds a CHANNEL carries: the page's memfd, then the wake (wake.h). */
#define CUDAIPC_CHANNEL_N_FDS 2

/* RING flags */
#define CUDAIPC_RING_HAS_FENCE (1u << 0)        /* one fd: the fence page */
#define CUDAIPC_RING_LIVE (1u << 1)     /* the producer's stream is live */
#define CUDAIPC_RING_HAS_RELEASE_PAGE (1u << 2) /* one more fd (after the
                                                 * fence page's): this
                                                 * consumer's release page */
#define CUDAIPC_RING_FLAGS_KNOWN (CUDAIPC_RING_HAS_FENCE | \
    CUDAIPC_RING_LIVE | CUDAIPC_RING_HAS_RELEASE_PAGE)
/* The fds a RING with @flags carries. */
#define CUDAIPC_RING_N_FDS(flags) \
    ((((flags) & CUDAIPC_RING_HAS_FENCE) ? 1u : 0u) + \
    (((flags) & CUDAIPC_RING_HAS_RELEASE_PAGE) ? 1u : 0u))
/* The fence page's size: one 64-bit word per slot, at 8 * slot. */
#define CUDAIPC_FENCE_PAGE_SIZE 4096

/* SLOT flags */
#define CUDAIPC_SLOT_HAS_EVENT (1u << 0)

/* BYE reasons */
typedef enum
{
  CUDAIPC_BYE_NORMAL = 0,
  CUDAIPC_BYE_VERSION = 1,
  CUDAIPC_BYE_BACKEND = 2,
  CUDAIPC_BYE_DEVICE = 3,
  CUDAIPC_BYE_PROTOCOL = 4,
  CUDAIPC_BYE_PERMISSION = 5,
  CUDAIPC_BYE_TOO_SLOW = 6,
  /* the sender failed on its own side (an import, a mapping, memory), not
   * for anything the peer did */
  CUDAIPC_BYE_LOCAL = 7,
  CUDAIPC_BYE_LAST = CUDAIPC_BYE_LOCAL,
} CudaIpcByeReason;

typedef struct
{
  guint32 version;
  guint32 backend;              /* CudaIpcBackend */
  guint8 uuid[CUDAIPC_UUID_LEN];
  guint32 caps;                 /* CUDAIPC_CAP_* */
  guint32 pid;                  /* informational only */
  const gchar *name;            /* NUL-terminated, < CUDAIPC_MAX_NAME */
} CudaIpcHello;

typedef struct
{
  guint32 generation;
  guint32 n_slots;              /* 1..CUDAIPC_MAX_SLOTS */
  guint64 slot_size;            /* 1..CUDAIPC_MAX_SLOT_SIZE */
  guint32 flags;                /* CUDAIPC_RING_*; n_fds: RING_N_FDS */
} CudaIpcRingMsg;

typedef struct
{
  guint32 generation;
  guint32 index;                /* < CUDAIPC_MAX_SLOTS */
  guint64 size;                 /* usable size */
  guint32 n_allocs;             /* 1..CUDAIPC_MAX_ALLOCS, == n_fds */
  guint64 alloc_sizes[CUDAIPC_MAX_ALLOCS];
  guint32 flags;                /* CUDAIPC_SLOT_* */
  guint8 event_handle[64];      /* valid with CUDAIPC_SLOT_HAS_EVENT */
} CudaIpcSlotMsg;

typedef struct
{
  guint32 caps_id;
  const gchar *caps;            /* gst_caps_to_string() form */
} CudaIpcCapsMsg;

typedef struct
{
  guint64 offset;               /* from the start of the slot */
  guint32 stride;
} CudaIpcPlane;

typedef struct
{
  guint32 generation;
  guint32 slot;
  guint64 seq;                  /* frame number, per producer */
  guint32 caps_id;
  guint32 flags;                /* GstBufferFlags */
  guint64 pts, dts, duration;   /* GstClockTime, mapped as in docs */
  guint64 offset, offset_end;
  guint64 size;                 /* bytes of the slot the frame uses */
  guint64 publish_time;         /* CLOCK_MONOTONIC ns at publish */
  guint64 clock_time;           /* the PTS as CLOCK_MONOTONIC ns, or NONE */
  guint32 n_planes;             /* 0..CUDAIPC_MAX_PLANES */
  CudaIpcPlane planes[CUDAIPC_MAX_PLANES];
  /* the frame's metas (metas.h), meta_len bytes, 0..CUDAIPC_MAX_META_BYTES:
   * borrowed when building; when parsed, the message's own, freed by
   * cudaipc_msg_clear() (a copy of the struct must not outlive it) */
  const guint8 *meta;
  guint32 meta_len;
} CudaIpcFrameMsg;

typedef struct
{
  guint32 generation;
  guint32 slot;
  guint64 seq;
} CudaIpcReleaseMsg;

typedef struct
{
  guint32 event_type;           /* GstEventType */
  guint64 running_time;         /* informational, GST_CLOCK_TIME_NONE ok */
  const gchar *structure;       /* serialized, may be "" */
} CudaIpcEventMsg;

typedef struct
{
  guint32 reason;               /* CudaIpcByeReason */
  const gchar *text;
} CudaIpcByeMsg;

typedef struct
{
  guint32 capacity;             /* bytes of records (wire/channel.h) */
  guint32 flags;                /* none yet: 0 */
} CudaIpcChannelMsg;

typedef struct
{
  CudaIpcMsgType type;
  guint32 seq;                  /* header sequence: set by the connection */
  union
  {
    CudaIpcHello hello;
    CudaIpcRingMsg ring;
    CudaIpcSlotMsg slot;
    CudaIpcCapsMsg caps;
    CudaIpcFrameMsg frame;
    CudaIpcReleaseMsg release;
    CudaIpcEventMsg event;
    CudaIpcByeMsg bye;
    CudaIpcChannelMsg channel;
  } u;
  int fds[CUDAIPC_MAX_MSG_FDS];
  guint n_fds;
} CudaIpcMsg;

const gchar *cudaipc_msg_type_name (guint32 type);
/* Whether @err, a negative errno from cudaipc_conn_recv() or
 * cudaipc_msg_parse(), says that the peer sent a message that breaks the
 * protocol (-EPROTO, -EMSGSIZE, -EBADMSG, -EPROTONOSUPPORT), rather than
 * that this side failed. */
gboolean cudaipc_msg_error_is_peers (gint err);
/* A BYE reason's name for messages ("too slow"), "unknown" for others. */
const gchar *cudaipc_bye_reason_name (guint32 reason);

/* Zeroes @msg with every fd set to -1, ready to fill in. */
void cudaipc_msg_init (CudaIpcMsg * msg, CudaIpcMsgType type);
/* Frees a parsed message's strings and closes its fds. */
void cudaipc_msg_clear (CudaIpcMsg * msg);

/* Encodes @msg (header sequence @seq, header n_fds = msg->n_fds) into
 * @buf; returns the length written or a negative errno. */
gssize cudaipc_msg_build (const CudaIpcMsg * msg, guint32 seq, guint8 * buf,
    gsize buf_size);
/* Decodes one datagram. @fds (@n_fds of them) are taken, see above. */
gint cudaipc_msg_parse (const guint8 * data, gsize len, int *fds,
    guint n_fds, CudaIpcMsg * msg);

G_END_DECLS
