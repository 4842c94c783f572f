/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The metas a test producer puts on frame @n, and the check a test
 * consumer makes of them, field by field: two regions of interest (one
 * with a parameter structure), a time code, a crop, a reference
 * timestamp; with gst-analytics a relation meta of an object detection, a
 * classification and a tracking entry, related; on GStreamer >= 1.24 a
 * custom meta (which travels serialized). Which metas the consumer
 * expects follows a sink's metas setting: "all", "none" or API names.
 */
#pragma once

#include <string.h>
#include <gst/gst.h>
#include <gst/video/video.h>
#ifdef HAVE_GST_ANALYTICS
#include <gst/analytics/analytics.h>
#endif

#define CUDAIPC_TEST_CUSTOM_META "CudaIpcTestFrameMeta"

static inline void
cudaipc_test_register_metas (void)
{
#if GST_CHECK_VERSION (1, 24, 0)
  if (gst_meta_get_info (CUDAIPC_TEST_CUSTOM_META) == NULL)
    gst_meta_register_custom_simple (CUDAIPC_TEST_CUSTOM_META);
#endif
}

static inline GstCaps *
cudaipc_test_reference_caps (void)
{
  return gst_caps_from_string ("timestamp/x-cudaipc-test, clock=(string)ptp");
}

static inline void
cudaipc_test_add_metas (GstBuffer * buf, guint64 n)
{
  GstVideoRegionOfInterestMeta *roi;
  GstVideoCropMeta *crop;
  GstCaps *ref = cudaipc_test_reference_caps ();

  roi = gst_buffer_add_video_region_of_interest_meta (buf, "face", n, 2 * n,
      16, 9);
  roi->id = (gint) n;
  roi->parent_id = -1;
  gst_video_region_of_interest_meta_add_param (roi,
      gst_structure_new ("detection", "frame", G_TYPE_UINT64, n, NULL));
  roi = gst_buffer_add_video_region_of_interest_meta (buf, "eye", 1, 1, 2, 2);
  roi->id = (gint) n + 1000;
  roi->parent_id = (gint) n;
  gst_buffer_add_video_time_code_meta_full (buf, 30, 1, NULL,
      GST_VIDEO_TIME_CODE_FLAGS_NONE, 0, (guint) (n / 1800) % 60,
      (guint) (n / 30) % 60, (guint) (n % 30), 0);
  crop = gst_buffer_add_video_crop_meta (buf);
  crop->x = (guint) (n % 8);
  crop->width = 64;
  crop->height = 32;
  gst_buffer_add_reference_timestamp_meta (buf, ref, n * GST_MSECOND,
      GST_MSECOND);
  gst_caps_unref (ref);
#ifdef HAVE_GST_ANALYTICS
  {
    GstAnalyticsRelationMeta *rm = gst_buffer_add_analytics_relation_meta (buf);
    GstAnalyticsODMtd od;
    GstAnalyticsClsMtd cls;
    GstAnalyticsTrackingMtd trk;

    gst_analytics_relation_meta_add_od_mtd (rm, g_quark_from_string ("thing"),
        (gint) n, 3, 40, 30, 0.5f, &od);
    gst_analytics_relation_meta_add_one_cls_mtd (rm, 0.25f,
        g_quark_from_string ("cat"), &cls);
    gst_analytics_relation_meta_add_tracking_mtd (rm, n, n * GST_MSECOND,
        &trk);
    gst_analytics_relation_meta_set_relation (rm,
        GST_ANALYTICS_REL_TYPE_RELATE_TO, od.id, cls.id);
    gst_analytics_relation_meta_set_relation (rm,
        GST_ANALYTICS_REL_TYPE_RELATE_TO, od.id, trk.id);
  }
#endif
#if GST_CHECK_VERSION (1, 24, 0)
  {
    GstCustomMeta *cm;

    cudaipc_test_register_metas ();
    cm = gst_buffer_add_custom_meta (buf, CUDAIPC_TEST_CUSTOM_META);
    gst_structure_set (gst_custom_meta_get_structure (cm), "frame",
        G_TYPE_UINT64, n, NULL);
  }
#endif
}

/* Whether @expect ("all", "none" or API names) lets @api through. */
static inline gboolean
cudaipc_test_meta_expected (const gchar * expect, GType api)
{
  if (expect == NULL || g_str_equal (expect, "all"))
    return TRUE;
  if (g_str_equal (expect, "none"))
    return FALSE;
  return strstr (expect, g_type_name (api)) != NULL;
}

static inline guint
cudaipc_test_count_api (GstBuffer * buf, GType api)
{
  gpointer state = NULL;
  guint n = 0;

  while (gst_buffer_iterate_meta_filtered (buf, &state, api))
    n++;
  return n;
}

/* NULL when @buf, frame @n, carries what cudaipc_test_add_metas() put on
 * it that @expect lets through, and nothing else of those; else what is
 * wrong. */
static inline const gchar *
cudaipc_test_check_metas (GstBuffer * buf, guint64 n, const gchar * expect)
{
  GType roi_api = GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE;
  gboolean want;

  want = cudaipc_test_meta_expected (expect, roi_api);
  if (cudaipc_test_count_api (buf, roi_api) != (want ? 2u : 0u))
    return "region of interest count";
  if (want) {
    GstVideoRegionOfInterestMeta *a =
        gst_buffer_get_video_region_of_interest_meta_id (buf, (gint) n);
    GstVideoRegionOfInterestMeta *b =
        gst_buffer_get_video_region_of_interest_meta_id (buf, (gint) n + 1000);
    GstStructure *s;
    guint64 frame = G_MAXUINT64;

    if (!a || !b || a->roi_type != g_quark_from_string ("face") ||
        a->x != n || a->y != 2 * n || a->w != 16 || a->h != 9 ||
        a->parent_id != -1 || b->roi_type != g_quark_from_string ("eye") ||
        b->parent_id != (gint) n || b->w != 2)
      return "region of interest fields";
    s = gst_video_region_of_interest_meta_get_param (a, "detection");
    if (!s || !gst_structure_get_uint64 (s, "frame", &frame) || frame != n)
      return "region of interest parameter";
  }

  want = cudaipc_test_meta_expected (expect, GST_VIDEO_TIME_CODE_META_API_TYPE);
  {
    GstVideoTimeCodeMeta *tc = gst_buffer_get_video_time_code_meta (buf);

    if ((tc != NULL) != want)
      return "time code presence";
    if (tc && (tc->tc.config.fps_n != 30 || tc->tc.config.fps_d != 1 ||
            tc->tc.frames != n % 30 || tc->tc.seconds != (n / 30) % 60 ||
            tc->tc.minutes != (n / 1800) % 60))
      return "time code fields";
  }

  want = cudaipc_test_meta_expected (expect, GST_VIDEO_CROP_META_API_TYPE);
  {
    GstVideoCropMeta *crop = gst_buffer_get_video_crop_meta (buf);

    if ((crop != NULL) != want)
      return "crop presence";
    if (crop && (crop->x != n % 8 || crop->y != 0 || crop->width != 64 ||
            crop->height != 32))
      return "crop fields";
  }

  want = cudaipc_test_meta_expected (expect,
      GST_REFERENCE_TIMESTAMP_META_API_TYPE);
  {
    GstReferenceTimestampMeta *ref =
        gst_buffer_get_reference_timestamp_meta (buf, NULL);

    if ((ref != NULL) != want)
      return "reference timestamp presence";
    if (ref) {
      GstCaps *caps = cudaipc_test_reference_caps ();
      gboolean same = gst_caps_is_equal (ref->reference, caps);

      gst_caps_unref (caps);
      if (!same || ref->timestamp != n * GST_MSECOND ||
          ref->duration != GST_MSECOND)
        return "reference timestamp fields";
    }
  }

#ifdef HAVE_GST_ANALYTICS
  want = cudaipc_test_meta_expected (expect,
      GST_ANALYTICS_RELATION_META_API_TYPE);
  {
    GstAnalyticsRelationMeta *rm = gst_buffer_get_analytics_relation_meta (buf);

    if ((rm != NULL) != want)
      return "analytics presence";
    if (rm) {
      GstAnalyticsODMtd od;
      GstAnalyticsClsMtd cls;
      GstAnalyticsTrackingMtd trk;
      gint x, y, w, h;
      gfloat conf;
      guint64 id;
      GstClockTime seen, last;
      gboolean lost;

      if (gst_analytics_relation_get_length (rm) != 3 ||
          !gst_analytics_relation_meta_get_od_mtd (rm, 0, &od) ||
          !gst_analytics_od_mtd_get_location (&od, &x, &y, &w, &h, &conf) ||
          x != (gint) n || y != 3 || w != 40 || h != 30 || conf != 0.5f ||
          gst_analytics_od_mtd_get_obj_type (&od) !=
          g_quark_from_string ("thing"))
        return "analytics object detection";
      if (!gst_analytics_relation_meta_get_cls_mtd (rm, 1, &cls) ||
          gst_analytics_cls_mtd_get_length (&cls) != 1 ||
          gst_analytics_cls_mtd_get_quark (&cls, 0) !=
          g_quark_from_string ("cat") ||
          gst_analytics_cls_mtd_get_level (&cls, 0) != 0.25f)
        return "analytics classification";
      if (!gst_analytics_relation_meta_get_tracking_mtd (rm, 2, &trk) ||
          !gst_analytics_tracking_mtd_get_info (&trk, &id, &seen, &last,
              &lost) || id != n || seen != n * GST_MSECOND || lost)
        return "analytics tracking";
      if (gst_analytics_relation_meta_get_relation (rm, 0, 1) !=
          GST_ANALYTICS_REL_TYPE_RELATE_TO ||
          gst_analytics_relation_meta_get_relation (rm, 0, 2) !=
          GST_ANALYTICS_REL_TYPE_RELATE_TO)
        return "analytics relations";
    }
  }
#endif

#if GST_CHECK_VERSION (1, 24, 0)
  {
    GstCustomMeta *cm;
    guint64 frame = G_MAXUINT64;

    cudaipc_test_register_metas ();
    cm = gst_buffer_get_custom_meta (buf, CUDAIPC_TEST_CUSTOM_META);
    want = expect == NULL || g_str_equal (expect, "all") ||
        strstr (expect, CUDAIPC_TEST_CUSTOM_META) != NULL;
    if ((cm != NULL) != want)
      return "custom meta presence";
    if (cm && (!gst_structure_get_uint64 (gst_custom_meta_get_structure (cm),
                "frame", &frame) || frame != n))
      return "custom meta fields";
  }
#endif
  return NULL;
}
