/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libcudaipc's consumer (cudaipc.h has the contract): the C API's types,
 * statuses and error strings over the consumer's core (reader.h), which
 * cuipcsrc uses too: the same connection and reconnection rules, the
 * same texts.
 *
 * Threads: the reader's next() belongs to one thread at a time, so the
 * consumer's next() runs under its lock, and a second thread waits there
 * for its turn; free() ends a wait in flight (the reader's cancel) and
 * frees once every call has returned (api-guard.h).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>
#include <unistd.h>
#include <gst/video/video.h>

#define CUDAIPC_COMPILATION
#include "api/cudaipc.h"

#include "api/api-annotations.h"
#include "api/api-guard.h"
#include "ring/block.h"
#include "consumer/reader.h"
#include "common/error.h"
#include "buffers/memory.h"

/* What frames and their consumer share: frames may outlive it. */
typedef struct
{
  gint refs;                    /* atomic */
  gint held;                    /* atomic: frames handed out, not released */
} Shared;

struct cudaipc_consumer
{
  CudaIpcApiGuard guard;        /* free() waits for the calls in flight */
  GMutex lock;                  /* one next() at a time: the fields below */
  CudaIpcReader *reader;
  Shared *shared;
  gchar *error;
  gboolean eos;
  GstCaps *caps_seen;           /* the caps caps_str was made of */
  gchar *caps_str;              /* GRefString: frames share it */
  gchar *warnings;              /* not read yet, one a line; or NULL */
  gchar *warnings_read;         /* what warning() gave last */
};

struct cudaipc_frame
{
  gint refs;                    /* atomic: the slot goes with the last */
  CudaIpcClientItem item;       /* the frame, its memory owned */
  Shared *shared;
  gchar *caps;                  /* GRefString, the consumer's caps_str */
  GstBuffer *metas;             /* the frame's metas, decoded; or NULL */
  guint n_regions, n_objects;
};

static void
shared_unref (Shared * s)
{
  if (g_atomic_int_dec_and_test (&s->refs))
    g_free (s);
}

static gboolean
ensure_gst (GError ** error)
{
  return gst_is_initialized () || gst_init_check (NULL, NULL, error);
}

void
cudaipc_consumer_options_init (cudaipc_consumer_options * o)
{
  if (o == NULL)
    return;
  memset (o, 0, sizeof (*o));
  o->struct_size = sizeof (*o);
  o->device_id = CUDAIPC_READER_DEFAULT_DEVICE_ID;
  o->connect_timeout_ms = CUDAIPC_READER_DEFAULT_CONNECT_TIMEOUT;
  o->reconnect = CUDAIPC_READER_DEFAULT_RECONNECT;
  o->reconnect_timeout_ms = CUDAIPC_READER_DEFAULT_RECONNECT_TIMEOUT;
  o->max_held = CUDAIPC_READER_DEFAULT_MAX_HELD;
  o->peer_access = CUDAIPC_READER_DEFAULT_PEER_ACCESS;
  o->keep_all = 0;
}

cudaipc_consumer *
cudaipc_consumer_new (const char *socket_path,
    const cudaipc_consumer_options * options)
{
  cudaipc_consumer_options opts;
  cudaipc_consumer *c;
  GError *err = NULL;
  g_autofree gchar *name = NULL;

  if (socket_path == NULL || socket_path[0] == '\0')
    return NULL;
  if (!ensure_gst (&err)) {
    g_clear_error (&err);
    return NULL;
  }

  cudaipc_consumer_options_init (&opts);
  /* a caller built against an older, shorter struct: what it has */
  if (options && options->struct_size >= G_STRUCT_OFFSET
      (cudaipc_consumer_options, leaky))
    memcpy (&opts, options, MIN (options->struct_size, sizeof (opts)));
  name = opts.name ? g_strdup (opts.name) :
      g_strdup_printf ("cudaipc-%d", (int) getpid ());

  c = g_new0 (cudaipc_consumer, 1);
  cudaipc_api_guard_init (&c->guard);
  g_mutex_init (&c->lock);
  c->error = g_strdup ("");
  c->shared = g_new0 (Shared, 1);
  c->shared->refs = 1;
  c->reader = cudaipc_reader_new ();
  cudaipc_reader_set_socket_path (c->reader, socket_path);
  cudaipc_reader_set_name (c->reader, name);
  /* hints name the option fields, not cuipcsrc's properties */
  cudaipc_reader_set_setting_names (c->reader, &cudaipc_setting_names_c);
  cudaipc_reader_set_device_id (c->reader, opts.device_id);
  cudaipc_reader_set_connect_timeout (c->reader, opts.connect_timeout_ms);
  cudaipc_reader_set_reconnect (c->reader, opts.reconnect != 0);
  /* as cuipcsrc's reconnect-timeout: 0 waits for ever */
  cudaipc_reader_set_reconnect_timeout (c->reader, opts.reconnect_timeout_ms);
  cudaipc_reader_set_peer_access (c->reader, opts.peer_access != 0);
  /* frames beyond max_held, read while the program is busy, go back to
   * the producer at once: the producer is never held back (unless all
   * are to be kept) */
  cudaipc_reader_set_max_held (c->reader,
      opts.max_held == CUDAIPC_MAX_HELD_AUTO ? CUDAIPC_MAX_HELD_AUTO :
      CLAMP (opts.max_held, 1, CUDAIPC_MAX_SLOTS));
  cudaipc_reader_set_keep_all (c->reader, opts.keep_all != 0);
  /* every frame of a stream that is not live, the newest of a live one,
   * as cuipcsrc */
  cudaipc_reader_set_leaky (c->reader, opts.keep_all ? CUDAIPC_LEAKY_NONE :
      opts.leaky == CUDAIPC_LEAKY_TYPE_NONE ? CUDAIPC_LEAKY_NONE :
      opts.leaky == CUDAIPC_LEAKY_TYPE_DOWNSTREAM ? CUDAIPC_LEAKY_DOWNSTREAM :
      CUDAIPC_LEAKY_AUTO);
  cudaipc_reader_set_announce (c->reader,
      opts.announce == CUDAIPC_ANNOUNCE_BY_SHARED_MEMORY ?
      CUDAIPC_ANNOUNCE_SHARED_MEMORY : CUDAIPC_ANNOUNCE_SOCKET);
  cudaipc_reader_set_spin_us (c->reader, MIN (opts.spin_us,
          CUDAIPC_MAX_SPIN_US));
  if (!cudaipc_reader_start (c->reader, &err)) {
    g_clear_error (&err);
    cudaipc_consumer_free (c);
    return NULL;
  }
  return c;
}

static cudaipc_status
fail (cudaipc_consumer * c, cudaipc_status st, gchar * text)
{
  g_free (c->error);
  c->error = text;
  return st;
}

/* Takes @err. */
static cudaipc_status
fail_error (cudaipc_consumer * c, cudaipc_status st, GError * err)
{
  st = fail (c, st, g_strdup (err ? err->message : "failed"));
  g_clear_error (&err);
  return st;
}

/* The status of a connection that could not be made. */
static cudaipc_status
connect_status (const GError * err)
{
  if (g_error_matches (err, CUDAIPC_ERROR, CUDAIPC_ERROR_PERMISSION) ||
      g_error_matches (err, CUDAIPC_ERROR, CUDAIPC_ERROR_VERSION) ||
      g_error_matches (err, CUDAIPC_ERROR, CUDAIPC_ERROR_DEVICE_MISMATCH))
    return CUDAIPC_STATUS_REFUSED;
  if (g_error_matches (err, CUDAIPC_ERROR, CUDAIPC_ERROR_TIMEOUT))
    return CUDAIPC_STATUS_NO_PRODUCER;
  return CUDAIPC_STATUS_FAILED;
}

static gint64
deadline_of (guint32 timeout_ms)
{
  return timeout_ms ? g_get_monotonic_time () + (gint64) timeout_ms * 1000 :
      0;
}

/* @text (taken) after the warnings not read yet. */
static void
add_warnings (cudaipc_consumer * c, gchar * text)
{
  gchar *all;

  if (text == NULL)
    return;
  all = c->warnings ? g_strconcat (c->warnings, "\n", text, NULL) : text;
  if (all != text)
    g_free (text);
  g_free (c->warnings);
  c->warnings = all;
}

static cudaipc_frame *
frame_new (cudaipc_consumer * c, CudaIpcClientItem * item)
{
  g_autoptr (GError) metas_err = NULL;
  cudaipc_frame *f = g_new0 (cudaipc_frame, 1);

  f->refs = 1;
  f->item = *item;
  memset (item, 0, sizeof (*item));
  f->shared = c->shared;
  g_atomic_int_inc (&c->shared->refs);
  g_atomic_int_inc (&c->shared->held);

  /* the caps as text, made once for a run of frames of the same caps */
  if (f->item.frame.caps) {
    GstCaps *caps = f->item.frame.caps;

    if (c->caps_str == NULL || (caps != c->caps_seen &&
            !gst_caps_is_equal (caps, c->caps_seen))) {
      gchar *text = gst_caps_to_string (caps);

      g_clear_pointer (&c->caps_str, g_ref_string_release);
      c->caps_str = g_ref_string_new (text);
      g_free (text);
    }
    gst_caps_replace (&c->caps_seen, caps);
    f->caps = g_ref_string_acquire (c->caps_str);
  }

  /* the regions it carries, read the way cuipcsrc reads them */
  if (f->item.frame.meta) {
    f->metas = gst_buffer_new ();
    cudaipc_reader_decode_metas (c->reader, f->item.frame.meta, f->metas,
        &metas_err);
    f->n_regions = cudaipc_annotations_n_regions (f->metas);
    f->n_objects = cudaipc_annotations_n_objects (f->metas);
  }
  /* what cuipcsrc posts as warnings, for warning() */
  add_warnings (c, cudaipc_reader_take_warnings (c->reader, metas_err));
  return f;
}

/* next() under the consumer's lock. */
static cudaipc_status
next_locked (cudaipc_consumer * c, uint32_t timeout_ms, cudaipc_frame ** frame)
{
  gint64 deadline;
  guint limit;

  /* a thread that waited for its turn while free() began */
  if (cudaipc_api_guard_closing (&c->guard))
    return fail (c, CUDAIPC_STATUS_CANCELLED, g_strdup ("cancelled: the "
            "consumer is being freed"));
  if (c->eos)
    return fail (c, CUDAIPC_STATUS_EOS, g_strdup_printf ("The producer on "
            "%s ended its stream", cudaipc_reader_get_path (c->reader)));
  if (g_atomic_int_get (&c->shared->held) > 0 &&
      (guint) g_atomic_int_get (&c->shared->held) >=
      (limit = cudaipc_reader_held_limit (c->reader)))
    return fail (c, CUDAIPC_STATUS_TOO_MANY_HELD, g_strdup_printf ("%d "
            "frames are held, and max_held is %u: release one before taking "
            "the next (the producer cannot reuse a slot a frame holds)",
            g_atomic_int_get (&c->shared->held), limit));

  deadline = deadline_of (timeout_ms);
  for (;;) {
    g_auto (CudaIpcReaderItem) item = { {0,}, };
    GError *err = NULL;
    /* a connection, the first or after a lost producer, waits for as long
     * as its own setting says, whatever @timeout_ms: the frame's time-out
     * counts from the connection */
    gboolean connected =
        cudaipc_client_is_connected (cudaipc_reader_get_client (c->reader));

    switch (cudaipc_reader_next (c->reader, connected ? deadline : 0, &item,
            &err)) {
      case CUDAIPC_READER_FRAME:
        *frame = frame_new (c, &item.item);
        if ((*frame)->item.frame.dropped_before > 0)
          GST_DEBUG ("%" G_GUINT64_FORMAT " frame(s) dropped before frame %"
              G_GUINT64_FORMAT, (*frame)->item.frame.dropped_before,
              (*frame)->item.frame.msg.seq);
        return fail (c, CUDAIPC_STATUS_OK, g_strdup (""));
      case CUDAIPC_READER_EVENT:
        if (GST_EVENT_TYPE (item.item.event) == GST_EVENT_EOS) {
          c->eos = TRUE;
          return fail (c, CUDAIPC_STATUS_EOS, g_strdup_printf ("The producer "
                  "on %s ended its stream",
                  cudaipc_reader_get_path (c->reader)));
        }
        continue;
      case CUDAIPC_READER_CONNECTED:
        deadline = deadline_of (timeout_ms);
        continue;
      case CUDAIPC_READER_LOST:
        if (item.reconnecting)
          continue;
        return fail_error (c, CUDAIPC_STATUS_PRODUCER_LOST, err);
      case CUDAIPC_READER_TIMEOUT:
        return fail (c, CUDAIPC_STATUS_TIMEOUT, g_strdup_printf ("No frame "
                "from the producer on %s within %u ms",
                cudaipc_reader_get_path (c->reader), timeout_ms));
      case CUDAIPC_READER_CANCELLED:
        return fail (c, CUDAIPC_STATUS_CANCELLED, g_strdup ("cancelled"));
      case CUDAIPC_READER_CONNECT_FAILED:
        return fail_error (c, connect_status (err), err);
      case CUDAIPC_READER_FAILED:
      default:
        return fail_error (c, CUDAIPC_STATUS_FAILED, err);
    }
  }
}

int
cudaipc_consumer_set_binding (cudaipc_consumer * c, const char *binding)
{
  const CudaIpcSettingNames *names = cudaipc_setting_names_lookup (binding);

  if (c == NULL || names == NULL || names == &cudaipc_setting_names_element)
    return 0;
  cudaipc_reader_set_setting_names (c->reader, names);
  return 1;
}

cudaipc_status
cudaipc_consumer_next (cudaipc_consumer * c, uint32_t timeout_ms,
    cudaipc_frame ** frame)
{
  cudaipc_status st;

  if (frame != NULL)
    *frame = NULL;
  if (c == NULL)
    return CUDAIPC_STATUS_INVALID;
  if (!cudaipc_api_guard_enter (&c->guard))
    return CUDAIPC_STATUS_CANCELLED;
  g_mutex_lock (&c->lock);
  if (frame == NULL)
    st = fail (c, CUDAIPC_STATUS_INVALID, g_strdup ("next() needs a place "
            "for the frame"));
  else
    st = next_locked (c, timeout_ms, frame);
  g_mutex_unlock (&c->lock);
  cudaipc_api_guard_leave (&c->guard);
  return st;
}

const char *
cudaipc_consumer_error (cudaipc_consumer * c)
{
  return c ? c->error : "no consumer";
}

const char *
cudaipc_consumer_warning (cudaipc_consumer * c)
{
  const char *text;

  if (c == NULL || !cudaipc_api_guard_enter (&c->guard))
    return NULL;
  g_mutex_lock (&c->lock);
  g_free (c->warnings_read);
  c->warnings_read = g_steal_pointer (&c->warnings);
  text = c->warnings_read;
  g_mutex_unlock (&c->lock);
  cudaipc_api_guard_leave (&c->guard);
  return text;
}

uint32_t
cudaipc_consumer_held (cudaipc_consumer * c)
{
  uint32_t held;

  if (c == NULL || !cudaipc_api_guard_enter (&c->guard))
    return 0;
  held = (uint32_t) g_atomic_int_get (&c->shared->held);
  cudaipc_api_guard_leave (&c->guard);
  return held;
}

uint64_t
cudaipc_consumer_dropped (cudaipc_consumer * c)
{
  CudaIpcClientStats stats;

  if (c == NULL || !cudaipc_api_guard_enter (&c->guard))
    return 0;
  cudaipc_client_get_stats (cudaipc_reader_get_client (c->reader), &stats);
  cudaipc_api_guard_leave (&c->guard);
  return stats.dropped;
}

void
cudaipc_consumer_cancel (cudaipc_consumer * c)
{
  /* once free() began, it cancels */
  if (c == NULL || !cudaipc_api_guard_enter (&c->guard))
    return;
  cudaipc_reader_cancel (c->reader);
  cudaipc_api_guard_leave (&c->guard);
}

void
cudaipc_consumer_free (cudaipc_consumer * c)
{
  if (c == NULL)
    return;
  /* no call starts now; those in flight return (a next() that waits,
   * CANCELLED), then the reader goes */
  cudaipc_api_guard_close (&c->guard);
  cudaipc_reader_cancel (c->reader);
  cudaipc_api_guard_wait (&c->guard);
  cudaipc_reader_free (c->reader);
  shared_unref (c->shared);
  gst_clear_caps (&c->caps_seen);
  g_clear_pointer (&c->caps_str, g_ref_string_release);
  g_free (c->error);
  g_free (c->warnings);
  g_free (c->warnings_read);
  g_mutex_clear (&c->lock);
  cudaipc_api_guard_clear (&c->guard);
  g_free (c);
}

/* Frames */

/* The first cudaipc_frame_info, before n_objects: what an older caller
 * knows. */
#define FRAME_INFO_V1_SIZE G_STRUCT_OFFSET (cudaipc_frame_info, n_objects)

/* The planes the FRAME describes, else those of its caps. */
static guint
frame_n_planes (const CudaIpcClientFrame * fr)
{
  return MIN (fr->msg.n_planes > 0 ? fr->msg.n_planes :
      GST_VIDEO_INFO_N_PLANES (&fr->info), CUDAIPC_MAX_PLANES_INFO);
}

static void
frame_plane (const CudaIpcClientFrame * fr, guint i, uint64_t * offset,
    uint32_t * stride)
{
  if (fr->msg.n_planes > 0) {
    *offset = fr->msg.planes[i].offset;
    *stride = fr->msg.planes[i].stride;
  } else {
    *offset = GST_VIDEO_INFO_PLANE_OFFSET (&fr->info, i);
    *stride = GST_VIDEO_INFO_PLANE_STRIDE (&fr->info, i);
  }
}

static uintptr_t
frame_data (const CudaIpcClientFrame * fr)
{
  return cudaipc_block_get_ptr (cudaipc_shared_block_get_block (fr->block)) +
      fr->memory->offset;
}

cudaipc_status
cudaipc_frame_get_info (const cudaipc_frame * f, cudaipc_frame_info * out)
{
  const CudaIpcClientFrame *fr;
  const GstVideoInfo *vi;
  CudaIpcBlock *block;
  cudaipc_frame_info all, *info = &all;
  guint32 size;

  if (f == NULL || out == NULL || out->struct_size < FRAME_INFO_V1_SIZE)
    return CUDAIPC_STATUS_INVALID;
  size = MIN (out->struct_size, sizeof (all));
  fr = &f->item.frame;
  vi = &fr->info;
  block = cudaipc_shared_block_get_block (fr->block);

  memset (info, 0, sizeof (*info));
  info->struct_size = sizeof (*info);
  info->backend = cudaipc_device_get_backend (cudaipc_block_get_device
      (block)) == CUDAIPC_BACKEND_CUDA ? CUDAIPC_BACKEND_TYPE_CUDA :
      CUDAIPC_BACKEND_TYPE_HOST;
  info->device_id = cudaipc_device_get_ordinal (cudaipc_block_get_device
      (block));
  info->width = GST_VIDEO_INFO_WIDTH (vi);
  info->height = GST_VIDEO_INFO_HEIGHT (vi);
  g_strlcpy (info->format, gst_video_format_to_string (GST_VIDEO_INFO_FORMAT
          (vi)), sizeof (info->format));
  info->caps = f->caps ? f->caps : "";
  info->n_planes = frame_n_planes (fr);
  for (guint i = 0; i < info->n_planes; i++)
    frame_plane (fr, i, &info->plane_offset[i], &info->plane_stride[i]);
  info->size = fr->msg.size;
  info->data = frame_data (fr);
  info->number = fr->msg.seq;
  info->offset = fr->msg.offset;
  info->pts = fr->msg.pts;
  info->duration = fr->msg.duration;
  info->capture_time = fr->msg.clock_time;
  info->publish_time = fr->msg.publish_time;
  info->n_regions = f->n_regions;
  info->flags = fr->msg.flags;
  info->n_objects = f->n_objects;
  info->dropped_before = fr->dropped_before;
  info->struct_size = size;
  memcpy (out, info, size);
  return CUDAIPC_STATUS_OK;
}

cudaipc_status
cudaipc_frame_get_plane (const cudaipc_frame * f, uint32_t index,
    cudaipc_plane * out)
{
  const CudaIpcClientFrame *fr;
  const GstVideoFormatInfo *finfo;
  gint comps[GST_VIDEO_MAX_COMPONENTS];
  guint bits = 0, bytes, pstride, width, height;
  uint64_t offset;
  uint32_t stride;

  if (f == NULL || out == NULL)
    return CUDAIPC_STATUS_INVALID;
  fr = &f->item.frame;
  if (index >= frame_n_planes (fr))
    return CUDAIPC_STATUS_INVALID;
  finfo = fr->info.finfo;
  if (finfo == NULL || GST_VIDEO_FORMAT_INFO_IS_TILED (finfo) ||
      index >= GST_VIDEO_FORMAT_INFO_N_PLANES (finfo))
    return CUDAIPC_STATUS_FAILED;
  gst_video_format_info_component (finfo, index, comps);
  if (comps[0] < 0)
    return CUDAIPC_STATUS_FAILED;       /* a palette */
  /* every component of the plane in one element of the same place in
   * each pixel group: bytes of 8 or 16 bits, little-endian */
  pstride = GST_VIDEO_FORMAT_INFO_PSTRIDE (finfo, comps[0]);
  for (guint i = 0; i < GST_VIDEO_MAX_COMPONENTS && comps[i] >= 0; i++) {
    gint c = comps[i];

    if (GST_VIDEO_FORMAT_INFO_PSTRIDE (finfo, c) != (gint) pstride ||
        GST_VIDEO_FORMAT_INFO_W_SUB (finfo, c) !=
        GST_VIDEO_FORMAT_INFO_W_SUB (finfo, comps[0]) ||
        GST_VIDEO_FORMAT_INFO_H_SUB (finfo, c) !=
        GST_VIDEO_FORMAT_INFO_H_SUB (finfo, comps[0]))
      return CUDAIPC_STATUS_FAILED;
    bits = MAX (bits, GST_VIDEO_FORMAT_INFO_DEPTH (finfo, c) +
        GST_VIDEO_FORMAT_INFO_SHIFT (finfo, c));
  }
  bytes = bits <= 8 ? 1 : bits <= 16 ? 2 : 0;
  frame_plane (fr, index, &offset, &stride);
  if (bytes == 0 || pstride == 0 || pstride % bytes != 0 ||
      stride % bytes != 0 || (bytes == 2 &&
          !GST_VIDEO_FORMAT_INFO_IS_LE (finfo)))
    return CUDAIPC_STATUS_FAILED;

  width = GST_VIDEO_INFO_WIDTH (&fr->info);
  height = GST_VIDEO_INFO_HEIGHT (&fr->info);
  memset (out, 0, sizeof (*out));
  out->data = frame_data (fr) + offset;
  out->element_bits = 8 * bytes;
  out->shape[0] = GST_VIDEO_FORMAT_INFO_SCALE_HEIGHT (finfo, comps[0], height);
  out->shape[1] = GST_VIDEO_FORMAT_INFO_SCALE_WIDTH (finfo, comps[0], width);
  out->strides[0] = stride / bytes;
  out->strides[1] = pstride / bytes;
  out->ndim = 2;
  if (pstride > bytes) {
    out->ndim = 3;
    out->shape[2] = pstride / bytes;
    out->strides[2] = 1;
  }
  return CUDAIPC_STATUS_OK;
}

cudaipc_status
cudaipc_frame_get_region (const cudaipc_frame * f, uint32_t index,
    cudaipc_region * region)
{
  if (f == NULL || region == NULL || f->metas == NULL ||
      index >= f->n_regions ||
      !cudaipc_annotations_get_region (f->metas, index, region))
    return CUDAIPC_STATUS_INVALID;
  return CUDAIPC_STATUS_OK;
}

cudaipc_status
cudaipc_frame_get_object (const cudaipc_frame * f, uint32_t index,
    cudaipc_object * object)
{
  if (f == NULL || object == NULL || f->metas == NULL ||
      index >= f->n_objects ||
      !cudaipc_annotations_get_object (f->metas, index, object))
    return CUDAIPC_STATUS_INVALID;
  return CUDAIPC_STATUS_OK;
}

cudaipc_frame *
cudaipc_frame_ref (cudaipc_frame * f)
{
  if (f == NULL)
    return NULL;
  g_atomic_int_inc (&f->refs);
  return f;
}

void
cudaipc_frame_release (cudaipc_frame * f)
{
  if (f == NULL || !g_atomic_int_dec_and_test (&f->refs))
    return;
  /* unreffing the frame's memory sends the RELEASE */
  cudaipc_client_item_clear (&f->item);
  g_atomic_int_add (&f->shared->held, -1);
  shared_unref (f->shared);
  gst_clear_buffer (&f->metas);
  g_clear_pointer (&f->caps, g_ref_string_release);
  g_free (f);
}
