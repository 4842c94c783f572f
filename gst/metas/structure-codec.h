/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A GstStructure in a meta's payload (docs/protocol.md, Frame metadata: a
 * region's parameters).
 *
 * A structure whose fields are all of plain types (integers, floats,
 * booleans, strings) and whose names keep GStreamer's rule goes as
 * fields, its names referred to in the frame's names (names.h), which is
 * quick to write and to read back; any other goes as text, which the
 * reader bounds like an EVENT's structure, and whose names it counts
 * against the process's budget (media/peer-names.h), before GStreamer
 * parses it.
 *
 * A structure read back is the caller's. Any thread.
 */
#pragma once

#include <gst/gst.h>
#include <gst/base/gstbytereader.h>
#include <gst/base/gstbytewriter.h>

#include "metas/names.h"

G_BEGIN_DECLS

/* Writes @st, as fields or as text; FALSE when it does not fit in what
 * @mw has left, or its names in what a frame lists: the caller rewinds. */
G_GNUC_INTERNAL gboolean cudaipc_metas_put_structure (CudaIpcMetaWriter * mw,
    const GstStructure * st);

/* A structure as cudaipc_metas_put_structure() wrote it, checked; NULL
 * with an error when it is not one. */
G_GNUC_INTERNAL GstStructure *cudaipc_metas_get_structure (GstByteReader * r,
    CudaIpcMetaNames * names, GError ** error);

G_END_DECLS
