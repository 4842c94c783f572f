/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <math.h>
#include <string.h>

#include "media/media.h"
#include "media/peer-names.h"
#include "media/uniform.h"
#include "common/error.h"

/* Bounds before parsing */

/* With @strict, every closing bracket must match the last open one and
 * none may stay open (text); without, only the depth counts (bytes that
 * are not all text, such as a serialized meta's header). */
static gboolean
check_brackets (const gchar * str, gsize len, guint max_depth,
    gboolean strict, GError ** error)
{
  guint depth = 0;
  gboolean quoted = FALSE;
  const gchar *end = str + len;
  /* the closing bracket each open one wants */
  gchar want[CUDAIPC_MAX_EVENT_NESTING + 2];

  g_return_val_if_fail (max_depth <= CUDAIPC_MAX_EVENT_NESTING, FALSE);

  /* every bracket of GStreamer's serialization: lists {}, arrays <>,
   * ranges and nested structures [], types () */
  for (const gchar * c = str; c < end; c++) {
    gchar close = 0;

    if (quoted) {
      if (*c == '\\' && c + 1 < end)
        c++;
      else if (*c == '"')
        quoted = FALSE;
      continue;
    }
    switch (*c) {
      case '"':
        quoted = TRUE;
        break;
      case '{':
        close = '}';
        break;
      case '<':
        close = '>';
        break;
      case '[':
        close = ']';
        break;
      case '(':
        close = ')';
        break;
      case '}':
      case '>':
      case ']':
      case ')':
        if (strict && (depth == 0 || want[depth - 1] != *c)) {
          g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_INVALID,
              "a '%c' at byte %" G_GSIZE_FORMAT " closes no bracket that "
              "is open", *c, (gsize) (c - str));
          return FALSE;
        }
        if (depth > 0)
          depth--;
        break;
      default:
        break;
    }
    if (close) {
      if (depth >= max_depth) {
        g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_LIMIT,
            "nested more than %u deep", max_depth);
        return FALSE;
      }
      want[depth++] = close;
    }
  }
  if (strict && (depth > 0 || quoted)) {
    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_INVALID,
        "%s is left open", quoted ? "a quote" : "a bracket");
    return FALSE;
  }
  return TRUE;
}

gboolean
cudaipc_media_check_nesting (const gchar * str, guint max_depth,
    GError ** error)
{
  return check_brackets (str, strlen (str), max_depth, TRUE, error);
}

gboolean
cudaipc_media_check_nesting_len (const gchar * str, gsize len,
    guint max_depth, GError ** error)
{
  return check_brackets (str, len, max_depth, FALSE, error);
}

/* Caps */

/* A field that a string gives back unfixed where its caps were fixed:
 * a flag set (nvh264dec's GstVideoMultiviewFlagsSet); fixating one is
 * cheap. Anything else unfixed (a list, a range) the producer never sends
 * for fixed caps. */
static gboolean
only_flagsets_unfixed (GQuark field, const GValue * value, gpointer data)
{
  if (gst_value_is_fixed (value) || GST_VALUE_HOLDS_FLAG_SET (value))
    return TRUE;
  *(const gchar **) data = g_quark_to_string (field);
  return FALSE;
}

GstCaps *
cudaipc_media_parse_caps (const gchar * str, GstVideoInfo * info,
    GError ** error)
{
  g_autoptr (GError) err = NULL;
  const gchar *unfixed = NULL;
  GstCaps *caps;

  /* bounded before GStreamer parses and copies it: its parser and value
   * copies recurse once per level */
  if (!cudaipc_media_check_nesting (str, CUDAIPC_MAX_CAPS_NESTING, &err)) {
    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_INVALID,
        "not fixed raw-video caps: %s", err->message);
    return NULL;
  }

  /* Caps name GstVideo types (nvh264dec's carry a GstVideoMultiviewFlagsSet
   * field): a string naming a type this process has not registered yet
   * does not parse, so register them first. */
  gst_video_multiview_flagset_get_type ();
  /* the names it would intern, counted first; nothing nested */
  if (!cudaipc_peer_names_admit_caps (str, &err)) {
    g_set_error (error, CUDAIPC_ERROR, err->code, "caps refused: %s",
        err->message);
    return NULL;
  }
  caps = gst_caps_from_string (str);
  if (caps == NULL || gst_caps_get_size (caps) != 1) {
    gst_clear_caps (&caps);
    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_INVALID,
        "not one caps structure");
    return NULL;
  }
  /* only fixed caps: nothing to fixate but the flag sets a string gives
   * back unfixed */
  if (!gst_structure_foreach (gst_caps_get_structure (caps, 0),
          only_flagsets_unfixed, &unfixed)) {
    gst_caps_unref (caps);
    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_INVALID,
        "caps that are not fixed (field %s)", unfixed);
    return NULL;
  }
  if (!gst_caps_is_fixed (caps))
    caps = gst_caps_fixate (caps);
  caps = gst_caps_make_writable (caps);
  /* system memory: the memory feature is decided per downstream */
  gst_caps_set_features (caps, 0, NULL);

  if (!gst_structure_has_name (gst_caps_get_structure (caps, 0),
          "video/x-raw") || !gst_video_info_from_caps (info, caps)) {
    gst_caps_unref (caps);
    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_INVALID, "not raw video");
    return NULL;
  }
  if (GST_VIDEO_INFO_WIDTH (info) <= 0 || GST_VIDEO_INFO_HEIGHT (info) <= 0) {
    gst_caps_unref (caps);
    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_INVALID,
        "raw video of %d x %d pixels", GST_VIDEO_INFO_WIDTH (info),
        GST_VIDEO_INFO_HEIGHT (info));
    return NULL;
  }
  return caps;
}

/* Frame layout */

gboolean
cudaipc_media_check_layout (const CudaIpcFrameMsg * f,
    const GstVideoInfo * info, GError ** error)
{
  const GstVideoFormatInfo *finfo = info->finfo;
  guint n_planes = GST_VIDEO_INFO_N_PLANES (info);

  if (f->size == 0)
    return TRUE;
  if (f->n_planes == 0) {
    if (f->size < GST_VIDEO_INFO_SIZE (info)) {
      g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_INVALID,
          "a FRAME of %" G_GUINT64_FORMAT " bytes "
          "without plane layout is smaller than its caps need (%"
          G_GSIZE_FORMAT " bytes)", f->size, GST_VIDEO_INFO_SIZE (info));
      return FALSE;
    }
    return TRUE;
  }
  if (f->n_planes != n_planes) {
    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_INVALID,
        "a FRAME has %u planes, its format %s has %u",
        f->n_planes, GST_VIDEO_INFO_NAME (info), n_planes);
    return FALSE;
  }

  for (guint p = 0; p < n_planes; p++) {
    guint64 offset = f->planes[p].offset;
    guint64 stride = f->planes[p].stride;
    guint64 rows = 0, row_bytes = 0, end;

    if (stride == 0 || stride > G_MAXINT) {
      g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_INVALID,
          "plane %u of a FRAME has stride %" G_GUINT64_FORMAT, p, stride);
      return FALSE;
    }
    if (offset >= f->size) {
      g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_INVALID,
          "plane %u of a FRAME starts at byte %"
          G_GUINT64_FORMAT ", beyond the frame's %" G_GUINT64_FORMAT " bytes",
          p, offset, f->size);
      return FALSE;
    }
    if (GST_VIDEO_FORMAT_INFO_IS_TILED (finfo)) {
      /* tile strides encode tile counts: accept the caps' own layout only */
      if (offset != GST_VIDEO_INFO_PLANE_OFFSET (info, p) ||
          stride != (guint64) GST_VIDEO_INFO_PLANE_STRIDE (info, p) ||
          f->size < GST_VIDEO_INFO_SIZE (info)) {
        g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_INVALID,
            "plane %u of a FRAME in the tiled format %s "
            "is not laid out as its caps say", p, GST_VIDEO_INFO_NAME (info));
        return FALSE;
      }
      continue;
    }

    for (guint c = 0; c < GST_VIDEO_FORMAT_INFO_N_COMPONENTS (finfo); c++) {
      gint pstride;
      guint64 bytes;

      if (GST_VIDEO_FORMAT_INFO_PLANE (finfo, c) != p)
        continue;
      rows = MAX (rows, (guint64) GST_VIDEO_INFO_COMP_HEIGHT (info, c));
      pstride = GST_VIDEO_INFO_COMP_PSTRIDE (info, c);
      bytes = pstride > 0 ?
          (guint64) GST_VIDEO_INFO_COMP_WIDTH (info, c) * pstride :
          (guint64) GST_VIDEO_INFO_PLANE_STRIDE (info, p);
      row_bytes = MAX (row_bytes, bytes);
    }
    if (rows == 0) {
      /* a plane without components: the palette */
      rows = 1;
      row_bytes = GST_VIDEO_FORMAT_INFO_HAS_PALETTE (finfo) ? 256 * 4 : 1;
    }
    if (rows > 1 && stride < row_bytes) {
      g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_INVALID,
          "plane %u of a FRAME has stride %"
          G_GUINT64_FORMAT ", less than a row of %" G_GUINT64_FORMAT " bytes",
          p, stride, row_bytes);
      return FALSE;
    }
    /* no overflow: offset < 2^32, stride < 2^31, rows < 2^31 */
    end = offset + stride * (rows - 1) + row_bytes;
    if (end > f->size) {
      g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_INVALID,
          "plane %u of a FRAME (offset %" G_GUINT64_FORMAT
          ", stride %" G_GUINT64_FORMAT ", %" G_GUINT64_FORMAT " rows) ends at"
          " byte %" G_GUINT64_FORMAT ", beyond the frame's %" G_GUINT64_FORMAT
          " bytes", p, offset, stride, rows, end, f->size);
      return FALSE;
    }
  }
  return TRUE;
}

/* Events */

GstClockTime
cudaipc_media_frame_duration (GstCaps * caps)
{
  const GstStructure *s = caps ? gst_caps_get_structure (caps, 0) : NULL;
  gint n = 0, d = 0;

  if (s == NULL || !gst_structure_get_fraction (s, "framerate", &n, &d) ||
      n <= 0 || d <= 0)
    return GST_CLOCK_TIME_NONE;
  return gst_util_uint64_scale_int (GST_SECOND, d, n);
}

/* The producer's side */

/* The GstBufferFlags a consumer may see: no mini-object flags, no
 * TAG_MEMORY (it describes the producer's buffer's memories, not the
 * frame). */
#define PUBLIC_BUFFER_FLAGS \
  ((GST_BUFFER_FLAG_LAST - 1) & ~(GST_MINI_OBJECT_FLAG_LAST - 1) & \
      ~GST_BUFFER_FLAG_TAG_MEMORY)

void
cudaipc_media_describe_buffer (GstBuffer * buf, const GstVideoInfo * info,
    CudaIpcFrameMsg * f)
{
  GstVideoMeta *meta = gst_buffer_get_video_meta (buf);

  f->flags = GST_BUFFER_FLAGS (buf) & PUBLIC_BUFFER_FLAGS;
  f->pts = GST_BUFFER_PTS (buf);
  f->dts = GST_BUFFER_DTS (buf);
  f->duration = GST_BUFFER_DURATION (buf);
  f->offset = GST_BUFFER_OFFSET (buf);
  f->offset_end = GST_BUFFER_OFFSET_END (buf);

  f->n_planes = 0;
  if (meta) {
    f->n_planes = MIN (meta->n_planes, CUDAIPC_MAX_PLANES);
    for (guint i = 0; i < f->n_planes; i++) {
      f->planes[i].offset = meta->offset[i];
      f->planes[i].stride = (guint32) meta->stride[i];
    }
  } else if (info) {
    f->n_planes = MIN (GST_VIDEO_INFO_N_PLANES (info), CUDAIPC_MAX_PLANES);
    for (guint i = 0; i < f->n_planes; i++) {
      f->planes[i].offset = GST_VIDEO_INFO_PLANE_OFFSET (info, i);
      f->planes[i].stride = GST_VIDEO_INFO_PLANE_STRIDE (info, i);
    }
  }
}

gchar *
cudaipc_media_serialize_event (GstEvent * event)
{
  g_return_val_if_fail (GST_IS_EVENT (event), NULL);

  switch (GST_EVENT_TYPE (event)) {
    case GST_EVENT_SEGMENT:{
      const GstSegment *seg;
      GstStructure *st;
      gchar *str;

      gst_event_parse_segment (event, &seg);
      st = gst_structure_new ("cudaipc-segment",
          "format", G_TYPE_INT, (gint) seg->format,
          "rate", G_TYPE_DOUBLE, seg->rate,
          "applied-rate", G_TYPE_DOUBLE, seg->applied_rate,
          "flags", G_TYPE_UINT, (guint) seg->flags,
          "base", G_TYPE_UINT64, seg->base,
          "offset", G_TYPE_UINT64, seg->offset,
          "start", G_TYPE_UINT64, seg->start,
          "stop", G_TYPE_UINT64, seg->stop,
          "time", G_TYPE_UINT64, seg->time,
          "position", G_TYPE_UINT64, seg->position,
          "duration", G_TYPE_UINT64, seg->duration, NULL);
      str = gst_structure_to_string (st);
      gst_structure_free (st);
      return str;
    }
    case GST_EVENT_TAG:{
      GstTagList *tags;

      gst_event_parse_tag (event, &tags);
      return gst_tag_list_to_string (tags);
    }
    default:{
      const GstStructure *st = gst_event_get_structure (event);

      return st ? gst_structure_to_string (st) : g_strdup ("");
    }
  }
}

/* The consumer's side: FRAME */

void
cudaipc_media_apply_frame (GstBuffer * buf, const CudaIpcFrameMsg * f,
    const GstVideoInfo * info)
{
  GST_BUFFER_DURATION (buf) = f->duration;
  GST_BUFFER_OFFSET (buf) = f->offset;
  GST_BUFFER_OFFSET_END (buf) = f->offset_end;
  /* buffer flags only: the mini object flags and memory tag are ours */
  GST_BUFFER_FLAGS (buf) = f->flags & PUBLIC_BUFFER_FLAGS;

  if (f->n_planes > 0) {
    gsize offsets[GST_VIDEO_MAX_PLANES] = { 0, };
    gint strides[GST_VIDEO_MAX_PLANES] = { 0, };

    for (guint p = 0; p < f->n_planes; p++) {
      offsets[p] = f->planes[p].offset;
      strides[p] = (gint) f->planes[p].stride;
    }
    gst_buffer_add_video_meta_full (buf, GST_VIDEO_FRAME_FLAG_NONE,
        GST_VIDEO_INFO_FORMAT (info), GST_VIDEO_INFO_WIDTH (info),
        GST_VIDEO_INFO_HEIGHT (info), f->n_planes, offsets, strides);
  }
}

/* The consumer's side: EVENT */

static gboolean
get_u64 (const GstStructure * st, const gchar * field, guint64 * out)
{
  const GValue *v = gst_structure_get_value (st, field);

  if (v == NULL)
    return FALSE;
  if (G_VALUE_HOLDS_UINT64 (v))
    *out = g_value_get_uint64 (v);
  else if (G_VALUE_HOLDS_INT64 (v))
    *out = (guint64) g_value_get_int64 (v);     /* -1 is NONE */
  else if (G_VALUE_HOLDS_UINT (v))
    *out = g_value_get_uint (v);
  else if (G_VALUE_HOLDS_INT (v))
    *out =
        g_value_get_int (v) < 0 ? G_MAXUINT64 : (guint64) g_value_get_int (v);
  else
    return FALSE;
  return TRUE;
}

static gboolean
get_double (const GstStructure * st, const gchar * field, gdouble * out)
{
  const GValue *v = gst_structure_get_value (st, field);

  if (v == NULL)
    return FALSE;
  if (G_VALUE_HOLDS_DOUBLE (v))
    *out = g_value_get_double (v);
  else if (G_VALUE_HOLDS_INT (v))
    *out = g_value_get_int (v);
  else
    return FALSE;
  return TRUE;
}

static gboolean
get_enum_or_int (const GstStructure * st, const gchar * field, GType type,
    gint * out)
{
  const GValue *v = gst_structure_get_value (st, field);

  if (v == NULL)
    return FALSE;
  if (G_VALUE_HOLDS_ENUM (v))
    *out = g_value_get_enum (v);
  else if (G_VALUE_HOLDS_FLAGS (v))
    *out = (gint) g_value_get_flags (v);
  else if (G_VALUE_HOLDS_INT (v))
    *out = g_value_get_int (v);
  else if (G_VALUE_HOLDS_UINT (v))
    *out = (gint) g_value_get_uint (v);
  else if (G_VALUE_HOLDS_STRING (v) && type != G_TYPE_NONE &&
      G_TYPE_IS_ENUM (type)) {
    GEnumClass *klass = g_type_class_ref (type);
    GEnumValue *ev = g_enum_get_value_by_nick (klass, g_value_get_string (v));

    if (ev == NULL)
      ev = g_enum_get_value_by_name (klass, g_value_get_string (v));
    if (ev != NULL)
      *out = ev->value;
    g_type_class_unref (klass);
    return ev != NULL;
  } else
    return FALSE;
  return TRUE;
}

/* "cudaipc-segment, format=..., rate=..., ..." into @seg. */
static gboolean
parse_segment (const gchar * str, GstSegment * seg, const gchar ** why)
{
  g_autoptr (GstStructure) st = NULL;
  gint format, flags;
  guint64 v;

  if (!g_str_has_prefix (str, "cudaipc-segment") ||
      !cudaipc_peer_names_admit_structure (str, NULL)) {
    *why = "not a cudaipc-segment structure, or new names past the budget";
    return FALSE;
  }
  st = gst_structure_from_string (str, NULL);
  if (st == NULL || !gst_structure_has_name (st, "cudaipc-segment")) {
    *why = "not a cudaipc-segment structure";
    return FALSE;
  }
  if (!get_enum_or_int (st, "format", GST_TYPE_FORMAT, &format)) {
    *why = "no format";
    return FALSE;
  }
  gst_segment_init (seg, (GstFormat) format);
  get_double (st, "rate", &seg->rate);
  get_double (st, "applied-rate", &seg->applied_rate);
  if (get_enum_or_int (st, "flags", G_TYPE_NONE, &flags))
    seg->flags = (GstSegmentFlags) flags;
  if (get_u64 (st, "base", &v))
    seg->base = v;
  if (get_u64 (st, "offset", &v))
    seg->offset = v;
  if (get_u64 (st, "start", &v))
    seg->start = v;
  if (get_u64 (st, "stop", &v))
    seg->stop = v;
  if (get_u64 (st, "time", &v))
    seg->time = v;
  if (get_u64 (st, "position", &v))
    seg->position = v;
  if (get_u64 (st, "duration", &v))
    seg->duration = v;

  if (seg->format != GST_FORMAT_TIME) {
    *why = "not in time format";
    return FALSE;
  }
  if (!(seg->rate < 0 || seg->rate > 0) || !isfinite (seg->rate) ||
      !(seg->applied_rate < 0 || seg->applied_rate > 0) ||
      !isfinite (seg->applied_rate)) {
    *why = "bad rate";
    return FALSE;
  }
  if (!GST_CLOCK_TIME_IS_VALID (seg->start) ||
      (GST_CLOCK_TIME_IS_VALID (seg->stop) && seg->stop < seg->start)) {
    *why = "bad start or stop";
    return FALSE;
  }
  return TRUE;
}

/* @what, read from @text, has a list GStreamer reads but cannot write
 * back (uniform.h): this process could not pass it on. */
static void
refuse_unwritable (GError ** error, const gchar * what, const gchar * text)
{
  g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_INVALID,
      "%s with a list that does not write back (values of mixed types, a "
      "NULL string or a list in a list): %s", what, text);
}

GstEvent *
cudaipc_media_parse_event (const CudaIpcEventMsg * m, GError ** error)
{
  g_autoptr (GError) err = NULL;

  if (!cudaipc_media_check_nesting (m->structure, CUDAIPC_MAX_EVENT_NESTING,
          &err)) {
    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_INVALID,
        "event structure %s", err->message);
    return NULL;
  }
  /* the names it would intern (a segment's are GStreamer's own) */
  if (m->event_type != GST_EVENT_SEGMENT && m->event_type != GST_EVENT_EOS &&
      !cudaipc_peer_names_admit_structure (m->structure, &err)) {
    g_set_error (error, CUDAIPC_ERROR, err->code, "event refused: %s",
        err->message);
    return NULL;
  }
  switch (m->event_type) {
    case GST_EVENT_EOS:
      return gst_event_new_eos ();
    case GST_EVENT_SEGMENT:{
      GstSegment seg;
      const gchar *why = NULL;

      if (!parse_segment (m->structure, &seg, &why)) {
        g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_INVALID,
            "segment (%s): %s", why, m->structure);
        return NULL;
      }
      return gst_event_new_segment (&seg);
    }
    case GST_EVENT_TAG:{
      /* a tag list's text begins so; anything else is a GStreamer
       * critical, not a tag list. The text is a structure's: read as one
       * for the check, which a tag list has no call for */
      GstStructure *st = g_str_has_prefix (m->structure, "taglist") ?
          gst_structure_from_string (m->structure, NULL) : NULL;
      GstTagList *tags;

      if (st != NULL && !cudaipc_media_structure_uniform (st)) {
        gst_structure_free (st);
        refuse_unwritable (error, "tags", m->structure);
        return NULL;
      }
      tags = st ? gst_tag_list_new_from_string (m->structure) : NULL;
      g_clear_pointer (&st, gst_structure_free);
      if (tags == NULL) {
        g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_INVALID,
            "unparseable tags: %s", m->structure);
        return NULL;
      }
      return gst_event_new_tag (tags);
    }
    case GST_EVENT_CUSTOM_DOWNSTREAM:
    case GST_EVENT_CUSTOM_DOWNSTREAM_STICKY:
    case GST_EVENT_CUSTOM_BOTH:{
      GstStructure *st = gst_structure_from_string (m->structure, NULL);

      if (st == NULL) {
        g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_INVALID,
            "unparseable custom event: %s", m->structure);
        return NULL;
      }
      if (!cudaipc_media_structure_uniform (st)) {
        gst_structure_free (st);
        refuse_unwritable (error, "custom event", m->structure);
        return NULL;
      }
      return gst_event_new_custom (m->event_type, st);
    }
    default:
      g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_INVALID,
          "event of type %u (%s)", m->event_type,
          gst_event_type_get_name (m->event_type));
      return NULL;
  }
}
