/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A GstStructure in a meta's payload (docs/protocol.md, Frame metadata: a
 * region's parameters), and the names a consumer reads out of metas.
 *
 * A structure whose fields are all of plain types (integers, floats,
 * booleans, strings) and whose names keep GStreamer's rule goes as
 * fields, which is quick to write and to read back; any other goes as
 * text, which the reader bounds like an EVENT's structure before
 * GStreamer parses it.
 *
 * Names from a producer (structure and field names, region types, object
 * and class names) become GQuarks, which a process never frees: at most
 * CUDAIPC_MAX_PEER_NAMES new ones a process, from metas, caps and events
 * together (media/peer-names.h). A
 * CudaIpcMetaNames, on the decoder's stack, remembers the last few names
 * of one blob, so that a name it repeats is looked up once; its strings
 * point into that blob.
 *
 * A structure read back is the caller's. Any thread; a CudaIpcMetaNames
 * is one thread's.
 */
#pragma once

#include <gst/gst.h>
#include <gst/base/gstbytereader.h>
#include <gst/base/gstbytewriter.h>

G_BEGIN_DECLS

#define CUDAIPC_META_NAMES_CACHED 8

/* The names one blob repeats, looked up once: each lookup takes GLib's
 * quark lock. Zeroed before the blob's first entry. */
typedef struct
{
  const gchar *str[CUDAIPC_META_NAMES_CACHED];
  GQuark quark[CUDAIPC_META_NAMES_CACHED];
  gboolean valid[CUDAIPC_META_NAMES_CACHED];    /* keeps GStreamer's rule */
  guint next;
} CudaIpcMetaNames;

/* GStreamer's rule for structure and field names: a letter, then
 * letters, digits and "/-_.:+". */
G_GNUC_INTERNAL gboolean cudaipc_metas_name_valid (const gchar * s);

/* @s, a producer's name, as a quark (0 for ""). With @rule (what the name
 * is, for the error), a structure or field name, which must keep
 * GStreamer's rule and may not be empty. FALSE with a CUDAIPC_ERROR_LIMIT
 * error once the process took CUDAIPC_MAX_PEER_NAMES new names. */
G_GNUC_INTERNAL gboolean cudaipc_metas_peer_quark (CudaIpcMetaNames * names,
    const gchar * s, const gchar * rule, GQuark * out, GError ** error);

/* Writes @st, as fields or as text; FALSE when it does not fit in what
 * @w has left. */
G_GNUC_INTERNAL gboolean cudaipc_metas_put_structure (GstByteWriter * w,
    const GstStructure * st);

/* A structure as cudaipc_metas_put_structure() wrote it, checked; NULL
 * with an error when it is not one. */
G_GNUC_INTERNAL GstStructure *cudaipc_metas_get_structure (GstByteReader * r,
    CudaIpcMetaNames * names, GError ** error);

G_END_DECLS
