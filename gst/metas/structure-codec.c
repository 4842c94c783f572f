/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Structures in a meta's payload (structure-codec.h has the contract,
 * docs/protocol.md the layout).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include "common/error.h"
#include "media/media.h"
#include "media/peer-names.h"
#include "media/uniform.h"
#include "metas/metas-private.h"
#include "metas/structure-codec.h"

/* Writing */

/* A structure: in fields of plain types (detectors' confidences, labels,
 * ids) when it has only those, which is quick to write and to read back;
 * else as text. */
typedef enum
{
  STRUCT_TEXT = 0,
  STRUCT_FIELDS = 1,
} StructForm;

typedef enum
{
  FIELD_INT = 1,
  FIELD_UINT = 2,
  FIELD_INT64 = 3,
  FIELD_UINT64 = 4,
  FIELD_DOUBLE = 5,
  FIELD_FLOAT = 6,
  FIELD_BOOLEAN = 7,
  FIELD_STRING = 8,
} FieldType;

static FieldType
field_type_of (const GValue * v)
{
  switch (G_VALUE_TYPE (v)) {
    case G_TYPE_INT:
      return FIELD_INT;
    case G_TYPE_UINT:
      return FIELD_UINT;
    case G_TYPE_INT64:
      return FIELD_INT64;
    case G_TYPE_UINT64:
      return FIELD_UINT64;
    case G_TYPE_DOUBLE:
      return FIELD_DOUBLE;
    case G_TYPE_FLOAT:
      return FIELD_FLOAT;
    case G_TYPE_BOOLEAN:
      return FIELD_BOOLEAN;
    case G_TYPE_STRING:
      return g_value_get_string (v) ? FIELD_STRING : 0;
    default:
      return 0;
  }
}

/* Field and structure names: GStreamer 1.26 keeps them as GstIdStr, and
 * its quark calls make a quark of the string each time (a lock and a hash
 * lookup), so there they are read as strings, with their lengths. */
#if GST_CHECK_VERSION (1, 26, 0)
#define FIELD_ARG const GstIdStr * field
#define FIELD_STR gst_id_str_as_str (field)
#define FIELD_LEN gst_id_str_get_len (field)
#define STRUCTURE_FOREACH gst_structure_foreach_id_str
#else
#define FIELD_ARG GQuark field
#define FIELD_STR g_quark_to_string (field)
#define FIELD_LEN -1
#define STRUCTURE_FOREACH gst_structure_foreach
#endif

static gboolean
put_structure_name (CudaIpcMetaWriter * mw, const GstStructure * st)
{
#if GST_CHECK_VERSION (1, 26, 0)
  const GstIdStr *name = gst_structure_get_name_id_str (st);

  return cudaipc_meta_writer_put_name (mw, gst_id_str_as_str (name),
      gst_id_str_get_len (name), TRUE);
#else
  return cudaipc_meta_writer_put_name (mw, gst_structure_get_name (st), -1,
      TRUE);
#endif
}

/* A field that travels in binary: of a plain type, with a name the reader
 * takes (GStreamer's parser takes more: those go as text). Asked only of
 * a structure that did not go in fields. */
static gboolean
is_plain (FIELD_ARG, const GValue * v, gpointer user_data)
{
  return field_type_of (v) != 0 && cudaipc_metas_name_valid (FIELD_STR);
}

static gboolean
plain_fields (const GstStructure * st)
{
  return gst_structure_n_fields (st) <= CUDAIPC_MAX_META_ITEMS &&
      cudaipc_metas_name_valid (gst_structure_get_name (st)) &&
      STRUCTURE_FOREACH (st, is_plain, NULL);
}

static gboolean
put_field (FIELD_ARG, const GValue * v, gpointer user_data)
{
  CudaIpcMetaWriter *mw = user_data;
  GstByteWriter *w = &mw->w;
  FieldType t = field_type_of (v);

  if (t == 0 || !cudaipc_meta_writer_put_name (mw, FIELD_STR, FIELD_LEN,
          TRUE))
    return FALSE;
  if (t == FIELD_STRING)
    return gst_byte_writer_put_uint8 (w, t) &&
        cudaipc_metas_put_str (w, g_value_get_string (v));
  /* the type and a value of 8 bytes at most, checked once */
  if (!gst_byte_writer_ensure_free_space (w, 9))
    return FALSE;
  gst_byte_writer_put_uint8_unchecked (w, t);
  switch (t) {
    case FIELD_INT:
      gst_byte_writer_put_int32_le_unchecked (w, g_value_get_int (v));
      break;
    case FIELD_UINT:
      gst_byte_writer_put_uint32_le_unchecked (w, g_value_get_uint (v));
      break;
    case FIELD_INT64:
      gst_byte_writer_put_int64_le_unchecked (w, g_value_get_int64 (v));
      break;
    case FIELD_UINT64:
      gst_byte_writer_put_uint64_le_unchecked (w, g_value_get_uint64 (v));
      break;
    case FIELD_DOUBLE:
      gst_byte_writer_put_float64_le_unchecked (w, g_value_get_double (v));
      break;
    case FIELD_FLOAT:
      gst_byte_writer_put_float32_le_unchecked (w, g_value_get_float (v));
      break;
    default:
      gst_byte_writer_put_uint8_unchecked (w, g_value_get_boolean (v) ? 1 : 0);
      break;
  }
  return TRUE;
}

gboolean
cudaipc_metas_put_structure (CudaIpcMetaWriter * mw, const GstStructure * st)
{
  CudaIpcMetaMark mark;
  gint n = gst_structure_n_fields (st);
  gchar *text;
  gboolean ok;

  /* in fields, in one pass: a field of another type or a name GStreamer's
   * rule refuses (put_field says so) takes the writer back, names and
   * all, and the structure goes as text */
  cudaipc_meta_writer_mark (mw, &mark);
  if (n <= CUDAIPC_MAX_META_ITEMS &&
      gst_byte_writer_put_uint8 (&mw->w, STRUCT_FIELDS) &&
      put_structure_name (mw, st) &&
      gst_byte_writer_put_uint16_le (&mw->w, n) &&
      (n == 0 || STRUCTURE_FOREACH (st, put_field, mw)))
    return TRUE;
  cudaipc_meta_writer_rewind (mw, &mark);
  if (plain_fields (st))
    /* plain, but no room left, or too many names */
    return FALSE;
  text = gst_structure_to_string (st);
  ok = gst_byte_writer_put_uint8 (&mw->w, STRUCT_TEXT) &&
      cudaipc_metas_put_str (&mw->w, text);
  g_free (text);
  return ok;
}

/* Reading */

/* A structure string, bounded like an event's before it is parsed. */
static GstStructure *
parse_structure (const gchar * s, GError ** error)
{
  GstStructure *st;

  if (!cudaipc_media_check_nesting (s, CUDAIPC_MAX_EVENT_NESTING, error) ||
      !cudaipc_peer_names_admit_structure (s, error))
    return NULL;
  st = gst_structure_from_string (s, NULL);
  if (st == NULL) {
    cudaipc_metas_bad (error, "a structure does not parse");
  } else if (!cudaipc_media_structure_uniform (st)) {
    cudaipc_metas_bad (error, "a structure has a list that does not write "
        "back (mixed types, a NULL string or a list in a list)");
    g_clear_pointer (&st, gst_structure_free);
  }
  return st;
}

static gboolean
get_field (GstByteReader * r, CudaIpcMetaNames * names, GstStructure * st,
    GError ** error)
{
  const gchar *s;
  GQuark field;
  GValue v = G_VALUE_INIT;
  guint16 ref;
  guint8 t, b;
  gboolean ok = TRUE;

  if (gst_byte_reader_get_remaining (r) < 3)
    return cudaipc_metas_bad (error, "a field is truncated");
  ref = gst_byte_reader_get_uint16_le_unchecked (r);
  t = gst_byte_reader_get_uint8_unchecked (r);
  if (!cudaipc_meta_names_lookup (names, ref, "a field name is not one",
          &field, error))
    return FALSE;
  switch (t) {
    case FIELD_INT:
      if ((ok = gst_byte_reader_get_remaining (r) >= 4))
        g_value_set_int (g_value_init (&v, G_TYPE_INT),
            gst_byte_reader_get_int32_le_unchecked (r));
      break;
    case FIELD_UINT:
      if ((ok = gst_byte_reader_get_remaining (r) >= 4))
        g_value_set_uint (g_value_init (&v, G_TYPE_UINT),
            gst_byte_reader_get_uint32_le_unchecked (r));
      break;
    case FIELD_INT64:
      if ((ok = gst_byte_reader_get_remaining (r) >= 8))
        g_value_set_int64 (g_value_init (&v, G_TYPE_INT64),
            gst_byte_reader_get_int64_le_unchecked (r));
      break;
    case FIELD_UINT64:
      if ((ok = gst_byte_reader_get_remaining (r) >= 8))
        g_value_set_uint64 (g_value_init (&v, G_TYPE_UINT64),
            gst_byte_reader_get_uint64_le_unchecked (r));
      break;
    case FIELD_DOUBLE:
      if ((ok = gst_byte_reader_get_remaining (r) >= 8))
        g_value_set_double (g_value_init (&v, G_TYPE_DOUBLE),
            gst_byte_reader_get_float64_le_unchecked (r));
      break;
    case FIELD_FLOAT:
      if ((ok = gst_byte_reader_get_remaining (r) >= 4))
        g_value_set_float (g_value_init (&v, G_TYPE_FLOAT),
            gst_byte_reader_get_float32_le_unchecked (r));
      break;
    case FIELD_BOOLEAN:
      if ((ok = gst_byte_reader_get_uint8 (r, &b) && b <= 1))
        g_value_set_boolean (g_value_init (&v, G_TYPE_BOOLEAN), b);
      break;
    case FIELD_STRING:
      if (!cudaipc_metas_get_str (r, &s, error))
        return FALSE;
      /* GStreamer warns of, and does not keep, a string that is not */
      if (!g_utf8_validate (s, -1, NULL))
        return cudaipc_metas_bad (error, "a string field is not UTF-8");
      g_value_set_string (g_value_init (&v, G_TYPE_STRING), s);
      break;
    default:
      return cudaipc_metas_bad (error, "a field of an unknown type");
  }
  if (!ok)
    return cudaipc_metas_bad (error, "a field is truncated or not valid");
  gst_structure_id_take_value (st, field, &v);
  return TRUE;
}

/* A structure as put_structure() wrote it. */
GstStructure *
cudaipc_metas_get_structure (GstByteReader * r, CudaIpcMetaNames * names,
    GError ** error)
{
  GstStructure *st;
  const gchar *s;
  GQuark name;
  guint16 ref, n;
  guint8 form;

  if (!gst_byte_reader_get_uint8 (r, &form)) {
    cudaipc_metas_bad (error, "a structure is truncated");
    return NULL;
  }
  if (form == STRUCT_TEXT)
    return cudaipc_metas_get_str (r, &s, error) ?
        parse_structure (s, error) : NULL;
  if (form != STRUCT_FIELDS) {
    cudaipc_metas_bad (error, "a structure of an unknown form");
    return NULL;
  }
  if (gst_byte_reader_get_remaining (r) < 4) {
    cudaipc_metas_bad (error, "a structure is truncated");
    return NULL;
  }
  ref = gst_byte_reader_get_uint16_le_unchecked (r);
  n = gst_byte_reader_get_uint16_le_unchecked (r);
  if (!cudaipc_metas_check_count (n, CUDAIPC_MAX_META_ITEMS, error) ||
      !cudaipc_meta_names_lookup (names, ref, "a structure name is not one",
          &name, error))
    return NULL;
  st = gst_structure_new_id_empty (name);
  for (guint i = 0; i < n; i++) {
    if (!get_field (r, names, st, error)) {
      gst_structure_free (st);
      return NULL;
    }
  }
  return st;
}
