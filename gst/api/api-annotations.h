/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The public API's regions of interest and object detections (cudaipc.h)
 * to and from a buffer's metas: the metas cuipcsink carries (metas.h), so
 * that what libcudaipc's producer attaches, cuipcsrc's downstream sees,
 * and what a cuipcsink's upstream attached, libcudaipc's consumer reads.
 *
 * The buffer holds metas only (no memory). Not thread-safe per buffer.
 */
#pragma once

#include <gst/gst.h>

#include "api/cudaipc.h"

G_BEGIN_DECLS

/* A buffer with @regions as GstVideoRegionOfInterestMeta and @objects as
 * the object detections of one GstAnalyticsRelationMeta; NULL with the
 * reason in *@why (free it) for a value the metas cannot hold, or objects
 * where this build has no gstreamer-analytics. */
GstBuffer *cudaipc_annotations_new (const cudaipc_region * regions,
    guint n_regions, const cudaipc_object * objects, guint n_objects,
    gchar ** why);

guint cudaipc_annotations_n_regions (GstBuffer * metas);
guint cudaipc_annotations_n_objects (GstBuffer * metas);
/* The @index'th of each, in the buffer's order; FALSE past the last. */
gboolean cudaipc_annotations_get_region (GstBuffer * metas, guint index,
    cudaipc_region * region);
gboolean cudaipc_annotations_get_object (GstBuffer * metas, guint index,
    cudaipc_object * object);

G_END_DECLS
