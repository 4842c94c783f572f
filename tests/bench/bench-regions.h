/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The regions the benchmarks put on a frame (cudaipc-bench --rois,
 * metas-bench): the same boxes everywhere, so that their figures compare.
 * Header-only: both programs include it.
 */
#ifndef __BENCH_REGIONS_H__
#define __BENCH_REGIONS_H__

#include <gst/video/video.h>
#ifdef HAVE_GST_ANALYTICS
#include <gst/analytics/analytics.h>
#endif

/* @n GstVideoRegionOfInterestMetas on the writable @buf, each with a
 * "detection" parameter (a confidence) where @params. */
static inline void
bench_regions_add (GstBuffer * buf, guint n, gboolean params)
{
  for (guint r = 0; r < n; r++) {
    GstVideoRegionOfInterestMeta *roi =
        gst_buffer_add_video_region_of_interest_meta (buf, "object",
        (r * 37) % 1800, (r * 53) % 1000, 64, 48);

    roi->id = r;
    if (params)
      gst_video_region_of_interest_meta_add_param (roi,
          gst_structure_new ("detection", "confidence", G_TYPE_DOUBLE,
              0.5 + r / 1000.0, NULL));
  }
}

#ifdef HAVE_GST_ANALYTICS
/* The same boxes and confidences as @n object detections in one
 * GstAnalyticsRelationMeta on the writable @buf. */
static inline void
bench_detections_add (GstBuffer * buf, guint n)
{
  GstAnalyticsRelationMeta *rm = gst_buffer_add_analytics_relation_meta (buf);
  GQuark object = g_quark_from_static_string ("object");

  for (guint r = 0; r < n; r++) {
    GstAnalyticsODMtd od;

    gst_analytics_relation_meta_add_od_mtd (rm, object, (r * 37) % 1800,
        (r * 53) % 1000, 64, 48, 0.5 + r / 1000.0, &od);
  }
}
#endif

#endif /* __BENCH_REGIONS_H__ */
