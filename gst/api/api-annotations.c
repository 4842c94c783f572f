/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Regions of interest and object detections of the public API to and from
 * a buffer's metas (api-annotations.h has the contract).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>
#include <gst/video/video.h>
#ifdef HAVE_GST_ANALYTICS
#include <gst/analytics/analytics.h>
#endif

#define CUDAIPC_COMPILATION
#include "api/api-annotations.h"

/* Whether @s, a fixed array of @size bytes, holds its NUL. */
static gboolean
has_nul (const char *s, gsize size)
{
  return memchr (s, '\0', size) != NULL;
}

static gboolean
add_regions (GstBuffer * buf, const cudaipc_region * regions, guint n,
    gchar ** why)
{
  for (guint i = 0; i < n; i++) {
    const cudaipc_region *r = &regions[i];
    GstVideoRegionOfInterestMeta *roi;

    if (!has_nul (r->type, sizeof (r->type))) {
      *why = g_strdup_printf ("region %u: its type has no NUL within its "
          "%" G_GSIZE_FORMAT " bytes", i, sizeof (r->type));
      return FALSE;
    }
    roi = gst_buffer_add_video_region_of_interest_meta_id (buf,
        r->type[0] ? g_quark_from_string (r->type) : 0, r->x, r->y, r->w,
        r->h);
    roi->id = r->id;
    roi->parent_id = r->parent_id;
    if (r->confidence >= 0)
      gst_video_region_of_interest_meta_add_param (roi,
          gst_structure_new ("detection", "confidence", G_TYPE_DOUBLE,
              r->confidence, NULL));
  }
  return TRUE;
}

#ifdef HAVE_GST_ANALYTICS
static gboolean
add_objects (GstBuffer * buf, const cudaipc_object * objects, guint n,
    gchar ** why)
{
  GstAnalyticsRelationMeta *rm;

  if (n == 0)
    return TRUE;
  rm = gst_buffer_add_analytics_relation_meta (buf);
  for (guint i = 0; i < n; i++) {
    const cudaipc_object *o = &objects[i];
    GQuark type;
    GstAnalyticsODMtd od;
    GstAnalyticsTrackingMtd trk;
    gboolean ok;

    if (!has_nul (o->label, sizeof (o->label)) || o->w < 0 || o->h < 0) {
      *why = g_strdup_printf ("object %u: its label has no NUL within its "
          "%" G_GSIZE_FORMAT " bytes, or its box a negative size", i,
          sizeof (o->label));
      return FALSE;
    }
    type = o->label[0] ? g_quark_from_string (o->label) : 0;
#if GST_CHECK_VERSION (1, 26, 0)
    ok = gst_analytics_relation_meta_add_oriented_od_mtd (rm, type, o->x,
        o->y, o->w, o->h, o->rotation, o->confidence, &od);
#else
    ok = o->rotation == 0 && gst_analytics_relation_meta_add_od_mtd (rm,
        type, o->x, o->y, o->w, o->h, o->confidence, &od);
#endif
    if (ok && o->track_id >= 0)
      ok = gst_analytics_relation_meta_add_tracking_mtd (rm,
          (guint64) o->track_id, GST_CLOCK_TIME_NONE, &trk) &&
          gst_analytics_relation_meta_set_relation (rm,
          GST_ANALYTICS_REL_TYPE_RELATE_TO, od.id, trk.id);
    if (!ok) {
      *why = g_strdup_printf ("object %u could not be added to the frame's "
          "analytics meta%s", i, o->rotation != 0 &&
          !GST_CHECK_VERSION (1, 26, 0) ? " (a rotation needs GStreamer "
          ">= 1.26)" : "");
      return FALSE;
    }
  }
  return TRUE;
}
#endif

GstBuffer *
cudaipc_annotations_new (const cudaipc_region * regions, guint n_regions,
    const cudaipc_object * objects, guint n_objects, gchar ** why)
{
  GstBuffer *buf;

  g_return_val_if_fail (regions != NULL || n_regions == 0, NULL);
  g_return_val_if_fail (objects != NULL || n_objects == 0, NULL);
  g_return_val_if_fail (why != NULL, NULL);

#ifndef HAVE_GST_ANALYTICS
  if (n_objects > 0) {
    *why = g_strdup ("this build carries no object detections: it was "
        "built without gstreamer-analytics (GStreamer >= 1.24)");
    return NULL;
  }
#endif
  buf = gst_buffer_new ();
  if (!add_regions (buf, regions, n_regions, why)
#ifdef HAVE_GST_ANALYTICS
      || !add_objects (buf, objects, n_objects, why)
#endif
      ) {
    gst_buffer_unref (buf);
    return NULL;
  }
  return buf;
}

guint
cudaipc_annotations_n_regions (GstBuffer * metas)
{
  gpointer state = NULL;
  guint n = 0;

  while (gst_buffer_iterate_meta_filtered (metas, &state,
          GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE))
    n++;
  return n;
}

gboolean
cudaipc_annotations_get_region (GstBuffer * metas, guint index,
    cudaipc_region * region)
{
  gpointer state = NULL;
  GstVideoRegionOfInterestMeta *roi;
  guint i = 0;

  while ((roi = (GstVideoRegionOfInterestMeta *)
          gst_buffer_iterate_meta_filtered (metas, &state,
              GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE)) != NULL) {
    gdouble conf = -1;

    if (i++ != index)
      continue;
    memset (region, 0, sizeof (*region));
    if (roi->roi_type)
      g_strlcpy (region->type, g_quark_to_string (roi->roi_type),
          sizeof (region->type));
    region->id = roi->id;
    region->parent_id = roi->parent_id;
    region->x = roi->x;
    region->y = roi->y;
    region->w = roi->w;
    region->h = roi->h;
    for (GList * l = roi->params; l; l = l->next) {
      if (gst_structure_get_double (l->data, "confidence", &conf))
        break;
    }
    region->confidence = conf;
    return TRUE;
  }
  return FALSE;
}

guint
cudaipc_annotations_n_objects (GstBuffer * metas)
{
  guint n = 0;
#ifdef HAVE_GST_ANALYTICS
  GstAnalyticsRelationMeta *rm = gst_buffer_get_analytics_relation_meta
      (metas);
  gpointer state = NULL;
  GstAnalyticsMtd mtd;

  while (rm && gst_analytics_relation_meta_iterate (rm, &state,
          gst_analytics_od_mtd_get_mtd_type (), &mtd))
    n++;
#endif
  return n;
}

gboolean
cudaipc_annotations_get_object (GstBuffer * metas, guint index,
    cudaipc_object * object)
{
#ifdef HAVE_GST_ANALYTICS
  GstAnalyticsRelationMeta *rm = gst_buffer_get_analytics_relation_meta
      (metas);
  gpointer state = NULL;
  GstAnalyticsODMtd od;
  guint i = 0;

  while (rm && gst_analytics_relation_meta_iterate (rm, &state,
          gst_analytics_od_mtd_get_mtd_type (), (GstAnalyticsMtd *) & od)) {
    GstAnalyticsTrackingMtd trk;
    gpointer rel = NULL;
    GQuark type;
    gint x = 0, y = 0, w = 0, h = 0;
    gfloat r = 0, conf = 0;

    if (i++ != index)
      continue;
    memset (object, 0, sizeof (*object));
#if GST_CHECK_VERSION (1, 26, 0)
    gst_analytics_od_mtd_get_oriented_location (&od, &x, &y, &w, &h, &r,
        &conf);
#else
    gst_analytics_od_mtd_get_location (&od, &x, &y, &w, &h, &conf);
#endif
    type = gst_analytics_od_mtd_get_obj_type (&od);
    if (type)
      g_strlcpy (object->label, g_quark_to_string (type),
          sizeof (object->label));
    object->x = x;
    object->y = y;
    object->w = w;
    object->h = h;
    object->rotation = r;
    object->confidence = conf;
    object->id = od.id;
    object->track_id = -1;
    if (gst_analytics_relation_meta_get_direct_related (rm, od.id,
            GST_ANALYTICS_REL_TYPE_ANY, gst_analytics_tracking_mtd_get_mtd_type
            (), &rel, (GstAnalyticsMtd *) & trk)) {
      guint64 tid = 0;
      GstClockTime first, last;
      gboolean lost;

      if (gst_analytics_tracking_mtd_get_info (&trk, &tid, &first, &last,
              &lost) && tid <= G_MAXINT64)
        object->track_id = (gint64) tid;
    }
    return TRUE;
  }
#endif
  return FALSE;
}
