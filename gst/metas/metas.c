/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A frame's metas on the wire (metas.h has the contract, docs/protocol.md
 * the layouts): the filter of which metas travel, and the table of
 * codecs, one entry per kind of meta, walked for each meta of a buffer
 * and for each entry of a blob. An entry is a kind (u16), 0 (u16), a
 * payload length (u32) and the payload; every integer little-endian, every
 * string a length (u32, the NUL included) and its bytes. The frame's
 * names, where its metas have any, come first, in an entry of their own
 * (names.h).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/base/gstbytereader.h>
#include <gst/base/gstbytewriter.h>
#include <gst/video/video.h>
#ifdef HAVE_GST_ANALYTICS
#include <gst/analytics/analytics.h>
#endif

#include "common/debug.h"
#include "common/error.h"
#include "media/media.h"
#include "metas/metas.h"
#include "metas/metas-private.h"
#include "metas/structure-codec.h"

#define GST_CAT_DEFAULT cudaipc_metas_debug

#define SERIALIZABLE GST_CHECK_VERSION (1, 24, 0)

/* Filters */

struct _CudaIpcMetaFilter
{
  gboolean all, none;
  GPtrArray *names;             /* interned API type names */
  GString *doubts;              /* names no API type has, with what to
                                 * write instead; NULL: none */
};

static const gchar *filter_api_name (const gchar * name, const gchar * spec,
    GError ** error);
static void doubt_name (CudaIpcMetaFilter * f, const gchar * name);

CudaIpcMetaFilter *
cudaipc_meta_filter_new (const gchar * spec, GError ** error)
{
  CudaIpcMetaFilter *f = g_new0 (CudaIpcMetaFilter, 1);
  gchar **names;

  f->names = g_ptr_array_new ();
  if (spec == NULL || spec[0] == '\0' || g_str_equal (spec, "all")) {
    f->all = TRUE;
    return f;
  }
  if (g_str_equal (spec, "none")) {
    f->none = TRUE;
    return f;
  }
  names = g_strsplit (spec, ",", -1);
  for (guint i = 0; names[i]; i++) {
    const gchar *name = g_strstrip (names[i]);

    if (name[0] == '\0') {
      g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_INVALID,
          "\"%s\": an empty meta name (use all, none, or API type names "
          "such as GstVideoRegionOfInterestMetaAPI, separated by commas)",
          spec);
      name = NULL;
    } else {
      name = filter_api_name (name, spec, error);
      if (name != NULL)
        doubt_name (f, name);
    }
    if (name == NULL) {
      g_strfreev (names);
      cudaipc_meta_filter_free (f);
      return NULL;
    }
    g_ptr_array_add (f->names, (gpointer) name);
  }
  g_strfreev (names);
  return f;
}

const gchar *
cudaipc_meta_filter_get_doubts (const CudaIpcMetaFilter * f)
{
  return f && f->doubts ? f->doubts->str : NULL;
}

void
cudaipc_meta_filter_free (CudaIpcMetaFilter * f)
{
  if (f == NULL)
    return;
  if (f->doubts)
    g_string_free (f->doubts, TRUE);
  g_ptr_array_unref (f->names);
  g_free (f);
}

/* @name: interned, or NULL for that of @api. */
static gboolean
filter_allows (const CudaIpcMetaFilter * f, const gchar * name, GType api)
{
  if (f == NULL || f->all)
    return TRUE;
  if (f->none)
    return FALSE;
  if (name == NULL)
    name = g_intern_string (g_type_name (api));
  for (guint i = 0; i < f->names->len; i++) {
    if (g_ptr_array_index (f->names, i) == name)
      return TRUE;
  }
  return FALSE;
}

/* Any other meta, as GStreamer serializes it */

#if SERIALIZABLE
static gboolean
encode_serialized (const CudaIpcMetaCodec * codec, GstMeta * meta,
    CudaIpcMetaWriter * mw)
{
  GByteArray *data = g_byte_array_new ();
  gboolean ok;

  ok = gst_meta_serialize_simple (meta, data) && data->len > 0 &&
      gst_byte_writer_put_data (&mw->w, data->data, data->len);
  g_byte_array_unref (data);
  return ok;
}

static gboolean
decode_serialized (const CudaIpcMetaCodec * codec, GstByteReader * r,
    CudaIpcMetaNames * names, GstBuffer * buf, gboolean * added,
    GError ** error)
{
  guint32 len = gst_byte_reader_get_remaining (r), consumed = 0;
  const guint8 *data = NULL;

  gst_byte_reader_peek_data (r, len, &data);
  /* GStreamer parses what it serialized: bound its nesting first */
  if (!cudaipc_media_check_nesting_len ((const gchar *) data, len,
          CUDAIPC_MAX_EVENT_NESTING, error))
    return FALSE;
  if (gst_meta_deserialize (buf, data, len, &consumed) == NULL) {
    GST_DEBUG ("a serialized meta of %u bytes that this process cannot "
        "rebuild (its API is unknown here, or it is malformed)", len);
    *added = FALSE;
  }
  return TRUE;
}
#endif

/* The codecs */

/* One entry per kind of meta. A meta travels as the first entry of its
 * API type, else, if GStreamer serializes it, as the entry of none. */
static const CudaIpcMetaCodec codecs[] = {
  {
    .kind = CUDAIPC_META_KIND_ROI,
    .name = "region-of-interest",
    .api_type = gst_video_region_of_interest_meta_api_get_type,
    .filter_name = "GstVideoRegionOfInterestMetaAPI",
    .max_items = CUDAIPC_MAX_META_ITEMS,
    .encode = cudaipc_metas_encode_roi,
    .decode = cudaipc_metas_decode_roi,
  },
  {
    .kind = CUDAIPC_META_KIND_TIMECODE,
    .name = "time-code",
    .api_type = gst_video_time_code_meta_api_get_type,
    .filter_name = "GstVideoTimeCodeMetaAPI",
    .encode = cudaipc_metas_encode_timecode,
    .decode = cudaipc_metas_decode_timecode,
  },
  {
    .kind = CUDAIPC_META_KIND_CROP,
    .name = "crop",
    .api_type = gst_video_crop_meta_api_get_type,
    .filter_name = "GstVideoCropMetaAPI",
    .encode = cudaipc_metas_encode_crop,
    .decode = cudaipc_metas_decode_crop,
  },
  {
    .kind = CUDAIPC_META_KIND_REFERENCE_TIMESTAMP,
    .name = "reference-timestamp",
    .api_type = gst_reference_timestamp_meta_api_get_type,
    .filter_name = "GstReferenceTimestampMetaAPI",
    .encode = cudaipc_metas_encode_reference_timestamp,
    .decode = cudaipc_metas_decode_reference_timestamp,
  },
#ifdef HAVE_GST_ANALYTICS
  {
    .kind = CUDAIPC_META_KIND_ANALYTICS,
    .name = "analytics",
    .api_type = gst_analytics_relation_meta_api_get_type,
    .filter_name = "GstAnalyticsRelationMetaAPI",
    .max_items = CUDAIPC_MAX_META_ITEMS,
    .max_relations = CUDAIPC_MAX_META_RELATIONS,
    .encode = cudaipc_metas_encode_analytics,
    .decode = cudaipc_metas_decode_analytics,
  },
#endif
  /* the frame's layout travels in FRAME itself: neither carried here nor
   * counted as skipped */
  {
    .kind = CUDAIPC_META_KIND_NONE,
    .api_type = gst_video_meta_api_get_type,
    .filter_name = "GstVideoMetaAPI",
  },
#if SERIALIZABLE
  {
    .kind = CUDAIPC_META_KIND_SERIALIZED,
    .name = "serialized",
    .encode = encode_serialized,
    .decode = decode_serialized,
  },
#endif
};

/* The table's API types and filter names, looked up once: every meta of
 * every frame is matched against them. */
typedef struct
{
  GType api;
  const gchar *filter_name;     /* interned */
} Api;

static const Api *
apis (void)
{
  static Api table[G_N_ELEMENTS (codecs)];
  static gsize done;

  if (g_once_init_enter (&done)) {
    for (guint i = 0; i < G_N_ELEMENTS (codecs); i++) {
      if (codecs[i].api_type == NULL)
        continue;
      table[i].api = codecs[i].api_type ();
      table[i].filter_name = g_intern_static_string (codecs[i].filter_name);
      /* a filter names a meta by its API type's name */
      g_warn_if_fail (g_str_equal (g_type_name (table[i].api),
              codecs[i].filter_name));
    }
    g_once_init_leave (&done, 1);
  }
  return table;
}

/* The interned API type name a filter keeps for @name, one name of
 * @spec: a meta's own type name (GstVideoTimeCodeMeta, a custom meta's
 * name) stands for its API type, which metas are matched by, where
 * GStreamer knows the meta, or where "<name>API" is the API type of one
 * this build carries (its own type is registered when first used).
 * Another name that ends in "Meta" names no API type (theirs end in
 * "API"): NULL, with @error saying which to use, rather than a filter
 * that silently lets nothing of it through. Any other name is kept as it
 * is: an API type may be registered after the filter is made. */
static const gchar *
filter_api_name (const gchar * name, const gchar * spec, GError ** error)
{
  const GstMetaInfo *info = gst_meta_get_info (name);
  g_autofree gchar *api = NULL;

  if (info != NULL) {
    const gchar *api_name = g_type_name (info->api);

    if (g_strcmp0 (api_name, name) != 0)
      GST_DEBUG ("metas: %s stands for its API type, %s", name, api_name);
    return g_intern_string (api_name);
  }
  if (!g_str_has_suffix (name, "Meta"))
    return g_intern_string (name);
  /* the API types of what this build carries are registered */
  apis ();
  api = g_strconcat (name, "API", NULL);
  if (g_type_from_name (api) != 0) {
    GST_DEBUG ("metas: %s stands for its API type, %s", name, api);
    return g_intern_string (api);
  }
  g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_INVALID,
      "\"%s\": %s names a meta, not its API type, and no meta this "
      "process knows has that name: list API type names (for it, "
      "presumably %s), or all, or none", spec, name, api);
  return NULL;
}

/* The API type @name, no type yet, most likely stands for: one this
 * build carries written in another case, or missing "API" or "MetaAPI"
 * (a meta's name without its "Meta"); NULL where none is near. */
static const gchar *
near_api_name (const gchar * name)
{
  const Api *table = apis ();
  g_autofree gchar *api = g_strconcat (name, "API", NULL);
  g_autofree gchar *meta_api = g_strconcat (name, "MetaAPI", NULL);

  for (guint i = 0; i < G_N_ELEMENTS (codecs); i++) {
    const gchar *known = table[i].filter_name;

    if (known != NULL && (g_ascii_strcasecmp (known, name) == 0 ||
            g_ascii_strcasecmp (known, api) == 0 ||
            g_ascii_strcasecmp (known, meta_api) == 0))
      return known;
  }
  if (g_type_from_name (meta_api) != 0)
    return g_intern_string (meta_api);
  return NULL;
}

/* A name no type has yet is kept (its API may be registered later), but
 * one that does not end in "API", as API type names do, or that is
 * another case of a known one, most likely lets nothing through: said,
 * with what to write instead where that is clear. */
static void
doubt_name (CudaIpcMetaFilter * f, const gchar * name)
{
  const gchar *near;

  /* the API types of what this build carries are registered */
  apis ();
  if (g_type_from_name (name) != 0)
    return;
  near = near_api_name (name);
  if (near == NULL && g_str_has_suffix (name, "API"))
    return;
  if (f->doubts == NULL)
    f->doubts = g_string_new ("metas: ");
  else
    g_string_append (f->doubts, "; ");
  if (near != NULL)
    g_string_append_printf (f->doubts, "%s is no meta API type, and lets "
        "no meta through: write %s", name, near);
  else
    g_string_append_printf (f->doubts, "%s is no meta API type this "
        "process knows, and API type names end in API (such as "
        "GstVideoRegionOfInterestMetaAPI): its metas travel only if an API "
        "type of that name is registered", name);
}

/* Whether GStreamer serializes @meta, which the entry of no API type
 * then carries. */
static inline gboolean
serializes (const GstMeta * meta)
{
#if SERIALIZABLE
  return meta->info->serialize_func != NULL;
#else
  return FALSE;
#endif
}

/* The entry @meta travels as, NULL for none, and the name the filter
 * knows it by (NULL: its API type's, not yet looked up). */
static const CudaIpcMetaCodec *
codec_of (const Api * table, const GstMeta * meta, const gchar ** filter_name)
{
  GType api = meta->info->api;

  *filter_name = NULL;
  for (guint i = 0; i < G_N_ELEMENTS (codecs); i++) {
    if (table[i].api == api || (codecs[i].api_type == NULL &&
            serializes (meta))) {
      *filter_name = table[i].filter_name;
      return &codecs[i];
    }
  }
  return NULL;
}

/* The entry of @kind, NULL for one this build does not know. */
static const CudaIpcMetaCodec *
codec_for_kind (guint16 kind)
{
  for (guint i = 0; i < G_N_ELEMENTS (codecs); i++) {
    if (codecs[i].kind == kind && codecs[i].decode != NULL)
      return &codecs[i];
  }
  return NULL;
}

/* Encoding */

void
cudaipc_metas_encode (GstBuffer * buf, const CudaIpcMetaFilter * filter,
    GByteArray * blob, CudaIpcMetaCounts * counts)
{
  const Api *table = apis ();
  gpointer state = NULL;
  CudaIpcMetaWriter mw;
  GstByteWriter *w = &mw.w;
  GstMeta *meta;
  guint n = 0, start, room, end;

  g_return_if_fail (GST_IS_BUFFER (buf));
  g_return_if_fail (blob != NULL && counts != NULL);

  if (filter && filter->none)
    return;
  /* written in place after what @blob holds, up to the most a frame
   * carries: the writer never grows it */
  start = blob->len;
  if (start >= CUDAIPC_MAX_META_BYTES)
    return;
  room = CUDAIPC_MAX_META_BYTES - start;
  g_byte_array_set_size (blob, CUDAIPC_MAX_META_BYTES);
  cudaipc_meta_writer_init (&mw, blob->data + start, room);
  while ((meta = gst_buffer_iterate_meta (buf, &state)) != NULL) {
    const gchar *name;
    const CudaIpcMetaCodec *codec = codec_of (table, meta, &name);
    CudaIpcMetaMark mark;
    gboolean ok;

    if (!filter_allows (filter, name, meta->info->api))
      continue;
    if (codec == NULL) {
      counts->skipped++;
      continue;
    }
    if (codec->encode == NULL)
      continue;
    if (n >= CUDAIPC_MAX_METAS) {
      counts->dropped++;
      continue;
    }
    cudaipc_meta_writer_mark (&mw, &mark);
    ok = gst_byte_writer_ensure_free_space (w, CUDAIPC_META_ENTRY_HEADER);
    if (ok) {
      /* the payload's length is written once it is known */
      gst_byte_writer_put_uint16_le_unchecked (w, codec->kind);
      gst_byte_writer_put_uint16_le_unchecked (w, 0);
      gst_byte_writer_put_uint32_le_unchecked (w, 0);
    }
    ok = ok && codec->encode (codec, meta, &mw) &&
        /* the names' entry, which goes in front, fits too */
        gst_byte_writer_get_pos (w) + cudaipc_meta_writer_names_size (&mw)
        <= room;
    if (!ok) {
      /* too large for what is left, over a limit, or not serializable:
       * left out, and the writer back where the entry began, with the
       * names it listed */
      GST_DEBUG ("%s left out: over a limit, the frame's metadata would be "
          "too large, or it did not serialize",
          g_type_name (meta->info->api));
      counts->dropped++;
      cudaipc_meta_writer_rewind (&mw, &mark);
      continue;
    }
    GST_WRITE_UINT32_LE (blob->data + start + mark.pos + 4,
        gst_byte_writer_get_pos (w) - mark.pos - CUDAIPC_META_ENTRY_HEADER);
    counts->carried++;
    n++;
  }
  if (!cudaipc_meta_writer_finish (&mw, &end)) {
    /* the room was kept entry by entry: not reached */
    g_warn_if_reached ();
    counts->dropped += n;
    counts->carried -= n;
    end = 0;
  }
  cudaipc_meta_writer_clear (&mw);
  g_byte_array_set_size (blob, start + end);
}

/* Decoding */

/* FALSE with @error for a bad entry; TRUE, *@added FALSE, for one this
 * process cannot rebuild. */
static gboolean
decode_one (CudaIpcMetaNames * names, guint16 kind, const guint8 * data,
    guint32 len, GstBuffer * buf, gboolean * added, GError ** error)
{
  const CudaIpcMetaCodec *codec = codec_for_kind (kind);
  GstByteReader r;

  if (codec == NULL) {
    GST_DEBUG ("a meta entry of kind %u, which this build does not know",
        kind);
    *added = FALSE;
    return TRUE;
  }
  gst_byte_reader_init (&r, data, len);
  *added = TRUE;
  return codec->decode (codec, &r, names, buf, added, error);
}

gboolean
cudaipc_metas_decode (const guint8 * blob, gsize len, GstBuffer * buf,
    CudaIpcMetaCounts * counts, GError ** error)
{
  GstByteReader r;
  guint n = 0;
  /* its strings point into @blob */
  CudaIpcMetaNames names;
  gboolean ok = TRUE;

  g_return_val_if_fail (blob != NULL || len == 0, FALSE);
  g_return_val_if_fail (GST_IS_BUFFER (buf), FALSE);
  g_return_val_if_fail (counts != NULL, FALSE);

  if (len > CUDAIPC_MAX_META_BYTES) {
    counts->dropped++;
    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_LIMIT,
        "%" G_GSIZE_FORMAT " bytes of metadata, more than %d", len,
        CUDAIPC_MAX_META_BYTES);
    return FALSE;
  }
  cudaipc_meta_names_init (&names);
  gst_byte_reader_init (&r, blob, len);
  while (ok && gst_byte_reader_get_remaining (&r) > 0) {
    gboolean first = gst_byte_reader_get_pos (&r) == 0;
    guint16 kind, reserved;
    guint32 size;
    const guint8 *data;
    GError *err = NULL;
    gboolean added;

    if (!gst_byte_reader_get_uint16_le (&r, &kind) ||
        !gst_byte_reader_get_uint16_le (&r, &reserved) ||
        !gst_byte_reader_get_uint32_le (&r, &size) ||
        !gst_byte_reader_get_data (&r, size, &data) || reserved != 0) {
      counts->dropped++;
      g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_INVALID,
          "meta %u: its header is truncated, names more bytes than there "
          "are, or has a reserved field set", n + 1);
      ok = FALSE;
      break;
    }
    if (kind == CUDAIPC_META_KIND_NAMES) {
      GstByteReader nr = GST_BYTE_READER_INIT (data, size);

      /* the names of the frame's metas, which refer to them: first, once */
      if (!first)
        cudaipc_metas_bad (&err, "a names entry that is not the first");
      else
        cudaipc_meta_names_read (&names, &nr, &err);
      if (err != NULL) {
        counts->dropped++;
        g_set_error (error, CUDAIPC_ERROR, err->code, "the frame's names: %s",
            err->message);
        g_error_free (err);
        ok = FALSE;
      }
      continue;
    }
    if (n++ >= CUDAIPC_MAX_METAS) {
      counts->dropped++;
      g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_LIMIT,
          "more than %d metas", CUDAIPC_MAX_METAS);
      ok = FALSE;
      break;
    }
    if (!decode_one (&names, kind, data, size, buf, &added, &err)) {
      counts->dropped++;
      g_set_error (error, CUDAIPC_ERROR, err->code, "meta %u (kind %u): %s",
          n, kind, err->message);
      g_error_free (err);
      ok = FALSE;
      break;
    }
    if (added)
      counts->carried++;
    else
      counts->skipped++;
  }
  cudaipc_meta_names_clear (&names);
  return ok;
}

/* What the table carries, named once. */
const gchar *
cudaipc_metas_carried (void)
{
  static const gchar *carried;

  if (g_once_init_enter (&carried)) {
    GString *s = g_string_new (NULL);

    for (guint i = 0; i < G_N_ELEMENTS (codecs); i++) {
      if (codecs[i].encode == NULL)
        continue;
      if (s->len > 0)
        g_string_append (s, ", ");
      g_string_append (s, codecs[i].name);
    }
    g_once_init_leave (&carried, g_string_free (s, FALSE));
  }
  return carried;
}
