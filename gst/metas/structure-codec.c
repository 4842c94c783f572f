/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Structures in a meta's payload, and a producer's names made quarks
 * (structure-codec.h has the contract, docs/protocol.md the layout).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include "common/error.h"
#include "media/media.h"
#include "media/peer-names.h"
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

/* GStreamer's rule for structure and field names, checked here since
 * gst_structure_new_empty() only asserts it: a letter, then letters,
 * digits and "/-_.:+". */
gboolean
cudaipc_metas_name_valid (const gchar * s)
{
  if (!g_ascii_isalpha (s[0]))
    return FALSE;
  for (const gchar * c = s + 1; *c; c++) {
    if (!g_ascii_isalnum (*c) && !strchr ("/-_.:+", *c))
      return FALSE;
  }
  return TRUE;
}

#if !GST_CHECK_VERSION (1, 26, 0)
/* cudaipc_metas_name_valid() of a quark's string, remembered: a name's
 * validity never changes, and the encoder asks for the same few names on
 * every frame. A slot overwritten by another thread only costs a check
 * again. */
static gboolean
valid_quark (GQuark q)
{
  static gint seen[64];
  guint i = q % G_N_ELEMENTS (seen);

  if (q != 0 && (GQuark) g_atomic_int_get (&seen[i]) == q)
    return TRUE;
  if (q == 0 || !cudaipc_metas_name_valid (g_quark_to_string (q)))
    return FALSE;
  g_atomic_int_set (&seen[i], (gint) q);
  return TRUE;
}
#endif

/* Field and structure names: GStreamer 1.26 keeps them as GstIdStr, and
 * its quark calls make a quark of the string each time (a lock and a hash
 * lookup), so there they are read as strings. */
#if GST_CHECK_VERSION (1, 26, 0)
#define FIELD_ARG const GstIdStr * field
#define FIELD_STR gst_id_str_as_str (field)
#define FIELD_VALID cudaipc_metas_name_valid (FIELD_STR)
#define STRUCTURE_FOREACH gst_structure_foreach_id_str
#define STRUCTURE_NAME_VALID(st) \
    cudaipc_metas_name_valid (gst_structure_get_name (st))
#else
#define FIELD_ARG GQuark field
#define FIELD_STR g_quark_to_string (field)
#define FIELD_VALID valid_quark (field)
#define STRUCTURE_FOREACH gst_structure_foreach
#define STRUCTURE_NAME_VALID(st) valid_quark (gst_structure_get_name_id (st))
#endif

/* A field that travels in binary: of a plain type, with a name the reader
 * takes (GStreamer's parser takes more: those go as text). */
static gboolean
is_plain (FIELD_ARG, const GValue * v, gpointer user_data)
{
  return field_type_of (v) != 0 && FIELD_VALID;
}

static gboolean
plain_fields (const GstStructure * st)
{
  return gst_structure_n_fields (st) <= CUDAIPC_MAX_META_ITEMS &&
      STRUCTURE_NAME_VALID (st) && STRUCTURE_FOREACH (st, is_plain, NULL);
}

static gboolean
put_field (FIELD_ARG, const GValue * v, gpointer user_data)
{
  GstByteWriter *w = user_data;
  FieldType t = field_type_of (v);

  if (!is_plain (field, v, NULL) || !cudaipc_metas_put_str (w, FIELD_STR) ||
      !gst_byte_writer_put_uint8 (w, t))
    return FALSE;
  switch (t) {
    case FIELD_INT:
      return gst_byte_writer_put_int32_le (w, g_value_get_int (v));
    case FIELD_UINT:
      return gst_byte_writer_put_uint32_le (w, g_value_get_uint (v));
    case FIELD_INT64:
      return gst_byte_writer_put_int64_le (w, g_value_get_int64 (v));
    case FIELD_UINT64:
      return gst_byte_writer_put_uint64_le (w, g_value_get_uint64 (v));
    case FIELD_DOUBLE:
      return gst_byte_writer_put_float64_le (w, g_value_get_double (v));
    case FIELD_FLOAT:
      return gst_byte_writer_put_float32_le (w, g_value_get_float (v));
    case FIELD_BOOLEAN:
      return gst_byte_writer_put_uint8 (w, g_value_get_boolean (v) ? 1 : 0);
    case FIELD_STRING:
      return cudaipc_metas_put_str (w, g_value_get_string (v));
    default:
      return FALSE;
  }
}

gboolean
cudaipc_metas_put_structure (GstByteWriter * w, const GstStructure * st)
{
  guint at = gst_byte_writer_get_pos (w);
  gint n = gst_structure_n_fields (st);
  gchar *text;
  gboolean ok;

  /* in fields, in one pass: a field of another type (put_field says so)
   * takes the writer back, and the structure goes as text */
  if (n <= CUDAIPC_MAX_META_ITEMS && STRUCTURE_NAME_VALID (st) &&
      gst_byte_writer_put_uint8 (w, STRUCT_FIELDS) &&
      cudaipc_metas_put_str (w, gst_structure_get_name (st)) &&
      gst_byte_writer_put_uint32_le (w, n) &&
      STRUCTURE_FOREACH (st, put_field, w))
    return TRUE;
  gst_byte_writer_set_pos (w, at);
  if (plain_fields (st))
    /* plain, but no room left */
    return FALSE;
  text = gst_structure_to_string (st);
  ok = gst_byte_writer_put_uint8 (w, STRUCT_TEXT) &&
      cudaipc_metas_put_str (w, text);
  g_free (text);
  return ok;
}

/* Reading */

/* A name with a rule is checked once a blob, as its quark is looked up
 * once. */
gboolean
cudaipc_metas_peer_quark (CudaIpcMetaNames * names, const gchar * s,
    const gchar * rule, GQuark * out, GError ** error)
{
  guint i;

  if (s[0] == '\0') {
    if (rule)
      return cudaipc_metas_bad (error, rule);
    *out = 0;
    return TRUE;
  }
  /* the cache's strings point into the blob being decoded (reset at
   * each decode) */
  for (i = 0; i < CUDAIPC_META_NAMES_CACHED && names->str[i]; i++) {
    if (names->str[i][0] == s[0] && strcmp (names->str[i], s) == 0)
      break;
  }
  if (i < CUDAIPC_META_NAMES_CACHED && names->str[i]) {
    if (rule && !names->valid[i]) {
      if (!cudaipc_metas_name_valid (s))
        return cudaipc_metas_bad (error, rule);
      names->valid[i] = TRUE;
    }
    *out = names->quark[i];
    return TRUE;
  }
  if (rule && !cudaipc_metas_name_valid (s))
    return cudaipc_metas_bad (error, rule);
  /* names from a producer become GQuarks, which live for the whole
   * process: one budget for them all (media/peer-names.h) */
  if (!cudaipc_peer_names_admit (s, error))
    return FALSE;
  *out = g_quark_from_string (s);
  i = names->next;
  names->str[i] = s;
  names->quark[i] = *out;
  names->valid[i] = rule != NULL;
  names->next = (i + 1) % CUDAIPC_META_NAMES_CACHED;
  return TRUE;
}

/* A structure string, bounded like an event's before it is parsed. */
static GstStructure *
parse_structure (const gchar * s, GError ** error)
{
  GstStructure *st;

  if (!cudaipc_media_check_nesting (s, CUDAIPC_MAX_EVENT_NESTING, error) ||
      !cudaipc_peer_names_admit_structure (s, error))
    return NULL;
  st = gst_structure_from_string (s, NULL);
  if (st == NULL)
    cudaipc_metas_bad (error, "a structure does not parse");
  return st;
}

static gboolean
get_field (GstByteReader * r, CudaIpcMetaNames * names, GstStructure * st,
    GError ** error)
{
  const gchar *name, *s;
  GQuark field;
  GValue v = G_VALUE_INIT;
  guint8 t, b;
  gint32 i32;
  guint32 u32;
  gint64 i64;
  guint64 u64;
  gdouble d;
  gfloat f;
  gboolean ok = TRUE;

  if (!cudaipc_metas_get_str (r, &name, error) ||
      !cudaipc_metas_peer_quark (names, name, "a field name is not one",
          &field, error))
    return FALSE;
  if (!gst_byte_reader_get_uint8 (r, &t))
    return cudaipc_metas_bad (error, "a field is truncated");
  switch (t) {
    case FIELD_INT:
      if ((ok = gst_byte_reader_get_int32_le (r, &i32)))
        g_value_set_int (g_value_init (&v, G_TYPE_INT), i32);
      break;
    case FIELD_UINT:
      if ((ok = gst_byte_reader_get_uint32_le (r, &u32)))
        g_value_set_uint (g_value_init (&v, G_TYPE_UINT), u32);
      break;
    case FIELD_INT64:
      if ((ok = gst_byte_reader_get_int64_le (r, &i64)))
        g_value_set_int64 (g_value_init (&v, G_TYPE_INT64), i64);
      break;
    case FIELD_UINT64:
      if ((ok = gst_byte_reader_get_uint64_le (r, &u64)))
        g_value_set_uint64 (g_value_init (&v, G_TYPE_UINT64), u64);
      break;
    case FIELD_DOUBLE:
      if ((ok = gst_byte_reader_get_float64_le (r, &d)))
        g_value_set_double (g_value_init (&v, G_TYPE_DOUBLE), d);
      break;
    case FIELD_FLOAT:
      if ((ok = gst_byte_reader_get_float32_le (r, &f)))
        g_value_set_float (g_value_init (&v, G_TYPE_FLOAT), f);
      break;
    case FIELD_BOOLEAN:
      if ((ok = gst_byte_reader_get_uint8 (r, &b) && b <= 1))
        g_value_set_boolean (g_value_init (&v, G_TYPE_BOOLEAN), b);
      break;
    case FIELD_STRING:
      if (!cudaipc_metas_get_str (r, &s, error))
        return FALSE;
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
  guint32 n;
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
  if (!cudaipc_metas_get_str (r, &s, error) ||
      !cudaipc_metas_get_count (r, CUDAIPC_MAX_META_ITEMS, &n, error))
    return NULL;
  if (!cudaipc_metas_peer_quark (names, s, "a structure name is not one",
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

