/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libcudaipc's producer (cudaipc.h has the contract): a front door over
 * the producer's core that cuipcsink uses too (publisher.h), fed from a
 * pointer; this file says how it went in the C API's statuses and words.
 * Each copy into a slot completes on the host before the frame is
 * published (ordering=host), so consumers need no fence for these
 * frames.
 *
 * Threads: the publisher's producer-thread calls (publish, send_event)
 * come one at a time, so publish(), publish_annotated() and end() run
 * under the producer's lock, which also keeps the frame it reuses, its
 * count and its error text; cancel() flushes the publisher, which ends
 * a wait for a slot; free() cancels and frees once every call has
 * returned (api-guard.h).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>
#include <gst/video/video.h>

#define CUDAIPC_COMPILATION
#include "api/cudaipc.h"

#include "api/api-annotations.h"
#include "api/api-guard.h"
#include "media/media.h"
#include "producer/publisher.h"

struct cudaipc_producer
{
  CudaIpcApiGuard guard;        /* free() waits for the calls in flight */
  GMutex lock;                  /* one publish() or end() at a time: the
                                 * frame, count and error */
  gint cancelled;               /* atomic: cancel() */
  CudaIpcPublisher *publisher;
  GstVideoInfo info;
  GstClockTime duration;
  cudaipc_producer_options opts;
  guint64 count;
  gchar *error;
  GstBuffer *frame;             /* a frame's timestamps and offsets, made
                                 * once: its bytes come from a pointer */
};

static GPrivate last_error = G_PRIVATE_INIT (g_free);

void
cudaipc_producer_options_init (cudaipc_producer_options * o)
{
  if (o == NULL)
    return;
  memset (o, 0, sizeof (*o));
  o->struct_size = sizeof (*o);
  /* the element's default: the API's values are the library's */
  G_STATIC_ASSERT ((int) CUDAIPC_BACKEND_TYPE_HOST == CUDAIPC_BACKEND_HOST &&
      (int) CUDAIPC_BACKEND_TYPE_CUDA == CUDAIPC_BACKEND_CUDA &&
      (int) CUDAIPC_BACKEND_TYPE_AUTO == CUDAIPC_BACKEND_AUTO);
  o->backend = (uint32_t) CUDAIPC_PUBLISHER_DEFAULT_BACKEND;
  o->device_id = CUDAIPC_PUBLISHER_DEFAULT_DEVICE_ID;
  o->ring_size = CUDAIPC_PUBLISHER_DEFAULT_RING_SIZE;
  o->wait_when_full = CUDAIPC_PUBLISHER_DEFAULT_WAIT_WHEN_FULL;
  o->full_timeout_ms = CUDAIPC_PUBLISHER_DEFAULT_FULL_TIMEOUT_MS;
  o->socket_mode = CUDAIPC_PUBLISHER_DEFAULT_SOCKET_MODE;
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
  CudaIpcPublisherConfig config;
  GstCaps *caps;
  gboolean ok;

  cudaipc_api_guard_init (&p->guard);
  g_mutex_init (&p->lock);
  cudaipc_producer_options_init (&p->opts);
  /* a caller built against an older, shorter struct: what it has */
  if (options && options->struct_size >= G_STRUCT_OFFSET
      (cudaipc_producer_options, live))
    memcpy (&p->opts, options, MIN (options->struct_size, sizeof (p->opts)));
  p->opts.struct_size = sizeof (p->opts);
  p->error = g_strdup ("");
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
  /* no publish() could ever match their size */
  if (GST_VIDEO_INFO_WIDTH (&p->info) <= 0 ||
      GST_VIDEO_INFO_HEIGHT (&p->info) <= 0 || p->info.size == 0) {
    gst_caps_unref (caps);
    return new_failed (p, g_strdup_printf ("\"%s\": frames of %d x %d "
            "pixels of %s have no bytes, and a producer of them could never "
            "publish one", caps_str, GST_VIDEO_INFO_WIDTH (&p->info),
            GST_VIDEO_INFO_HEIGHT (&p->info),
            gst_video_format_to_string (GST_VIDEO_INFO_FORMAT (&p->info))));
  }
  p->duration = cudaipc_media_frame_duration (caps);
  gst_caps_unref (caps);

  /* each frame is written and complete before it goes out, so consumers
   * need no fence for it */
  cudaipc_publisher_config_init (&config);
  config.backend = p->opts.backend == CUDAIPC_BACKEND_TYPE_HOST ?
      CUDAIPC_BACKEND_HOST : p->opts.backend == CUDAIPC_BACKEND_TYPE_AUTO ?
      CUDAIPC_BACKEND_AUTO : CUDAIPC_BACKEND_CUDA;
  config.device_id = p->opts.device_id;
  config.socket_name = socket_path;
  config.socket_mode = p->opts.socket_mode;
  config.ring_size = CLAMP (p->opts.ring_size,
      CUDAIPC_PUBLISHER_MIN_RING_SIZE, CUDAIPC_PUBLISHER_MAX_RING_SIZE);
  config.name = p->opts.name ? p->opts.name : "cudaipc-producer";
  config.ordering = CUDAIPC_ORDERING_HOST;
  config.copier = FALSE;
  config.wait_when_full = p->opts.wait_when_full;
  config.full_timeout_ms = p->opts.full_timeout_ms;
  p->publisher = cudaipc_publisher_new (&config, NULL, NULL, NULL, &err);
  if (p->publisher == NULL)
    return new_failed (p, g_strdup (err->message));
  cudaipc_publisher_set_live (p->publisher, p->opts.live != 0);
  caps = gst_video_info_to_caps (&p->info);
  ok = cudaipc_publisher_set_caps (p->publisher, caps, &p->info, &err);
  gst_caps_unref (caps);
  if (!ok)
    return new_failed (p, g_strdup (err->message));
  p->frame = gst_buffer_new ();
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

static cudaipc_status
cancelled (cudaipc_producer * p)
{
  return fail (p, CUDAIPC_STATUS_CANCELLED, g_strdup ("cancelled: the "
          "producer is stopping"));
}

/* Under the producer's lock. */
static cudaipc_status
publish (cudaipc_producer * p, uintptr_t data, uint64_t size, int on_device,
    uint64_t pts, uint32_t timeout_ms, GstBuffer * metas)
{
  g_autoptr (GError) err = NULL;
  CudaIpcPublisherFrame frame = { 0 };
  CudaIpcPublished out;
  CudaIpcPublishResult res;

  if (g_atomic_int_get (&p->cancelled))
    return cancelled (p);
  if (data == 0)
    return fail (p, CUDAIPC_STATUS_INVALID, g_strdup ("no frame to publish "
            "(its data is NULL)"));
  if (size != p->info.size)
    return fail (p, CUDAIPC_STATUS_INVALID, g_strdup_printf ("a frame of %"
            G_GUINT64_FORMAT " bytes, where the caps' frames have %"
            G_GSIZE_FORMAT, size, p->info.size));

  /* the frame as a GstBuffer says it: the caps' layout, no flags */
  frame.buffer = metas ? metas : p->frame;
  GST_BUFFER_PTS (frame.buffer) = pts;
  GST_BUFFER_DTS (frame.buffer) = GST_CLOCK_TIME_NONE;
  GST_BUFFER_DURATION (frame.buffer) = p->duration;
  GST_BUFFER_OFFSET (frame.buffer) = p->count;
  GST_BUFFER_OFFSET_END (frame.buffer) = p->count + 1;
  frame.data = data;
  frame.size = size;
  frame.on_device = on_device;
  frame.full_timeout_ms = timeout_ms;
  frame.all_metas = TRUE;
  res = cudaipc_publisher_publish (p->publisher, &frame, &out, &err);
  /* a wait cancel() ended */
  if (res != CUDAIPC_PUBLISH_OK && g_atomic_int_get (&p->cancelled))
    return cancelled (p);
  switch (res) {
    case CUDAIPC_PUBLISH_OK:
      p->count++;
      return fail (p, CUDAIPC_STATUS_OK, g_strdup (""));
    case CUDAIPC_PUBLISH_INVALID:
      return fail (p, CUDAIPC_STATUS_INVALID, g_strdup_printf ("the frame's "
              "regions and objects do not fit in its metadata (at most %d "
              "bytes, %d metas)", CUDAIPC_MAX_META_BYTES, CUDAIPC_MAX_METAS));
    case CUDAIPC_PUBLISH_DROPPED:
      return fail (p, CUDAIPC_STATUS_TIMEOUT, g_strdup ("every slot is held "
              "by a consumer: the frame was dropped"));
    case CUDAIPC_PUBLISH_WRITE_FAILED:
      return fail (p, CUDAIPC_STATUS_FAILED,
          cudaipc_publisher_result_text (p->publisher,
              CUDAIPC_PUBLISH_WRITE_FAILED, &frame, &out, err, NULL));
    default:
      return fail (p, CUDAIPC_STATUS_FAILED, g_strdup (err ? err->message :
              "the producer is stopping"));
  }
}

cudaipc_status
cudaipc_producer_publish (cudaipc_producer * p, uintptr_t data,
    uint64_t size, int on_device, uint64_t pts, uint32_t timeout_ms)
{
  cudaipc_status st;

  if (p == NULL)
    return CUDAIPC_STATUS_INVALID;
  if (!cudaipc_api_guard_enter (&p->guard))
    return CUDAIPC_STATUS_CANCELLED;
  g_mutex_lock (&p->lock);
  st = publish (p, data, size, on_device, pts, timeout_ms, NULL);
  g_mutex_unlock (&p->lock);
  cudaipc_api_guard_leave (&p->guard);
  return st;
}

cudaipc_status
cudaipc_producer_publish_annotated (cudaipc_producer * p, uintptr_t data,
    uint64_t size, int on_device, uint64_t pts, uint32_t timeout_ms,
    const cudaipc_region * regions, uint32_t n_regions,
    const cudaipc_object * objects, uint32_t n_objects)
{
  GstBuffer *metas = NULL;
  gchar *why = NULL;
  cudaipc_status st;

  if (p == NULL)
    return CUDAIPC_STATUS_INVALID;
  if (!cudaipc_api_guard_enter (&p->guard))
    return CUDAIPC_STATUS_CANCELLED;
  g_mutex_lock (&p->lock);
  if ((regions == NULL && n_regions > 0) || (objects == NULL && n_objects > 0))
    st = fail (p, CUDAIPC_STATUS_INVALID, g_strdup_printf ("%u regions "
            "and %u objects: a count above 0 needs its array, not NULL",
            n_regions, n_objects));
  /* what the frame's metadata cannot hold, before anything is made */
  else if (n_regions > CUDAIPC_MAX_METAS || n_objects > CUDAIPC_MAX_META_ITEMS)
    st = fail (p, CUDAIPC_STATUS_INVALID, g_strdup_printf ("%u regions "
            "and %u objects: a frame carries at most %d regions and %d "
            "objects", n_regions, n_objects, CUDAIPC_MAX_METAS,
            CUDAIPC_MAX_META_ITEMS));
  else if ((metas = cudaipc_annotations_new (regions, n_regions, objects,
              n_objects, &why)) == NULL)
    st = fail (p, CUDAIPC_STATUS_INVALID, why);
  else
    st = publish (p, data, size, on_device, pts, timeout_ms, metas);
  g_mutex_unlock (&p->lock);
  cudaipc_api_guard_leave (&p->guard);
  gst_clear_buffer (&metas);
  return st;
}

uint32_t
cudaipc_producer_n_consumers (cudaipc_producer * p)
{
  uint32_t n;

  if (p == NULL || !cudaipc_api_guard_enter (&p->guard))
    return 0;
  n = cudaipc_publisher_get_n_clients (p->publisher);
  cudaipc_api_guard_leave (&p->guard);
  return n;
}

cudaipc_backend_type
cudaipc_producer_backend (cudaipc_producer * p)
{
  CudaIpcBackend backend;

  if (p == NULL || !cudaipc_api_guard_enter (&p->guard))
    return CUDAIPC_BACKEND_TYPE_AUTO;
  backend = cudaipc_device_get_backend (cudaipc_publisher_get_device
      (p->publisher));
  cudaipc_api_guard_leave (&p->guard);
  return backend == CUDAIPC_BACKEND_CUDA ? CUDAIPC_BACKEND_TYPE_CUDA :
      CUDAIPC_BACKEND_TYPE_HOST;
}

void
cudaipc_producer_counts (cudaipc_producer * p, uint64_t * published,
    uint64_t * dropped)
{
  CudaIpcPublisherStats st;

  if (published)
    *published = 0;
  if (dropped)
    *dropped = 0;
  if (p == NULL || !cudaipc_api_guard_enter (&p->guard))
    return;
  cudaipc_publisher_get_stats (p->publisher, &st);
  cudaipc_api_guard_leave (&p->guard);
  if (published)
    *published = st.server.frames_published;
  if (dropped)
    *dropped = st.server.frames_dropped;
  cudaipc_publisher_stats_clear (&st);
}

/* Under the producer's lock. */
static cudaipc_status
end (cudaipc_producer * p)
{
  g_autoptr (GError) err = NULL;
  GstEvent *eos;
  gboolean ok;

  if (g_atomic_int_get (&p->cancelled))
    return cancelled (p);
  eos = gst_event_new_eos ();
  ok = cudaipc_publisher_send_event (p->publisher, eos, GST_CLOCK_TIME_NONE,
      &err);
  gst_event_unref (eos);
  if (!ok)
    return fail (p, CUDAIPC_STATUS_FAILED, g_strdup (err->message));
  return fail (p, CUDAIPC_STATUS_OK, g_strdup (""));
}

cudaipc_status
cudaipc_producer_end (cudaipc_producer * p)
{
  cudaipc_status st;

  if (p == NULL)
    return CUDAIPC_STATUS_INVALID;
  if (!cudaipc_api_guard_enter (&p->guard))
    return CUDAIPC_STATUS_CANCELLED;
  g_mutex_lock (&p->lock);
  st = end (p);
  g_mutex_unlock (&p->lock);
  cudaipc_api_guard_leave (&p->guard);
  return st;
}

/* The publisher's flushing ends every wait at once, and each later one;
 * nothing unflushes it. */
static void
cancel (cudaipc_producer * p)
{
  g_atomic_int_set (&p->cancelled, 1);
  if (p->publisher)
    cudaipc_publisher_set_flushing (p->publisher, TRUE);
}

void
cudaipc_producer_cancel (cudaipc_producer * p)
{
  /* once free() began, it cancels */
  if (p == NULL || !cudaipc_api_guard_enter (&p->guard))
    return;
  cancel (p);
  cudaipc_api_guard_leave (&p->guard);
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
  /* no call starts now; those in flight return (a publish() that waits
   * for a slot, CANCELLED), then the publisher goes */
  cudaipc_api_guard_close (&p->guard);
  cancel (p);
  cudaipc_api_guard_wait (&p->guard);
  cudaipc_publisher_free (p->publisher);
  gst_clear_buffer (&p->frame);
  g_free (p->error);
  g_mutex_clear (&p->lock);
  cudaipc_api_guard_clear (&p->guard);
  g_free (p);
}
