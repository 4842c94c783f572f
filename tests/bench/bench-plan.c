/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The rows a run makes, from the options: for each rate (--rates, else
 * --rate), each transport (--transports; nvcodec once per ipc-mode of
 * --nvcodec-ipc-modes, ours once per ordering of --orderings), each
 * resolution and each consumer count, in that
 * order, so that the table has the flat-out rows first and each rate's
 * rows together. Also what a run will take, printed before it starts, and
 * a row's life cycle (new, fail, note, free). Main thread only.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdio.h>

#include "bench.h"

/* What starting and stopping a row's processes takes, on top of its
 * pushing (CUDA contexts, nvcodec's plugin in (b)'s and (c)'s processes,
 * the frame, (c)'s half-second wait for its consumers, the teardown): for
 * the estimate, fitted to a run of all 32 rows on an H200 with GStreamer
 * 1.26 in CUDA memory (1.9 to 2.7 s a row for (a), 3.4 to 6 s for (b) and
 * (c)); far less in system memory. The run prints what it took. */
static gdouble
row_overhead (const Row * row)
{
  if (row->transport == TRANSPORT_CUDAIPC)
    return 1.9 + 0.2 * row->n_consumers;
  return 2.8 + 0.75 * row->n_consumers;
}

/* GStreamer 1.24 to 1.26's GstCudaIpcMode nicks, for a machine where
 * nvcodec's enum is not registered (its rows are skipped there) */
static const gchar *known_ipc_modes[] = { "legacy", "mmap", NULL };
/* cuipcsink's ordering nicks */
static const gchar *known_orderings[] = { "auto", "fence", "events", "host",
  NULL
};

static void
result_free (gpointer h)
{
  if (h)
    g_hash_table_unref (h);
}

static Row *
row_new (Transport t, const gchar * ipc_mode, gint w, gint h, guint n,
    gint rate)
{
  Row *row = g_new0 (Row, 1);

  row->transport = t;
  row->ipc_mode = ipc_mode;
  row->width = w;
  row->height = h;
  row->n_consumers = n;
  row->rate = rate;
  row->reasons = g_string_new (NULL);
  row->notes = g_string_new (NULL);
  row->consumers = g_ptr_array_new ();
  row->consumer_results = g_ptr_array_new_with_free_func (result_free);
  return row;
}

void
bench_row_free (Row * row)
{
  if (row == NULL)
    return;
  g_ptr_array_unref (row->consumers);
  g_ptr_array_unref (row->consumer_results);
  if (row->producer_result)
    g_hash_table_unref (row->producer_result);
  g_string_free (row->reasons, TRUE);
  g_string_free (row->notes, TRUE);
  g_free (row->skip_reason);
  g_free (row->dir);
  g_free (row->socket);
  g_free (row);
}

static void
append_vprintf (GString * s, const gchar * format, va_list args)
{
  if (s->len)
    g_string_append (s, "; ");
  g_string_append_vprintf (s, format, args);
}

/* Marks @row failed and adds a reason. */
void
bench_row_fail (Row * row, const gchar * format, ...)
{
  va_list args;

  row->failed = TRUE;
  va_start (args, format);
  append_vprintf (row->reasons, format, args);
  va_end (args);
}

/* A remark on @row that does not fail it. */
void
bench_row_note (Row * row, const gchar * format, ...)
{
  va_list args;

  va_start (args, format);
  append_vprintf (row->notes, format, args);
  va_end (args);
}

static gboolean
parse_resolution (const gchar * s, gint * w, gint * h)
{
  if (g_ascii_strcasecmp (s, "1080p") == 0) {
    *w = 1920;
    *h = 1080;
  } else if (g_ascii_strcasecmp (s, "4k") == 0 ||
      g_ascii_strcasecmp (s, "2160p") == 0) {
    *w = 3840;
    *h = 2160;
  } else if (g_ascii_strcasecmp (s, "720p") == 0) {
    *w = 1280;
    *h = 720;
  } else if (sscanf (s, "%dx%d", w, h) != 2 || *w < 16 || *h < 16 ||
      (*w & 1) || (*h & 1)) {
    return FALSE;
  }
  return TRUE;
}

/* A whole number in [lo, hi], all of @s. */
static gboolean
parse_int (const gchar * s, gint64 lo, gint64 hi, gint64 * out)
{
  gchar *end = NULL;
  gint64 v;

  if (*s == '\0')
    return FALSE;
  v = g_ascii_strtoll (s, &end, 10);
  if (end == NULL || *end != '\0' || v < lo || v > hi)
    return FALSE;
  *out = v;
  return TRUE;
}

/* The ipc-mode nick @mode, checked against nvcodec's GstCudaIpcMode where
 * it is registered; interned (rows point to it). */
static const gchar *
check_ipc_mode (const gchar * mode)
{
  GType type = g_type_from_name ("GstCudaIpcMode");

  if (type && G_TYPE_IS_ENUM (type)) {
    GEnumClass *klass = g_type_class_ref (type);
    gboolean known = g_enum_get_value_by_nick (klass, mode) != NULL;

    g_type_class_unref (klass);
    return known ? g_intern_string (mode) : NULL;
  }
  return g_strv_contains (known_ipc_modes, mode) ? g_intern_string (mode) :
      NULL;
}

/* Appends every row of the run to @rows; FALSE, with a message, on a bad
 * list. (c)'s rows are made skipped where !@nvcodec_ok. */
gboolean
bench_plan_rows (GPtrArray * rows, gboolean nvcodec_ok,
    const gchar * nvcodec_why)
{
  gchar **transports = g_strsplit (opts.transports ? opts.transports :
      "floor,cudaipc,shm,nvcodec", ",", -1);
  gchar **resolutions = g_strsplit (opts.resolutions ? opts.resolutions :
      "1080p,4k", ",", -1);
  gchar **counts = g_strsplit (opts.consumers ? opts.consumers : "1,4", ",",
      -1);
  gchar **modes = g_strsplit (opts.ipc_modes ? opts.ipc_modes :
      "legacy,mmap", ",", -1);
  gchar **orderings = opts.orderings ? g_strsplit (opts.orderings, ",", -1) :
      opts.in_place ? g_strsplit ("copy,in-place", ",", -1) : NULL;
  gchar **rois = g_strsplit (opts.rois_list ? opts.rois_list : "0", ",", -1);
  gchar *rate_one = g_strdup_printf ("%d", opts.rate);
  gchar **rates = g_strsplit (opts.rates ? opts.rates : rate_one, ",", -1);
  GArray *ts = g_array_new (FALSE, FALSE, sizeof (Transport));
  gboolean ok = FALSE, said = FALSE;

  /* every list checked before any row is made */
  for (guint i = 0; transports[i]; i++) {
    Transport t;

    if (!bench_transport_from_name (g_strstrip (transports[i]), &t)) {
      g_printerr ("unknown transport '%s' (floor, floor-ring, cudaipc, shm, "
          "nvcodec)\n", transports[i]);
      goto out;
    }
    g_array_append_val (ts, t);
  }
  for (guint i = 0; resolutions[i]; i++) {
    gint w, h;

    if (!parse_resolution (g_strstrip (resolutions[i]), &w, &h)) {
      g_printerr ("bad resolution '%s' (1080p, 4k or WxH, even)\n",
          resolutions[i]);
      goto out;
    }
  }
  for (guint i = 0; counts[i]; i++) {
    gint64 n;

    if (!parse_int (g_strstrip (counts[i]), 1, 64, &n)) {
      g_printerr ("bad consumer count '%s' (1..64)\n", counts[i]);
      goto out;
    }
  }
  for (guint i = 0; rates[i]; i++) {
    gint64 r;

    if (!parse_int (g_strstrip (rates[i]), 0, 1000000, &r)) {
      g_printerr ("bad rate '%s' (frames/s, 0: flat out)\n", rates[i]);
      goto out;
    }
  }
  for (guint i = 0; modes[i]; i++) {
    if (check_ipc_mode (g_strstrip (modes[i])) == NULL) {
      g_printerr ("unknown nvcodec ipc-mode '%s' (legacy, mmap)\n", modes[i]);
      goto out;
    }
  }

  if (opts.orderings && opts.in_place) {
    g_printerr ("--orderings and --in-place do not go together\n");
    goto out;
  }
  for (guint i = 0; opts.orderings && orderings[i]; i++) {
    if (!g_strv_contains (known_orderings, g_strstrip (orderings[i]))) {
      g_printerr ("unknown ordering '%s' (auto, fence, events, host)\n",
          orderings[i]);
      goto out;
    }
  }

  for (guint i = 0; rois[i]; i++) {
    gint64 r;

    if (!parse_int (g_strstrip (rois[i]), 0, 1024, &r)) {
      g_printerr ("bad region count '%s' (0..1024)\n", rois[i]);
      goto out;
    }
  }

  for (guint ri = 0; rates[ri]; ri++) {
    gint rate = (gint) g_ascii_strtoll (rates[ri], NULL, 10);

    for (guint ti = 0; ti < ts->len; ti++) {
      Transport t = g_array_index (ts, Transport, ti);
      guint n_modes = t == TRANSPORT_NVCODEC ? g_strv_length (modes) :
          t == TRANSPORT_CUDAIPC && orderings ? g_strv_length (orderings) : 1;

      if (t == TRANSPORT_NVCODEC && !nvcodec_ok && !said) {
        g_print ("%s\n", nvcodec_why);
        said = TRUE;
      }
      for (guint mi = 0; mi < n_modes; mi++) {
        const gchar *mode = t == TRANSPORT_NVCODEC ?
            check_ipc_mode (modes[mi]) : t == TRANSPORT_CUDAIPC && orderings ?
            g_intern_string (orderings[mi]) : NULL;

        for (guint si = 0; resolutions[si]; si++) {
          gint w = 0, h = 0;

          parse_resolution (resolutions[si], &w, &h);
          for (guint ci = 0; counts[ci]; ci++) {
            /* only (a) carries metas */
            guint n_rois = t == TRANSPORT_CUDAIPC ? g_strv_length (rois) : 1;

            for (guint mi2 = 0; mi2 < n_rois; mi2++) {
              gint64 n = 1, nr = 0;
              Row *row;

              parse_int (counts[ci], 1, 64, &n);
              if (t == TRANSPORT_CUDAIPC)
                parse_int (rois[mi2], 0, 1024, &nr);
              row = row_new (t, mode, w, h, (guint) n, rate);
              row->rois = (guint) nr;
              if (t == TRANSPORT_NVCODEC && !nvcodec_ok) {
                row->skipped = TRUE;
                row->skip_reason = g_strdup (nvcodec_why);
              }
              g_ptr_array_add (rows, row);
              /* the same with consumers in Python, right after it */
              if (t == TRANSPORT_CUDAIPC && opts.python_consumer &&
                  nr == 0 && mode == NULL) {
                row = row_new (t, mode, w, h, (guint) n, rate);
                row->python = TRUE;
                g_ptr_array_add (rows, row);
              }
            }
          }
        }
      }
    }
  }
  ok = TRUE;

out:
  g_array_unref (ts);
  g_strfreev (transports);
  g_strfreev (resolutions);
  g_strfreev (counts);
  g_strfreev (modes);
  g_strfreev (orderings);
  g_strfreev (rois);
  g_strfreev (rates);
  g_free (rate_one);
  return ok;
}

/* Seconds @row pushes for at most: warm-up and measured frames at its
 * rate, cut at --seconds of measured pushing; flat out, --seconds (a
 * fast path takes far less), or -1 when nothing but --timeout bounds it. */
static gdouble
row_push_bound (const Row * row)
{
  gdouble warm, all;

  if (row->rate > 0) {
    warm = (gdouble) opts.warmup / row->rate;
    all = (gdouble) (opts.warmup + opts.frames) / row->rate;
    return opts.seconds > 0 ? MIN (all, warm + opts.seconds) : all;
  }
  return opts.seconds > 0 ? opts.seconds : -1;
}

/* Prints how many rows there are and about how long they will take. */
void
bench_plan_estimate (GPtrArray * rows)
{
  guint n_run = 0, n_unbounded = 0;
  gdouble push = 0, overhead = 0;

  for (guint i = 0; i < rows->len; i++) {
    Row *row = g_ptr_array_index (rows, i);
    gdouble b;

    if (row->skipped)
      continue;
    n_run++;
    overhead += row_overhead (row);
    b = row_push_bound (row);
    if (b < 0)
      n_unbounded++;
    else
      push += b;
  }
  g_printerr ("rows: %u, %u to run, %u skipped; estimated at most about "
      "%.0f s (%.0f s to start and stop the processes, as measured on a GPU, "
      "and %.0f s of pushing, bounded by --seconds %d and the rates)",
      rows->len, n_run, rows->len - n_run, overhead + push, overhead, push,
      opts.seconds);
  if (n_unbounded)
    g_printerr ("; %u flat-out row(s) bounded only by --timeout", n_unbounded);
  g_printerr ("; each row is cut at --timeout %d s\n", opts.timeout);
}
