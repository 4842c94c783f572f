/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The orchestrator: one row at a time, a producer and N consumers spawned
 * from this binary, their stdout lines turned into a protocol (listening,
 * ready -> go, result, quit), a deadline per row, GPU memory sampled while
 * it runs, and the figures computed from what the children reported.
 * Everything runs on the main thread, in the default main context.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include <glib-unix.h>
#include <glib/gstdio.h>

#include "bench.h"

struct _Child
{
  Row *row;
  gint index;                   /* -1: the producer */
  GPid pid;
  gboolean running, killed;     /* killed: by us, its reason is on record */
  gint status;                  /* wait status, once it exited */
  gint in_fd;                   /* the producer's stdin, else -1 */
  gint out_fd, err_fd;
  guint out_id, err_id, watch_id;
  GString *partial, *errtext;
  GHashTable *result;           /* its "result" line: key -> value */
};

/* The run's state, main thread only. */
static struct
{
  gchar *exe;                   /* this binary: the children's too */
  gchar *tmpdir;
  gchar **env_ours;             /* for (a) and (b) */
  gchar **env_nvcodec;          /* our plugin folder taken out, for (c) */
  CudaIpcDevice *dev;           /* device 0 in cuda mode, for mem info */
  Row *current;                 /* the row running */
  gboolean interrupted;         /* SIGINT or SIGTERM */
} orch;

static void row_child_gone (Row * row, Child * child);

/* *INDENT-OFF* */
static void row_add_reason (Row * row, const gchar * format, ...)
    G_GNUC_PRINTF (2, 3);
/* *INDENT-ON* */

/* Marks @row failed and adds a reason. */
static void
row_add_reason (Row * row, const gchar * format, ...)
{
  va_list args;

  row->failed = TRUE;
  if (row->reasons->len)
    g_string_append (row->reasons, "; ");
  va_start (args, format);
  g_string_append_vprintf (row->reasons, format, args);
  va_end (args);
}

static const gchar *
child_name (Child * child, gchar buf[32])
{
  if (child->index < 0)
    return "producer";
  g_snprintf (buf, 32, "consumer %d", child->index);
  return buf;
}

static void
child_kill (Child * child)
{
  if (child->running && !child->killed) {
    child->killed = TRUE;
    kill (child->pid, SIGKILL);
  }
}

static void
row_kill_all (Row * row)
{
  if (row->producer)
    child_kill (row->producer);
  for (guint i = 0; i < row->consumers->len; i++)
    child_kill (g_ptr_array_index (row->consumers, i));
}

static void
child_write (Child * child, const gchar * line)
{
  gchar *text = g_strconcat (line, "\n", NULL);

  /* a producer that is gone gets EPIPE (SIGPIPE is ignored) */
  if (child->in_fd >= 0 && write (child->in_fd, text, strlen (text)) < 0)
    g_debug ("write to pid %d: %s", child->pid, g_strerror (errno));
  g_free (text);
}

static GHashTable *
parse_result (const gchar * line)
{
  GHashTable *h = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
      g_free);
  gchar **kv = g_strsplit (line, " ", -1);

  for (guint i = 1; kv[i]; i++) {
    gchar *eq = strchr (kv[i], '=');

    if (eq)
      g_hash_table_replace (h, g_strndup (kv[i], eq - kv[i]),
          g_strdup (eq + 1));
  }
  g_strfreev (kv);
  return h;
}

static void
result_free (gpointer h)
{
  if (h)
    g_hash_table_unref (h);
}

static gchar **
child_argv (Row * row, const gchar * role, gint index)
{
  GPtrArray *a = g_ptr_array_new ();

  if (index >= 0 && opts.wrapper) {
    gchar **wrap = NULL;

    if (g_shell_parse_argv (opts.wrapper, NULL, &wrap, NULL)) {
      for (guint i = 0; wrap[i]; i++)
        g_ptr_array_add (a, g_strdup (wrap[i]));
      g_strfreev (wrap);
    }
  }
  g_ptr_array_add (a, g_strdup (orch.exe));
  g_ptr_array_add (a, g_strdup (role));
#define ARG(k, ...) G_STMT_START { \
    g_ptr_array_add (a, g_strdup (k)); \
    g_ptr_array_add (a, g_strdup_printf (__VA_ARGS__)); \
  } G_STMT_END
  ARG ("--transport", "%s", bench_transport_name (row->transport));
  ARG ("--socket", "%s", row->socket);
  ARG ("--width", "%d", row->width);
  ARG ("--height", "%d", row->height);
  ARG ("--memory", "%s", opts.memory);
  ARG ("--frames", "%d", opts.frames);
  ARG ("--warmup", "%d", opts.warmup);
  ARG ("--seconds", "%d", opts.seconds);
  ARG ("--ring-size", "%d", opts.ring_size);
  ARG ("--shm-frames", "%d", opts.shm_frames);
  ARG ("--consumer-device", "%d", opts.consumer_device);
  ARG ("--rate", "%d", opts.rate);
  ARG ("--stamp", "%s", opts.stamp);
  ARG ("--timeout", "%d", opts.timeout);
  ARG ("--plugin", "%s", opts.plugin);
  ARG ("--parent-pid", "%d", (int) getpid ());
  if (index < 0) {
    ARG ("--clients", "%u", row->n_consumers);
  } else {
    ARG ("--index", "%d", index);
    ARG ("--idle-timeout", "%d", opts.idle);
    ARG ("--samples", "%s/samples-%d.bin", row->dir, index);
  }
#undef ARG
  g_ptr_array_add (a, NULL);
  return (gchar **) g_ptr_array_free (a, FALSE);
}

static void
child_handle_line (Child * child, const gchar * line)
{
  Row *row = child->row;
  gchar name[32];

  if (opts.verbose)
    g_printerr ("  [%s] %s\n", child_name (child, name), line);

  if (g_str_has_prefix (line, "result ")) {
    if (child->result)
      g_hash_table_unref (child->result);
    child->result = parse_result (line);
  } else if (child->index < 0 && g_str_equal (line, "listening")) {
    row->started = bench_now_ns ();
    /* row_run() spawns the consumers */
    g_main_loop_quit (row->loop);
  } else if (child->index >= 0 && g_str_equal (line, "ready")) {
    row->n_ready++;
    if (row->n_ready == row->n_consumers && !row->go_sent &&
        row->producer->running) {
      row->go_sent = TRUE;
      row->go_time = bench_now_ns ();
      child_write (row->producer, "go");
    }
  }
}

/* Reads what is there; FALSE at end of file. */
static gboolean
child_read (Child * child, gint fd, gboolean is_err)
{
  gchar buf[4096];

  for (;;) {
    ssize_t n = read (fd, buf, sizeof (buf));

    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return errno == EAGAIN;
    if (n == 0)
      return FALSE;
    if (is_err) {
      g_string_append_len (child->errtext, buf, n);
      if (opts.verbose) {
        gchar name[32];
        gchar *text = g_strndup (buf, n);

        g_printerr ("  [%s stderr] %s", child_name (child, name), text);
        g_free (text);
      }
      /* keep the end, where the reason is */
      if (child->errtext->len > 8192)
        g_string_erase (child->errtext, 0, child->errtext->len - 4096);
    } else {
      gchar *nl;

      g_string_append_len (child->partial, buf, n);
      while ((nl = strchr (child->partial->str, '\n')) != NULL) {
        gchar *l = g_strndup (child->partial->str, nl - child->partial->str);

        g_string_erase (child->partial, 0, nl - child->partial->str + 1);
        child_handle_line (child, l);
        g_free (l);
      }
    }
  }
}

static gboolean
on_child_out (gint fd, GIOCondition cond, gpointer data)
{
  Child *child = data;

  if (child_read (child, fd, FALSE))
    return G_SOURCE_CONTINUE;
  child->out_id = 0;
  return G_SOURCE_REMOVE;
}

static gboolean
on_child_err (gint fd, GIOCondition cond, gpointer data)
{
  Child *child = data;

  if (child_read (child, fd, TRUE))
    return G_SOURCE_CONTINUE;
  child->err_id = 0;
  return G_SOURCE_REMOVE;
}

/* The last non-empty line of what @child said on stderr. */
static gchar *
child_last_words (Child * child)
{
  gchar **lines = g_strsplit (child->errtext->str, "\n", -1);
  gchar *last = NULL;

  for (guint i = 0; lines[i]; i++) {
    gchar *l = g_strstrip (lines[i]);

    if (*l && !g_str_has_prefix (l, "producer: sink is") &&
        !strstr (l, ": src is ")) {
      g_free (last);
      last = g_strdup (l);
    }
  }
  g_strfreev (lines);
  return last;
}

static void
on_child_exit (GPid pid, gint status, gpointer data)
{
  Child *child = data;
  Row *row = child->row;
  gchar name[32];

  child->running = FALSE;
  child->status = status;
  child->watch_id = 0;
  g_spawn_close_pid (pid);

  /* what it wrote before it went */
  if (child->out_id) {
    g_source_remove (child->out_id);
    child->out_id = 0;
  }
  if (child->err_id) {
    g_source_remove (child->err_id);
    child->err_id = 0;
  }
  child_read (child, child->out_fd, FALSE);
  child_read (child, child->err_fd, TRUE);

  if (!WIFEXITED (status) || WEXITSTATUS (status) != 0) {
    gchar *last = child_last_words (child);

    if (child->killed) {
      /* we killed it: the reason is on record already */
    } else if (WIFSIGNALED (status)) {
      row_add_reason (row, "%s killed by signal %d (%s)%s%s",
          child_name (child, name), WTERMSIG (status),
          g_strsignal (WTERMSIG (status)), last ? ": " : "", last ? last : "");
    } else {
      row_add_reason (row, "%s exited with %d%s%s", child_name (child, name),
          WEXITSTATUS (status), last ? ": " : "", last ? last : "");
    }
    g_free (last);

    if (child->index < 0) {
      /* without their producer the consumers cannot finish */
      row_kill_all (row);
    } else if (!row->go_sent) {
      /* the others would wait for it for ever */
      row_kill_all (row);
    }
  }
  row_child_gone (row, child);
}

static void
row_child_gone (Row * row, Child * child)
{
  gboolean consumers_left = FALSE;

  row->n_running--;
  for (guint i = 0; i < row->consumers->len; i++) {
    Child *c = g_ptr_array_index (row->consumers, i);

    consumers_left |= c->running;
  }
  if (!consumers_left && row->producer->running && row->consumers->len ==
      row->n_consumers && !row->quit_sent) {
    row->quit_sent = TRUE;
    if (row->failed && !row->producer->result)
      /* shmsink would wait for a client that will not come */
      child_kill (row->producer);
    else
      child_write (row->producer, "quit");
  }
  if (row->n_running == 0)
    g_main_loop_quit (row->loop);
}

static Child *
spawn_child (Row * row, gint index)
{
  Child *child = g_new0 (Child, 1);
  gchar **argv = child_argv (row, index < 0 ? "producer" : "consumer", index);
  GError *err = NULL;
  gchar **env = row->transport == TRANSPORT_NVCODEC ? orch.env_nvcodec :
      orch.env_ours;

  child->row = row;
  child->index = index;
  child->in_fd = child->out_fd = child->err_fd = -1;
  child->partial = g_string_new (NULL);
  child->errtext = g_string_new (NULL);

  if (!g_spawn_async_with_pipes (NULL, argv, env, G_SPAWN_DO_NOT_REAP_CHILD |
          G_SPAWN_SEARCH_PATH, NULL, NULL, &child->pid,
          index < 0 ? &child->in_fd : NULL, &child->out_fd, &child->err_fd,
          &err)) {
    gchar name[32];

    row_add_reason (row, "cannot start %s: %s", child_name (child, name),
        err->message);
    g_clear_error (&err);
    g_strfreev (argv);
    return child;
  }
  g_strfreev (argv);

  child->running = TRUE;
  row->n_running++;
  g_unix_set_fd_nonblocking (child->out_fd, TRUE, NULL);
  g_unix_set_fd_nonblocking (child->err_fd, TRUE, NULL);
  child->out_id = g_unix_fd_add (child->out_fd, G_IO_IN | G_IO_HUP |
      G_IO_ERR, on_child_out, child);
  child->err_id = g_unix_fd_add (child->err_fd, G_IO_IN | G_IO_HUP |
      G_IO_ERR, on_child_err, child);
  child->watch_id = g_child_watch_add (child->pid, on_child_exit, child);
  return child;
}

static void
child_free (Child * child)
{
  if (child == NULL)
    return;
  if (child->out_id)
    g_source_remove (child->out_id);
  if (child->err_id)
    g_source_remove (child->err_id);
  if (child->in_fd >= 0)
    close (child->in_fd);
  if (child->out_fd >= 0)
    close (child->out_fd);
  if (child->err_fd >= 0)
    close (child->err_fd);
  g_string_free (child->partial, TRUE);
  g_string_free (child->errtext, TRUE);
  if (child->result)
    g_hash_table_unref (child->result);
  g_free (child);
}

static gboolean
on_deadline (gpointer data)
{
  Row *row = data;
  const gchar *stage = !row->started ? "the producer did not start" :
      !row->go_sent ? "the consumers did not all get ready" :
      !row->producer->result ? "the producer did not finish pushing" :
      "the consumers did not finish";

  row->deadline_id = 0;
  row->timed_out = TRUE;
  row_add_reason (row, "timed out after %d s: %s; killed what was left",
      opts.timeout, stage);
  row_kill_all (row);
  return G_SOURCE_REMOVE;
}

static gboolean
on_interrupt (gpointer data)
{
  orch.interrupted = TRUE;
  if (orch.current) {
    row_add_reason (orch.current, "interrupted");
    row_kill_all (orch.current);
  }
  return G_SOURCE_CONTINUE;
}

static gboolean
on_sample_memory (gpointer data)
{
  Row *row = data;
  guint64 free_b, total_b;

  if (cudaipc_device_mem_info (orch.dev, &free_b, &total_b, NULL))
    row->mem_max = MAX (row->mem_max, total_b - free_b);
  return G_SOURCE_CONTINUE;
}

static gboolean
on_kill_consumer (gpointer data)
{
  Row *row = data;
  Child *c = row->consumers->len ? g_ptr_array_index (row->consumers, 0) : NULL;

  row->kill_id = 0;
  if (c && c->running) {
    g_printerr ("  (testing: killing consumer 0, pid %d)\n", c->pid);
    kill (c->pid, SIGKILL);
  }
  return G_SOURCE_REMOVE;
}

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

/* Everything the children reported, into the row's figures. */
static void
row_compute (Row * row)
{
  GArray *all = g_array_new (FALSE, FALSE, sizeof (gint64));
  GHashTable *p = row->producer ? row->producer->result : NULL;
  gdouble fps_sum = 0, cpu_sum = 0, cpu_total_sum = 0;
  guint n_fps = 0, n_cpu = 0;
  gboolean ok = TRUE;

  if (p) {
    gdouble measured = result_num (p, "measured", &ok);
    gdouble push_ns = result_num (p, "push_ns", &ok);

    row->producer_result = g_hash_table_ref (p);
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
  } else if (!row->failed) {
    row_add_reason (row, "the producer reported nothing");
  }

  row->fps_min = INFINITY;
  for (guint i = 0; i < row->consumers->len; i++) {
    Child *c = g_ptr_array_index (row->consumers, i);
    GHashTable *h = c->result;
    gchar *path = g_strdup_printf ("%s/samples-%d.bin", row->dir, i);
    gchar *data = NULL;
    gsize len = 0;
    gdouble measured, span;

    g_ptr_array_add (row->consumer_results, h ? g_hash_table_ref (h) : NULL);
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
    span = result_num (h, "last_arrival", &ok) -
        result_num (h, "first_stamp", &ok);
    if (ok && measured > 1 && span > 0) {
      gdouble fps = measured / (span / 1e9);

      fps_sum += fps;
      n_fps++;
      row->fps_min = MIN (row->fps_min, fps);
      cpu_sum += result_num (h, "cpu_ns", NULL) / measured / 1e3;
      cpu_total_sum += result_num (h, "cpu_total_ns", NULL) /
          MAX (result_num (h, "received", NULL), 1) / 1e3;
      n_cpu++;
    }
    if (p && row->pushed > (guint64) opts.warmup && ok &&
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

  if (orch.dev && row->mem_max >= row->mem_base && row->mem_base > 0) {
    row->gpu_mib = (row->mem_max - row->mem_base) / (1024.0 * 1024.0);
    row->have_gpu = TRUE;
  }
  if (row->transport == TRANSPORT_CUDAIPC && p && row->dropped > 0)
    row_add_reason (row, "the sink dropped %" G_GUINT64_FORMAT " frames",
        row->dropped);
  if (!row->failed && row->missing > 0)
    row_add_reason (row, "%" G_GUINT64_FORMAT " measured frames did not "
        "reach a consumer", row->missing);
}

static void
row_run (Row * row)
{
  guint64 free_b, total_b;
  guint sample_id = 0;
  gint64 t_start = bench_now_ns ();

  row->dir = g_strdup_printf ("%s/%s-%dx%d-%u", orch.tmpdir,
      bench_transport_name (row->transport), row->width, row->height,
      row->n_consumers);
  g_mkdir_with_parents (row->dir, 0700);
  row->socket = g_strdup_printf ("%s/sock", row->dir);
  row->loop = g_main_loop_new (NULL, FALSE);

  if (orch.dev && cudaipc_device_mem_info (orch.dev, &free_b, &total_b, NULL)) {
    row->mem_base = row->mem_max = total_b - free_b;
    sample_id = g_timeout_add (20, on_sample_memory, row);
  }
  row->deadline_id = g_timeout_add_seconds (opts.timeout, on_deadline, row);

  orch.current = row;
  row->producer = spawn_child (row, -1);
  if (row->producer->running) {
    /* until "listening" (or the producer's end) */
    g_main_loop_run (row->loop);
    if (row->started && row->producer->running && !row->timed_out &&
        !orch.interrupted) {
      for (guint i = 0; i < row->n_consumers; i++) {
        Child *c = spawn_child (row, (gint) i);

        g_ptr_array_add (row->consumers, c);
        if (!c->running) {
          row_kill_all (row);
          break;
        }
      }
      if (opts.kill_after > 0)
        row->kill_id = g_timeout_add (opts.kill_after, on_kill_consumer, row);
    }
    while (row->n_running > 0)
      g_main_loop_run (row->loop);
  }

  if (row->deadline_id)
    g_source_remove (row->deadline_id);
  if (row->kill_id)
    g_source_remove (row->kill_id);
  row->deadline_id = row->kill_id = 0;
  if (sample_id) {
    on_sample_memory (row);
    g_source_remove (sample_id);
  }
  row->wall_s = (bench_now_ns () - t_start) / 1e9;
  orch.current = NULL;

  row_compute (row);

  child_free (row->producer);
  row->producer = NULL;
  g_ptr_array_set_size (row->consumers, 0);
  g_main_loop_unref (row->loop);
  row->loop = NULL;
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

int
bench_run (void)
{
  gchar **transports, **resolutions, **counts;
  GPtrArray *rows = g_ptr_array_new ();
  GError *err = NULL;
  gboolean nvcodec_ok, changed, any_failed = FALSE;
  gchar *nvcodec_why = NULL;
  gchar **env;
  int ret = 0;

  signal (SIGPIPE, SIG_IGN);
  /* children die with us (PR_SET_PDEATHSIG); on these, tidy up first */
  g_unix_signal_add (SIGINT, on_interrupt, NULL);
  g_unix_signal_add (SIGTERM, on_interrupt, NULL);
  orch.exe = g_file_read_link ("/proc/self/exe", NULL);
  if (opts.plugin == NULL)
    opts.plugin = bench_default_plugin_path (orch.exe);

  orch.dev = bench_env_detect (&nvcodec_ok, &nvcodec_why);
  g_printerr ("cudaipc-bench: GStreamer %s, GPU %s, CPU %s (%u cores)\n",
      bench_env.gst_version, bench_env.gpu_name, bench_env.cpu_model,
      bench_env.cores);
  if (bench_use_cuda ()) {
    if (orch.dev == NULL) {
      g_printerr ("--memory=cuda, but no CUDA device opens\n");
      return 1;
    }
    g_printerr ("memory: cuda (%s)\n", bench_env.memory_reason);
  } else {
    g_printerr ("memory: system (%s): frames in system memory, (a) with "
        "backend=host, (b) without cudadownload/cudaupload\n",
        bench_env.memory_reason);
  }
  g_printerr ("plugin: %s%s%s\n", opts.plugin, opts.label ? ", label: " : "",
      opts.label ? opts.label : "");

  orch.tmpdir = g_dir_make_tmp ("cudaipc-bench-XXXXXX", &err);
  if (orch.tmpdir == NULL) {
    g_printerr ("%s\n", err->message);
    g_clear_error (&err);
    return 1;
  }
  env = g_get_environ ();
  orch.env_ours = g_strdupv (env);
  orch.env_nvcodec = bench_env_without_plugin (env, &changed);
  if (changed) {
    /* its own registry, or every (c) process would rescan a shared one */
    gchar *reg = g_build_filename (orch.tmpdir, "registry-nvcodec.bin", NULL);

    orch.env_nvcodec = g_environ_setenv (orch.env_nvcodec,
        "GST_REGISTRY_1_0", reg, TRUE);
    g_free (reg);
  }
  g_strfreev (env);

  transports = g_strsplit (opts.transports ? opts.transports :
      "cudaipc,shm,nvcodec", ",", -1);
  resolutions = g_strsplit (opts.resolutions ? opts.resolutions : "1080p,4k",
      ",", -1);
  counts = g_strsplit (opts.consumers ? opts.consumers : "1,4", ",", -1);

  for (guint ti = 0; transports[ti]; ti++) {
    Transport t;

    if (!bench_transport_from_name (g_strstrip (transports[ti]), &t)) {
      g_printerr ("unknown transport '%s' (cudaipc, shm, nvcodec)\n",
          transports[ti]);
      ret = 2;
      goto out;
    }
    if (t == TRANSPORT_NVCODEC && !nvcodec_ok)
      g_print ("%s\n", nvcodec_why);
    for (guint ri = 0; resolutions[ri]; ri++) {
      gint w, h;

      if (!parse_resolution (g_strstrip (resolutions[ri]), &w, &h)) {
        g_printerr ("bad resolution '%s' (1080p, 4k or WxH, even)\n",
            resolutions[ri]);
        ret = 2;
        goto out;
      }
      for (guint ci = 0; counts[ci]; ci++) {
        Row *row = g_new0 (Row, 1);
        gint64 n = g_ascii_strtoll (counts[ci], NULL, 10);

        if (n < 1 || n > 64) {
          g_printerr ("bad consumer count '%s' (1..64)\n", counts[ci]);
          g_free (row);
          ret = 2;
          goto out;
        }
        row->transport = t;
        row->width = w;
        row->height = h;
        row->n_consumers = (guint) n;
        row->reasons = g_string_new (NULL);
        row->consumers = g_ptr_array_new_with_free_func ((GDestroyNotify)
            child_free);
        row->consumer_results = g_ptr_array_new_with_free_func (result_free);
        if (t == TRANSPORT_NVCODEC && !nvcodec_ok) {
          row->skipped = TRUE;
          row->skip_reason = g_strdup (nvcodec_why);
        }
        g_ptr_array_add (rows, row);
      }
    }
  }

  for (guint i = 0; i < rows->len; i++) {
    Row *row = g_ptr_array_index (rows, i);

    if (orch.interrupted && !row->skipped) {
      row->skipped = TRUE;
      row->skip_reason = g_strdup ("not run: interrupted");
    }
    if (row->skipped)
      continue;
    g_printerr ("[%u/%u] %s %dx%d, %u consumer(s) ...", i + 1, rows->len,
        bench_transport_name (row->transport), row->width, row->height,
        row->n_consumers);
    if (opts.verbose)
      g_printerr ("\n");
    row_run (row);
    if (row->failed) {
      any_failed = TRUE;
      g_printerr (" FAILED: %s\n", row->reasons->str);
    } else {
      g_printerr (" %.1f frames/s per consumer, p50 %.1f us, p99 %.1f us "
          "(%.1f s)\n", row->fps, row->p50, row->p99, row->wall_s);
    }
  }

  bench_report_table (rows);

  if (opts.output) {
    gboolean ok;

    if (g_str_has_suffix (opts.output, ".tsv"))
      ok = bench_report_tsv (opts.output, rows, &err);
    else
      ok = bench_report_json (opts.output, rows, &err);
    if (!ok) {
      g_printerr ("cannot write %s: %s\n", opts.output, err->message);
      g_clear_error (&err);
      ret = 1;
    } else {
      g_printerr ("results: %s\n", opts.output);
    }
  }
  if (any_failed && ret == 0)
    ret = 3;
  if (orch.interrupted)
    ret = 130;

out:
  for (guint i = 0; i < rows->len; i++) {
    Row *row = g_ptr_array_index (rows, i);

    if (!opts.keep && row->dir) {
      for (guint j = 0; j < row->n_consumers; j++) {
        gchar *p = g_strdup_printf ("%s/samples-%u.bin", row->dir, j);

        g_unlink (p);
        g_free (p);
      }
      g_unlink (row->socket);
      g_rmdir (row->dir);
    }
    g_ptr_array_unref (row->consumers);
    g_ptr_array_unref (row->consumer_results);
    if (row->producer_result)
      g_hash_table_unref (row->producer_result);
    g_string_free (row->reasons, TRUE);
    g_free (row->skip_reason);
    g_free (row->dir);
    g_free (row->socket);
    g_free (row);
  }
  g_ptr_array_unref (rows);
  if (!opts.keep) {
    gchar *reg = g_build_filename (orch.tmpdir, "registry-nvcodec.bin", NULL);

    g_unlink (reg);
    g_free (reg);
    g_rmdir (orch.tmpdir);
  } else {
    g_printerr ("kept %s\n", orch.tmpdir);
  }
  g_strfreev (transports);
  g_strfreev (resolutions);
  g_strfreev (counts);
  g_free (nvcodec_why);
  g_clear_pointer (&orch.tmpdir, g_free);
  g_clear_pointer (&orch.exe, g_free);
  g_clear_pointer (&orch.env_ours, g_strfreev);
  g_clear_pointer (&orch.env_nvcodec, g_strfreev);
  g_clear_pointer (&orch.dev, cudaipc_device_unref);
  bench_env_clear ();
  return ret;
}
