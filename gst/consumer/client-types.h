/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The consumer's types (client.h has the contract of the calls): what the
 * client's files share and its users see, below all of them.
 */
#pragma once

#include <gst/gst.h>
#include <gst/video/video.h>
#include "device/device.h"
#include "buffers/memory.h"
#include "wire/protocol.h"

G_BEGIN_DECLS

typedef struct _CudaIpcClient CudaIpcClient;
/* What orders a frame's copy into its slot (the client's files alone). */
typedef struct _CudaIpcCopyOrder CudaIpcCopyOrder;

typedef enum
{
  CUDAIPC_CLIENT_OK,            /* done; receive(): an item to act on */
  CUDAIPC_CLIENT_CLOSED,        /* receive(): the connection ended; the
                                 * item's bye fields say how */
  CUDAIPC_CLIENT_CANCELLED,     /* cudaipc_client_cancel() */
  CUDAIPC_CLIENT_ERROR,         /* error set; the connection is closed */
  CUDAIPC_CLIENT_TIMEOUT,       /* receive_until(): nothing by the deadline;
                                 * the connection stays */
} CudaIpcClientStatus;

typedef enum
{
  CUDAIPC_CLIENT_ITEM_NONE,
  CUDAIPC_CLIENT_ITEM_FRAME,
  CUDAIPC_CLIENT_ITEM_EVENT,
} CudaIpcClientItemType;

/* A validated frame. Unreffing @memory (directly or in a buffer) releases
 * the slot; cudaipc_client_item_clear() unrefs what was not taken. */
typedef struct
{
  CudaIpcFrameMsg msg;          /* the FRAME, checked */
  GstMemory *memory;            /* msg.size bytes of the slot, owned */
  CudaIpcSharedBlock *block;    /* the slot (borrowed: @memory holds it) */
  GstCaps *caps;                /* of msg.caps_id: fixed, no features, owned */
  GstVideoInfo info;            /* from @caps */
  gboolean discont;             /* first frame of a connection or after a drop */
  guint lent;                   /* when it was handed out: frames of this
                                 * connection handed out before it and not
                                 * released yet (the slots downstream holds) */
  guint64 dropped_before;       /* frames dropped since the frame handed out
                                 * before it (max-held, leaky) */
  GBytes *meta;                 /* the FRAME's metas (metas.h), unchecked,
                                 * owned; NULL for none (msg.meta is NULL) */
  /* until the producer's copy into the slot is known to have landed: what
   * orders it, referenced (NULL once it has, or where nothing does), and
   * when the FRAME came (monotonic us), from which its wait is bounded;
   * the client's alone: a frame handed out has none */
  CudaIpcCopyOrder *ordering;
  gint64 received_at;
  gboolean copy_waited;         /* counted in copy_waits already: a wait that
                                 * a caller's deadline cut short goes on in
                                 * the next call, the same frame's */
} CudaIpcClientFrame;

typedef struct
{
  CudaIpcClientItemType type;
  CudaIpcClientFrame frame;     /* ITEM_FRAME */
  GstEvent *event;              /* ITEM_EVENT: EOS, SEGMENT (time), TAG or
                                 * custom downstream; owned */
  guint64 running_time;         /* ITEM_EVENT: informational */
  /* CUDAIPC_CLIENT_CLOSED: */
  gboolean said_bye;            /* FALSE: it closed without BYE, or (with
                                 * bye_text) this consumer closed it */
  guint32 bye_reason;           /* CudaIpcByeReason */
  gchar *bye_text;
  /* the client's: bytes of the message it came in, near enough, for the
   * bound on what the client reads ahead */
  guint bytes;
} CudaIpcClientItem;

typedef struct
{
  guint64 received;             /* FRAMEs received */
  guint64 dropped;              /* released at once beyond max-held, or
                                 * discarded */
  guint64 discarded;            /* frames released unpushed because the
                                 * producer had dropped this consumer by
                                 * the time they were to go out */
  guint64 released;             /* RELEASEs sent */
  guint held;                   /* frames of this connection not released */
  guint32 generation;           /* the producer's current ring */
  guint imports;                /* slots imported on this connection */
  guint64 driver_calls;         /* CUDA driver calls made for frames: per
                                 * frame, a context push, the fence wait
                                 * and the pop */
  guint64 copy_waits;           /* frames whose copy into their slot had not
                                 * landed when first looked at */
  guint64 copy_wait_ns;         /* the time those waited for it, busy
                                 * reads and sleeps */
  guint64 events_refused;       /* EVENTs that did not parse or named more
                                 * new names than the process takes */
  gboolean peer;                /* the producer is on another GPU, read
                                 * through peer access */
} CudaIpcClientStats;

/* What the consumer knows of the connection, for messages. */
typedef struct
{
  const gchar *producer_name;   /* from its HELLO (borrowed, until the next
                                 * connect() or disconnect()) */
  guint producer_pid;
  CudaIpcBackend backend;
  guint n_slots;                /* the current ring's; 0 before RING */
  guint64 slot_size;
  guint32 generation;
  gboolean events;              /* frames are ordered by interprocess events */
  gboolean fence;               /* frames are ordered by the fence page */
  gboolean peer;                /* read through peer access */
  gboolean channel;             /* messages come through the announce
                                 * channel (shared memory) */
  guint max_held;               /* max-held in effect (G_MAXUINT: none) */
  gboolean live;                /* the producer's stream is live */
  gboolean leaky;               /* frames beyond max-held are dropped */
} CudaIpcClientInfo;

G_END_DECLS
