/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The orchestrator: one row at a time, a producer and N consumers spawned
 * from this binary, their stdout lines turned into a protocol (listening,
 * ready -> go, the producer's result -> "pushed N" to the consumers, every
 * consumer's result -> quit), a deadline per row, GPU memory sampled while
 * it runs; then the figures (bench-figures.c) and the report. The rows
 * come from bench-plan.c. Everything runs on the main thread, in the
 * default main context.
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
static void row_maybe_quit (Row * row);

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

/* @words, a wrapper's (NULL: none), added to @a. */
static void
add_wrapper (GPtrArray * a, gchar ** words)
{
  for (guint i = 0; words && words[i]; i++)
    g_ptr_array_add (a, g_strdup (words[i]));
}

static gchar **
child_argv (Row * row, const gchar * role, gint index)
{
  GPtrArray *a = g_ptr_array_new ();

  /* a consumer, C or Python, under --consumer-wrapper; the producer
   * under --producer-wrapper */
  add_wrapper (a, index >= 0 ? opts.consumer_wrap : opts.producer_wrap);
  if (index >= 0 && row->python) {
    const gchar *py = g_getenv ("CUDAIPC_BENCH_PYTHON");

    g_ptr_array_add (a, g_strdup (py ? py : "python3"));
    g_ptr_array_add (a, g_strdup (BENCH_PY_CONSUMER));
  } else {
    g_ptr_array_add (a, g_strdup (orch.exe));
  }
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
  ARG ("--rate", "%d", row->rate);
  ARG ("--stamp", "%s", opts.stamp);
  ARG ("--timeout", "%d", opts.timeout);
  ARG ("--plugin", "%s", opts.plugin);
  ARG ("--parent-pid", "%d", (int) getpid ());
  if (index < 0) {
    ARG ("--clients", "%u", row->n_consumers);
    if (row->ipc_mode)
      ARG ("--ipc-mode", "%s", row->ipc_mode);
    if (row->rois > 0)
      ARG ("--roi-count", "%u", row->rois);
    if (row->rois > 0 && opts.detections)
      g_ptr_array_add (a, g_strdup ("--detections"));
  } else {
    ARG ("--index", "%d", index);
    ARG ("--idle-timeout", "%d", opts.idle);
    ARG ("--grace-ms", "%d", opts.grace_ms);
    if (opts.hold > 0)
      ARG ("--hold", "%d", opts.hold);
    if (opts.spin_us > 0)
      ARG ("--spin-us", "%d", opts.spin_us);
    if (opts.announce)
      ARG ("--announce", "%s", opts.announce);
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
    if (child->index < 0) {
      /* the producer has finished pushing: the consumers may stop waiting
       * for frames a sink that drops (nvcodec's) will never send */
      const gchar *pushed = g_hash_table_lookup (child->result, "pushed");
      gchar *cmd = g_strdup_printf ("pushed %s", pushed ? pushed : "0");

      for (guint i = 0; i < row->consumers->len; i++) {
        Child *c = g_ptr_array_index (row->consumers, i);

        if (c->running)
          child_write (c, cmd);
      }
      g_free (cmd);
    } else {
      row_maybe_quit (row);
    }
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

  if (WIFEXITED (status) && WEXITSTATUS (status) == BENCH_EXIT_TEARDOWN &&
      child->result && !child->killed) {
    /* its figures are in; only its pipeline's stop hung */
    bench_row_note (row, "%s's pipeline did not stop within %d s after its "
        "result; it exited by its own time limit", child_name (child, name),
        BENCH_TEARDOWN_S);
  } else if (!WIFEXITED (status) || WEXITSTATUS (status) != 0) {
    gchar *last = child_last_words (child);

    if (child->killed) {
      /* we killed it: the reason is on record already */
    } else if (WIFSIGNALED (status)) {
      bench_row_fail (row, "%s killed by signal %d (%s)%s%s",
          child_name (child, name), WTERMSIG (status),
          g_strsignal (WTERMSIG (status)), last ? ": " : "", last ? last : "");
    } else {
      bench_row_fail (row, "%s exited with %d%s%s", child_name (child, name),
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

/* The producer stays until "quit", so that no consumer loses it before it
 * has reported. "quit" goes once every consumer has reported or gone, not
 * once every consumer has exited: nvcodec's cudaipcsrc (io-mode=copy)
 * waits in its stop for its server to answer the NEED-DATA it sent, and
 * that server answers only with a new frame or, when the producer's sink
 * stops, EOS. Waiting for the consumers to exit first was a circular wait
 * that held every (c) row until its deadline. */
static void
row_maybe_quit (Row * row)
{
  if (row->quit_sent || row->producer == NULL || !row->producer->running ||
      row->consumers->len < row->n_consumers)
    return;
  for (guint i = 0; i < row->consumers->len; i++) {
    Child *c = g_ptr_array_index (row->consumers, i);

    if (c->running && c->result == NULL)
      return;
  }
  row->quit_sent = TRUE;
  if (row->failed && !row->producer->result)
    /* shmsink would wait for a client that will not come */
    child_kill (row->producer);
  else
    child_write (row->producer, "quit");
}

static void
row_child_gone (Row * row, Child * child)
{
  row->n_running--;
  if (child->index >= 0)
    row_maybe_quit (row);
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
          &child->in_fd, &child->out_fd, &child->err_fd, &err)) {
    gchar name[32];

    bench_row_fail (row, "cannot start %s: %s", child_name (child, name),
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
  guint reported = 0;
  const gchar *stage;

  for (guint i = 0; i < row->consumers->len; i++)
    reported += ((Child *) g_ptr_array_index (row->consumers, i))->result !=
        NULL;
  stage = !row->started ? "the producer did not start" :
      !row->go_sent ? "the consumers did not all get ready" :
      !row->producer->result ? "the producer did not finish pushing" :
      reported < row->n_consumers ? "the consumers did not finish" :
      "the processes did not exit after reporting";

  row->deadline_id = 0;
  row->timed_out = TRUE;
  bench_row_fail (row, "timed out after %d s: %s; killed what was left",
      opts.timeout, stage);
  row_kill_all (row);
  return G_SOURCE_REMOVE;
}

static gboolean
on_interrupt (gpointer data)
{
  orch.interrupted = TRUE;
  if (orch.current) {
    bench_row_fail (orch.current, "interrupted");
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

static void
row_run (Row * row)
{
  guint64 free_b, total_b;
  guint sample_id = 0;
  gint64 t_start = bench_now_ns ();

  /* each row its own folder: socket and samples of one row only */
  row->dir = g_strdup_printf ("%s/%s%s%s-%dx%d-%u-r%d-m%u%s", orch.tmpdir,
      bench_transport_name (row->transport), row->ipc_mode ? "-" : "",
      row->ipc_mode ? row->ipc_mode : "", row->width, row->height,
      row->n_consumers, row->rate, row->rois, row->python ? "-py" : "");
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

  /* what they reported outlives them */
  if (row->producer->result)
    row->producer_result = g_hash_table_ref (row->producer->result);
  for (guint i = 0; i < row->consumers->len; i++) {
    Child *c = g_ptr_array_index (row->consumers, i);

    g_ptr_array_add (row->consumer_results, c->result ?
        g_hash_table_ref (c->result) : NULL);
  }
  bench_row_compute (row, orch.dev != NULL);

  child_free (row->producer);
  row->producer = NULL;
  for (guint i = 0; i < row->consumers->len; i++)
    child_free (g_ptr_array_index (row->consumers, i));
  g_ptr_array_set_size (row->consumers, 0);
  g_main_loop_unref (row->loop);
  row->loop = NULL;
}

static void
row_tidy (Row * row)
{
  if (opts.keep || row->dir == NULL)
    return;
  for (guint j = 0; j < row->n_consumers; j++) {
    gchar *p = g_strdup_printf ("%s/samples-%u.bin", row->dir, j);

    g_unlink (p);
    g_free (p);
  }
  g_unlink (row->socket);
  g_rmdir (row->dir);
}

/* The environment of the children: ours as it is for (a) and (b); for (c)
 * without our plugin's folder, with a registry of its own. */
static void
make_environments (void)
{
  gchar **env = g_get_environ ();
  gboolean changed;

  orch.env_ours = g_strdupv (env);
  /* the Python consumers' package and library, from this build */
  orch.env_ours = g_environ_setenv (orch.env_ours, "PYTHONPATH",
      BENCH_PYTHON_DIR, FALSE);
  orch.env_ours = g_environ_setenv (orch.env_ours, "CUDAIPC_LIBRARY",
      BENCH_LIBCUDAIPC, FALSE);
  orch.env_nvcodec = bench_env_without_plugin (env, &changed);
  if (changed) {
    /* its own registry, or every (c) process would rescan a shared one */
    gchar *reg = g_build_filename (orch.tmpdir, "registry-nvcodec.bin", NULL);

    orch.env_nvcodec = g_environ_setenv (orch.env_nvcodec,
        "GST_REGISTRY_1_0", reg, TRUE);
    g_free (reg);
  }
  g_strfreev (env);
}

static int
write_results (GPtrArray * rows)
{
  GError *err = NULL;
  gboolean ok;

  if (opts.output == NULL)
    return 0;
  if (g_str_has_suffix (opts.output, ".tsv"))
    ok = bench_report_tsv (opts.output, rows, &err);
  else
    ok = bench_report_json (opts.output, rows, &err);
  if (!ok) {
    g_printerr ("cannot write %s: %s\n", opts.output, err->message);
    g_clear_error (&err);
    return 1;
  }
  g_printerr ("results: %s\n", opts.output);
  return 0;
}

int
bench_run (void)
{
  GPtrArray *rows = g_ptr_array_new_with_free_func ((GDestroyNotify)
      bench_row_free);
  GError *err = NULL;
  gboolean nvcodec_ok;
  gchar *nvcodec_why = NULL;
  guint n_ok = 0, n_failed = 0, n_skipped = 0;
  gint64 t_run = bench_now_ns ();
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
      ret = 1;
      goto out;
    }
    g_printerr ("memory: cuda (%s)\n", bench_env.memory_reason);
  } else {
    g_printerr ("memory: system (%s): frames in system memory, (a) with "
        "backend=host, (b) without cudadownload/cudaupload\n",
        bench_env.memory_reason);
  }
  g_printerr ("plugin: %s%s%s\n", opts.plugin, opts.label ? ", label: " : "",
      opts.label ? opts.label : "");

  if (!bench_plan_rows (rows, nvcodec_ok, nvcodec_why)) {
    ret = 2;
    goto out;
  }
  bench_plan_estimate (rows);
  if (opts.dry_run) {
    for (guint i = 0; i < rows->len; i++) {
      Row *row = g_ptr_array_index (rows, i);
      gchar *label = bench_row_label (row);

      gchar *pace = row->rate ? g_strdup_printf ("%d frames/s", row->rate) :
          g_strdup ("flat out");

      g_print ("[%u/%u] %s %dx%d, %u consumer(s), %s%s%s\n", i + 1,
          rows->len, label, row->width, row->height, row->n_consumers, pace,
          row->skipped ? ": " : "", row->skipped ? row->skip_reason : "");
      g_free (label);
      g_free (pace);
    }
    goto out;
  }

  orch.tmpdir = g_dir_make_tmp ("cudaipc-bench-XXXXXX", &err);
  if (orch.tmpdir == NULL) {
    g_printerr ("%s\n", err->message);
    g_clear_error (&err);
    ret = 1;
    goto out;
  }
  make_environments ();

  for (guint i = 0; i < rows->len; i++) {
    Row *row = g_ptr_array_index (rows, i);
    gchar *label, *pace;

    if (orch.interrupted && !row->skipped) {
      row->skipped = TRUE;
      row->skip_reason = g_strdup ("not run: interrupted");
    }
    if (row->skipped)
      continue;
    label = bench_row_label (row);
    pace = row->rate ? g_strdup_printf ("%d frames/s", row->rate) :
        g_strdup ("flat out");
    g_printerr ("[%u/%u] %s %dx%d, %u consumer(s), %s ...", i + 1, rows->len,
        label, row->width, row->height, row->n_consumers, pace);
    g_free (label);
    g_free (pace);
    if (opts.verbose)
      g_printerr ("\n");
    row_run (row);
    if (row->failed) {
      g_printerr (" FAILED: %s\n", row->reasons->str);
    } else {
      g_printerr (" %.1f frames/s per consumer, delivered %.3f, p50 %.1f us, "
          "p99 %.1f us (%.1f s)\n", row->fps, row->delivered, row->p50,
          row->p99, row->wall_s);
    }
    row_tidy (row);
  }

  bench_rows_ratios (rows);
  bench_report_table (rows);
  ret = write_results (rows);

  for (guint i = 0; i < rows->len; i++) {
    Row *row = g_ptr_array_index (rows, i);

    if (row->skipped)
      n_skipped++;
    else if (row->failed)
      n_failed++;
    else
      n_ok++;
  }
  /* one line for scripts (tests/gpu/full-check.sh) */
  g_printerr ("cudaipc-bench: rows: %u ok, %u failed, %u skipped, in %.1f s\n",
      n_ok, n_failed, n_skipped, (bench_now_ns () - t_run) / 1e9);
  if (n_failed && ret == 0)
    ret = 3;
  if (orch.interrupted)
    ret = 130;

out:
  g_ptr_array_unref (rows);
  if (orch.tmpdir && !opts.keep) {
    gchar *reg = g_build_filename (orch.tmpdir, "registry-nvcodec.bin", NULL);

    g_unlink (reg);
    g_free (reg);
    g_rmdir (orch.tmpdir);
  } else if (orch.tmpdir) {
    g_printerr ("kept %s\n", orch.tmpdir);
  }
  g_free (nvcodec_why);
  g_clear_pointer (&orch.tmpdir, g_free);
  g_clear_pointer (&orch.exe, g_free);
  g_clear_pointer (&orch.env_ours, g_strfreev);
  g_clear_pointer (&orch.env_nvcodec, g_strfreev);
  g_clear_pointer (&orch.dev, cudaipc_device_unref);
  bench_env_clear ();
  return ret;
}
