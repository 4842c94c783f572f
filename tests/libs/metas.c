/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Frame metadata on the wire (metas.h): each meta this build carries
 * round-trips field by field, 200 regions of interest in one frame, a
 * frame's names listed once (and up to the most a frame lists), the
 * filter's choices, the producer's limits, and a hostile producer's blobs
 * (truncated, oversized, too deep, too many, invalid values), which are
 * refused from the first bad entry while the entries before it stay.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include <gst/check/gstcheck.h>
#include <gst/video/video.h>
#ifdef HAVE_GST_ANALYTICS
#include <gst/analytics/analytics.h>
#endif

#include "common/error.h"
#include "metas/metas.h"
#include "test-main.h"
#include "test-util.h"
#include "test-wire.h"

#define SERIALIZABLE GST_CHECK_VERSION (1, 24, 0)

/* Encodes @src's metas and decodes them onto a new buffer. */
static GstBuffer *
round_trip (GstBuffer * src, const gchar * filter_spec, guint * carried)
{
  CudaIpcMetaFilter *filter = cudaipc_meta_filter_new (filter_spec, NULL);
  CudaIpcMetaCounts enc = { 0, }, dec = { 0, };
  GByteArray *blob = g_byte_array_new ();
  GstBuffer *dst = gst_buffer_new ();
  GError *err = NULL;

  fail_unless (filter != NULL);
  cudaipc_metas_encode (src, filter, blob, &enc);
  fail_unless (blob->len <= CUDAIPC_MAX_META_BYTES);
  fail_unless (cudaipc_metas_decode (blob->data, blob->len, dst, &dec, &err),
      "%s", err ? err->message : "?");
  fail_unless_equals_int (dec.carried, enc.carried);
  fail_unless_equals_int (dec.dropped, 0);
  if (carried)
    *carried = enc.carried;
  g_byte_array_unref (blob);
  cudaipc_meta_filter_free (filter);
  return dst;
}

static guint
count_metas (GstBuffer * buf, GType api)
{
  gpointer state = NULL;
  GstMeta *m;
  guint n = 0;

  while ((m = gst_buffer_iterate_meta_filtered (buf, &state, api)))
    n++;
  return n;
}

static void
add_roi (GstBuffer * buf, const gchar * type, gint id, gint parent, guint x,
    guint y, guint w, guint h)
{
  GstVideoRegionOfInterestMeta *roi =
      gst_buffer_add_video_region_of_interest_meta (buf, type, x, y, w, h);

  roi->id = id;
  roi->parent_id = parent;
}

GST_START_TEST (test_region_of_interest)
{
  GstBuffer *src = gst_buffer_new (), *dst;
  GstVideoRegionOfInterestMeta *roi;
  GstStructure *s;
  gpointer state = NULL;

  add_roi (src, "face", 7, -1, 10, 20, 30, 40);
  roi = gst_buffer_get_video_region_of_interest_meta_id (src, 7);
  gst_video_region_of_interest_meta_add_param (roi,
      gst_structure_new ("detection", "confidence", G_TYPE_DOUBLE, 0.875,
          "label", G_TYPE_STRING, "Ada \"quoted\"", NULL));
  gst_video_region_of_interest_meta_add_param (roi,
      gst_structure_from_string ("extra, ids=(int)<1,2,3>", NULL));
  gst_video_region_of_interest_meta_add_param (roi,
      gst_structure_new ("every-type", "i", G_TYPE_INT, -5, "u", G_TYPE_UINT,
          4000000000u, "i64", G_TYPE_INT64, G_MININT64, "u64", G_TYPE_UINT64,
          G_MAXUINT64, "d", G_TYPE_DOUBLE, -0.1, "f", G_TYPE_FLOAT, 0.25f,
          "b", G_TYPE_BOOLEAN, TRUE, "s", G_TYPE_STRING, "", NULL));
  add_roi (src, "eye", 8, 7, 12, 24, 4, 2);

  dst = round_trip (src, "all", NULL);
  fail_unless_equals_int (count_metas (dst,
          GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE), 2);
  roi = (GstVideoRegionOfInterestMeta *) gst_buffer_iterate_meta (dst,
      &state);
  fail_unless_equals_string (g_quark_to_string (roi->roi_type), "face");
  fail_unless_equals_int (roi->id, 7);
  fail_unless_equals_int (roi->parent_id, -1);
  fail_unless_equals_int (roi->x, 10);
  fail_unless_equals_int (roi->y, 20);
  fail_unless_equals_int (roi->w, 30);
  fail_unless_equals_int (roi->h, 40);
  fail_unless_equals_int (g_list_length (roi->params), 3);
  s = gst_video_region_of_interest_meta_get_param (roi, "detection");
  fail_unless (s != NULL);
  {
    gdouble c = 0;

    fail_unless (gst_structure_get_double (s, "confidence", &c));
    fail_unless (c == 0.875);
    fail_unless_equals_string (gst_structure_get_string (s, "label"),
        "Ada \"quoted\"");
  }
  fail_unless (gst_video_region_of_interest_meta_get_param (roi, "extra"));
  {
    GstStructure *a = gst_video_region_of_interest_meta_get_param
        (gst_buffer_get_video_region_of_interest_meta_id (src, 7),
        "every-type");
    GstStructure *b = gst_video_region_of_interest_meta_get_param (roi,
        "every-type");

    /* every field, value and type */
    fail_unless (b != NULL);
    fail_unless (gst_structure_is_equal (a, b), "%" GST_PTR_FORMAT " != %"
        GST_PTR_FORMAT, a, b);
    fail_unless_equals_int (gst_structure_n_fields (b), 8);
  }
  roi = gst_buffer_get_video_region_of_interest_meta_id (dst, 8);
  fail_unless (roi != NULL);
  fail_unless_equals_string (g_quark_to_string (roi->roi_type), "eye");
  fail_unless_equals_int (roi->parent_id, 7);
  fail_unless_equals_int (roi->w, 4);
  fail_unless (roi->params == NULL);

  gst_buffer_unref (src);
  gst_buffer_unref (dst);
}

GST_END_TEST;

/* A parameter whose names GStreamer's parser takes but the binary form
 * does not (a field name that starts with "/"): it travels as text, and
 * arrives as it was (found by fuzz-metas: it went in binary and the
 * reader refused it). */
GST_START_TEST (test_region_param_names_as_text)
{
  GstBuffer *src = gst_buffer_new (), *dst;
  GstVideoRegionOfInterestMeta *roi;
  GstStructure *param = gst_structure_from_string ("detection, "
      "/onfidence=(double)0.5, label=(string)car;", NULL);
  const GstStructure *got;
  gdouble d = 0;

  fail_unless (param != NULL);
  roi = gst_buffer_add_video_region_of_interest_meta (src, "face", 1, 2, 3,
      4);
  gst_video_region_of_interest_meta_add_param (roi, param);
  /* a good one beside it still goes in binary, and arrives */
  gst_video_region_of_interest_meta_add_param (roi,
      gst_structure_new ("score", "value", G_TYPE_DOUBLE, 0.25, NULL));
  dst = round_trip (src, NULL, NULL);
  roi = gst_buffer_get_video_region_of_interest_meta (dst);
  fail_unless (roi != NULL);
  got = gst_video_region_of_interest_meta_get_param (roi, "detection");
  fail_unless (got != NULL);
  fail_unless (gst_structure_get_double (got, "/onfidence", &d));
  fail_unless (d == 0.5);
  fail_unless_equals_string (gst_structure_get_string (got, "label"), "car");
  got = gst_video_region_of_interest_meta_get_param (roi, "score");
  fail_unless (got != NULL && gst_structure_get_double (got, "value", &d));
  fail_unless (d == 0.25);
  gst_buffer_unref (src);
  gst_buffer_unref (dst);
}

GST_END_TEST;

GST_START_TEST (test_two_hundred_regions)
{
  GstBuffer *src = gst_buffer_new (), *dst;
  CudaIpcMetaCounts enc = { 0, };
  GByteArray *blob = g_byte_array_new ();
  guint carried = 0;

  for (guint i = 0; i < 200; i++)
    add_roi (src, i % 2 ? "person" : "car", i, i / 2, i, 2 * i, 16 + i, 9);
  cudaipc_metas_encode (src, NULL, blob, &enc);
  g_print ("metas: 200 regions of interest in %u bytes\n", blob->len);
  g_byte_array_unref (blob);

  dst = round_trip (src, NULL, &carried);
  fail_unless_equals_int (carried, 200);
  fail_unless_equals_int (count_metas (dst,
          GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE), 200);
  for (guint i = 0; i < 200; i++) {
    GstVideoRegionOfInterestMeta *roi =
        gst_buffer_get_video_region_of_interest_meta_id (dst, i);

    fail_unless (roi != NULL, "region %u is missing", i);
    fail_unless_equals_string (g_quark_to_string (roi->roi_type),
        i % 2 ? "person" : "car");
    fail_unless_equals_int (roi->parent_id, i / 2);
    fail_unless_equals_int (roi->x, i);
    fail_unless_equals_int (roi->y, 2 * i);
    fail_unless_equals_int (roi->w, 16 + i);
    fail_unless_equals_int (roi->h, 9);
  }
  gst_buffer_unref (src);
  gst_buffer_unref (dst);
}

GST_END_TEST;

/* How often @needle (with its NUL) is in @blob. */
static guint
count_in_blob (GByteArray * blob, const gchar * needle)
{
  gsize len = strlen (needle) + 1;
  guint n = 0;

  for (gsize i = 0; i + len <= blob->len; i++) {
    if (memcmp (blob->data + i, needle, len) == 0)
      n++;
  }
  return n;
}

/* A frame's names travel once, in its first entry, however many metas
 * use them; a name only a refused attempt listed is not kept. */
GST_START_TEST (test_names_listed_once)
{
  GstBuffer *src = gst_buffer_new (), *dst;
  GByteArray *blob = g_byte_array_new ();
  CudaIpcMetaCounts enc = { 0, };
  GstVideoRegionOfInterestMeta *roi;

  for (guint i = 0; i < 50; i++) {
    roi = gst_buffer_add_video_region_of_interest_meta (src, "object", i, i,
        8, 8);
    roi->id = i;
    gst_video_region_of_interest_meta_add_param (roi,
        gst_structure_new ("detection", "confidence", G_TYPE_DOUBLE,
            i / 50.0, "label", G_TYPE_STRING, "object", NULL));
  }
  /* a field name the binary form refuses: the structure goes as text,
   * and the names the attempt listed are taken back */
  gst_video_region_of_interest_meta_add_param (roi,
      gst_structure_from_string ("late, /slash=(int)1, unheard=(int)2", NULL));
  cudaipc_metas_encode (src, NULL, blob, &enc);
  fail_unless_equals_int (enc.carried, 50);
  /* the names entry first */
  fail_unless_equals_int (GST_READ_UINT16_LE (blob->data), 7);
  fail_unless_equals_int (count_in_blob (blob, "detection"), 1);
  fail_unless_equals_int (count_in_blob (blob, "confidence"), 1);
  fail_unless_equals_int (count_in_blob (blob, "label"), 1);
  /* once as a name, 50 times as the label's value */
  fail_unless_equals_int (count_in_blob (blob, "object"), 51);
  fail_unless_equals_int (count_in_blob (blob, "late"), 0);
  fail_unless_equals_int (count_in_blob (blob, "unheard"), 0);
  g_byte_array_unref (blob);

  dst = round_trip (src, NULL, NULL);
  roi = gst_buffer_get_video_region_of_interest_meta_id (dst, 49);
  fail_unless (roi != NULL);
  fail_unless_equals_int (g_list_length (roi->params), 2);
  {
    const GstStructure *late =
        gst_video_region_of_interest_meta_get_param (roi, "late");
    gint v = 0;

    fail_unless (late != NULL);
    fail_unless (gst_structure_get_int (late, "/slash", &v) && v == 1);
  }
  gst_buffer_unref (src);
  gst_buffer_unref (dst);
}

GST_END_TEST;

/* More names than the few a writer holds inline (they are then hashed),
 * up to the most a frame lists: a meta that would list more is left
 * out. */
GST_START_TEST (test_many_names)
{
  GstBuffer *src = gst_buffer_new (), *dst;
  CudaIpcMetaCounts enc = { 0, };
  GByteArray *blob = g_byte_array_new ();
  guint carried = 0;

  /* 300 regions, each of its own type and with a field of its own: 602
   * names, listed */
  for (guint i = 0; i < 300; i++) {
    gchar *type = g_strdup_printf ("type-%u", i);
    gchar *field = g_strdup_printf ("f%u", i);
    GstVideoRegionOfInterestMeta *roi =
        gst_buffer_add_video_region_of_interest_meta (src, type, i, 0, 4, 4);

    roi->id = i;
    gst_video_region_of_interest_meta_add_param (roi,
        gst_structure_new ("p", field, G_TYPE_UINT, i, NULL));
    /* and one that every other uses too */
    gst_video_region_of_interest_meta_add_param (roi,
        gst_structure_new ("shared", "v", G_TYPE_INT, -(gint) i, NULL));
    g_free (type);
    g_free (field);
  }
  dst = round_trip (src, NULL, &carried);
  fail_unless_equals_int (carried, 300);
  for (guint i = 0; i < 300; i += 37) {
    GstVideoRegionOfInterestMeta *roi =
        gst_buffer_get_video_region_of_interest_meta_id (dst, i);
    gchar *type = g_strdup_printf ("type-%u", i);
    gchar *field = g_strdup_printf ("f%u", i);
    guint u = 0;
    gint v = 0;

    fail_unless (roi != NULL);
    fail_unless_equals_string (g_quark_to_string (roi->roi_type), type);
    fail_unless (gst_structure_get_uint
        (gst_video_region_of_interest_meta_get_param (roi, "p"), field, &u));
    fail_unless_equals_int (u, i);
    fail_unless (gst_structure_get_int
        (gst_video_region_of_interest_meta_get_param (roi, "shared"), "v",
            &v));
    fail_unless_equals_int (v, -(gint) i);
    g_free (type);
    g_free (field);
  }
  gst_buffer_unref (dst);
  gst_buffer_unref (src);

  /* five regions with 250 fields of their own each: the fifth would list
   * names past the 1024th, and is left out */
  src = gst_buffer_new ();
  for (guint i = 0; i < 5; i++) {
    GstVideoRegionOfInterestMeta *roi =
        gst_buffer_add_video_region_of_interest_meta (src, "t", i, 0, 1, 1);
    GstStructure *st = gst_structure_new_empty ("p");

    for (guint f = 0; f < 250; f++) {
      gchar *field = g_strdup_printf ("f%u", i * 250 + f);

      gst_structure_set (st, field, G_TYPE_INT, f, NULL);
      g_free (field);
    }
    roi->id = i;
    gst_video_region_of_interest_meta_add_param (roi, st);
  }
  cudaipc_metas_encode (src, NULL, blob, &enc);
  fail_unless_equals_int (enc.carried, 4);
  fail_unless_equals_int (enc.dropped, 1);
  g_byte_array_unref (blob);
  dst = round_trip (src, NULL, &carried);
  fail_unless_equals_int (carried, 4);
  fail_unless (gst_buffer_get_video_region_of_interest_meta_id (dst, 3));
  fail_if (gst_buffer_get_video_region_of_interest_meta_id (dst, 4));
  gst_buffer_unref (dst);
  gst_buffer_unref (src);
}

GST_END_TEST;

GST_START_TEST (test_time_code_crop_reference)
{
  GstBuffer *src = gst_buffer_new (), *dst;
  GDateTime *jam = g_date_time_new_utc (2026, 12, 1, 8, 30, 15.5);
  GstVideoTimeCodeMeta *tc;
  GstVideoCropMeta *crop;
  GstReferenceTimestampMeta *ref;
  GstCaps *ntp = gst_caps_from_string ("timestamp/x-ntp, host=(string)pool."
      "ntp.org, port=(int)123");
  gchar *a, *b;

  gst_buffer_add_video_time_code_meta_full (src, 30000, 1001, jam,
      GST_VIDEO_TIME_CODE_FLAGS_DROP_FRAME, 10, 11, 12, 13, 0);
  crop = gst_buffer_add_video_crop_meta (src);
  crop->x = 8;
  crop->y = 6;
  crop->width = 1904;
  crop->height = 1068;
  gst_buffer_add_reference_timestamp_meta (src, ntp, 3913056000 * GST_SECOND,
      GST_CLOCK_TIME_NONE);
  gst_buffer_add_video_time_code_meta_full (src, 25, 1, NULL,
      GST_VIDEO_TIME_CODE_FLAGS_NONE, 0, 0, 1, 24, 0);

  dst = round_trip (src, "all", NULL);
  tc = gst_buffer_get_video_time_code_meta (dst);
  fail_unless (tc != NULL);
  fail_unless_equals_int (tc->tc.config.fps_n, 30000);
  fail_unless_equals_int (tc->tc.config.fps_d, 1001);
  fail_unless_equals_int (tc->tc.config.flags,
      GST_VIDEO_TIME_CODE_FLAGS_DROP_FRAME);
  fail_unless_equals_int (tc->tc.hours, 10);
  fail_unless_equals_int (tc->tc.minutes, 11);
  fail_unless_equals_int (tc->tc.seconds, 12);
  fail_unless_equals_int (tc->tc.frames, 13);
  fail_unless (tc->tc.config.latest_daily_jam != NULL);
  a = g_date_time_format_iso8601 (jam);
  b = g_date_time_format_iso8601 (tc->tc.config.latest_daily_jam);
  fail_unless_equals_string (a, b);
  g_free (a);
  g_free (b);
  fail_unless_equals_int (count_metas (dst, GST_VIDEO_TIME_CODE_META_API_TYPE),
      2);

  crop = gst_buffer_get_video_crop_meta (dst);
  fail_unless (crop != NULL);
  fail_unless_equals_int (crop->x, 8);
  fail_unless_equals_int (crop->y, 6);
  fail_unless_equals_int (crop->width, 1904);
  fail_unless_equals_int (crop->height, 1068);

  ref = gst_buffer_get_reference_timestamp_meta (dst, NULL);
  fail_unless (ref != NULL);
  fail_unless (gst_caps_is_equal (ref->reference, ntp));
  fail_unless_equals_uint64 (ref->timestamp, 3913056000 * GST_SECOND);
  fail_unless_equals_uint64 (ref->duration, GST_CLOCK_TIME_NONE);

  gst_caps_unref (ntp);
  g_date_time_unref (jam);
  gst_buffer_unref (src);
  gst_buffer_unref (dst);
}

GST_END_TEST;

#ifdef HAVE_GST_ANALYTICS
/* The classification @id of @rm has the @n classes and levels given. */
static void
check_classes (GstAnalyticsRelationMeta * rm, guint id, guint n,
    const GQuark * classes, const gfloat * levels)
{
  GstAnalyticsClsMtd cls;

  fail_unless (gst_analytics_relation_meta_get_cls_mtd (rm, id, &cls));
  fail_unless_equals_int (gst_analytics_cls_mtd_get_length (&cls), n);
  for (guint i = 0; i < n; i++) {
    fail_unless (gst_analytics_cls_mtd_get_quark (&cls, i) == classes[i]);
    fail_unless (gst_analytics_cls_mtd_get_level (&cls, i) == levels[i]);
  }
}

GST_START_TEST (test_analytics)
{
  GstBuffer *src = gst_buffer_new (), *dst;
  GstAnalyticsRelationMeta *rm = gst_buffer_add_analytics_relation_meta (src);
  GstAnalyticsODMtd od, od2;
  GstAnalyticsClsMtd cls, cls2;
  GstAnalyticsTrackingMtd trk;
  gfloat levels[3] = { 0.75f, 0.125f, 0.0625f };
  gfloat levels2[2] = { 0.5f, 0.25f };
  GQuark classes2[2] = { g_quark_from_string ("tail"),
    g_quark_from_string ("fin")
  };
  GQuark classes[3] = { g_quark_from_string ("dog"),
    g_quark_from_string ("cat"), g_quark_from_string ("fox")
  };
  gint x, y, w, h;
  gfloat conf;
  guint64 tid;
  GstClockTime seen_first, seen_last;
  gboolean lost;

#if GST_CHECK_VERSION (1, 26, 0)
  fail_unless (gst_analytics_relation_meta_add_oriented_od_mtd (rm,
          g_quark_from_string ("animal"), 10, 20, 300, 200, 0.5f, 0.9f, &od));
#else
  fail_unless (gst_analytics_relation_meta_add_od_mtd (rm,
          g_quark_from_string ("animal"), 10, 20, 300, 200, 0.9f, &od));
#endif
  fail_unless (gst_analytics_relation_meta_add_cls_mtd (rm, 3, levels,
          classes, &cls));
  fail_unless (gst_analytics_relation_meta_add_tracking_mtd (rm, 4242,
          1000, &trk));
  fail_unless (gst_analytics_tracking_mtd_update_last_seen (&trk, 5000));
  fail_unless (gst_analytics_tracking_mtd_set_lost (&trk));
  fail_unless (gst_analytics_relation_meta_add_od_mtd (rm,
          g_quark_from_string ("tail"), 1, 2, 3, 4, 0.25f, &od2));
  fail_unless (gst_analytics_relation_meta_set_relation (rm,
          GST_ANALYTICS_REL_TYPE_RELATE_TO, od.id, cls.id));
  fail_unless (gst_analytics_relation_meta_set_relation (rm,
          GST_ANALYTICS_REL_TYPE_RELATE_TO, od.id, trk.id));
  fail_unless (gst_analytics_relation_meta_set_relation (rm,
          GST_ANALYTICS_REL_TYPE_CONTAIN, od.id, od2.id));
  fail_unless (gst_analytics_relation_meta_set_relation (rm,
          GST_ANALYTICS_REL_TYPE_IS_PART_OF, od2.id, od.id));
  /* a second classification: its classes after the first's */
  fail_unless (gst_analytics_relation_meta_add_cls_mtd (rm, 2, levels2,
          classes2, &cls2));
  fail_unless (gst_analytics_relation_meta_set_relation (rm,
          GST_ANALYTICS_REL_TYPE_RELATE_TO, od2.id, cls2.id));
  fail_unless (gst_analytics_relation_meta_set_relation (rm,
          GST_ANALYTICS_REL_TYPE_RELATE_TO, cls2.id, trk.id));

  dst = round_trip (src, "all", NULL);
  rm = gst_buffer_get_analytics_relation_meta (dst);
  fail_unless (rm != NULL);
  fail_unless_equals_int (gst_analytics_relation_get_length (rm), 5);
  /* the same order, so the same ids */
  fail_unless (gst_analytics_relation_meta_get_od_mtd (rm, od.id, &od));
#if GST_CHECK_VERSION (1, 26, 0)
  {
    gfloat r = 0;

    /* get_location() gives the rotated box's bounds */
    fail_unless (gst_analytics_od_mtd_get_oriented_location (&od, &x, &y, &w,
            &h, &r, &conf));
    fail_unless (r == 0.5f);
  }
#else
  fail_unless (gst_analytics_od_mtd_get_location (&od, &x, &y, &w, &h,
          &conf));
#endif
  fail_unless_equals_string (g_quark_to_string
      (gst_analytics_od_mtd_get_obj_type (&od)), "animal");
  fail_unless_equals_int (x, 10);
  fail_unless_equals_int (y, 20);
  fail_unless_equals_int (w, 300);
  fail_unless_equals_int (h, 200);
  fail_unless (conf == 0.9f);
  check_classes (rm, cls.id, 3, classes, levels);
  check_classes (rm, cls2.id, 2, classes2, levels2);
  fail_unless (gst_analytics_relation_meta_get_tracking_mtd (rm, trk.id,
          &trk));
  fail_unless (gst_analytics_tracking_mtd_get_info (&trk, &tid, &seen_first,
          &seen_last, &lost));
  fail_unless_equals_uint64 (tid, 4242);
  fail_unless_equals_uint64 (seen_first, 1000);
  fail_unless_equals_uint64 (seen_last, 5000);
  fail_unless (lost);
  fail_unless_equals_int (gst_analytics_relation_meta_get_relation (rm,
          od.id, cls.id), GST_ANALYTICS_REL_TYPE_RELATE_TO);
  fail_unless_equals_int (gst_analytics_relation_meta_get_relation (rm,
          od.id, trk.id), GST_ANALYTICS_REL_TYPE_RELATE_TO);
  fail_unless_equals_int (gst_analytics_relation_meta_get_relation (rm,
          od.id, od2.id), GST_ANALYTICS_REL_TYPE_CONTAIN);
  fail_unless_equals_int (gst_analytics_relation_meta_get_relation (rm,
          od2.id, od.id), GST_ANALYTICS_REL_TYPE_IS_PART_OF);
  fail_unless_equals_int (gst_analytics_relation_meta_get_relation (rm,
          cls.id, trk.id), GST_ANALYTICS_REL_TYPE_NONE);
  fail_unless_equals_int (gst_analytics_relation_meta_get_relation (rm,
          od2.id, cls2.id), GST_ANALYTICS_REL_TYPE_RELATE_TO);
  fail_unless_equals_int (gst_analytics_relation_meta_get_relation (rm,
          cls2.id, trk.id), GST_ANALYTICS_REL_TYPE_RELATE_TO);
  fail_unless_equals_int (gst_analytics_relation_meta_get_relation (rm,
          trk.id, cls2.id), GST_ANALYTICS_REL_TYPE_NONE);

  gst_buffer_unref (src);
  gst_buffer_unref (dst);
}

GST_END_TEST;
#endif

/* A custom meta: carried where GStreamer serializes metas (>= 1.24),
 * skipped (counted) on older ones. */
GST_START_TEST (test_custom_meta)
{
  const gchar *tags[] = { NULL };
  const GstMetaInfo *info = gst_meta_register_custom ("CudaIpcTestMeta",
      tags, NULL, NULL, NULL);
  GstBuffer *src = gst_buffer_new (), *dst = gst_buffer_new ();
  GstCustomMeta *cm = gst_buffer_add_custom_meta (src, "CudaIpcTestMeta");
  CudaIpcMetaCounts enc = { 0, };
#if SERIALIZABLE
  CudaIpcMetaCounts dec = { 0, };
#endif
  GByteArray *blob = g_byte_array_new ();

  fail_unless (info != NULL && cm != NULL);
  gst_structure_set (gst_custom_meta_get_structure (cm), "answer", G_TYPE_INT,
      42, "who", G_TYPE_STRING, "deep thought", NULL);
  cudaipc_metas_encode (src, NULL, blob, &enc);
#if SERIALIZABLE
  fail_unless_equals_int (enc.carried, 1);
  fail_unless (cudaipc_metas_decode (blob->data, blob->len, dst, &dec, NULL));
  fail_unless_equals_int (dec.carried, 1);
  cm = gst_buffer_get_custom_meta (dst, "CudaIpcTestMeta");
  fail_unless (cm != NULL);
  {
    gint answer = 0;

    fail_unless (gst_structure_get_int (gst_custom_meta_get_structure (cm),
            "answer", &answer));
    fail_unless_equals_int (answer, 42);
    fail_unless_equals_string (gst_structure_get_string
        (gst_custom_meta_get_structure (cm), "who"), "deep thought");
  }
#else
  fail_unless_equals_int (enc.carried, 0);
  fail_unless_equals_int (enc.skipped, 1);
  fail_unless_equals_int (blob->len, 0);
#endif
  g_byte_array_unref (blob);
  gst_buffer_unref (src);
  gst_buffer_unref (dst);
}

GST_END_TEST;

GST_START_TEST (test_filter)
{
  GstBuffer *src = gst_buffer_new (), *dst;
  GError *err = NULL;
  guint carried;

  add_roi (src, "face", 1, 0, 0, 0, 1, 1);
  gst_buffer_add_video_crop_meta (src);
  /* the layout is never a meta on the wire */
  gst_buffer_add_video_meta (src, GST_VIDEO_FRAME_FLAG_NONE,
      GST_VIDEO_FORMAT_GRAY8, 64, 4);

  dst = round_trip (src, "all", &carried);
  fail_unless_equals_int (carried, 2);
  fail_unless (gst_buffer_get_video_meta (dst) == NULL);
  gst_buffer_unref (dst);
  dst = round_trip (src, "none", &carried);
  fail_unless_equals_int (carried, 0);
  gst_buffer_unref (dst);
  dst = round_trip (src, " GstVideoCropMetaAPI ,NotARealMetaAPI", &carried);
  fail_unless_equals_int (carried, 1);
  fail_unless (gst_buffer_get_video_crop_meta (dst) != NULL);
  fail_unless_equals_int (count_metas (dst,
          GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE), 0);
  gst_buffer_unref (dst);

  fail_unless (cudaipc_meta_filter_new ("GstVideoCropMetaAPI,,x", &err) ==
      NULL);
  fail_unless (g_error_matches (err, CUDAIPC_ERROR, CUDAIPC_ERROR_INVALID));
  g_clear_error (&err);
  gst_buffer_unref (src);
}

GST_END_TEST;

/* A name that lets no meta through is said, with what to write instead
 * where one is near; an API type name, or one that may be registered
 * later, is not. */
GST_START_TEST (test_filter_doubts)
{
  const struct
  {
    const gchar *spec;
    const gchar *doubt;         /* NULL: none */
  } cases[] = {
    {"all", NULL},
    {"GstVideoCropMetaAPI,GstVideoRegionOfInterestMeta", NULL},
    {"SomeoneElsesMetaAPI", NULL},
    {"GstVideoCropMetaApi", "metas: GstVideoCropMetaApi is no meta API "
          "type, and lets no meta through: write GstVideoCropMetaAPI"},
    {"GstVideoRegionOfInterest", "write GstVideoRegionOfInterestMetaAPI"},
    {"gstvideotimecodemetaapi", "write GstVideoTimeCodeMetaAPI"},
    {"GstVideoCropMetaAPI, roi", "metas: roi is no meta API type this "
          "process knows, and API type names end in API"},
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    GError *err = NULL;
    CudaIpcMetaFilter *f = cudaipc_meta_filter_new (cases[i].spec, &err);
    const gchar *doubts;

    fail_unless (f != NULL, "%s: %s", cases[i].spec, err->message);
    doubts = cudaipc_meta_filter_get_doubts (f);
    if (cases[i].doubt == NULL)
      fail_unless (doubts == NULL, "%s: %s", cases[i].spec, doubts);
    else
      fail_unless (doubts && strstr (doubts, cases[i].doubt), "%s: %s",
          cases[i].spec, doubts ? doubts : "no doubt");
    cudaipc_meta_filter_free (f);
  }
}

GST_END_TEST;

/* What does not fit is left out, and counted. */
GST_START_TEST (test_producer_limits)
{
  GstBuffer *buf = gst_buffer_new ();
  CudaIpcMetaCounts c = { 0, };
  GByteArray *blob = g_byte_array_new ();
  GstVideoRegionOfInterestMeta *roi;
  gchar *big = g_strnfill (3900, 'x');

  for (guint i = 0; i < CUDAIPC_MAX_METAS + 76; i++)
    gst_buffer_add_video_crop_meta (buf);
  cudaipc_metas_encode (buf, NULL, blob, &c);
  fail_unless_equals_int (c.carried, CUDAIPC_MAX_METAS);
  fail_unless_equals_int (c.dropped, 76);
  gst_buffer_unref (buf);

  /* items of one meta */
  buf = gst_buffer_new ();
  roi = gst_buffer_add_video_region_of_interest_meta (buf, "many", 0, 0, 1,
      1);
  for (guint i = 0; i < CUDAIPC_MAX_META_ITEMS + 1; i++)
    gst_video_region_of_interest_meta_add_param (roi,
        gst_structure_new_empty ("p"));
  memset (&c, 0, sizeof (c));
  g_byte_array_set_size (blob, 0);
  cudaipc_metas_encode (buf, NULL, blob, &c);
  fail_unless_equals_int (c.carried, 0);
  fail_unless_equals_int (c.dropped, 1);
  fail_unless_equals_int (blob->len, 0);
  gst_buffer_unref (buf);

  /* bytes: ten regions of nearly 4 KB each, of which 32 KiB hold eight */
  buf = gst_buffer_new ();
  for (guint i = 0; i < 10; i++) {
    roi = gst_buffer_add_video_region_of_interest_meta (buf, "big", 0, 0, 1,
        1);
    gst_video_region_of_interest_meta_add_param (roi,
        gst_structure_new ("p", "s", G_TYPE_STRING, big, NULL));
  }
  memset (&c, 0, sizeof (c));
  g_byte_array_set_size (blob, 0);
  cudaipc_metas_encode (buf, NULL, blob, &c);
  fail_unless_equals_int (c.carried, 8);
  fail_unless_equals_int (c.dropped, 2);
  fail_unless (blob->len <= CUDAIPC_MAX_META_BYTES);
  gst_buffer_unref (buf);

  g_free (big);
  g_byte_array_unref (blob);
}

GST_END_TEST;

/* A hostile producer's blobs */

static GByteArray *
crop_payload (guint32 x)
{
  GByteArray *p = g_byte_array_new ();

  wire_put32 (p, x);
  wire_put32 (p, 0);
  wire_put32 (p, 10);
  wire_put32 (p, 10);
  return p;
}

/* A reference timestamp with the caps text @caps, at 1 ns for 2 ns. */
static GByteArray *
reference_payload (const gchar * caps)
{
  GByteArray *p = g_byte_array_new ();

  wire_put_str (p, caps);
  wire_put64 (p, 1);
  wire_put64 (p, 2);
  return p;
}

/* A region of interest whose type is the frame's @type-th name (0:
 * none), with @n_params parameters, each the text @param (none where
 * NULL). */
static GByteArray *
roi_payload (guint16 type, guint n_params, const gchar * param)
{
  GByteArray *p = g_byte_array_new ();

  wire_put16 (p, type);
  wire_put16 (p, n_params);
  wire_put32 (p, 1);
  wire_put32 (p, 0);
  for (guint i = 0; i < 4; i++)
    wire_put32 (p, 5);
  for (guint i = 0; param && i < n_params; i++) {
    /* as text */
    g_byte_array_append (p, (const guint8 *) "", 1);
    wire_put_str (p, param);
  }
  return p;
}

/* A region with one parameter in fields: the structure named by the
 * frame's @name-th name, one field named by its @field-th, of @type,
 * whose value is @value (@len bytes). */
static GByteArray *
roi_fields_payload (guint16 name, guint16 field, guint8 type,
    const guint8 * value, guint len)
{
  GByteArray *p = roi_payload (0, 0, NULL);
  guint8 one = 1;

  /* n_params, the second u16, is 1 */
  GST_WRITE_UINT16_LE (p->data + 2, 1);
  g_byte_array_append (p, &one, 1);
  wire_put16 (p, name);
  wire_put16 (p, 1);
  wire_put16 (p, field);
  g_byte_array_append (p, &type, 1);
  g_byte_array_append (p, value, len);
  return p;
}

/* @blob is refused naming @needle, with @kept metas decoded before. */
static void
expect_refused (GByteArray * blob, gint code, const gchar * needle,
    guint kept)
{
  GstBuffer *buf = gst_buffer_new ();
  CudaIpcMetaCounts c = { 0, };
  GError *err = NULL;

  fail_if (cudaipc_metas_decode (blob->data, blob->len, buf, &c, &err));
  fail_unless (g_error_matches (err, CUDAIPC_ERROR, code), "%s",
      err->message);
  fail_unless (strstr (err->message, needle) != NULL, "'%s' not in '%s'",
      needle, err->message);
  fail_unless_equals_int (c.carried, kept);
  fail_unless_equals_int (c.dropped, 1);
  {
    gpointer state = NULL;
    guint n = 0;

    while (gst_buffer_iterate_meta (buf, &state))
      n++;
    fail_unless_equals_int (n, kept);
  }
  g_clear_error (&err);
  gst_buffer_unref (buf);
}

GST_START_TEST (test_hostile_blobs)
{
  GByteArray *b = g_byte_array_new (), *p;
  gchar *deep;

  /* a good crop, then a header cut short */
  p = crop_payload (1);
  wire_put_entry (b, 3, p);
  wire_put16 (b, 3);
  expect_refused (b, CUDAIPC_ERROR_INVALID, "meta 2: its header", 1);
  /* a size beyond the blob */
  g_byte_array_set_size (b, 0);
  wire_put16 (b, 3);
  wire_put16 (b, 0);
  wire_put32 (b, 1000);
  g_byte_array_append (b, p->data, p->len);
  expect_refused (b, CUDAIPC_ERROR_INVALID, "names more bytes", 0);
  /* a reserved field set */
  g_byte_array_set_size (b, 0);
  wire_put16 (b, 3);
  wire_put16 (b, 1);
  wire_put32 (b, p->len);
  g_byte_array_append (b, p->data, p->len);
  expect_refused (b, CUDAIPC_ERROR_INVALID, "reserved", 0);
  /* bytes left over after a crop */
  g_byte_array_set_size (b, 0);
  g_byte_array_append (p, (const guint8 *) "xx", 2);
  wire_put_entry (b, 3, p);
  expect_refused (b, CUDAIPC_ERROR_INVALID, "left over", 0);
  g_byte_array_unref (p);

  /* a region whose parameters are too many, too deep, or do not parse */
  g_byte_array_set_size (b, 0);
  p = roi_payload (0, CUDAIPC_MAX_META_ITEMS + 1, NULL);
  wire_put_entry (b, 1, p);
  g_byte_array_unref (p);
  expect_refused (b, CUDAIPC_ERROR_LIMIT, "more than 256", 0);
  deep = g_strconcat ("p, v=(int)", "{{{{{{{{{{{{{{{{1}}}}}}}}}}}}}}}}", NULL);
  g_byte_array_set_size (b, 0);
  p = roi_payload (0, 1, deep);
  wire_put_entry (b, 1, p);
  g_byte_array_unref (p);
  expect_refused (b, CUDAIPC_ERROR_LIMIT, "nested more than 8", 0);
  g_free (deep);
  g_byte_array_set_size (b, 0);
  p = roi_payload (0, 1, "not a structure ,,, = =");
  wire_put_entry (b, 1, p);
  g_byte_array_unref (p);
  expect_refused (b, CUDAIPC_ERROR_INVALID, "does not parse", 0);
  /* a region cut short */
  g_byte_array_set_size (b, 0);
  p = roi_payload (0, 0, NULL);
  g_byte_array_set_size (p, 27);
  wire_put_entry (b, 1, p);
  g_byte_array_unref (p);
  expect_refused (b, CUDAIPC_ERROR_INVALID, "region of interest is truncated",
      0);
  /* a parameter in fields: a name GStreamer would refuse, none, an
   * unknown type, a boolean that is not one, a value cut short, a name
   * the frame does not list */
  {
    const guint8 eight[8] = { 0, }, two = 2;
    /* a string (u32 length, the NUL included) whose bytes are not UTF-8 */
    const guint8 bad_utf8[] = { 4, 0, 0, 0, 'a', 0xff, 'b', 0 };
    struct
    {
      guint16 name, field;
      guint8 type;
      const guint8 *value;
      guint len;
      const gchar *needle;
    } cases[] = {
      {3, 2, 1, eight, 4, "structure name is not one"},
      {0, 2, 1, eight, 4, "structure name is not one"},
      {1, 4, 1, eight, 4, "field name is not one"},
      {1, 0, 1, eight, 4, "field name is not one"},
      {1, 2, 42, eight, 4, "unknown type"},
      {1, 2, 7, &two, 1, "truncated or not valid"},
      {1, 2, 4, eight, 3, "truncated or not valid"},
      {1, 2, 8, bad_utf8, sizeof (bad_utf8), "not UTF-8"},
      {1, 5, 1, eight, 4, "not among the frame's names"},
      {9, 2, 1, eight, 4, "not among the frame's names"},
    };

    for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
      g_byte_array_set_size (b, 0);
      wire_put_names (b, "ok", "x", "9lives", "bad field", NULL);
      p = roi_fields_payload (cases[i].name, cases[i].field, cases[i].type,
          cases[i].value, cases[i].len);
      wire_put_entry (b, 1, p);
      g_byte_array_unref (p);
      expect_refused (b, CUDAIPC_ERROR_INVALID, cases[i].needle, 0);
    }
  }

  /* the frame's names: a name with no NUL, an empty one, one over the
   * string limit, none listed, more than a frame lists, more than the
   * entry holds, a names entry that is not the first */
  g_byte_array_set_size (b, 0);
  p = g_byte_array_new ();
  wire_put32 (p, 1);
  wire_put32 (p, 4);
  g_byte_array_append (p, (const guint8 *) "face", 4);
  wire_put_entry (b, 7, p);
  g_byte_array_unref (p);
  expect_refused (b, CUDAIPC_ERROR_INVALID, "not one string", 0);
  g_byte_array_set_size (b, 0);
  wire_put_names (b, "face", "", NULL);
  expect_refused (b, CUDAIPC_ERROR_INVALID, "a name is empty", 0);
  {
    gchar *big = g_strnfill (CUDAIPC_MAX_META_STRING, 'y');

    g_byte_array_set_size (b, 0);
    wire_put_names (b, big, NULL);
    expect_refused (b, CUDAIPC_ERROR_LIMIT, "a string of", 0);
    g_free (big);
  }
  g_byte_array_set_size (b, 0);
  p = g_byte_array_new ();
  wire_put32 (p, 0);
  wire_put_entry (b, 7, p);
  g_byte_array_unref (p);
  expect_refused (b, CUDAIPC_ERROR_INVALID, "lists none", 0);
  g_byte_array_set_size (b, 0);
  p = g_byte_array_new ();
  wire_put32 (p, 1025);
  for (guint i = 0; i < 1025; i++)
    wire_put_str (p, "n");
  wire_put_entry (b, 7, p);
  g_byte_array_unref (p);
  expect_refused (b, CUDAIPC_ERROR_LIMIT, "more than 1024", 0);
  g_byte_array_set_size (b, 0);
  p = g_byte_array_new ();
  wire_put32 (p, 1000);
  wire_put_str (p, "face");
  wire_put_entry (b, 7, p);
  g_byte_array_unref (p);
  expect_refused (b, CUDAIPC_ERROR_INVALID, "names entry is truncated", 0);
  g_byte_array_set_size (b, 0);
  p = crop_payload (1);
  wire_put_entry (b, 3, p);
  g_byte_array_unref (p);
  wire_put_names (b, "face", NULL);
  expect_refused (b, CUDAIPC_ERROR_INVALID, "not the first", 1);
  g_byte_array_set_size (b, 0);
  wire_put_names (b, "face", NULL);
  wire_put_names (b, "face", NULL);
  expect_refused (b, CUDAIPC_ERROR_INVALID, "not the first", 0);

  /* a time code that is not one, a daily jam that is not a time */
  g_byte_array_set_size (b, 0);
  p = g_byte_array_new ();
  for (guint i = 0; i < 8; i++)
    wire_put32 (p, 0);
  wire_put_str (p, "");
  wire_put_entry (b, 2, p);
  g_byte_array_unref (p);
  expect_refused (b, CUDAIPC_ERROR_INVALID, "not valid", 0);
  g_byte_array_set_size (b, 0);
  p = g_byte_array_new ();
  wire_put32 (p, 25);
  wire_put32 (p, 1);
  for (guint i = 0; i < 6; i++)
    wire_put32 (p, 0);
  wire_put_str (p, "the day before yesterday");
  wire_put_entry (b, 2, p);
  g_byte_array_unref (p);
  expect_refused (b, CUDAIPC_ERROR_INVALID, "ISO 8601", 0);

  /* reference caps that do not parse */
  g_byte_array_set_size (b, 0);
  p = reference_payload ("timestamp/x-ntp, ,,,= (int)");
  wire_put_entry (b, 4, p);
  g_byte_array_unref (p);
  expect_refused (b, CUDAIPC_ERROR_INVALID, "caps do not parse", 0);

  /* reference caps with a list GStreamer would not write back as caps it
   * reads: mixed types ("(boolean){ false, 2i, 6 }"), flat and nested in
   * an array, and a NULL string, which it cannot write at all */
  {
    const gchar *unwritable[] = {
      "timestamp/x-ntp, a={f,2i,6}",
      "timestamp/x-ntp, a=<{1,2},{t,3}>",
      "timestamp/x-ntp, a={NULL,u}",
    };

    for (guint i = 0; i < G_N_ELEMENTS (unwritable); i++) {
      g_byte_array_set_size (b, 0);
      p = reference_payload (unwritable[i]);
      wire_put_entry (b, 4, p);
      g_byte_array_unref (p);
      expect_refused (b, CUDAIPC_ERROR_INVALID,
          "list that does not write back", 0);
    }
  }

  /* more entries than a frame may carry */
  g_byte_array_set_size (b, 0);
  p = crop_payload (2);
  for (guint i = 0; i < CUDAIPC_MAX_METAS + 1; i++)
    wire_put_entry (b, 3, p);
  g_byte_array_unref (p);
  expect_refused (b, CUDAIPC_ERROR_LIMIT, "more than 1024 metas",
      CUDAIPC_MAX_METAS);

  /* more bytes than a frame may carry */
  g_byte_array_set_size (b, CUDAIPC_MAX_META_BYTES + 1);
  expect_refused (b, CUDAIPC_ERROR_LIMIT, "bytes of metadata", 0);

  g_byte_array_unref (b);
}

GST_END_TEST;

/* An entry of a kind this build does not know is skipped, not an error;
 * so is an empty blob. */
GST_START_TEST (test_unknown_kind_skipped)
{
  GByteArray *b = g_byte_array_new (), *p = crop_payload (3);
  GstBuffer *buf = gst_buffer_new ();
  CudaIpcMetaCounts c = { 0, };

  wire_put_entry (b, 99, p);
  wire_put_entry (b, 3, p);
  fail_unless (cudaipc_metas_decode (b->data, b->len, buf, &c, NULL));
  fail_unless_equals_int (c.skipped, 1);
  fail_unless_equals_int (c.carried, 1);
  fail_unless (gst_buffer_get_video_crop_meta (buf) != NULL);
  memset (&c, 0, sizeof (c));
  fail_unless (cudaipc_metas_decode (NULL, 0, buf, &c, NULL));
  fail_unless_equals_int (c.carried, 0);
  g_byte_array_unref (p);
  g_byte_array_unref (b);
  gst_buffer_unref (buf);
}

GST_END_TEST;

#ifdef HAVE_GST_ANALYTICS
GST_START_TEST (test_hostile_analytics)
{
  GByteArray *b = g_byte_array_new (), *p = g_byte_array_new ();

  /* one detection, then a relation to an entry that is not there */
  wire_put32 (p, 1);
  wire_put32 (p, 5);
  wire_put16 (p, 1);
  wire_put16 (p, 0);
  /* no type */
  wire_put16 (p, 0);
  for (guint i = 0; i < 4; i++)
    wire_put32 (p, 1);
  wire_put32 (p, 0);
  wire_put32 (p, 0);
  wire_put32 (p, 1);
  wire_put32 (p, 5);
  wire_put32 (p, 6);
  wire_put32 (p, GST_ANALYTICS_REL_TYPE_CONTAIN);
  wire_put_entry (b, 5, p);
  expect_refused (b, CUDAIPC_ERROR_INVALID, "unknown type or entry", 0);

  /* an entry of an unknown kind */
  g_byte_array_set_size (p, 0);
  g_byte_array_set_size (b, 0);
  wire_put32 (p, 1);
  wire_put32 (p, 5);
  wire_put16 (p, 9);
  wire_put16 (p, 0);
  wire_put_entry (b, 5, p);
  expect_refused (b, CUDAIPC_ERROR_INVALID, "unknown kind", 0);
  g_byte_array_unref (p);
  g_byte_array_unref (b);
}

GST_END_TEST;
#endif

/* A name the frame lists and no meta uses is never made a GQuark; one a
 * meta uses is, once. */
GST_START_TEST (test_unused_names_not_interned)
{
  GByteArray *b = g_byte_array_new (), *p;
  GstBuffer *buf = gst_buffer_new ();
  CudaIpcMetaCounts c = { 0, };
  guint before = cudaipc_peer_names_count ();

  wire_put_names (b, "cudaipc-listed-used", "cudaipc-listed-unused", NULL);
  p = roi_payload (1, 0, NULL);
  wire_put_entry (b, 1, p);
  wire_put_entry (b, 1, p);
  g_byte_array_unref (p);
  fail_unless (cudaipc_metas_decode (b->data, b->len, buf, &c, NULL));
  fail_unless_equals_int (c.carried, 2);
  fail_unless (g_quark_try_string ("cudaipc-listed-used") != 0);
  fail_unless (g_quark_try_string ("cudaipc-listed-unused") == 0);
  fail_unless_equals_int (cudaipc_peer_names_count (), before + 1);
  gst_buffer_unref (buf);
  g_byte_array_unref (b);
}

GST_END_TEST;

/* Names a consumer never saw become GQuarks, which are never freed: a
 * producer inventing new ones is cut off. Forked: it spends this
 * process's allowance. */
GST_START_TEST (test_new_names_bounded)
{
  GByteArray *b = g_byte_array_new (), *p;
  GstBuffer *buf;
  CudaIpcMetaCounts c = { 0, };
  GError *err = NULL;
  guint accepted = 0;
  gboolean ok = TRUE;

  for (guint i = 0; ok && i < CUDAIPC_MAX_META_NAMES + 10; i++) {
    gchar *name = g_strdup_printf ("cudaipc-new-name-%u", i);

    g_byte_array_set_size (b, 0);
    wire_put_names (b, name, NULL);
    p = roi_payload (1, 0, NULL);
    wire_put_entry (b, 1, p);
    g_byte_array_unref (p);
    buf = gst_buffer_new ();
    ok = cudaipc_metas_decode (b->data, b->len, buf, &c, &err);
    gst_buffer_unref (buf);
    if (ok)
      accepted++;
    g_free (name);
  }
  fail_if (ok);
  fail_unless (g_error_matches (err, CUDAIPC_ERROR, CUDAIPC_ERROR_LIMIT));
  fail_unless (accepted <= CUDAIPC_MAX_META_NAMES);
  fail_unless (accepted > CUDAIPC_MAX_META_NAMES - 100);
  g_clear_error (&err);
  /* a known name still goes */
  g_byte_array_set_size (b, 0);
  wire_put_names (b, "cudaipc-new-name-1", NULL);
  p = roi_payload (1, 0, NULL);
  wire_put_entry (b, 1, p);
  g_byte_array_unref (p);
  buf = gst_buffer_new ();
  fail_unless (cudaipc_metas_decode (b->data, b->len, buf, &c, NULL));
  gst_buffer_unref (buf);
  g_byte_array_unref (b);
}

GST_END_TEST;

static Suite *
metas_suite (void)
{
  Suite *s = suite_create ("metas");
  TCase *tc = cudaipc_test_case (s, "general", 60);

  g_print ("metas carried by this build: %s\n", cudaipc_metas_carried ());
  tcase_add_test (tc, test_region_of_interest);
  tcase_add_test (tc, test_region_param_names_as_text);
  tcase_add_test (tc, test_two_hundred_regions);
  tcase_add_test (tc, test_names_listed_once);
  tcase_add_test (tc, test_many_names);
  tcase_add_test (tc, test_time_code_crop_reference);
#ifdef HAVE_GST_ANALYTICS
  tcase_add_test (tc, test_analytics);
  tcase_add_test (tc, test_hostile_analytics);
#endif
  tcase_add_test (tc, test_custom_meta);
  tcase_add_test (tc, test_filter);
  tcase_add_test (tc, test_filter_doubts);
  tcase_add_test (tc, test_producer_limits);
  tcase_add_test (tc, test_hostile_blobs);
  tcase_add_test (tc, test_unknown_kind_skipped);
  tcase_add_test (tc, test_unused_names_not_interned);
  /* (under LeakSanitizer: tests/lsan.supp names GLib's quark table) */
  tcase_add_test (tc, test_new_names_bounded);
  return s;
}

const CudaIpcTestMain cudaipc_test_main = {
  .name = "metas",
  .suite = metas_suite,
};
