/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libcudaipc's producer (cudaipc.h has the contract): the server cuipcsink
 * uses (server.h), fed from a pointer. Each copy into a slot completes on
 * the host before the frame is published (ordering=host), so consumers
 * need no fence for these frames.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>
#include <gst/video/video.h>

#define CUDAIPC_COMPILATION
#include "api/cudaipc.h"

#include "api/api-annotations.h"
#include "ring/block.h"
#include "device/cuda-loader.h"
#include "device/device.h"
#include "common/error.h"
#include "media/media.h"
#include "metas/metas.h"
#include "producer/server.h"

struct cudaipc_producer
{
  CudaIpcDevice *dev;
  CudaIpcServer *server;
  GstVideoInfo info;
  GstClockTime duration;
  cudaipc_producer_options opts;
  guint64 count;
  gchar *error;
  GByteArray *meta_blob;        /* the last frame's metas, which its FRAME
                                 * borrows */
};

static GPrivate last_error = G_PRIVATE_INIT (g_free);

void
cudaipc_producer_options_init (cudaipc_producer_options * o)
{
  g_return_if_fail (o != NULL);
  memset (o, 0, sizeof (*o));
  o->struct_size = sizeof (*o);
  o->backend = CUDAIPC_BACKEND_TYPE_CUDA;
  o->ring_size = 4;
  o->wait_when_full = 1;
  o->full_timeout_ms = 1000;
  o->socket_mode = 0660;
}

static cudaipc_producer *
new_failed (cudaipc_producer * p, gchar * text)
{
  g_private_replace (&last_error, text);
  cudaipc_producer_free (p);
  return NULL;
}

const char *
cudaipc_producer_last_error (void)
{
  const gchar *e = g_private_get (&last_error);

  return e ? e : "";
}

cudaipc_producer *
cudaipc_producer_new (const char *socket_path, const char *caps_str,
    const cudaipc_producer_options * options)
{
  g_autoptr (GError) err = NULL;
  cudaipc_producer *p = g_new0 (cudaipc_producer, 1);
  CudaIpcServerConfig config;
  GstCaps *caps;

  cudaipc_producer_options_init (&p->opts);
  if (options && options->struct_size >= sizeof (p->opts))
    p->opts = *options;
  p->error = g_strdup ("");
  p->meta_blob = g_byte_array_new ();
  if (socket_path == NULL || caps_str == NULL)
    return new_failed (p, g_strdup ("a socket path and caps are needed"));
  if (!gst_is_initialized () && !gst_init_check (NULL, NULL, &err))
    return new_failed (p, g_strdup (err->message));

  caps = gst_caps_from_string (caps_str);
  /* a format GStreamer does not know is ours to say, not its log's */
  if (caps && gst_caps_get_size (caps) == 1) {
    const gchar *fmt = gst_structure_get_string (gst_caps_get_structure (caps,
            0), "format");

    if (fmt == NULL ||
        gst_video_format_from_string (fmt) == GST_VIDEO_FORMAT_UNKNOWN)
      gst_clear_caps (&caps);
  }
  if (caps == NULL || !gst_caps_is_fixed (caps) ||
      !gst_video_info_from_caps (&p->info, caps)) {
    gst_clear_caps (&caps);
    return new_failed (p, g_strdup_printf ("\"%s\" are not fixed raw-video "
            "caps (format, width, height and framerate)", caps_str));
  }
  p->duration = cudaipc_media_frame_duration (caps);
  gst_caps_unref (caps);

  p->dev = cudaipc_device_new (p->opts.backend == CUDAIPC_BACKEND_TYPE_HOST ?
      CUDAIPC_BACKEND_HOST : CUDAIPC_BACKEND_CUDA, p->opts.device_id, &err);
  if (p->dev == NULL)
    return new_failed (p, g_strdup (err->message));

  cudaipc_server_config_init (&config);
  config.socket_name = socket_path;
  config.mode = p->opts.socket_mode;
  config.n_slots = CLAMP (p->opts.ring_size, 2, CUDAIPC_MAX_SLOTS);
  config.name = p->opts.name ? p->opts.name : "cudaipc-producer";
  config.ordering = CUDAIPC_ORDERING_HOST;
  p->server = cudaipc_server_new (p->dev, &config, NULL, NULL, &err);
  if (p->server == NULL)
    return new_failed (p, g_strdup (err->message));
  {
    gchar *s = gst_caps_to_string (caps = gst_video_info_to_caps (&p->info));
    gboolean ok = cudaipc_server_set_caps (p->server, s, p->info.size, &err);

    g_free (s);
    gst_caps_unref (caps);
    if (!ok)
      return new_failed (p, g_strdup (err->message));
  }
  p->opts.name = NULL;
  return p;
}

static cudaipc_status
fail (cudaipc_producer * p, cudaipc_status st, gchar * text)
{
  g_free (p->error);
  p->error = text;
  return st;
}

/* @size bytes at @data into the slot at @dst, complete on return. */
static gboolean
copy_in (cudaipc_producer * p, guintptr dst, uintptr_t data, gsize size,
    gboolean on_device, GError ** error)
{
  const CudaIpcCudaFuncs *cu;
  gboolean ok;

  if (cudaipc_device_get_backend (p->dev) == CUDAIPC_BACKEND_HOST) {
    if (on_device) {
      g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_INVALID,
          "device memory given to a producer of the host backend");
      return FALSE;
    }
    memcpy ((void *) dst, (const void *) data, size);
    return TRUE;
  }
  if (!on_device)
    return cudaipc_device_write (p->dev, dst, (const void *) data, size,
        error);
  if (!cudaipc_device_push (p->dev, error))
    return FALSE;
  cu = cudaipc_cuda ();
  ok = cudaipc_cuda_check (cu->MemcpyDtoD ((CUdeviceptr) dst, (CUdeviceptr)
          data, size), "cuMemcpyDtoD", error) &&
      cudaipc_cuda_check (cu->StreamSynchronize (NULL),
      "cuStreamSynchronize", error);
  cudaipc_device_pop (p->dev);
  return ok;
}

/* @metas (or NULL) encoded for the FRAME @f, into the producer's blob;
 * FALSE when not all of them fit. */
static gboolean
encode_metas (cudaipc_producer * p, GstBuffer * metas, CudaIpcFrameMsg * f)
{
  CudaIpcMetaCounts counts = { 0, };

  g_byte_array_set_size (p->meta_blob, 0);
  if (metas)
    cudaipc_metas_encode (metas, NULL, p->meta_blob, &counts);
  f->meta = p->meta_blob->len ? p->meta_blob->data : NULL;
  f->meta_len = p->meta_blob->len;
  return counts.dropped == 0;
}

static cudaipc_status
publish (cudaipc_producer * p, uintptr_t data, uint64_t size, int on_device,
    uint64_t pts, uint32_t timeout_ms, GstBuffer * metas)
{
  g_autoptr (GError) err = NULL;
  CudaIpcFrameMsg f = { 0 };
  CudaIpcBlock *block = NULL;
  CudaIpcServerStatus st;
  guint slot = 0;
  gint64 deadline;
  guint wait = timeout_ms ? timeout_ms : p->opts.full_timeout_ms;

  if (p == NULL || data == 0)
    return CUDAIPC_STATUS_INVALID;
  if (size != p->info.size)
    return fail (p, CUDAIPC_STATUS_INVALID, g_strdup_printf ("a frame of %"
            G_GUINT64_FORMAT " bytes, where the caps' frames have %"
            G_GSIZE_FORMAT, size, p->info.size));

  if (!encode_metas (p, metas, &f))
    return fail (p, CUDAIPC_STATUS_INVALID, g_strdup_printf ("the frame's "
            "regions and objects do not fit in its metadata (at most %d "
            "bytes, %d metas)", CUDAIPC_MAX_META_BYTES, CUDAIPC_MAX_METAS));
  deadline = !p->opts.wait_when_full ? 0 : wait ?
      g_get_monotonic_time () + (gint64) wait * 1000 : -1;
  st = cudaipc_server_acquire (p->server, size, deadline, &slot, &block, &err);
  if (st == CUDAIPC_SERVER_TIMEOUT)
    return fail (p, CUDAIPC_STATUS_TIMEOUT, g_strdup ("every slot is held by "
            "a consumer: the frame was dropped"));
  if (st != CUDAIPC_SERVER_OK)
    return fail (p, CUDAIPC_STATUS_FAILED, g_strdup (err ? err->message :
            "the producer is stopping"));
  if (!copy_in (p, cudaipc_block_get_ptr (block), data, size, on_device,
          &err)) {
    cudaipc_server_abort (p->server, slot);
    return fail (p, CUDAIPC_STATUS_FAILED, g_strdup_printf ("Cannot copy the "
            "frame into the shared ring: %s", err->message));
  }

  f.size = size;
  f.pts = pts;
  f.dts = GST_CLOCK_TIME_NONE;
  f.duration = p->duration;
  f.offset = p->count;
  f.offset_end = p->count + 1;
  /* captured now, as far as this producer knows */
  f.clock_time = g_get_monotonic_time () * 1000;
  f.n_planes = GST_VIDEO_INFO_N_PLANES (&p->info);
  for (guint i = 0; i < f.n_planes; i++) {
    f.planes[i].offset = GST_VIDEO_INFO_PLANE_OFFSET (&p->info, i);
    f.planes[i].stride = GST_VIDEO_INFO_PLANE_STRIDE (&p->info, i);
  }
  cudaipc_server_publish (p->server, slot, &f);
  p->count++;
  return fail (p, CUDAIPC_STATUS_OK, g_strdup (""));
}

cudaipc_status
cudaipc_producer_publish (cudaipc_producer * p, uintptr_t data,
    uint64_t size, int on_device, uint64_t pts, uint32_t timeout_ms)
{
  return publish (p, data, size, on_device, pts, timeout_ms, NULL);
}

cudaipc_status
cudaipc_producer_publish_annotated (cudaipc_producer * p, uintptr_t data,
    uint64_t size, int on_device, uint64_t pts, uint32_t timeout_ms,
    const cudaipc_region * regions, uint32_t n_regions,
    const cudaipc_object * objects, uint32_t n_objects)
{
  GstBuffer *metas;
  gchar *why = NULL;
  cudaipc_status st;

  if (p == NULL || (regions == NULL && n_regions > 0) ||
      (objects == NULL && n_objects > 0))
    return CUDAIPC_STATUS_INVALID;
  /* what the frame's metadata cannot hold, before anything is made */
  if (n_regions > CUDAIPC_MAX_METAS || n_objects > CUDAIPC_MAX_META_ITEMS)
    return fail (p, CUDAIPC_STATUS_INVALID, g_strdup_printf ("%u regions "
            "and %u objects: a frame carries at most %d regions and %d "
            "objects", n_regions, n_objects, CUDAIPC_MAX_METAS,
            CUDAIPC_MAX_META_ITEMS));
  metas = cudaipc_annotations_new (regions, n_regions, objects, n_objects,
      &why);
  if (metas == NULL)
    return fail (p, CUDAIPC_STATUS_INVALID, why);
  st = publish (p, data, size, on_device, pts, timeout_ms, metas);
  gst_buffer_unref (metas);
  return st;
}

uint32_t
cudaipc_producer_n_consumers (cudaipc_producer * p)
{
  return p ? cudaipc_server_get_n_clients (p->server) : 0;
}

void
cudaipc_producer_counts (cudaipc_producer * p, uint64_t * published,
    uint64_t * dropped)
{
  CudaIpcServerStats st;

  if (p == NULL)
    return;
  cudaipc_server_get_stats (p->server, &st);
  if (published)
    *published = st.frames_published;
  if (dropped)
    *dropped = st.frames_dropped;
  cudaipc_server_stats_clear (&st);
}

cudaipc_status
cudaipc_producer_end (cudaipc_producer * p)
{
  g_autoptr (GError) err = NULL;
  GstEvent *eos = gst_event_new_eos ();
  gboolean ok;

  if (p == NULL)
    return CUDAIPC_STATUS_INVALID;
  ok = cudaipc_server_send_event (p->server, eos, GST_CLOCK_TIME_NONE, &err);
  gst_event_unref (eos);
  if (!ok)
    return fail (p, CUDAIPC_STATUS_FAILED, g_strdup (err->message));
  return fail (p, CUDAIPC_STATUS_OK, g_strdup (""));
}

const char *
cudaipc_producer_error (cudaipc_producer * p)
{
  return p ? p->error : "no producer";
}

void
cudaipc_producer_free (cudaipc_producer * p)
{
  if (p == NULL)
    return;
  if (p->server) {
    cudaipc_server_stop (p->server);
    cudaipc_server_free (p->server);
  }
  g_clear_pointer (&p->dev, cudaipc_device_unref);
  g_byte_array_unref (p->meta_blob);
  g_free (p->error);
  g_free (p);
}
