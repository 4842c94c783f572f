/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the files of gst/metas/ share, and no file outside them includes:
 * the codec table's entry type, and the helpers every codec writes and
 * reads a payload with (docs/protocol.md, Frame metadata, has the
 * layouts).
 *
 * metas.c holds the table, one entry per kind of meta, and walks it: a
 * buffer's metas are matched to entries by their API type, a blob's
 * entries by their kind. A codec is a pair of functions: its encoder
 * writes what it reads off one meta, its decoder reads and checks all of
 * one entry before it adds anything to the buffer. Both keep to the
 * limits of their entry.
 *
 * An encoder writes with the GstByteWriter of a CudaIpcMetaWriter over
 * the blob, which never grows: a put that does not fit returns FALSE, and
 * so does a string over CUDAIPC_MAX_META_STRING; names (region types,
 * structure and field names, object and class names) are written as
 * references to the frame's names (names.h). The caller takes the writer
 * back to where the entry began, names and all, when the encoder fails.
 * A decoder reads with a GstByteReader over one entry's payload, which is
 * untrusted: every get checks what is left first, and every string it
 * returns points into the blob, valid while the blob is; it reads names
 * out of the frame's table. What a decoder makes (structures, caps, the meta) is the buffer's once
 * added to it, and the decoder's to free when it is not; a codec frees
 * whatever else it allocates before it returns.
 *
 * The table is constant, and a codec keeps no state between calls but for
 * the count of the names it made (names.h): any thread.
 */
#pragma once

#include <string.h>
#include <gst/gst.h>
#include <gst/base/gstbytereader.h>
#include <gst/base/gstbytewriter.h>

#include "common/error.h"
#include "metas/metas.h"
#include "metas/structure-codec.h"

G_BEGIN_DECLS

/* The kind of an entry on the wire. */
typedef enum
{
  CUDAIPC_META_KIND_NONE = 0,   /* not an entry: travels otherwise */
  CUDAIPC_META_KIND_ROI = 1,
  CUDAIPC_META_KIND_TIMECODE = 2,
  CUDAIPC_META_KIND_CROP = 3,
  CUDAIPC_META_KIND_REFERENCE_TIMESTAMP = 4,
  CUDAIPC_META_KIND_ANALYTICS = 5,
  CUDAIPC_META_KIND_SERIALIZED = 6,
  CUDAIPC_META_KIND_NAMES = 7,  /* not a meta: the frame's names, first */
} CudaIpcMetaKind;

/* An entry's kind (u16), 0 (u16) and payload length (u32). */
#define CUDAIPC_META_ENTRY_HEADER 8

typedef struct _CudaIpcMetaCodec CudaIpcMetaCodec;

/* Writes the payload of @meta's entry. FALSE when it does not fit in what
 * @mw has left, is over a limit of @codec or of the frame's names, or
 * cannot be written. */
typedef gboolean CudaIpcMetaEncodeFunc (const CudaIpcMetaCodec * codec,
    GstMeta * meta, CudaIpcMetaWriter * mw);

/* Reads and checks all of an entry's payload from @r, then adds its meta
 * to @buf. FALSE with @error for a payload that breaks a rule; TRUE with
 * *@added set to FALSE (it is TRUE on the call) for a meta this process
 * cannot rebuild. */
typedef gboolean CudaIpcMetaDecodeFunc (const CudaIpcMetaCodec * codec,
    GstByteReader * r, CudaIpcMetaNames * names, GstBuffer * buf,
    gboolean * added, GError ** error);

struct _CudaIpcMetaCodec
{
  CudaIpcMetaKind kind;         /* on the wire */
  const gchar *name;            /* in cudaipc_metas_carried() */
  /* the meta's API type, looked up at run time; NULL: any meta that
   * GStreamer serializes */
  GType (*api_type) (void);
  const gchar *filter_name;     /* the API type's name, as a filter lists
                                 * it; NULL: the meta's own */
  guint max_items;              /* items of one meta: a region's
                                 * parameters, an analytics meta's entries */
  guint max_relations;          /* relations between those entries */
  CudaIpcMetaEncodeFunc *encode;       /* NULL: not carried as an entry */
  CudaIpcMetaDecodeFunc *decode;
};

/* Writing */

/* @s (NULL: "") as a length, the NUL included, and its bytes. */
static inline gboolean
cudaipc_metas_put_str (GstByteWriter * w, const gchar * s)
{
  gsize len = s ? strlen (s) + 1 : 1;

  if (len > CUDAIPC_MAX_META_STRING)
    return FALSE;
  if (!gst_byte_writer_put_uint32_le (w, (guint32) len))
    return FALSE;
  /* the function, not the header's inline copy: knowing len <= 4096, the
   * compiler expands that one into "rep movsq", which takes several times
   * as long as a call to memcpy for strings of a few bytes (measured:
   * most of the time an encode took) */
  return s ? (gst_byte_writer_put_data) (w, (const guint8 *) s, len) :
      gst_byte_writer_put_uint8 (w, 0);
}

/* A quark as a string: "" for none. */
static inline const gchar *
cudaipc_metas_quark_str (GQuark q)
{
  return q ? g_quark_to_string (q) : "";
}

/* Reading */

/* FALSE, with a CUDAIPC_ERROR_INVALID error saying @what. */
static inline gboolean
cudaipc_metas_bad (GError ** error, const gchar * what)
{
  g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_INVALID, "%s", what);
  return FALSE;
}

/* A string of the entry: it points into the blob. */
static inline gboolean
cudaipc_metas_get_str (GstByteReader * r, const gchar ** out, GError ** error)
{
  const guint8 *data;
  guint32 len;

  if (!gst_byte_reader_get_uint32_le (r, &len) || len == 0)
    return cudaipc_metas_bad (error, "a string is truncated or has no length");
  if (len > CUDAIPC_MAX_META_STRING) {
    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_LIMIT,
        "a string of %u bytes, more than %d", len, CUDAIPC_MAX_META_STRING);
    return FALSE;
  }
  if (!gst_byte_reader_get_data (r, len, &data) || data[len - 1] != '\0' ||
      memchr (data, '\0', len - 1) != NULL)
    return cudaipc_metas_bad (error,
        "a string is truncated or not one string");
  *out = (const gchar *) data;
  return TRUE;
}

/* A count of items read, at most @limit. */
static inline gboolean
cudaipc_metas_check_count (guint32 n, guint limit, GError ** error)
{
  if (n > limit) {
    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_LIMIT,
        "%u items, more than %u", n, limit);
    return FALSE;
  }
  return TRUE;
}

/* A count of items (u32), at most @limit. */
static inline gboolean
cudaipc_metas_get_count (GstByteReader * r, guint limit, guint32 * n,
    GError ** error)
{
  if (!gst_byte_reader_get_uint32_le (r, n))
    return cudaipc_metas_bad (error, "a count is truncated");
  return cudaipc_metas_check_count (*n, limit, error);
}

/* Nothing of the entry may be left once a meta is read. */
static inline gboolean
cudaipc_metas_at_end (GstByteReader * r, GError ** error)
{
  if (gst_byte_reader_get_remaining (r) != 0)
    return cudaipc_metas_bad (error, "a meta entry has bytes left over");
  return TRUE;
}

/* The codecs of the table (metas.c), in the file of their kind */

/* video-metas.c */
G_GNUC_INTERNAL CudaIpcMetaEncodeFunc cudaipc_metas_encode_roi;
G_GNUC_INTERNAL CudaIpcMetaDecodeFunc cudaipc_metas_decode_roi;
G_GNUC_INTERNAL CudaIpcMetaEncodeFunc cudaipc_metas_encode_timecode;
G_GNUC_INTERNAL CudaIpcMetaDecodeFunc cudaipc_metas_decode_timecode;
G_GNUC_INTERNAL CudaIpcMetaEncodeFunc cudaipc_metas_encode_crop;
G_GNUC_INTERNAL CudaIpcMetaDecodeFunc cudaipc_metas_decode_crop;
G_GNUC_INTERNAL CudaIpcMetaEncodeFunc cudaipc_metas_encode_reference_timestamp;
G_GNUC_INTERNAL CudaIpcMetaDecodeFunc cudaipc_metas_decode_reference_timestamp;

#ifdef HAVE_GST_ANALYTICS
/* analytics-metas.c, built with gstreamer-analytics-1.0 only */
G_GNUC_INTERNAL CudaIpcMetaEncodeFunc cudaipc_metas_encode_analytics;
G_GNUC_INTERNAL CudaIpcMetaDecodeFunc cudaipc_metas_decode_analytics;
#endif

G_END_DECLS
