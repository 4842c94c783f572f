/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libcudaipc's consumer (cudaipc.h has the contract): a facade over the
 * consumer cuipcsrc uses (client.h), with cuipcsrc's connection and
 * reconnection rules and its error texts.
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
#include "ring/block.h"
#include "consumer/client.h"
#include "common/error.h"
#include "buffers/memory.h"
#include "metas/metas.h"

/* What frames and their consumer share: frames may outlive it. */
typedef struct
{
  gint refs;                    /* atomic */
  gint held;                    /* atomic: frames handed out, not released */
} Shared;

struct cudaipc_consumer
{
  CudaIpcClient *client;
  gchar *path;
  gchar *name;
  cudaipc_consumer_options opts;
  Shared *shared;
  gchar *error;
  gboolean connected_once;
  gboolean eos;
  GstCaps *caps_seen;           /* the caps caps_str was made of */
  gchar *caps_str;              /* GRefString: frames share it */
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
  g_return_if_fail (o != NULL);
  memset (o, 0, sizeof (*o));
  o->struct_size = sizeof (*o);
  o->device_id = 0;
  o->connect_timeout_ms = 5000;
  o->reconnect = 1;
  o->reconnect_timeout_ms = 0;
  o->max_held = 2;
  o->peer_access = 1;
  o->keep_all = 0;
}

cudaipc_consumer *
cudaipc_consumer_new (const char *socket_path,
    const cudaipc_consumer_options * options)
{
  cudaipc_consumer *c;
  GError *err = NULL;

  if (socket_path == NULL || socket_path[0] == '\0')
    return NULL;
  if (!ensure_gst (&err)) {
    g_clear_error (&err);
    return NULL;
  }

  c = g_new0 (cudaipc_consumer, 1);
  cudaipc_consumer_options_init (&c->opts);
  if (options && options->struct_size >= sizeof (c->opts))
    c->opts = *options;
  c->opts.max_held = CLAMP (c->opts.max_held, 1, CUDAIPC_MAX_SLOTS);
  c->path = g_strdup (socket_path);
  c->name = c->opts.name ? g_strdup (c->opts.name) :
      g_strdup_printf ("cudaipc-%d", (int) getpid ());
  c->opts.name = NULL;
  c->error = g_strdup ("");
  c->shared = g_new0 (Shared, 1);
  c->shared->refs = 1;
  c->client = cudaipc_client_new (&err);
  if (c->client == NULL) {
    g_clear_error (&err);
    cudaipc_consumer_free (c);
    return NULL;
  }
  /* frames beyond max_held, read while the program is busy, go back to
   * the producer at once: the producer is never held back (unless all
   * are to be kept) */
  cudaipc_client_set_max_held (c->client, c->opts.keep_all ? 0 :
      c->opts.max_held);
  cudaipc_client_set_peer_access (c->client, c->opts.peer_access != 0);
  return c;
}

static cudaipc_status
fail (cudaipc_consumer * c, cudaipc_status st, gchar * text)
{
  g_free (c->error);
  c->error = text;
  return st;
}

static cudaipc_status
fail_error (cudaipc_consumer * c, GError * err)
{
  cudaipc_status st = CUDAIPC_STATUS_FAILED;

  if (g_error_matches (err, CUDAIPC_ERROR, CUDAIPC_ERROR_PERMISSION) ||
      g_error_matches (err, CUDAIPC_ERROR, CUDAIPC_ERROR_VERSION) ||
      g_error_matches (err, CUDAIPC_ERROR, CUDAIPC_ERROR_DEVICE_MISMATCH))
    st = CUDAIPC_STATUS_REFUSED;
  else if (g_error_matches (err, CUDAIPC_ERROR, CUDAIPC_ERROR_TIMEOUT))
    st = CUDAIPC_STATUS_NO_PRODUCER;
  return fail (c, st, g_strdup (err->message));
}

static gint64
deadline_of (guint32 timeout_ms)
{
  return timeout_ms ? g_get_monotonic_time () + (gint64) timeout_ms * 1000 :
      0;
}

/* Connects as cuipcsrc does: connect_timeout_ms the first time,
 * reconnect_timeout_ms after a producer went away, within @deadline. */
static cudaipc_status
connect_producer (cudaipc_consumer * c, gint64 deadline)
{
  GError *err = NULL;
  guint timeout = c->connected_once ? c->opts.reconnect_timeout_ms :
      c->opts.connect_timeout_ms;
  CudaIpcClientStatus st;

  if (deadline > 0) {
    gint64 left = (deadline - g_get_monotonic_time ()) / 1000;

    left = MAX (left, 1);
    timeout = timeout ? MIN (timeout, (guint) MIN (left, G_MAXUINT)) :
        (guint) MIN (left, G_MAXUINT);
  }
  st = cudaipc_client_connect (c->client, c->path, c->name,
      c->opts.device_id, timeout, &err);
  if (st == CUDAIPC_CLIENT_CANCELLED)
    return fail (c, CUDAIPC_STATUS_CANCELLED, g_strdup ("cancelled"));
  if (st != CUDAIPC_CLIENT_OK) {
    cudaipc_status ret = fail_error (c, err);

    g_error_free (err);
    return ret;
  }
  c->connected_once = TRUE;
  return CUDAIPC_STATUS_OK;
}

static cudaipc_frame *
frame_new (cudaipc_consumer * c, CudaIpcClientItem * item)
{
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
    CudaIpcMetaCounts counts = { 0, };
    gsize len;
    const guint8 *data = g_bytes_get_data (f->item.frame.meta, &len);

    f->metas = gst_buffer_new ();
    cudaipc_metas_decode (data, len, f->metas, &counts, NULL);
    f->n_regions = cudaipc_annotations_n_regions (f->metas);
    f->n_objects = cudaipc_annotations_n_objects (f->metas);
  }
  return f;
}

cudaipc_status
cudaipc_consumer_next (cudaipc_consumer * c, uint32_t timeout_ms,
    cudaipc_frame ** frame)
{
  gint64 deadline;

  if (c == NULL || frame == NULL)
    return CUDAIPC_STATUS_INVALID;
  *frame = NULL;
  if (c->eos)
    return fail (c, CUDAIPC_STATUS_EOS, g_strdup_printf ("The producer on "
            "%s ended its stream", c->path));
  if (g_atomic_int_get (&c->shared->held) >= c->opts.max_held)
    return fail (c, CUDAIPC_STATUS_TOO_MANY_HELD, g_strdup_printf ("%d "
            "frames are held, and max_held is %d: release one before taking "
            "the next (the producer cannot reuse a slot a frame holds)",
            g_atomic_int_get (&c->shared->held), c->opts.max_held));

  deadline = deadline_of (timeout_ms);
  for (;;) {
    CudaIpcClientItem item = { 0, };
    GError *err = NULL;
    CudaIpcClientStatus st;

    if (!cudaipc_client_is_connected (c->client)) {
      cudaipc_status cs = connect_producer (c, deadline);

      if (cs != CUDAIPC_STATUS_OK)
        return cs;
    }

    st = cudaipc_client_receive_until (c->client, &item, deadline, &err);
    switch (st) {
      case CUDAIPC_CLIENT_OK:
        if (item.type == CUDAIPC_CLIENT_ITEM_FRAME) {
          *frame = frame_new (c, &item);
          return fail (c, CUDAIPC_STATUS_OK, g_strdup (""));
        }
        if (item.type == CUDAIPC_CLIENT_ITEM_EVENT &&
            GST_EVENT_TYPE (item.event) == GST_EVENT_EOS) {
          cudaipc_client_item_clear (&item);
          c->eos = TRUE;
          return fail (c, CUDAIPC_STATUS_EOS, g_strdup_printf ("The producer "
                  "on %s ended its stream", c->path));
        }
        cudaipc_client_item_clear (&item);
        continue;
      case CUDAIPC_CLIENT_TIMEOUT:
        return fail (c, CUDAIPC_STATUS_TIMEOUT, g_strdup_printf ("No frame "
                "from the producer on %s within %u ms", c->path, timeout_ms));
      case CUDAIPC_CLIENT_CANCELLED:
        return fail (c, CUDAIPC_STATUS_CANCELLED, g_strdup ("cancelled"));
      case CUDAIPC_CLIENT_CLOSED:{
        gchar *why = item.said_bye ? g_strdup_printf ("it said BYE (%s): %s",
            cudaipc_bye_reason_name (item.bye_reason), item.bye_text) :
            item.bye_text ? g_strdup (item.bye_text) :
            g_strdup ("it closed the connection without EOS");
        /* as cuipcsrc: a refusal would only be repeated */
        gboolean again = c->opts.reconnect && (!item.said_bye ||
            item.bye_reason == CUDAIPC_BYE_NORMAL ||
            item.bye_reason == CUDAIPC_BYE_TOO_SLOW);

        cudaipc_client_item_clear (&item);
        cudaipc_client_disconnect (c->client, CUDAIPC_BYE_NORMAL, NULL);
        if (again) {
          g_free (why);
          continue;
        }
        return fail (c, CUDAIPC_STATUS_PRODUCER_LOST,
            g_strdup_printf ("Lost the producer on %s: %s", c->path, why));
      }
      case CUDAIPC_CLIENT_ERROR:
      default:{
        cudaipc_status ret = fail (c, CUDAIPC_STATUS_FAILED,
            g_strdup (err ? err->message : "failed"));

        g_clear_error (&err);
        return ret;
      }
    }
  }
}

const char *
cudaipc_consumer_error (cudaipc_consumer * c)
{
  return c ? c->error : "no consumer";
}

uint32_t
cudaipc_consumer_held (cudaipc_consumer * c)
{
  return c ? (uint32_t) g_atomic_int_get (&c->shared->held) : 0;
}

void
cudaipc_consumer_cancel (cudaipc_consumer * c)
{
  if (c && c->client)
    cudaipc_client_cancel (c->client);
}

void
cudaipc_consumer_free (cudaipc_consumer * c)
{
  if (c == NULL)
    return;
  if (c->client) {
    cudaipc_client_disconnect (c->client, CUDAIPC_BYE_NORMAL,
        "the consumer stopped");
    cudaipc_client_free (c->client);
  }
  shared_unref (c->shared);
  gst_clear_caps (&c->caps_seen);
  g_clear_pointer (&c->caps_str, g_ref_string_release);
  g_free (c->path);
  g_free (c->name);
  g_free (c->error);
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
  g_return_val_if_fail (f != NULL, NULL);

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
