/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * metas-bench: what a frame's metadata costs to write and to read back, in
 * a loop in one process (docs/benchmarks.md, Frame metadata): a buffer
 * with N regions of interest (as the benchmark's producer adds them, with
 * or without one "detection" parameter each) encoded with
 * cudaipc_metas_encode() and decoded onto a new buffer with
 * cudaipc_metas_decode(), each timed over many rounds.
 *
 *   metas-bench [--rois N] [--rounds R]
 *
 * Prints one line per case: bytes, encode and decode in us per frame (the
 * decode and the freeing of what it made, without the cost of the new
 * buffer itself, measured apart); free_us, that freeing alone; attach_us,
 * the same metas made on a new buffer with GStreamer's own calls and
 * freed with it, which any reader that rebuilds them pays: the part of
 * decode_us that is not ours; and copy_us, the decoded metas copied onto
 * another buffer and freed there (gst_buffer_copy_into()'s metadata),
 * as a copy or a wrapper of a frame would carry them over.
 *
 * Built with gstreamer-analytics-1.0 (>= 1.24), a third case carries the
 * same regions as object detections in one GstAnalyticsRelationMeta (type,
 * box and confidence each), the form GStreamer's analytics elements use.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/video/video.h>

#include "bench-regions.h"
#include "metas/metas.h"

static gint64
now_ns (void)
{
  return g_get_monotonic_time () * 1000;
}

typedef enum
{
  CASE_ROIS,
  CASE_ROIS_PARAMS,
  CASE_DETECTIONS,
} Case;

static const gchar *const case_names[] = {
  "rois params=no", "rois params=yes", "detections",
};

static GstBuffer *
frame_of (Case k, guint n)
{
  GstBuffer *buf = gst_buffer_new ();

#ifdef HAVE_GST_ANALYTICS
  if (k == CASE_DETECTIONS) {
    bench_detections_add (buf, n);
    return buf;
  }
#endif
  bench_regions_add (buf, n, k == CASE_ROIS_PARAMS);
  return buf;
}

static void
run_case (Case k, guint n, guint rounds)
{
  GstBuffer *src = frame_of (k, n);
  GByteArray *blob = g_byte_array_new ();
  CudaIpcMetaCounts c = { 0, };
  GstBuffer *bufs[256];
  GstBuffer *decoded = gst_buffer_new ();
  gint64 t0, enc, dec, bare, attach, freed, copy;

  t0 = now_ns ();
  for (guint i = 0; i < rounds; i++) {
    g_byte_array_set_size (blob, 0);
    cudaipc_metas_encode (src, NULL, blob, &c);
  }
  enc = now_ns () - t0;

  t0 = now_ns ();
  for (guint i = 0; i < rounds; i++)
    gst_buffer_unref (gst_buffer_new ());
  bare = now_ns () - t0;

  t0 = now_ns ();
  for (guint i = 0; i < rounds; i++) {
    GstBuffer *dst = gst_buffer_new ();

    if (!cudaipc_metas_decode (blob->data, blob->len, dst, &c, NULL))
      g_error ("decode failed");
    gst_buffer_unref (dst);
  }
  dec = now_ns () - t0 - bare;

  /* in batches: decoded, then freed and timed */
  freed = -bare;
  for (guint done = 0, batch; done < rounds; done += batch) {
    batch = MIN (rounds - done, G_N_ELEMENTS (bufs));
    for (guint i = 0; i < batch; i++) {
      bufs[i] = gst_buffer_new ();
      cudaipc_metas_decode (blob->data, blob->len, bufs[i], &c, NULL);
    }
    t0 = now_ns ();
    for (guint i = 0; i < batch; i++)
      gst_buffer_unref (bufs[i]);
    freed += now_ns () - t0;
  }

  cudaipc_metas_decode (blob->data, blob->len, decoded, &c, NULL);
  t0 = now_ns ();
  for (guint i = 0; i < rounds; i++) {
    GstBuffer *dst = gst_buffer_new ();

    gst_buffer_copy_into (dst, decoded, GST_BUFFER_COPY_METADATA, 0, -1);
    gst_buffer_unref (dst);
  }
  copy = now_ns () - t0 - bare;

  t0 = now_ns ();
  for (guint i = 0; i < rounds; i++)
    gst_buffer_unref (frame_of (k, n));
  attach = now_ns () - t0 - bare;

  g_print ("%s n=%u bytes=%u encode_us=%.2f decode_us=%.2f "
      "free_us=%.2f attach_us=%.2f copy_us=%.2f\n", case_names[k], n,
      blob->len, enc / 1e3 / rounds, dec / 1e3 / rounds,
      freed / 1e3 / rounds, attach / 1e3 / rounds, copy / 1e3 / rounds);
  gst_buffer_unref (decoded);
  g_byte_array_unref (blob);
  gst_buffer_unref (src);
}

int
main (int argc, char **argv)
{
  gint rois = 50, rounds = 20000;
  GOptionEntry entries[] = {
    {"rois", 0, 0, G_OPTION_ARG_INT, &rois, "regions per frame (50)", "N"},
    {"rounds", 0, 0, G_OPTION_ARG_INT, &rounds, "frames timed (20000)", "R"},
    {NULL}
  };
  GOptionContext *ctx = g_option_context_new ("- metadata cost per frame");
  GError *err = NULL;

  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_add_group (ctx, gst_init_get_option_group ());
  if (!g_option_context_parse (ctx, &argc, &argv, &err) || rois < 0 ||
      rounds < 1) {
    g_printerr ("%s\n", err ? err->message : "need --rois >= 0, --rounds >= 1");
    return 2;
  }
  g_option_context_free (ctx);
  /* warm up: types registered, names known */
  run_case (CASE_ROIS_PARAMS, rois, 100);
  run_case (CASE_ROIS, rois, (guint) rounds);
  run_case (CASE_ROIS_PARAMS, rois, (guint) rounds);
#ifdef HAVE_GST_ANALYTICS
  run_case (CASE_DETECTIONS, rois, 100);
  run_case (CASE_DETECTIONS, rois, (guint) rounds);
#endif
  return 0;
}
