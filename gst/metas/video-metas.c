/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The codecs of the video library's metas and of reference timestamps
 * (metas-private.h has the contract, docs/protocol.md the layouts):
 * regions of interest with their parameters, time codes with their daily
 * jam, crops, reference timestamps with their caps.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/video/video.h>

#include "media/media.h"
#include "media/peer-names.h"
#include "media/uniform.h"
#include "metas/metas-private.h"
#include "metas/structure-codec.h"

/* Writing */

gboolean
cudaipc_metas_encode_roi (const CudaIpcMetaCodec * codec, GstMeta * meta,
    CudaIpcMetaWriter * mw)
{
  GstVideoRegionOfInterestMeta *roi = (GstVideoRegionOfInterestMeta *) meta;
  GstByteWriter *w = &mw->w;
  guint n = g_list_length (roi->params);

  /* the type's reference, then the rest of the region, checked once */
  if (n > codec->max_items ||
      !cudaipc_meta_writer_put_name (mw,
          cudaipc_metas_quark_str (roi->roi_type), -1, FALSE) ||
      !gst_byte_writer_ensure_free_space (w, 26))
    return FALSE;
  gst_byte_writer_put_uint16_le_unchecked (w, n);
  gst_byte_writer_put_int32_le_unchecked (w, roi->id);
  gst_byte_writer_put_int32_le_unchecked (w, roi->parent_id);
  gst_byte_writer_put_uint32_le_unchecked (w, roi->x);
  gst_byte_writer_put_uint32_le_unchecked (w, roi->y);
  gst_byte_writer_put_uint32_le_unchecked (w, roi->w);
  gst_byte_writer_put_uint32_le_unchecked (w, roi->h);
  for (GList * l = roi->params; l; l = l->next) {
    if (!cudaipc_metas_put_structure (mw, l->data))
      return FALSE;
  }
  return TRUE;
}

gboolean
cudaipc_metas_encode_timecode (const CudaIpcMetaCodec * codec, GstMeta * meta,
    CudaIpcMetaWriter * mw)
{
  GstByteWriter *w = &mw->w;
  const GstVideoTimeCode *tc = &((GstVideoTimeCodeMeta *) meta)->tc;
  gchar *jam = tc->config.latest_daily_jam ?
      g_date_time_format_iso8601 (tc->config.latest_daily_jam) : NULL;
  gboolean ok;

  ok = gst_byte_writer_put_uint32_le (w, tc->config.fps_n) &&
      gst_byte_writer_put_uint32_le (w, tc->config.fps_d) &&
      gst_byte_writer_put_uint32_le (w, tc->config.flags) &&
      gst_byte_writer_put_uint32_le (w, tc->hours) &&
      gst_byte_writer_put_uint32_le (w, tc->minutes) &&
      gst_byte_writer_put_uint32_le (w, tc->seconds) &&
      gst_byte_writer_put_uint32_le (w, tc->frames) &&
      gst_byte_writer_put_uint32_le (w, tc->field_count) &&
      cudaipc_metas_put_str (w, jam ? jam : "");
  g_free (jam);
  return ok;
}

gboolean
cudaipc_metas_encode_crop (const CudaIpcMetaCodec * codec, GstMeta * meta,
    CudaIpcMetaWriter * mw)
{
  GstByteWriter *w = &mw->w;
  GstVideoCropMeta *crop = (GstVideoCropMeta *) meta;

  return gst_byte_writer_put_uint32_le (w, crop->x) &&
      gst_byte_writer_put_uint32_le (w, crop->y) &&
      gst_byte_writer_put_uint32_le (w, crop->width) &&
      gst_byte_writer_put_uint32_le (w, crop->height);
}

gboolean
cudaipc_metas_encode_reference_timestamp (const CudaIpcMetaCodec * codec,
    GstMeta * meta, CudaIpcMetaWriter * mw)
{
  GstByteWriter *w = &mw->w;
  GstReferenceTimestampMeta *ref = (GstReferenceTimestampMeta *) meta;
  gchar *caps = ref->reference ? gst_caps_to_string (ref->reference) : NULL;
  gboolean ok;

  ok = caps != NULL && cudaipc_metas_put_str (w, caps) &&
      gst_byte_writer_put_uint64_le (w, ref->timestamp) &&
      gst_byte_writer_put_uint64_le (w, ref->duration);
  g_free (caps);
  return ok;
}

/* Reading */

gboolean
cudaipc_metas_decode_roi (const CudaIpcMetaCodec * codec, GstByteReader * r,
    CudaIpcMetaNames * names, GstBuffer * buf, gboolean * added,
    GError ** error)
{
  /* all of a region's parameters are read before its meta is made; most
   * have one or two */
  GstStructure *few[8], **params = few;
  guint16 type, n;
  gint32 id, parent;
  guint32 x, y, w, h, got = 0;
  GQuark q;
  GstVideoRegionOfInterestMeta *roi;

  if (gst_byte_reader_get_remaining (r) < 28)
    return cudaipc_metas_bad (error, "a region of interest is truncated");
  type = gst_byte_reader_get_uint16_le_unchecked (r);
  n = gst_byte_reader_get_uint16_le_unchecked (r);
  id = gst_byte_reader_get_int32_le_unchecked (r);
  parent = gst_byte_reader_get_int32_le_unchecked (r);
  x = gst_byte_reader_get_uint32_le_unchecked (r);
  y = gst_byte_reader_get_uint32_le_unchecked (r);
  w = gst_byte_reader_get_uint32_le_unchecked (r);
  h = gst_byte_reader_get_uint32_le_unchecked (r);
  if (!cudaipc_metas_check_count (n, codec->max_items, error))
    return FALSE;
  if (n > G_N_ELEMENTS (few))
    params = g_new (GstStructure *, n);
  for (; got < n; got++) {
    params[got] = cudaipc_metas_get_structure (r, names, error);
    if (params[got] == NULL)
      goto fail;
  }
  if (!cudaipc_metas_at_end (r, error) ||
      !cudaipc_meta_names_lookup (names, type, NULL, &q, error))
    goto fail;

  roi = gst_buffer_add_video_region_of_interest_meta_id (buf, q, x, y, w, h);
  roi->id = id;
  roi->parent_id = parent;
  /* the meta takes them */
  for (guint i = 0; i < n; i++)
    gst_video_region_of_interest_meta_add_param (roi, params[i]);
  if (params != few)
    g_free (params);
  return TRUE;

fail:
  for (guint i = 0; i < got; i++)
    gst_structure_free (params[i]);
  if (params != few)
    g_free (params);
  return FALSE;
}

gboolean
cudaipc_metas_decode_timecode (const CudaIpcMetaCodec * codec,
    GstByteReader * r, CudaIpcMetaNames * names, GstBuffer * buf,
    gboolean * added, GError ** error)
{
  guint32 v[8];
  const gchar *jam_str;
  GDateTime *jam = NULL;
  GstVideoTimeCode tc;
  gboolean ok;

  for (guint i = 0; i < G_N_ELEMENTS (v); i++) {
    if (!gst_byte_reader_get_uint32_le (r, &v[i]))
      return cudaipc_metas_bad (error, "a time code is truncated");
  }
  if (!cudaipc_metas_get_str (r, &jam_str, error) ||
      !cudaipc_metas_at_end (r, error))
    return FALSE;
  if (jam_str[0] && !(jam = g_date_time_new_from_iso8601 (jam_str, NULL)))
    return cudaipc_metas_bad (error,
        "a time code's daily jam is not an ISO 8601 time");
  gst_video_time_code_init (&tc, v[0], v[1], jam, (GstVideoTimeCodeFlags)
      v[2], v[3], v[4], v[5], v[6], v[7]);
  ok = gst_video_time_code_is_valid (&tc);
  if (ok)
    gst_buffer_add_video_time_code_meta (buf, &tc);
  else
    cudaipc_metas_bad (error, "a time code is not valid");
  gst_video_time_code_clear (&tc);
  if (jam)
    g_date_time_unref (jam);
  return ok;
}

gboolean
cudaipc_metas_decode_crop (const CudaIpcMetaCodec * codec, GstByteReader * r,
    CudaIpcMetaNames * names, GstBuffer * buf, gboolean * added,
    GError ** error)
{
  guint32 x, y, w, h;
  GstVideoCropMeta *crop;

  if (!gst_byte_reader_get_uint32_le (r, &x) ||
      !gst_byte_reader_get_uint32_le (r, &y) ||
      !gst_byte_reader_get_uint32_le (r, &w) ||
      !gst_byte_reader_get_uint32_le (r, &h))
    return cudaipc_metas_bad (error, "a crop is truncated");
  if (!cudaipc_metas_at_end (r, error))
    return FALSE;
  crop = gst_buffer_add_video_crop_meta (buf);
  crop->x = x;
  crop->y = y;
  crop->width = w;
  crop->height = h;
  return TRUE;
}

gboolean
cudaipc_metas_decode_reference_timestamp (const CudaIpcMetaCodec * codec,
    GstByteReader * r, CudaIpcMetaNames * names, GstBuffer * buf,
    gboolean * added, GError ** error)
{
  const gchar *str;
  guint64 ts, duration;
  GstCaps *caps;

  if (!cudaipc_metas_get_str (r, &str, error))
    return FALSE;
  if (!gst_byte_reader_get_uint64_le (r, &ts) ||
      !gst_byte_reader_get_uint64_le (r, &duration))
    return cudaipc_metas_bad (error, "a reference timestamp is truncated");
  /* GStreamer asserts on a meta without a time (a critical) */
  if (ts == GST_CLOCK_TIME_NONE)
    return cudaipc_metas_bad (error, "a reference timestamp has no time");
  if (!cudaipc_metas_at_end (r, error) ||
      !cudaipc_media_check_nesting (str, CUDAIPC_MAX_EVENT_NESTING, error))
    return FALSE;
  {
    g_autoptr (GError) err = NULL;

    if (!cudaipc_peer_names_admit_text (str, &err)) {
      if (err->code != CUDAIPC_ERROR_INVALID) {
        g_propagate_error (error, g_steal_pointer (&err));
        return FALSE;
      }
      return cudaipc_metas_bad (error,
          "a reference timestamp's caps do not parse");
    }
  }
  caps = gst_caps_from_string (str);
  if (caps == NULL)
    return cudaipc_metas_bad (error,
        "a reference timestamp's caps do not parse");
  if (!cudaipc_media_caps_uniform (caps)) {
    gst_caps_unref (caps);
    return cudaipc_metas_bad (error,
        "a reference timestamp's caps have a list that does not write back "
        "(mixed types, a NULL string or a list in a list)");
  }
  gst_buffer_add_reference_timestamp_meta (buf, caps, ts, duration);
  gst_caps_unref (caps);
  return TRUE;
}

