/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libcudaipc: video frames shared between processes in GPU memory (or
 * shared host memory), for programs that run no GStreamer pipeline of
 * their own. The consumer reads the frames a cuipcsink publishes, the
 * producer publishes frames that cuipcsrc pipelines (or other consumers)
 * read. It is the same library the elements are made of: the same
 * socket, protocol, checks, credentials and time-outs (docs/api.md).
 *
 * Consumer
 *
 *   cudaipc_consumer *c = cudaipc_consumer_new ("/tmp/cam0.sock", NULL);
 *   cudaipc_frame *f;
 *   while (cudaipc_consumer_next (c, 1000, &f) == CUDAIPC_STATUS_OK) {
 *     cudaipc_frame_info info;
 *     cudaipc_frame_get_info (f, &info);
 *     ... read info.data: a device pointer (backend cuda) or a host
 *     pointer (backend host), planes at info.plane_offset[] ...
 *     cudaipc_frame_release (f);
 *   }
 *   fprintf (stderr, "%s\n", cudaipc_consumer_error (c));
 *   cudaipc_consumer_free (c);
 *
 * next() connects on its first call (for connect_timeout_ms, as
 * cuipcsrc's connect-timeout), and again after a producer that went away
 * when reconnect is set (for reconnect_timeout_ms, as cuipcsrc's
 * reconnect-timeout: 30 s, 0 for ever; past it next() says
 * CUDAIPC_STATUS_NO_PRODUCER), whatever its own time-out, which counts
 * from the connection: a consumer
 * may start before its producer. A frame is complete when next() returns
 * it: the consumer waited for the producer's copy (the fence page)
 * before. It is the producer's slot itself, mapped read-only; it stays as
 * it is until released, and the producer does not write the slot again
 * until every consumer that got the frame released it, so hold frames
 * briefly: at most max_held at once (next() says
 * CUDAIPC_STATUS_TOO_MANY_HELD past that).
 *
 * Producer
 *
 *   cudaipc_producer *p = cudaipc_producer_new ("/tmp/out.sock",
 *       "video/x-raw, format=NV12, width=1920, height=1080,"
 *       " framerate=30/1", NULL);
 *   cudaipc_producer_publish (p, ptr, size, on_device, pts, 1000);
 *
 * publish() copies @size bytes, laid out as GStreamer lays out the caps'
 * format (GstVideoInfo's default strides and offsets), into a free slot
 * and announces it; the copy has landed when it returns.
 *
 * Errors: each call returns a cudaipc_status; cudaipc_consumer_error()
 * and cudaipc_producer_error() give the text of the last failure, in the
 * elements' words ("No producer on PATH after N ms", "The producer on PATH
 * refused this consumer: ...", "Lost the producer on PATH: ..."). Texts are
 * valid until the next call of next(), publish(), publish_annotated() or
 * end() on the object. Every call checks its arguments before it uses
 * them: a NULL object is CUDAIPC_STATUS_INVALID (0 or nothing for those
 * that return no status), as is a NULL frame or info, data or array.
 *
 * Threads: any thread may call on an object, and several at once.
 *  - A consumer's next() calls take turns: a second one waits until the
 *    first returned (the frames go to whichever comes first), so two
 *    threads never read one connection at once. held(), dropped() and
 *    cancel() run at once from any thread, cancel() making a waiting
 *    next() return CUDAIPC_STATUS_CANCELLED (and every later one).
 *  - A producer's publish(), publish_annotated() and end() take turns the
 *    same way; n_consumers(), counts() and cancel() run at once, cancel()
 *    ending a wait for a free slot with CUDAIPC_STATUS_CANCELLED (and
 *    every later publish()).
 *  - error() gives what the last of those calls left: where threads
 *    share an object's next() or publish(), read it under a lock of the
 *    program's own held across the call and error() (the Python package
 *    does), or it may be another thread's text.
 *  - free() may come while other threads are in calls on the object: it
 *    cancels what waits, waits until every call in flight returned, then
 *    frees. A call that starts once free() began returns at once
 *    (CUDAIPC_STATUS_CANCELLED, or 0); none may start after it returned.
 *  - Frames may be released from any thread, before or after their
 *    consumer is freed; a frame's getters may run in several threads at
 *    once, but not after its last release.
 *
 * Never fork() after CUDA is initialised in a process (the cuda backend):
 * spawn and exec a helper instead.
 */
#ifndef CUDAIPC_H
#define CUDAIPC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(CUDAIPC_COMPILATION)
#define CUDAIPC_API __attribute__ ((visibility ("default")))
#else
#define CUDAIPC_API
#endif

/* The library's interface version: grows when something is added. */
#define CUDAIPC_API_VERSION 4

typedef enum
{
  CUDAIPC_STATUS_OK = 0,
  CUDAIPC_STATUS_TIMEOUT = 1,   /* nothing within the time-out */
  CUDAIPC_STATUS_EOS = 2,       /* the producer ended its stream */
  CUDAIPC_STATUS_NO_PRODUCER = 3,       /* nobody listens on the socket */
  CUDAIPC_STATUS_REFUSED = 4,   /* the producer refused this consumer */
  CUDAIPC_STATUS_PRODUCER_LOST = 5,     /* it went away, reconnect unset */
  CUDAIPC_STATUS_TOO_MANY_HELD = 6,     /* max_held frames are held */
  CUDAIPC_STATUS_CANCELLED = 7, /* cancel(), or free() in another thread */
  CUDAIPC_STATUS_INVALID = 8,   /* a bad argument or setting */
  CUDAIPC_STATUS_FAILED = 9,    /* anything else: see the error text */
} cudaipc_status;

typedef enum
{
  CUDAIPC_BACKEND_TYPE_HOST = 0,        /* shared host memory (memfd) */
  CUDAIPC_BACKEND_TYPE_CUDA = 1,        /* CUDA virtual memory */
  /* a producer's option only (the default): cuda where a CUDA device is
   * usable when the producer is made, else host (version 4) */
  CUDAIPC_BACKEND_TYPE_AUTO = 2,
} cudaipc_backend_type;

/* Consumer */

typedef struct cudaipc_consumer cudaipc_consumer;
typedef struct cudaipc_frame cudaipc_frame;

typedef struct
{
  uint32_t struct_size;         /* sizeof (cudaipc_consumer_options) */
  const char *name;             /* for the producer's messages; NULL:
                                 * "cudaipc-<pid>" */
  int32_t device_id;            /* the CUDA device to read on (0) */
  uint32_t connect_timeout_ms;  /* waiting for a producer (10000; 0: ever) */
  int32_t reconnect;            /* after a producer went away (1) */
  uint32_t reconnect_timeout_ms;        /* waiting for it to come back
                                         * (30000; 0: ever; version 4,
                                         * before: 0 was
                                         * connect_timeout_ms) */
  int32_t max_held;             /* frames held at once (-1, the default:
                                 * the producer's ring less one, as
                                 * cuipcsrc's max-held; else 1..64) */
  int32_t peer_access;          /* read another GPU's ring through peer
                                 * access (1) */
  int32_t keep_all;             /* 1: as leaky CUDAIPC_LEAKY_NONE (0) */
  /* whether frames that arrive while the program is busy and max_held
   * are held are dropped, as cuipcsrc's leaky-type: CUDAIPC_LEAKY_AUTO
   * (the default) drops none of a stream that is not live (the producer
   * waits for this consumer) and the oldest of a live one. */
  int32_t leaky;
  /* how the producer tells of each frame, as cuipcsrc's announce:
   * CUDAIPC_ANNOUNCE_BY_SOCKET (the default) or _BY_SHARED_MEMORY, and
   * with the latter how long a wait reads the shared page busily before
   * it sleeps (spin_us, 0..1000). The last fields: a caller whose
   * struct_size ends before a field gets its default. */
  int32_t announce;
  uint32_t spin_us;
} cudaipc_consumer_options;

/* cudaipc_consumer_options' announce */
typedef enum
{
  CUDAIPC_ANNOUNCE_BY_SOCKET = 0,       /* a message on the socket */
  CUDAIPC_ANNOUNCE_BY_SHARED_MEMORY = 1,        /* through a page of shared
                                                 * memory of this consumer's */
} cudaipc_announce;

/* cudaipc_consumer_options' leaky */
typedef enum
{
  CUDAIPC_LEAKY_TYPE_AUTO = 0,  /* none when the stream is not live,
                                 * downstream when it is */
  CUDAIPC_LEAKY_TYPE_NONE = 1,  /* never drop: a slow consumer holds the
                                 * producer back */
  CUDAIPC_LEAKY_TYPE_DOWNSTREAM = 2,    /* drop the oldest waiting */
} cudaipc_leaky_type;

/* The defaults, as above. */
CUDAIPC_API void cudaipc_consumer_options_init (cudaipc_consumer_options *
    options);

/* A consumer of the producer on @socket_path (a path, or "@name" for an
 * abstract socket); @options may be NULL. Connects on the first next().
 * NULL only without memory or for a NULL path. */
CUDAIPC_API cudaipc_consumer *cudaipc_consumer_new (const char *socket_path,
    const cudaipc_consumer_options * options);
/* The next frame, within @timeout_ms (0: wait as long as it takes),
 * connecting first where needed: a connection waits for a producer as its
 * options say, and @timeout_ms counts from it. *@frame is set on
 * CUDAIPC_STATUS_OK only; the caller releases it. */
CUDAIPC_API cudaipc_status cudaipc_consumer_next (cudaipc_consumer * consumer,
    uint32_t timeout_ms, cudaipc_frame ** frame);
/* For a binding in another language: the error texts' hints name the
 * consumer's settings as its users know them ("raise connect_timeout")
 * instead of by the option fields above: @binding "python" (the Python
 * package's keywords) or "c" (the fields, the default). Before the first
 * next(). 1 where @binding is known, else 0 and nothing changes. */
CUDAIPC_API int cudaipc_consumer_set_binding (cudaipc_consumer * consumer,
    const char *binding);
/* The text of the last failure, "" after a success. */
CUDAIPC_API const char *cudaipc_consumer_error (cudaipc_consumer * consumer);
/* What went wrong without stopping the frames since the last call, one
 * a line, or NULL: metadata or events of the producer that this consumer
 * refused (dropped, the frames go out), in the words cuipcsrc warns with,
 * each once a connection. Valid until the next warning() or free(). */
CUDAIPC_API const char *cudaipc_consumer_warning (cudaipc_consumer *
    consumer);
/* Frames handed out and not released yet. */
CUDAIPC_API uint32_t cudaipc_consumer_held (cudaipc_consumer * consumer);
/* Frames dropped since it started: those of a live stream that arrived
 * while the program was busy and max_held were held (leaky), and those
 * the producer dropped this consumer behind. */
CUDAIPC_API uint64_t cudaipc_consumer_dropped (cudaipc_consumer *
    consumer);
/* Makes a next() that waits, in any thread, return
 * CUDAIPC_STATUS_CANCELLED at once, and every later next(): for a program
 * that stops. Any thread. */
CUDAIPC_API void cudaipc_consumer_cancel (cudaipc_consumer * consumer);
/* Says BYE to the producer; frames still held stay readable. A next() in
 * another thread is cancelled first, and waited for (Threads, above). */
CUDAIPC_API void cudaipc_consumer_free (cudaipc_consumer * consumer);

#define CUDAIPC_MAX_PLANES_INFO 4

typedef struct
{
  uint32_t struct_size;         /* set by the caller: sizeof (this) */
  uint32_t backend;             /* cudaipc_backend_type */
  int32_t device_id;            /* the CUDA device of @data (cuda) */
  uint32_t width, height;
  char format[16];              /* GStreamer's name: "NV12", "RGBA", ... */
  const char *caps;             /* the frame's caps, as a string */
  uint32_t n_planes;
  uint64_t plane_offset[CUDAIPC_MAX_PLANES_INFO];       /* from @data */
  uint32_t plane_stride[CUDAIPC_MAX_PLANES_INFO];       /* bytes */
  uint64_t size;                /* bytes of the frame */
  uintptr_t data;               /* device pointer (cuda) or host pointer
                                 * (host) of the frame's first byte */
  uint64_t number;              /* the producer's frame number */
  uint64_t offset;              /* the producer's buffer offset */
  uint64_t pts;                 /* the producer's PTS, ns; UINT64_MAX: none */
  uint64_t duration;            /* ns; UINT64_MAX: none */
  uint64_t capture_time;        /* the PTS as CLOCK_MONOTONIC ns, or
                                 * UINT64_MAX */
  uint64_t publish_time;        /* when the producer published it,
                                 * CLOCK_MONOTONIC ns */
  uint32_t n_regions;           /* regions of interest it carries */
  uint32_t flags;               /* the producer's GstBufferFlags */
  uint32_t n_objects;           /* object detections it carries (its
                                 * GstAnalyticsRelationMeta; 0 where this
                                 * build has no gstreamer-analytics) */
  uint64_t dropped_before;      /* frames this consumer dropped since the
                                 * frame before it */
} cudaipc_frame_info;

typedef struct
{
  char type[64];                /* "face", "car", ... ("" for none) */
  int32_t id, parent_id;
  uint32_t x, y, w, h;
  double confidence;            /* a "confidence" parameter, or -1 */
} cudaipc_region;

/* An object detection of GStreamer's analytics metas (GstAnalyticsODMtd
 * in a GstAnalyticsRelationMeta, GStreamer >= 1.24). */
typedef struct
{
  char label[64];               /* its object type ("" for none) */
  int32_t x, y, w, h;
  float rotation;               /* radians, clockwise (GStreamer >= 1.26;
                                 * else 0) */
  float confidence;             /* of its location, 0..1 */
  uint32_t id;                  /* its id in the frame's relation meta */
  int32_t reserved;
  int64_t track_id;             /* the id of a tracking entry it relates
                                 * to, or -1 */
} cudaipc_object;

/* What @frame is; strings are valid until it is released. @info's
 * struct_size says how much of it the caller knows (an older, shorter
 * cudaipc_frame_info gets what it has room for). */
CUDAIPC_API cudaipc_status cudaipc_frame_get_info (const cudaipc_frame * frame,
    cudaipc_frame_info * info);
/* Region of interest @index (< info.n_regions) of @frame. */
CUDAIPC_API cudaipc_status cudaipc_frame_get_region (const cudaipc_frame *
    frame, uint32_t index, cudaipc_region * region);
/* Object detection @index (< info.n_objects) of @frame. */
CUDAIPC_API cudaipc_status cudaipc_frame_get_object (const cudaipc_frame *
    frame, uint32_t index, cudaipc_object * object);
/* Another reference to @frame, which cudaipc_frame_release() drops
 * (version 2). */
CUDAIPC_API cudaipc_frame *cudaipc_frame_ref (cudaipc_frame * frame);
/* Drops a reference (any thread); the last gives the slot back to the
 * producer. NULL is fine. */
CUDAIPC_API void cudaipc_frame_release (cudaipc_frame * frame);

/* Plane @index (< info.n_planes) of @frame as an array of unsigned
 * elements of @element_bits (8 or 16): @shape is (rows, columns) for a
 * plane of one component a pixel, (rows, columns, components) for one of
 * several (NV12's UV, RGBA's pixels); @strides, in elements, are the
 * frame's own (its row stride). Valid until the frame is released.
 * CUDAIPC_STATUS_INVALID for another index, CUDAIPC_STATUS_FAILED for a
 * format whose planes are no such array (tiled, packed across bytes as
 * YUY2 or v210, elements over 16 bits): its bytes are still at
 * info.data (version 2). */
typedef struct
{
  uintptr_t data;               /* the plane's first element */
  uint32_t ndim;                /* 2 or 3 */
  uint32_t element_bits;        /* 8 or 16 */
  int64_t shape[3];
  int64_t strides[3];
} cudaipc_plane;

CUDAIPC_API cudaipc_status cudaipc_frame_get_plane (const cudaipc_frame *
    frame, uint32_t index, cudaipc_plane * plane);

/* DLPack (dlpack.h's unversioned DLManagedTensor, the tensor of a
 * "dltensor" capsule; version 2)
 *
 * A tensor over plane @plane of @frame (as cudaipc_frame_get_plane()
 * describes it), or over all the frame's bytes for -1 (one dimension,
 * 8 bits), on kDLCUDA (the frame's device) or kDLCPU. It holds a
 * reference to @frame, which its deleter drops: the slot stays the
 * producer's only once both the caller released the frame and whoever
 * took the tensor (torch, CuPy, a C++ framework) called the deleter.
 * The frame is complete already: there is nothing to wait for on any
 * stream. NULL where cudaipc_frame_get_plane() fails. */
CUDAIPC_API void *cudaipc_frame_to_dlpack (cudaipc_frame * frame,
    int32_t plane);
/* For bindings that hand such a tensor out in a "dltensor" capsule (a
 * Python binding): a capsule destructor that calls the tensor's deleter
 * where nobody consumed the capsule. @is_valid and @get_pointer are the
 * host's PyCapsule_IsValid and PyCapsule_GetPointer, given once before
 * the first capsule is destroyed; returns the destructor. */
CUDAIPC_API void *cudaipc_dlpack_capsule_destructor (void *is_valid,
    void *get_pointer);

/* Producer */

typedef struct cudaipc_producer cudaipc_producer;

typedef struct
{
  uint32_t struct_size;         /* sizeof (cudaipc_producer_options) */
  const char *name;             /* for the consumers' messages */
  uint32_t backend;             /* cudaipc_backend_type (auto; see
                                 * cudaipc_producer_backend()) */
  int32_t device_id;            /* (0) */
  uint32_t ring_size;           /* slots (4; 2..64) */
  int32_t wait_when_full;       /* wait for a free slot (1) or drop (0) */
  uint32_t full_timeout_ms;     /* how long to wait (1000; 0: ever) */
  uint32_t socket_mode;         /* the socket file's mode (0660) */
  /* the stream is live, a camera's (0: a file's or a decoder's, whose
   * consumers get every frame, the producer waiting for the slowest
   * without a time limit; 1: consumers keep the newest frames and a
   * publish() waits at most full_timeout_ms). The last field: a caller
   * whose struct_size ends before it gets 0. */
  int32_t live;
} cudaipc_producer_options;

CUDAIPC_API void cudaipc_producer_options_init (cudaipc_producer_options *
    options);
/* A producer listening on @socket_path, of frames of @caps (raw video,
 * fixed: format, width, height, framerate), with its ring for them made;
 * @options may be NULL. NULL on a failure, whose text
 * cudaipc_producer_last_error() gives: caps of frames that have no bytes
 * (a width or height of 0) included, which no publish() could match, and
 * a ring that cannot be made. */
CUDAIPC_API cudaipc_producer *cudaipc_producer_new (const char *socket_path,
    const char *caps, const cudaipc_producer_options * options);
/* The text of why the last cudaipc_producer_new() of this thread failed. */
CUDAIPC_API const char *cudaipc_producer_last_error (void);
/* Copies @size bytes at @data (device memory of the producer's device
 * where @on_device, else host memory) into a free slot and publishes it
 * with @pts (ns, UINT64_MAX: none). @timeout_ms: 0 is the options' own.
 * CUDAIPC_STATUS_TIMEOUT: the frame was dropped, the ring being full. */
CUDAIPC_API cudaipc_status cudaipc_producer_publish (cudaipc_producer *
    producer, uintptr_t data, uint64_t size, int on_device, uint64_t pts,
    uint32_t timeout_ms);
/* publish() with what a detector found on the frame: @regions become
 * GstVideoRegionOfInterestMeta (a confidence >= 0 as the "confidence"
 * field of a "detection" parameter), @objects object detections of a
 * GstAnalyticsRelationMeta (a track_id >= 0 adds a tracking entry the
 * detection relates to), as cuipcsink carries them: consumers read them
 * with cudaipc_frame_get_region() and _get_object(), cuipcsrc puts them
 * on its buffers. Either array may be NULL with a count of 0. Refused
 * (CUDAIPC_STATUS_INVALID, with the reason) before anything is copied:
 * objects where this build has no gstreamer-analytics, a label or type
 * without its NUL, a box with a negative size, more than the frame's
 * metadata holds (docs/protocol.md, Frame metadata: 32 KiB, 1024 metas). */
CUDAIPC_API cudaipc_status cudaipc_producer_publish_annotated
    (cudaipc_producer * producer, uintptr_t data, uint64_t size,
    int on_device, uint64_t pts, uint32_t timeout_ms,
    const cudaipc_region * regions, uint32_t n_regions,
    const cudaipc_object * objects, uint32_t n_objects);
/* Consumers past their handshake. */
CUDAIPC_API uint32_t cudaipc_producer_n_consumers (cudaipc_producer *
    producer);
/* The backend its ring is in, CUDAIPC_BACKEND_TYPE_CUDA or _HOST: what
 * backend auto chose (version 4). publish()'s @on_device needs _CUDA. */
CUDAIPC_API cudaipc_backend_type cudaipc_producer_backend (cudaipc_producer *
    producer);
/* Frames published and dropped since it started. */
CUDAIPC_API void cudaipc_producer_counts (cudaipc_producer * producer,
    uint64_t * published, uint64_t * dropped);
/* Ends the stream: consumers get EOS. */
CUDAIPC_API cudaipc_status cudaipc_producer_end (cudaipc_producer * producer);
CUDAIPC_API const char *cudaipc_producer_error (cudaipc_producer * producer);
/* Makes a publish() that waits for a free slot, in any thread, return
 * CUDAIPC_STATUS_CANCELLED at once, and every later publish() and end():
 * for a program that stops. Any thread (version 3). */
CUDAIPC_API void cudaipc_producer_cancel (cudaipc_producer * producer);
/* A publish() in another thread is cancelled first, and waited for
 * (Threads, above). */
CUDAIPC_API void cudaipc_producer_free (cudaipc_producer * producer);

#ifdef __cplusplus
}
#endif
#endif /* CUDAIPC_H */
