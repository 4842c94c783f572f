/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A frame's names, listed once (docs/protocol.md, Frame metadata): the
 * region types, structure and field names, object and class names of a
 * frame's metas travel in one NAMES entry, the blob's first, and every
 * meta names them by their place in it (a u16: 0 for none, i for the
 * i-th). Fifty regions of one type, each with a "detection" structure of
 * one "confidence" field, list three names and carry 150 two-byte
 * references, where each had its three strings before: the producer
 * writes no string per meta, the consumer reads, checks and looks up
 * each name once a frame instead of once a use.
 *
 * Writing: a CudaIpcMetaWriter, on the encoder's stack, holds the
 * GstByteWriter the entries are written with (it never grows) and the
 * names listed so far. A codec writes a name with
 * cudaipc_meta_writer_put_name(), which lists it the first time; the
 * encoder marks the writer before each entry and rewinds it to the mark
 * when the entry fails, names included, and once every entry is written
 * puts the NAMES entry in front of them. The names' strings are
 * borrowed from the metas being written: the buffer must keep them
 * until the blob is finished.
 *
 * Reading: a CudaIpcMetaNames, on the decoder's stack, holds the NAMES
 * entry as read (its strings point into the blob). A name becomes a
 * GQuark when a meta first uses it, counted against the process's budget
 * of names from peers (media/peer-names.h) if the process never knew it;
 * a name listed and never used is never made one. A structure or field
 * name must keep GStreamer's rule, checked once a frame.
 *
 * Any thread; a writer or a table is one thread's.
 */
#pragma once

#include <gst/gst.h>
#include <gst/base/gstbytereader.h>
#include <gst/base/gstbytewriter.h>

G_BEGIN_DECLS

/* Names one frame lists at most. */
#define CUDAIPC_MAX_META_FRAME_NAMES 1024

/* Names a writer or a table holds before it allocates. */
#define CUDAIPC_META_NAMES_INLINE 32

/* GStreamer's rule for structure and field names: a letter, then
 * letters, digits and "/-_.:+". */
G_GNUC_INTERNAL gboolean cudaipc_metas_name_valid (const gchar * s);

/* Writing */

typedef struct
{
  const gchar *str;             /* borrowed */
  guint len;                    /* without the NUL */
  gboolean valid;               /* keeps GStreamer's rule */
} CudaIpcMetaWriterName;

typedef struct
{
  GstByteWriter w;              /* first: codecs write with &mw->w */
  guint n_names;
  guint names_bytes;            /* the NAMES entry's strings, as written */
  CudaIpcMetaWriterName *names; /* few, or allocated past them */
  guint alloc;
  guint16 *index;               /* NULL, or a hash of the names (their
                                 * place + 1) once they are many */
  guint indexed;                /* names in the hash */
  CudaIpcMetaWriterName few[CUDAIPC_META_NAMES_INLINE];
} CudaIpcMetaWriter;

/* Where an entry began: what rewind() goes back to. */
typedef struct
{
  guint pos;
  guint n_names;
  guint names_bytes;
} CudaIpcMetaMark;

/* Writes from the start of @data, @size bytes, which are not grown. */
G_GNUC_INTERNAL void cudaipc_meta_writer_init (CudaIpcMetaWriter * mw,
    guint8 * data, guint size);
G_GNUC_INTERNAL void cudaipc_meta_writer_clear (CudaIpcMetaWriter * mw);

static inline void
cudaipc_meta_writer_mark (const CudaIpcMetaWriter * mw, CudaIpcMetaMark * mark)
{
  mark->pos = gst_byte_writer_get_pos (&mw->w);
  mark->n_names = mw->n_names;
  mark->names_bytes = mw->names_bytes;
}

static inline void
cudaipc_meta_writer_rewind (CudaIpcMetaWriter * mw,
    const CudaIpcMetaMark * mark)
{
  gst_byte_writer_set_pos (&mw->w, mark->pos);
  mw->n_names = mark->n_names;
  mw->names_bytes = mark->names_bytes;
  /* names are never taken out of the hash one by one: it is made again
   * at the next lookup */
  if (mw->indexed > mw->n_names)
    mw->indexed = 0;
}

/* Writes @s's reference (listing it if new): @len bytes, or -1 for up to
 * its NUL; NULL or "" is 0, none. FALSE when it does not fit, is over
 * CUDAIPC_MAX_META_STRING or the names a frame lists, or, with @rule,
 * does not keep GStreamer's rule for structure and field names (or is
 * none): the caller rewinds. */
G_GNUC_INTERNAL gboolean cudaipc_meta_writer_put_new_name (CudaIpcMetaWriter *
    mw, const gchar * s, gssize len, gboolean rule);

static inline gboolean
cudaipc_meta_writer_put_name (CudaIpcMetaWriter * mw, const gchar * s,
    gssize len, gboolean rule)
{
  /* names are most often the same strings again (quarks' strings,
   * GStreamer's static names): the first few names' pointers first */
  for (guint i = 0; i < mw->n_names && i < 4; i++) {
    if (mw->names[i].str == s && (!rule || mw->names[i].valid))
      return gst_byte_writer_put_uint16_le (&mw->w, i + 1);
  }
  return cudaipc_meta_writer_put_new_name (mw, s, len, rule);
}
/* Bytes the NAMES entry takes as the names stand, its header included: 0
 * for none. */
G_GNUC_INTERNAL guint cudaipc_meta_writer_names_size (const CudaIpcMetaWriter
    * mw);

/* Puts the NAMES entry first, before the entries written (moved up by
 * its size), and the bytes written in all in *@end: FALSE, with *@end
 * the entries' alone, where they would not fit (the encoder keeps room
 * for it, entry by entry). */
G_GNUC_INTERNAL gboolean cudaipc_meta_writer_finish (CudaIpcMetaWriter * mw,
    guint * end);

/* Reading */

/* A name's rule: checked, and kept */
#define CUDAIPC_META_NAME_CHECKED (1 << 0)
#define CUDAIPC_META_NAME_KEPT (CUDAIPC_META_NAME_CHECKED | (1 << 1))

typedef struct
{
  const gchar *str;             /* into the blob */
  GQuark quark;                 /* 0 until a meta first uses it */
  guint8 rule;                  /* 0, CHECKED (GStreamer's rule refuses
                                 * it) or KEPT */
} CudaIpcMetaName;

typedef struct
{
  guint n;
  CudaIpcMetaName *names;       /* few, or allocated past them */
  CudaIpcMetaName few[CUDAIPC_META_NAMES_INLINE];
} CudaIpcMetaNames;

/* An empty table: a frame without a NAMES entry. */
G_GNUC_INTERNAL void cudaipc_meta_names_init (CudaIpcMetaNames * names);
G_GNUC_INTERNAL void cudaipc_meta_names_clear (CudaIpcMetaNames * names);

/* The NAMES entry's payload, all of @r: u32 n, n × str (not empty).
 * FALSE with a CUDAIPC_ERROR_INVALID or _LIMIT error. */
G_GNUC_INTERNAL gboolean cudaipc_meta_names_read (CudaIpcMetaNames * names,
    GstByteReader * r, GError ** error);

/* A reference, read from @r, as a quark (0 for none). With @rule (what
 * the name is, for the error), a structure or field name: it may not be
 * none and must keep GStreamer's rule. FALSE with an error for a
 * reference past the table, and (CUDAIPC_ERROR_LIMIT) once the process
 * took CUDAIPC_MAX_PEER_NAMES new names. */
G_GNUC_INTERNAL gboolean cudaipc_meta_names_get (CudaIpcMetaNames * names,
    GstByteReader * r, const gchar * rule, GQuark * out, GError ** error);

G_GNUC_INTERNAL gboolean cudaipc_meta_names_lookup_new (CudaIpcMetaNames *
    names, guint ref, const gchar * rule, GQuark * out, GError ** error);

/* As get(), for the reference @ref already read. */
static inline gboolean
cudaipc_meta_names_lookup (CudaIpcMetaNames * names, guint ref,
    const gchar * rule, GQuark * out, GError ** error)
{
  /* a name used before in this frame, and checked where it had to be */
  if (ref > 0 && ref <= names->n && names->names[ref - 1].quark != 0 &&
      (rule == NULL || names->names[ref - 1].rule == CUDAIPC_META_NAME_KEPT)) {
    *out = names->names[ref - 1].quark;
    return TRUE;
  }
  return cudaipc_meta_names_lookup_new (names, ref, rule, out, error);
}

G_END_DECLS
