/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A frame's GstMetas on the wire (docs/protocol.md, Frame metadata): the
 * producer encodes the metas of a buffer into the blob a FRAME carries,
 * the consumer decodes a blob onto the buffer it pushes. One encoder and
 * one decoder per kind of meta, each pair an entry of one table of codecs
 * (metas.c; the video metas' codecs in video-metas.c, the analytics
 * meta's in analytics-metas.c, region parameters in structure-codec.c):
 *
 *   region of interest  GstVideoRegionOfInterestMeta: type, id, parent id,
 *                       rectangle, parameter structures
 *   time code           GstVideoTimeCodeMeta, with its daily jam
 *   crop                GstVideoCropMeta
 *   reference timestamp GstReferenceTimestampMeta: reference caps,
 *                       timestamp, duration
 *   analytics           (built with gstreamer-analytics-1.0, >= 1.24)
 *                       GstAnalyticsRelationMeta: its object detection
 *                       (1.26: with rotation), classification and tracking
 *                       entries and the relations between them; other
 *                       entries (segmentation, tensors, an application's
 *                       own) are left out, and so are their relations
 *   any other           (built against GStreamer >= 1.24) what
 *                       gst_meta_serialize() can write, read back with
 *                       gst_meta_deserialize(): GstCustomMeta, and any
 *                       meta that implements serialization
 *
 * GstVideoMeta is not carried as a meta: FRAME's planes are the layout.
 * The names the metas carry (region types, structure and field names,
 * object and class names) are listed once a frame, in an entry before
 * the metas', which refer to them (names.h).
 *
 * The blob is untrusted on the consumer's side, like caps: its size, the
 * entries in it and the items in each are bounded (CUDAIPC_MAX_META_*),
 * structure strings (region parameters, reference caps, serialized metas)
 * nest at most as deep as event structures, and names the consumer has
 * never seen count against the one budget of names a process takes from
 * peers (media/peer-names.h; GQuarks are never freed). The first entry that breaks a rule
 * ends the decoding: what was decoded before it stays on the buffer, the
 * rest is dropped, and the error says why; the frame itself is fine.
 *
 * Pure functions but for the names' count; any thread.
 */
#pragma once

#include <gst/gst.h>
#include "wire/protocol.h"
#include "media/peer-names.h"

G_BEGIN_DECLS

/* Metas of one frame at most (a region of interest is a meta of its own:
 * 200 regions are 200 entries). */
#define CUDAIPC_MAX_METAS 1024
/* Items of one meta at most: parameter structures of a region, entries of
 * an analytics meta, classes of a classification. */
#define CUDAIPC_MAX_META_ITEMS 256
/* Relations of one analytics meta at most. */
#define CUDAIPC_MAX_META_RELATIONS 4096
/* Bytes of one string of a meta at most (names, structures, caps). */
#define CUDAIPC_MAX_META_STRING 4096
/* Names a consumer process interns from producers at most, beyond those
 * it knew: metas, caps and events together (media/peer-names.h). */
#define CUDAIPC_MAX_META_NAMES CUDAIPC_MAX_PEER_NAMES

/* Which metas travel: every one this library can carry, none, or those
 * whose API type names are in a list. */
typedef struct _CudaIpcMetaFilter CudaIpcMetaFilter;

/* "all" (also NULL or ""), "none", or API type names separated by commas,
 * such as "GstVideoRegionOfInterestMetaAPI,GstVideoCropMetaAPI"
 * (gst-inspect-1.0 and GST_DEBUG name metas by these). A meta's own type
 * name ("GstVideoTimeCodeMeta", a custom meta's name) stands for its API
 * type where GStreamer knows the meta or this build carries it. An empty
 * name, and another that ends in "Meta", are CUDAIPC_ERROR_INVALID (the
 * text names the API type to use); any other name no meta has (yet) is
 * accepted, and said by get_doubts() where it does not look like one. */
CudaIpcMetaFilter *cudaipc_meta_filter_new (const gchar * spec,
    GError ** error);
/* What is likely wrong with the names of a filter made without error:
 * names no API type has (yet) that do not end in "API" or differ from a
 * known one only in case, each with what to write instead where that is
 * clear ("metas: GstVideoCropMetaApi is no meta API type, and lets no
 * meta through: write GstVideoCropMetaAPI"); NULL where nothing is.
 * Valid while @filter is. */
const gchar *cudaipc_meta_filter_get_doubts (const CudaIpcMetaFilter *
    filter);
void cudaipc_meta_filter_free (CudaIpcMetaFilter * filter);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (CudaIpcMetaFilter, cudaipc_meta_filter_free);

/* What encoding or decoding did. */
typedef struct
{
  guint carried;                /* metas written, or added to the buffer */
  guint skipped;                /* metas this side cannot carry (encode:
                                 * not serializable; decode: of an API this
                                 * process does not know) */
  guint dropped;                /* encode: left out, over the limits;
                                 * decode: refused, and those after it */
} CudaIpcMetaCounts;

/* Appends to @blob the metas of @buf that @filter lets through, in their
 * order on the buffer, within CUDAIPC_MAX_META_BYTES and
 * CUDAIPC_MAX_METAS (a meta that would go beyond is left out, and so is
 * any meta over an item limit), adding to @counts. */
void cudaipc_metas_encode (GstBuffer * buf, const CudaIpcMetaFilter * filter,
    GByteArray * blob, CudaIpcMetaCounts * counts);

/* Adds the metas of @blob (@len bytes) to @buf, which must be writable,
 * adding to @counts. FALSE with a CUDAIPC_ERROR_INVALID or _LIMIT error
 * naming the first entry that broke a rule; the entries before it are on
 * @buf. */
gboolean cudaipc_metas_decode (const guint8 * blob, gsize len,
    GstBuffer * buf, CudaIpcMetaCounts * counts, GError ** error);

/* What this build carries, for docs and messages: "region-of-interest,
 * time-code, crop, reference-timestamp[, analytics][, serialized]". */
const gchar *cudaipc_metas_carried (void);

G_END_DECLS
