/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The Markdown table (stdout) and the results file: JSON, or TSV for a
 * name ending in .tsv, with every figure, each child's own report and the
 * environment.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <math.h>
#include <string.h>

#include "bench.h"

static gchar *
fmt (gboolean have, gdouble v, gint decimals)
{
  if (!have || !isfinite (v))
    return g_strdup ("n/a");
  return g_strdup_printf ("%.*f", decimals, v);
}

/* Whether a row before @i was skipped for the same transport and reason. */
static gboolean
said_before (GPtrArray * rows, guint i)
{
  Row *row = g_ptr_array_index (rows, i);

  for (guint j = 0; j < i; j++) {
    Row *other = g_ptr_array_index (rows, j);

    if (other->skipped && other->transport == row->transport &&
        g_strcmp0 (other->skip_reason, row->skip_reason) == 0)
      return TRUE;
  }
  return FALSE;
}

/* the table's rate column; @unit for prose */
static gchar *
fmt_rate (gint rate, gboolean unit)
{
  if (rate == 0)
    return g_strdup ("flat out");
  return g_strdup_printf ("%d%s", rate, unit ? " frames/s" : "");
}

/* "(a)/(c) frames/s 12.3x, p50 0.15x": (a)'s figures over this row's */
static gchar *
fmt_ratios (const Row * row)
{
  const gchar *letter = row->python ? "Python" :
      row->transport == TRANSPORT_SHM ? "b" : "c";
  gchar *fps, *p50, *out;

  if ((row->transport == TRANSPORT_CUDAIPC && !row->python) ||
      row->transport == TRANSPORT_FLOOR ||
      row->transport == TRANSPORT_FLOOR_RING ||
      (!row->have_ratio_fps && !row->have_ratio_p50))
    return g_strdup ("");
  fps = row->have_ratio_fps ? g_strdup_printf ("%.*fx",
      row->ratio_fps < 10 ? 2 : 1, row->ratio_fps) : g_strdup ("n/a");
  p50 = row->have_ratio_p50 ? g_strdup_printf ("%.*fx",
      row->ratio_p50 < 10 ? 2 : 1, row->ratio_p50) : g_strdup ("n/a");
  out = g_strdup_printf ("(a)/(%s) frames/s %s, p50 %s", letter, fps, p50);
  g_free (fps);
  g_free (p50);
  return out;
}

/* "0.82x, 2.95x": the row's frames/s and p50 over the floor's */
static gchar *
fmt_floor (const Row * row)
{
  gchar *fps, *p50, *out;

  if (!row->have_floor_fps && !row->have_floor_p50)
    return g_strdup ("");
  fps = row->have_floor_fps ? g_strdup_printf ("%.2fx", row->floor_fps) :
      g_strdup ("n/a");
  p50 = row->have_floor_p50 ? g_strdup_printf ("%.*fx",
      row->floor_p50 < 10 ? 2 : 1, row->floor_p50) : g_strdup ("n/a");
  out = g_strdup_printf ("%s, %s", fps, p50);
  g_free (fps);
  g_free (p50);
  return out;
}

void
bench_report_table (GPtrArray * rows)
{
  g_print ("\n| transport | resolution | consumers | rate | "
      "frames/s per consumer | delivered | p50 us | p99 us "
      "| producer CPU us/frame | consumer CPU us/frame | GPU MiB "
      "| /floor: frames/s, p50 | vs (a) |\n");
  g_print ("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: "
      "| ---: | ---: | --- | --- |\n");
  for (guint i = 0; i < rows->len; i++) {
    Row *row = g_ptr_array_index (rows, i);
    gchar *label, *rate, *cells[9];

    if (row->skipped)
      continue;
    label = bench_row_label (row);
    rate = fmt_rate (row->rate, FALSE);
    if (row->failed) {
      g_print ("| %s | %dx%d | %u | %s | failed | | | | | | | | |\n", label,
          row->width, row->height, row->n_consumers, rate);
      g_free (label);
      g_free (rate);
      continue;
    }
    cells[0] = fmt (row->have_fps, row->fps, 1);
    cells[1] = fmt (row->have_delivered, row->delivered, 3);
    cells[2] = fmt (row->have_latency, row->p50, 1);
    cells[3] = fmt (row->have_latency, row->p99, 1);
    cells[4] = fmt (row->have_pcpu, row->producer_cpu, 1);
    cells[5] = fmt (row->have_ccpu, row->consumer_cpu, 1);
    cells[6] = fmt (row->have_gpu, row->gpu_mib, 0);
    cells[7] = fmt_floor (row);
    cells[8] = fmt_ratios (row);
    g_print ("| %s | %dx%d | %u | %s | %s | %s | %s | %s | %s | %s | %s | %s "
        "| %s |\n", label, row->width, row->height, row->n_consumers, rate,
        cells[0], cells[1], cells[2], cells[3], cells[4], cells[5], cells[6],
        cells[7], cells[8]);
    for (guint j = 0; j < G_N_ELEMENTS (cells); j++)
      g_free (cells[j]);
    g_free (label);
    g_free (rate);
  }

  g_print ("\n");
  for (guint i = 0; i < rows->len; i++) {
    Row *row = g_ptr_array_index (rows, i);
    gchar *label = bench_row_label (row);
    gchar *rate = fmt_rate (row->rate, TRUE);

    if (row->skipped) {
      /* once per transport and reason */
      if (!said_before (rows, i))
        g_print ("- %s: %s\n", bench_transport_label (row->transport),
            row->skip_reason);
    } else {
      if (row->failed)
        g_print ("- %s %dx%d x%u, %s: FAILED: %s\n", label, row->width,
            row->height, row->n_consumers, rate, row->reasons->str);
      if (row->transport == TRANSPORT_CUDAIPC && row->producer_result)
        g_print ("- %s %dx%d x%u, %s: sink stats frames-published=%"
            G_GUINT64_FORMAT " frames-dropped=%" G_GUINT64_FORMAT
            " (of %" G_GUINT64_FORMAT " pushed)\n", label, row->width,
            row->height, row->n_consumers, rate, row->published,
            row->dropped, row->pushed);
      if (row->have_copy_wait)
        g_print ("- %s %dx%d x%u, %s: a consumer waited for the write into "
            "the slot %.2f us a frame (%.0f%% of frames waited)\n", label,
            row->width, row->height, row->n_consumers, rate, row->copy_wait,
            row->copy_waited * 100);
      if (row->notes->len)
        g_print ("- %s %dx%d x%u, %s: %s\n", label, row->width, row->height,
            row->n_consumers, rate, row->notes->str);
    }
    g_free (label);
    g_free (rate);
  }
}

static void
json_str (GString * s, const gchar * v)
{
  g_string_append_c (s, '"');
  for (const gchar * c = v ? v : ""; *c; c++) {
    switch (*c) {
      case '"':
        g_string_append (s, "\\\"");
        break;
      case '\\':
        g_string_append (s, "\\\\");
        break;
      case '\n':
        g_string_append (s, "\\n");
        break;
      case '\t':
        g_string_append (s, "\\t");
        break;
      default:
        if ((guchar) * c < 0x20)
          g_string_append_printf (s, "\\u%04x", (guchar) * c);
        else
          g_string_append_c (s, *c);
    }
  }
  g_string_append_c (s, '"');
}

static void
json_num (GString * s, gboolean have, gdouble v)
{
  if (!have || !isfinite (v))
    g_string_append (s, "null");
  else
    g_string_append_printf (s, "%.3f", v);
}

static void
json_kv_int (GString * s, const gchar * indent, const gchar * k,
    gboolean have, gint64 v, gboolean comma)
{
  g_string_append_printf (s, "%s\"%s\": ", indent, k);
  if (have)
    g_string_append_printf (s, "%" G_GINT64_FORMAT, v);
  else
    g_string_append (s, "null");
  g_string_append (s, comma ? ",\n" : "\n");
}

static void
json_kv_str (GString * s, const gchar * indent, const gchar * k,
    const gchar * v, gboolean comma)
{
  g_string_append_printf (s, "%s\"%s\": ", indent, k);
  json_str (s, v);
  g_string_append (s, comma ? ",\n" : "\n");
}

static void
json_kv_str_or_null (GString * s, const gchar * indent, const gchar * k,
    const gchar * v, gboolean comma)
{
  if (v) {
    json_kv_str (s, indent, k, v, comma);
  } else {
    g_string_append_printf (s, "%s\"%s\": null", indent, k);
    g_string_append (s, comma ? ",\n" : "\n");
  }
}

static void
json_kv_num (GString * s, const gchar * indent, const gchar * k,
    gboolean have, gdouble v, gboolean comma)
{
  g_string_append_printf (s, "%s\"%s\": ", indent, k);
  json_num (s, have, v);
  g_string_append (s, comma ? ",\n" : "\n");
}

static void
json_result (GString * s, GHashTable * h)
{
  GList *keys;
  gboolean first = TRUE;

  if (h == NULL) {
    g_string_append (s, "null");
    return;
  }
  keys = g_list_sort (g_hash_table_get_keys (h), (GCompareFunc) strcmp);
  g_string_append_c (s, '{');
  for (GList * l = keys; l; l = l->next) {
    const gchar *v = g_hash_table_lookup (h, l->data);
    gchar *end = NULL;

    g_string_append (s, first ? "" : ", ");
    first = FALSE;
    json_str (s, l->data);
    g_string_append (s, ": ");
    g_ascii_strtoll (v, &end, 10);
    if (*v && end && *end == '\0')
      g_string_append (s, v);
    else
      json_str (s, v);
  }
  g_string_append_c (s, '}');
  g_list_free (keys);
}

/* The rates and the nvcodec ipc-modes the rows ran with, in order. */
static void
json_row_lists (GString * s, GPtrArray * rows)
{
  GArray *rates = g_array_new (FALSE, FALSE, sizeof (gint));
  GPtrArray *modes = g_ptr_array_new ();

  for (guint i = 0; i < rows->len; i++) {
    Row *row = g_ptr_array_index (rows, i);
    gboolean seen = FALSE;

    for (guint j = 0; j < rates->len; j++)
      seen |= g_array_index (rates, gint, j) == row->rate;
    if (!seen)
      g_array_append_val (rates, row->rate);
    if (row->ipc_mode && !g_ptr_array_find (modes, row->ipc_mode, NULL))
      g_ptr_array_add (modes, (gpointer) row->ipc_mode);
  }
  g_string_append (s, "    \"rates\": [");
  for (guint j = 0; j < rates->len; j++)
    g_string_append_printf (s, "%s%d", j ? ", " : "",
        g_array_index (rates, gint, j));
  g_string_append (s, "],\n    \"nvcodec_ipc_modes\": [");
  for (guint j = 0; j < modes->len; j++) {
    g_string_append (s, j ? ", " : "");
    json_str (s, g_ptr_array_index (modes, j));
  }
  g_string_append (s, "],\n");
  g_array_unref (rates);
  g_ptr_array_unref (modes);
}

static void
json_environment (GString * s, GPtrArray * rows)
{
  const gchar *in = "    ";

  g_string_append (s, "  \"environment\": {\n");
  json_kv_str (s, in, "gstreamer", bench_env.gst_version, TRUE);
  json_kv_str (s, in, "gpu", bench_env.gpu_name, TRUE);
  json_kv_str (s, in, "nvidia_driver", bench_env.driver, TRUE);
  json_kv_str (s, in, "cuda_driver_api", bench_env.cuda_api, TRUE);
  json_kv_str (s, in, "cpu", bench_env.cpu_model, TRUE);
  json_kv_int (s, in, "cpu_cores", TRUE, bench_env.cores, TRUE);
  json_kv_str (s, in, "kernel", bench_env.kernel, TRUE);
  json_kv_str (s, in, "date", bench_env.date, TRUE);
  json_kv_str (s, in, "memory", opts.memory, TRUE);
  json_kv_str (s, in, "memory_reason", bench_env.memory_reason, TRUE);
  json_kv_str (s, in, "plugin", opts.plugin, TRUE);
  json_kv_str (s, in, "label", opts.label, FALSE);
  g_string_append (s, "  },\n  \"options\": {\n");
  json_kv_int (s, in, "frames", TRUE, opts.frames, TRUE);
  json_kv_int (s, in, "warmup", TRUE, opts.warmup, TRUE);
  json_kv_int (s, in, "seconds", TRUE, opts.seconds, TRUE);
  json_kv_int (s, in, "ring_size", TRUE, opts.ring_size, TRUE);
  json_kv_int (s, in, "shm_frames", TRUE, opts.shm_frames ? opts.shm_frames :
      opts.ring_size, TRUE);
  json_kv_int (s, in, "consumer_device", TRUE, opts.consumer_device, TRUE);
  json_kv_int (s, in, "rate", TRUE, opts.rate, TRUE);
  json_row_lists (s, rows);
  json_kv_int (s, in, "idle_timeout_s", TRUE, opts.idle, TRUE);
  json_kv_int (s, in, "grace_ms", TRUE, opts.grace_ms, TRUE);
  json_kv_str (s, in, "stamp", opts.stamp, TRUE);
  json_kv_int (s, in, "timeout", TRUE, opts.timeout, FALSE);
  g_string_append (s, "  },\n");
}

gboolean
bench_report_json (const gchar * path, GPtrArray * rows, GError ** error)
{
  GString *s = g_string_new ("{\n");
  const gchar *in = "      ";
  gboolean ok;

  json_environment (s, rows);
  g_string_append (s, "  \"results\": [\n");
  for (guint i = 0; i < rows->len; i++) {
    Row *row = g_ptr_array_index (rows, i);
    gchar *res = g_strdup_printf ("%dx%d", row->width, row->height);
    gchar *label = bench_row_label (row);

    g_string_append (s, "    {\n");
    json_kv_str (s, in, "transport", bench_transport_name (row->transport),
        TRUE);
    json_kv_str_or_null (s, in, "ipc_mode", row->ipc_mode, TRUE);
    json_kv_int (s, in, "rois_per_frame", TRUE, row->rois, TRUE);
    json_kv_str (s, in, "label", label, TRUE);
    json_kv_str (s, in, "resolution", res, TRUE);
    json_kv_int (s, in, "consumers", TRUE, row->n_consumers, TRUE);
    json_kv_int (s, in, "rate", TRUE, row->rate, TRUE);
    json_kv_str (s, in, "status", row->skipped ? "skipped" : row->failed ?
        "failed" : "ok", TRUE);
    json_kv_str (s, in, "reason", row->skipped ? row->skip_reason :
        row->reasons->str, TRUE);
    json_kv_num (s, in, "fps_per_consumer", row->have_fps, row->fps, TRUE);
    json_kv_num (s, in, "fps_per_consumer_min", row->have_fps, row->fps_min,
        TRUE);
    json_kv_num (s, in, "delivered", row->have_delivered, row->delivered, TRUE);
    json_kv_num (s, in, "delivered_min", row->have_delivered,
        row->delivered_min, TRUE);
    /* carried: in the frame (offset, shm header, (c)'s meta) */
    json_kv_str (s, in, "frame_ids", row->ids_counted ? "counted" :
        row->n_samples || row->have_delivered ? "carried" : "", TRUE);
    json_kv_num (s, in, "producer_fps", row->have_pcpu, row->producer_fps,
        TRUE);
    json_kv_num (s, in, "latency_p50_us", row->have_latency, row->p50, TRUE);
    json_kv_num (s, in, "latency_p99_us", row->have_latency, row->p99, TRUE);
    json_kv_num (s, in, "latency_mean_us", row->have_latency, row->mean, TRUE);
    json_kv_num (s, in, "latency_max_us", row->have_latency, row->max, TRUE);
    json_kv_int (s, in, "latency_samples", TRUE, row->n_samples, TRUE);
    json_kv_num (s, in, "producer_cpu_us_per_frame", row->have_pcpu,
        row->producer_cpu, TRUE);
    json_kv_num (s, in, "producer_cpu_total_us_per_frame", row->have_pcpu,
        row->producer_cpu_total, TRUE);
    json_kv_num (s, in, "consumer_cpu_us_per_frame", row->have_ccpu,
        row->consumer_cpu, TRUE);
    json_kv_num (s, in, "consumer_cpu_total_us_per_frame", row->have_ccpu,
        row->consumer_cpu_total, TRUE);
    if (row->transport == TRANSPORT_CUDAIPC) {
      json_kv_num (s, in, "consumer_copy_wait_us_per_frame",
          row->have_copy_wait, row->copy_wait, TRUE);
      json_kv_num (s, in, "consumer_copy_waited", row->have_copy_wait,
          row->copy_waited, TRUE);
    }
    json_kv_num (s, in, "gpu_mib", row->have_gpu, row->gpu_mib, TRUE);
    json_kv_int (s, in, "frames_pushed", !row->skipped, row->pushed, TRUE);
    json_kv_int (s, in, "frames_missing", !row->skipped, row->missing, TRUE);
    if (row->transport == TRANSPORT_CUDAIPC) {
      json_kv_int (s, in, "sink_frames_published",
          row->producer_result != NULL, row->published, TRUE);
      json_kv_int (s, in, "sink_frames_dropped", row->producer_result != NULL,
          row->dropped, TRUE);
    }
    json_kv_str (s, in, "consumers_in", row->python ? "python" : "c", TRUE);
    if (row->transport != TRANSPORT_CUDAIPC || row->python) {
      /* (a)'s figure over this row's, same resolution, consumers, rate */
      json_kv_num (s, in, "fps_ratio_a_over_this", row->have_ratio_fps,
          row->ratio_fps, TRUE);
      json_kv_num (s, in, "p50_ratio_a_over_this", row->have_ratio_p50,
          row->ratio_p50, TRUE);
    }
    if (row->transport != TRANSPORT_FLOOR) {
      /* this row's figure over the floor's, same resolution, consumers,
       * rate */
      json_kv_num (s, in, "fps_over_floor", row->have_floor_fps,
          row->floor_fps, TRUE);
      json_kv_num (s, in, "p50_over_floor", row->have_floor_p50,
          row->floor_p50, TRUE);
    }
    json_kv_str (s, in, "notes", row->notes->str, TRUE);
    json_kv_num (s, in, "wall_s", !row->skipped, row->wall_s, TRUE);
    g_string_append_printf (s, "%s\"producer\": ", in);
    json_result (s, row->producer_result);
    g_string_append_printf (s, ",\n%s\"consumer_reports\": [", in);
    for (guint j = 0; j < row->consumer_results->len; j++) {
      g_string_append (s, j ? ", " : "");
      json_result (s, g_ptr_array_index (row->consumer_results, j));
    }
    g_string_append (s, "]\n    }");
    g_string_append (s, i + 1 < rows->len ? ",\n" : "\n");
    g_free (res);
    g_free (label);
  }
  g_string_append (s, "  ]\n}\n");
  ok = g_file_set_contents (path, s->str, s->len, error);
  g_string_free (s, TRUE);
  return ok;
}

gboolean
bench_report_tsv (const gchar * path, GPtrArray * rows, GError ** error)
{
  GString *s = g_string_new (NULL);
  gboolean ok;

  g_string_append_printf (s, "# gstreamer\t%s\n# gpu\t%s\n# nvidia_driver\t%s"
      "\n# cuda_driver_api\t%s\n# cpu\t%s\n# cpu_cores\t%u\n# kernel\t%s\n"
      "# date\t%s\n# memory\t%s (%s)\n# frames\t%d\n# warmup\t%d\n"
      "# seconds\t%d\n# ring_size\t%d\n# stamp\t%s\n# label\t%s\n",
      bench_env.gst_version, bench_env.gpu_name, bench_env.driver,
      bench_env.cuda_api, bench_env.cpu_model, bench_env.cores,
      bench_env.kernel, bench_env.date, opts.memory, bench_env.memory_reason,
      opts.frames, opts.warmup, opts.seconds, opts.ring_size, opts.stamp,
      opts.label ? opts.label : "");
  /* ratios: (a)'s figure over the row's, for (b) and (c) rows; the row's
   * over the floor's, for every row but the floor's */
  g_string_append (s,
      "transport\tipc_mode\tresolution\tconsumers\trate\tstatus\t"
      "fps_per_consumer\tfps_per_consumer_min\tproducer_fps\tp50_us\tp99_us\t"
      "mean_us\tmax_us\tsamples\tproducer_cpu_us\tproducer_cpu_total_us\t"
      "consumer_cpu_us\tconsumer_cpu_total_us\tgpu_mib\tdelivered\t"
      "delivered_min\tfps_ratio_a_over_this\tp50_ratio_a_over_this\t"
      "fps_over_floor\tp50_over_floor\tpushed\t"
      "missing\tsink_published\tsink_dropped\tnotes\treason\n");
  for (guint i = 0; i < rows->len; i++) {
    Row *row = g_ptr_array_index (rows, i);
    gdouble v[] = { row->fps, row->fps_min, row->producer_fps, row->p50,
      row->p99, row->mean, row->max, row->producer_cpu,
      row->producer_cpu_total, row->consumer_cpu, row->consumer_cpu_total,
      row->gpu_mib, row->delivered, row->delivered_min, row->ratio_fps,
      row->ratio_p50, row->floor_fps, row->floor_p50
    };
    gboolean have[] = { row->have_fps, row->have_fps, row->have_pcpu,
      row->have_latency, row->have_latency, row->have_latency,
      row->have_latency, row->have_pcpu, row->have_pcpu, row->have_ccpu,
      row->have_ccpu, row->have_gpu, row->have_delivered,
      row->have_delivered, row->have_ratio_fps, row->have_ratio_p50,
      row->have_floor_fps, row->have_floor_p50
    };
    gchar *reason, *notes;

    g_string_append_printf (s, "%s\t%s\t%dx%d\t%u\t%d\t%s",
        bench_transport_name (row->transport),
        row->ipc_mode ? row->ipc_mode : "", row->width, row->height,
        row->n_consumers, row->rate, row->skipped ? "skipped" : row->failed ?
        "failed" : "ok");
    for (guint j = 0; j < G_N_ELEMENTS (v); j++) {
      gchar *c = fmt (have[j], v[j], 3);

      g_string_append_printf (s, "\t%s", c);
      if (j == 6)
        g_string_append_printf (s, "\t%u", row->n_samples);
      g_free (c);
    }
    reason = g_strdup (row->skipped ? row->skip_reason : row->reasons->str);
    g_strdelimit (reason, "\t\r\n", ' ');
    notes = g_strdup (row->notes->str);
    g_strdelimit (notes, "\t\r\n", ' ');
    g_string_append_printf (s, "\t%" G_GUINT64_FORMAT "\t%" G_GUINT64_FORMAT
        "\t%" G_GUINT64_FORMAT "\t%" G_GUINT64_FORMAT "\t%s\t%s\n",
        row->pushed, row->missing, row->published, row->dropped, notes, reason);
    g_free (reason);
    g_free (notes);
  }
  ok = g_file_set_contents (path, s->str, s->len, error);
  g_string_free (s, TRUE);
  return ok;
}
