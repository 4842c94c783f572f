/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A frame's names, listed once (names.h has the contract, docs/protocol.md
 * the layout): the producer's list as its metas are written, the NAMES
 * entry put in front of them, and the consumer's table of that entry.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include "media/peer-names.h"
#include "metas/metas-private.h"
#include "metas/names.h"

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

/* Writing */

/* The hash of the names once a frame lists more than the inline few:
 * open addressing, twice the most a frame lists. */
#define INDEX_SIZE (2 * CUDAIPC_MAX_META_FRAME_NAMES)

void
cudaipc_meta_writer_init (CudaIpcMetaWriter * mw, guint8 * data, guint size)
{
  gst_byte_writer_init_with_data (&mw->w, data, size, FALSE);
  mw->n_names = 0;
  mw->names_bytes = 0;
  mw->names = mw->few;
  mw->alloc = G_N_ELEMENTS (mw->few);
  mw->index = NULL;
  mw->indexed = 0;
}

void
cudaipc_meta_writer_clear (CudaIpcMetaWriter * mw)
{
  if (mw->names != mw->few)
    g_free (mw->names);
  g_free (mw->index);
  mw->names = mw->few;
  mw->index = NULL;
}

static guint
hash_name (const gchar * s, guint len)
{
  guint h = 5381;

  for (guint i = 0; i < len; i++)
    h = h * 33 + (guchar) s[i];
  return h;
}

static inline gboolean
same_name (const CudaIpcMetaWriterName * n, const gchar * s, guint len)
{
  return n->len == len && memcmp (n->str, s, len) == 0;
}

/* The hash made up to date with every name listed. */
static void
index_names (CudaIpcMetaWriter * mw)
{
  if (mw->index == NULL)
    mw->index = g_new0 (guint16, INDEX_SIZE);
  if (mw->indexed == 0)
    memset (mw->index, 0, INDEX_SIZE * sizeof (guint16));
  for (; mw->indexed < mw->n_names; mw->indexed++) {
    const CudaIpcMetaWriterName *n = &mw->names[mw->indexed];
    guint slot = hash_name (n->str, n->len) & (INDEX_SIZE - 1);

    while (mw->index[slot] != 0)
      slot = (slot + 1) & (INDEX_SIZE - 1);
    mw->index[slot] = mw->indexed + 1;
  }
}

/* @s's place among the names listed, or -1, when none of the first is
 * the same pointer (put_name() looked). */
static gint
find_name (CudaIpcMetaWriter * mw, const gchar * s, guint len)
{
  guint n = mw->n_names;

  if (n <= CUDAIPC_META_NAMES_INLINE) {
    for (guint i = 0; i < n; i++) {
      if (same_name (&mw->names[i], s, len))
        return i;
    }
    return -1;
  }
  index_names (mw);
  for (guint slot = hash_name (s, len) & (INDEX_SIZE - 1);
      mw->index[slot] != 0; slot = (slot + 1) & (INDEX_SIZE - 1)) {
    if (same_name (&mw->names[mw->index[slot] - 1], s, len))
      return mw->index[slot] - 1;
  }
  return -1;
}

/* Lists @s: its place, or -1 when the frame lists as many as it may. */
static gint
add_name (CudaIpcMetaWriter * mw, const gchar * s, guint len)
{
  CudaIpcMetaWriterName *n;

  if (mw->n_names >= CUDAIPC_MAX_META_FRAME_NAMES ||
      len + 1 > CUDAIPC_MAX_META_STRING)
    return -1;
  if (mw->n_names == mw->alloc) {
    if (mw->names == mw->few) {
      mw->names = g_new (CudaIpcMetaWriterName, 2 * mw->alloc);
      memcpy (mw->names, mw->few, sizeof (mw->few));
    } else {
      mw->names = g_renew (CudaIpcMetaWriterName, mw->names, 2 * mw->alloc);
    }
    mw->alloc *= 2;
  }
  n = &mw->names[mw->n_names];
  n->str = s;
  n->len = len;
  n->valid = cudaipc_metas_name_valid (s);
  mw->names_bytes += 4 + len + 1;
  return mw->n_names++;
}

/* put_name() found none of the first few names the same pointer */
gboolean
cudaipc_meta_writer_put_new_name (CudaIpcMetaWriter * mw, const gchar * s,
    gssize len, gboolean rule)
{
  gint i = -1;

  if (s == NULL || s[0] == '\0')
    return !rule && gst_byte_writer_put_uint16_le (&mw->w, 0);
  for (guint j = 4; j < mw->n_names && j < CUDAIPC_META_NAMES_INLINE; j++) {
    if (mw->names[j].str == s) {
      i = j;
      break;
    }
  }
  if (i < 0) {
    if (len < 0)
      len = strlen (s);
    i = find_name (mw, s, len);
  }
  if (i < 0 && (i = add_name (mw, s, len)) < 0)
    return FALSE;
  if (rule && !mw->names[i].valid)
    return FALSE;
  return gst_byte_writer_put_uint16_le (&mw->w, i + 1);
}

guint
cudaipc_meta_writer_names_size (const CudaIpcMetaWriter * mw)
{
  return mw->n_names ? CUDAIPC_META_ENTRY_HEADER + 4 + mw->names_bytes : 0;
}

gboolean
cudaipc_meta_writer_finish (CudaIpcMetaWriter * mw, guint * end)
{
  guint len = gst_byte_writer_get_pos (&mw->w);
  guint size = cudaipc_meta_writer_names_size (mw);
  guint8 *data = (guint8 *) mw->w.parent.data;
  GstByteWriter w;
  gboolean ok = TRUE;

  *end = len;
  if (size == 0)
    return TRUE;
  if (len + size > mw->w.alloc_size)
    return FALSE;
  memmove (data + size, data, len);
  gst_byte_writer_init_with_data (&w, data, size, FALSE);
  ok = gst_byte_writer_put_uint16_le (&w, CUDAIPC_META_KIND_NAMES) &&
      gst_byte_writer_put_uint16_le (&w, 0) &&
      gst_byte_writer_put_uint32_le (&w, size - CUDAIPC_META_ENTRY_HEADER) &&
      gst_byte_writer_put_uint32_le (&w, mw->n_names);
  for (guint i = 0; ok && i < mw->n_names; i++) {
    const CudaIpcMetaWriterName *n = &mw->names[i];

    ok = gst_byte_writer_put_uint32_le (&w, n->len + 1) &&
        (gst_byte_writer_put_data) (&w, (const guint8 *) n->str, n->len) &&
        gst_byte_writer_put_uint8 (&w, 0);
  }
  *end = len + size;
  return ok;
}

/* Reading */

void
cudaipc_meta_names_init (CudaIpcMetaNames * names)
{
  names->n = 0;
  names->names = names->few;
}

void
cudaipc_meta_names_clear (CudaIpcMetaNames * names)
{
  if (names->names != names->few)
    g_free (names->names);
  cudaipc_meta_names_init (names);
}

gboolean
cudaipc_meta_names_read (CudaIpcMetaNames * names, GstByteReader * r,
    GError ** error)
{
  guint32 n;

  if (!cudaipc_metas_get_count (r, CUDAIPC_MAX_META_FRAME_NAMES, &n, error))
    return FALSE;
  if (n == 0)
    return cudaipc_metas_bad (error, "a names entry lists none");
  /* each name takes 6 bytes at least: a count larger than the entry
   * allows is refused before anything is allocated for it */
  if (gst_byte_reader_get_remaining (r) / 6 < n)
    return cudaipc_metas_bad (error, "a names entry is truncated");
  if (n > G_N_ELEMENTS (names->few))
    names->names = g_new (CudaIpcMetaName, n);
  for (guint i = 0; i < n; i++) {
    const gchar *s;

    if (!cudaipc_metas_get_str (r, &s, error))
      return FALSE;
    if (s[0] == '\0')
      return cudaipc_metas_bad (error, "a name is empty");
    names->names[i].str = s;
    names->names[i].quark = 0;
    names->names[i].rule = 0;
    names->n = i + 1;
  }
  return cudaipc_metas_at_end (r, error);
}

/* lookup() found no quark for @ref yet, or its rule unchecked, or a
 * reference that is not one */
gboolean
cudaipc_meta_names_lookup_new (CudaIpcMetaNames * names, guint ref,
    const gchar * rule, GQuark * out, GError ** error)
{
  CudaIpcMetaName *e;

  if (ref == 0) {
    if (rule)
      return cudaipc_metas_bad (error, rule);
    *out = 0;
    return TRUE;
  }
  if (ref > names->n)
    return cudaipc_metas_bad (error, "a name is not among the frame's names");
  e = &names->names[ref - 1];
  if (rule) {
    if (e->rule == 0)
      e->rule = cudaipc_metas_name_valid (e->str) ? CUDAIPC_META_NAME_KEPT :
          CUDAIPC_META_NAME_CHECKED;
    if (e->rule != CUDAIPC_META_NAME_KEPT)
      return cudaipc_metas_bad (error, rule);
  }
  if (e->quark == 0) {
    GQuark q = g_quark_try_string (e->str);

    /* names from a producer become GQuarks, which live for the whole
     * process: one budget for them all (media/peer-names.h) */
    if (q == 0) {
      if (!cudaipc_peer_names_admit (e->str, error))
        return FALSE;
      q = g_quark_from_string (e->str);
    }
    e->quark = q;
  }
  *out = e->quark;
  return TRUE;
}

gboolean
cudaipc_meta_names_get (CudaIpcMetaNames * names, GstByteReader * r,
    const gchar * rule, GQuark * out, GError ** error)
{
  guint16 ref;

  if (!gst_byte_reader_get_uint16_le (r, &ref))
    return cudaipc_metas_bad (error, "a name is truncated");
  return cudaipc_meta_names_lookup (names, ref, rule, out, error);
}
