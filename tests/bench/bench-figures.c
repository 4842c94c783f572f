/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A row's figures, from its children's "result" lines and the consumers'
 * latency samples (main thread, after the row ran), and the ratios of
 * (a)'s figures to those of the (b) and (c) rows beside it, and of every
 * row's to the floor's.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <math.h>

#include "bench.h"

static gdouble
result_num (GHashTable * h, const gchar * key, gboolean * ok)
{
  const gchar *v = h ? g_hash_table_lookup (h, key) : NULL;

  if (v == NULL) {
    if (ok)
      *ok = FALSE;
    return NAN;
  }
  return g_ascii_strtod (v, NULL);
}

static void
row_compute_producer (Row * row, GHashTable * p)
{
  gboolean ok = TRUE;
  gdouble measured = result_num (p, "measured", &ok);
  gdouble push_ns = result_num (p, "push_ns", &ok);
  gdouble warnings = result_num (p, "warnings", NULL);
  gdouble latency = result_num (p, "sink_latency_ns", NULL);

  row->pushed = (guint64) result_num (p, "pushed", &ok);
  row->published = (guint64) result_num (p, "published", &ok);
  row->dropped = (guint64) result_num (p, "dropped", &ok);
  if (ok && measured > 0) {
    row->producer_fps = measured / (push_ns / 1e9);
    row->producer_cpu = result_num (p, "cpu_ns", NULL) / measured / 1e3;
    row->producer_cpu_total = result_num (p, "cpu_total_ns", NULL) /
        row->pushed / 1e3;
    row->have_pcpu = TRUE;
  }
  if (warnings > 0)
    bench_row_note (row, "the producer's pipeline posted %.0f warning(s) "
        "(its stderr, --verbose)", warnings);
  /* (c)'s latency assumes the sink's PTS is the stamp itself */
  if (row->transport == TRANSPORT_NVCODEC && latency > 0)
    bench_row_note (row, "the sink's latency was %.0f ns, which its PTS "
        "includes: (c)'s latency is that much too high", latency);
}

/* Everything the children reported (row->producer_result and
 * row->consumer_results, in consumer order), into the row's figures.
 * @have_gpu_base: the GPU memory was sampled. */
void
bench_row_compute (Row * row, gboolean have_gpu_base)
{
  GArray *all = g_array_new (FALSE, FALSE, sizeof (gint64));
  GHashTable *p = row->producer_result;
  gdouble fps_sum = 0, cpu_sum = 0, cpu_total_sum = 0, del_sum = 0;
  gdouble wait_sum = 0, waited_sum = 0;
  guint n_fps = 0, n_cpu = 0, n_del = 0, n_wait = 0;
  gboolean ok;

  if (p)
    row_compute_producer (row, p);
  else if (!row->failed)
    bench_row_fail (row, "the producer reported nothing");

  row->fps_min = INFINITY;
  row->delivered_min = INFINITY;
  for (guint i = 0; i < row->consumer_results->len; i++) {
    GHashTable *h = g_ptr_array_index (row->consumer_results, i);
    gchar *path = g_strdup_printf ("%s/samples-%u.bin", row->dir, i);
    gchar *data = NULL;
    gsize len = 0;
    gdouble measured, received, span, of;
    gboolean counted;

    if (h == NULL) {
      g_free (path);
      continue;
    }
    if (g_file_get_contents (path, &data, &len, NULL))
      g_array_append_vals (all, data, len / sizeof (gint64));
    g_free (data);
    g_free (path);

    ok = TRUE;
    measured = result_num (h, "measured", &ok);
    received = result_num (h, "received", &ok);
    span = result_num (h, "last_arrival", &ok) -
        result_num (h, "first_stamp", &ok);
    counted = g_strcmp0 (g_hash_table_lookup (h, "ids"), "counted") == 0;
    if (ok && received > 0 && g_hash_table_contains (h, "copy_wait_ns")) {
      wait_sum += result_num (h, "copy_wait_ns", NULL) / received / 1e3;
      waited_sum += result_num (h, "copy_waits", NULL) / received;
      n_wait++;
    }
    if (ok && measured > 1 && span > 0) {
      gdouble fps = measured / (span / 1e9);

      fps_sum += fps;
      n_fps++;
      row->fps_min = MIN (row->fps_min, fps);
      cpu_sum += result_num (h, "cpu_ns", NULL) / measured / 1e3;
      cpu_total_sum += result_num (h, "cpu_total_ns", NULL) /
          MAX (received, 1) / 1e3;
      n_cpu++;
    }

    /* delivered: measured frames received over measured frames pushed;
     * where frame numbers did not travel the warm-up cannot be told
     * apart, so all frames received over all pushed */
    if (p && ok && row->pushed > 0) {
      if (counted) {
        of = received / row->pushed;
        row->ids_counted = TRUE;
      } else if (row->pushed > (guint64) opts.warmup) {
        of = measured / (row->pushed - opts.warmup);
      } else {
        of = NAN;
      }
      if (isfinite (of)) {
        del_sum += of;
        n_del++;
        row->delivered_min = MIN (row->delivered_min, of);
      }
    }
    if (p && ok && !counted && row->pushed > (guint64) opts.warmup &&
        measured < (gdouble) (row->pushed - opts.warmup))
      row->missing += (row->pushed - opts.warmup) - (guint64) measured;
  }
  if (n_fps) {
    row->fps = fps_sum / n_fps;
    row->have_fps = TRUE;
  }
  if (n_cpu) {
    row->consumer_cpu = cpu_sum / n_cpu;
    row->consumer_cpu_total = cpu_total_sum / n_cpu;
    row->have_ccpu = TRUE;
  }
  if (n_wait) {
    row->copy_wait = wait_sum / n_wait;
    row->copy_waited = waited_sum / n_wait;
    row->have_copy_wait = TRUE;
  }
  if (n_del) {
    row->delivered = del_sum / n_del;
    row->have_delivered = TRUE;
  }

  if (all->len) {
    gint64 *v = (gint64 *) all->data;
    gdouble sum = 0;

    g_array_sort (all, bench_cmp_i64);
    for (guint i = 0; i < all->len; i++)
      sum += v[i];
    row->n_samples = all->len;
    row->p50 = bench_percentile (v, all->len, 0.50) / 1e3;
    row->p99 = bench_percentile (v, all->len, 0.99) / 1e3;
    row->mean = sum / all->len / 1e3;
    row->max = v[all->len - 1] / 1e3;
    row->have_latency = TRUE;
  }
  g_array_unref (all);

  if (have_gpu_base && row->mem_max >= row->mem_base && row->mem_base > 0) {
    row->gpu_mib = (row->mem_max - row->mem_base) / (1024.0 * 1024.0);
    row->have_gpu = TRUE;
  }
  if (row->transport == TRANSPORT_CUDAIPC && p && row->dropped > 0)
    bench_row_fail (row, "the sink dropped %" G_GUINT64_FORMAT " frames",
        row->dropped);
  /* (a) and (b) wait for their consumers: a frame that did not arrive is
   * a fault. nvcodec's sink keeps only the latest frame, so (c) reports
   * what arrived (delivered) instead. */
  if (!row->failed && row->missing > 0 && row->transport != TRANSPORT_NVCODEC)
    bench_row_fail (row, "%" G_GUINT64_FORMAT " measured frames did not "
        "reach a consumer", row->missing);
  if (row->ids_counted)
    bench_row_note (row, "frame numbers did not travel (no frame meta): "
        "warm-up and delivered are counted by arrival");
}

/* @ref ran, at the same resolution, consumer count and rate as @row: the
 * rows a ratio compares */
static gboolean
same_point_ran (const Row * ref, const Row * row)
{
  return ref->width == row->width && ref->height == row->height &&
      ref->n_consumers == row->n_consumers && ref->rate == row->rate &&
      !ref->skipped && !ref->failed;
}

static Row *
find_a_row (GPtrArray * rows, const Row * row)
{
  for (guint i = 0; i < rows->len; i++) {
    Row *a = g_ptr_array_index (rows, i);

    if (a->transport == TRANSPORT_CUDAIPC && !a->python && a->rois == 0 &&
        same_point_ran (a, row))
      return a;
  }
  return NULL;
}

static Row *
find_floor_row (GPtrArray * rows, const Row * row)
{
  for (guint i = 0; i < rows->len; i++) {
    Row *f = g_ptr_array_index (rows, i);

    if (f->transport == TRANSPORT_FLOOR && same_point_ran (f, row))
      return f;
  }
  return NULL;
}

/* For every row that ran, but the floor's: its frames/s over the floor's
 * (a fraction) and its p50 over the floor's (a multiple), same
 * resolution, consumer count and rate. */
static void
rows_floor_ratios (GPtrArray * rows)
{
  for (guint i = 0; i < rows->len; i++) {
    Row *row = g_ptr_array_index (rows, i);
    Row *f;

    if (row->transport == TRANSPORT_FLOOR || row->skipped || row->failed)
      continue;
    f = find_floor_row (rows, row);
    if (f == NULL)
      continue;
    if (f->have_fps && row->have_fps && f->fps > 0) {
      row->floor_fps = row->fps / f->fps;
      row->have_floor_fps = TRUE;
    }
    if (f->have_latency && row->have_latency && f->p50 > 0) {
      row->floor_p50 = row->p50 / f->p50;
      row->have_floor_p50 = TRUE;
    }
  }
}

/* For each (b), (c) and Python-consumer row that ran: (a)'s frames/s and
 * p50 over its own,
 * for the same resolution, consumer count and rate (frames/s above 1 and
 * p50 below 1 are (a) ahead). */
void
bench_rows_ratios (GPtrArray * rows)
{
  for (guint i = 0; i < rows->len; i++) {
    Row *row = g_ptr_array_index (rows, i);
    Row *a;

    if ((row->transport == TRANSPORT_CUDAIPC && !row->python) ||
        row->transport == TRANSPORT_FLOOR ||
        row->transport == TRANSPORT_FLOOR_RING || row->skipped || row->failed)
      continue;
    a = find_a_row (rows, row);
    if (a == NULL)
      continue;
    if (a->have_fps && row->have_fps && row->fps > 0) {
      row->ratio_fps = a->fps / row->fps;
      row->have_ratio_fps = TRUE;
    }
    if (a->have_latency && row->have_latency && row->p50 > 0) {
      row->ratio_p50 = a->p50 / row->p50;
      row->have_ratio_p50 = TRUE;
    }
  }
  rows_floor_ratios (rows);
}
