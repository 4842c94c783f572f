/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cudaipc-bench: hands video frames from one process to others through
 * several transports, side by side in one run, and prints what each costs
 * (docs/benchmarks.md says what is measured and how to read it).
 *
 *   cudaipc-bench run [--transports floor,cudaipc,shm,nvcodec]
 *       [--nvcodec-ipc-modes legacy,mmap] [--resolutions 1080p,4k]
 *       [--consumers 1,4] [--rates 0,1000] [--frames N] [--warmup W]
 *       [--seconds S] [--ring-size R] [--memory auto|cuda|system]
 *       [--stamp sink|push] [--timeout S] [--output results.json|.tsv]
 *       [--plugin PATH] [--verbose] [--dry-run]
 *     The orchestrator. For every rate x transport (x nvcodec ipc-mode)
 *     x resolution x consumer count it spawns one producer and N
 *     consumers: this binary again, by its own path (g_spawn, never fork()
 *     once CUDA is initialised). It prints the number of rows and an
 *     estimate of the time first, then a Markdown table on stdout, and
 *     writes every number, with the environment, to --output. Every row
 *     has a deadline: children that overrun are killed and the row is
 *     reported as failed; a child that dies fails its row, and the run
 *     goes on with the next.

 *   cudaipc-bench producer|consumer [options]
 *     The two roles the orchestrator spawns; not meant to be run by hand.
 *
 * Transports
 *   floor (0):   no GStreamer: ring-size slots of the library's memory sent
 *                once, then per frame one copy into a slot (cuda: a
 *                device-to-device copy and a host synchronisation) and a
 *                32-byte message on SOCK_SEQPACKET, released the same way
 *                (bench-floor.c); every other row is also given as a ratio
 *                to it
 *   floor-ring (0r): the floor's second row, the same slots and copy with
 *                frames announced through a page of shared memory and a
 *                futex (bench-floor-ring.c); --spin-us makes its consumers
 *                read busily before they sleep
 *   cudaipc (a): appsrc ! cuipcsink backend=cuda sync=false ring-size=R
 *                on-full=wait  /  cuipcsrc timestamp-mode=passthrough !
 *                fakesink sync=false (this project's plugin, GstCuIpcSink)
 *   shm (b):     appsrc ! cudadownload ! video/x-raw ! shmsink
 *                shm-size=<R frames> wait-for-connection=true sync=false  /
 *                shmsrc is-live=true ! <caps> ! cudaupload !
 *                video/x-raw(memory:CUDAMemory) ! fakesink sync=false
 *   nvcodec (c): GStreamer's own cudaipcsink ipc-mode=legacy|mmap
 *                address=... sync=false  /  cudaipcsrc address=... !
 *                fakesink sync=false (nvcodec, >= 1.24, GstCudaIpcSink), a
 *                row per ipc-mode; skipped on older GStreamer. Its sink keeps
 *                only the latest frame and never waits for a consumer, so
 *                a consumer gets a fraction of the frames: "delivered".
 *   Both plugins register the feature names cudaipcsink and cudaipcsrc and
 *   a registry keeps one factory per name, so the IPC elements are made by
 *   GType: ours after loading our plugin from --plugin, nvcodec's after
 *   loading nvcodec; (c) runs with our folder taken out of the plugin path.
 *
 * Frames
 *   The producer makes ONE NV12 frame (videotestsrc ! cudaupload !
 *   appsink: CUDA memory) and pushes gst_buffer_copy()s of it (the same
 *   memory) as fast as it can, so no upload hides the hand-over. With
 *   --memory=system (chosen by itself where there is no cudaupload or no
 *   usable CUDA device) the frame is in system memory, (a) uses
 *   backend=host and (b) goes without cudadownload/cudaupload: the whole
 *   program runs on a machine without a GPU.
 *
 * Measurements
 *   Latency: from the moment the producer's sink receives a frame to the
 *   moment the consumer's source pushes it, both on CLOCK_MONOTONIC (the
 *   clock of g_get_monotonic_time, read at ns resolution). The producer
 *   sets each PTS to that clock just before gst_app_src_push_buffer; with
 *   --stamp=sink (the default) a probe on the sink's pad restamps it as
 *   the sink receives it, so the appsrc queue is not counted. (a) carries
 *   the PTS (passthrough); (b) carries no timestamps, so the sink-pad probe
 *   writes stamp, frame index and flags into the first 24 bytes of the
 *   frame; (c) sends running time + base time + the sink's latency (0
 *   here) and its source pushes that minus its own base time, so the
 *   consumer adds its base time back (the producer runs with base time 0);
 *   the frame index and last flag travel in a custom meta. Frames before
 *   --warmup are left out of latency and frames/s. Frames/s per consumer:
 *   measured frames received over the time from the first measured
 *   frame's stamp to the last one's arrival. Delivered: measured frames a
 *   consumer received over measured frames pushed (1.0 where the sink
 *   waits for its consumers: (a), (b)). CPU per frame: getrusage
 *   (RUSAGE_SELF, user + system) of each process from its first measured
 *   frame to its last, over the measured frames (the whole process's
 *   total goes to the results file too). GPU memory: device 0's used
 *   memory (cudaipc_device_mem_info) sampled before the producer starts
 *   and every 20 ms while the row runs; the largest difference.

 * Between the processes (lines on stdout, and on each child's stdin):
 *   producer: "listening" once its sink listens; reads "go" (all consumers
 *   ready), pushes, prints "result k=v ...", and stays until "quit", so
 *   consumers never lose their producer before they report.
 *   consumer: "ready" once PLAYING; reads "pushed N" (the orchestrator
 *   passes it on from the producer's result); "result k=v ..." at the end:
 *   the last frame, EOS, or, once the producer has finished pushing, no
 *   frame for --grace-ms (what nvcodec's consumers end on without the last
 *   frame); its latency samples (gint64 ns) go to the --samples file.
 *   "quit" goes to the producer once every consumer has reported (or
 *   gone), not once they have exited: nvcodec's consumer cannot stop
 *   while its server still runs (bench-run.c, row_maybe_quit).

 * This file holds the options, main() and small helpers; bench.h says
 * which file does the rest.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <math.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>

#include "bench.h"

BenchOptions opts = {
  .frames = 3000,
  .warmup = 100,
  .seconds = 30,
  .ring_size = 4,
  .timeout = 120,
  .idle = 5,
  .grace_ms = 1000,
  .width = 1920,
  .height = 1080,
  .clients = 1,
};

static GOptionEntry entries[] = {
  {"transports", 0, 0, G_OPTION_ARG_STRING, &opts.transports,
      "run: transports to compare (default floor,cudaipc,shm,nvcodec)", "LIST"},
  {"python-consumer", 0, 0, G_OPTION_ARG_NONE, &opts.python_consumer,
      "run: each (a) row again with its consumers in Python (the cudaipc "
        "package, torch.from_dlpack per frame)", NULL},
  {"rois", 0, 0, G_OPTION_ARG_STRING, &opts.rois_list,
      "run: regions of interest on each frame of (a), a row each (default "
        "0)", "LIST"},
  {"detections", 0, 0, G_OPTION_ARG_NONE, &opts.detections,
        "run, producer: the regions of --rois as object detections (box, "
        "type, confidence) in one GstAnalyticsRelationMeta instead of "
        "GstVideoRegionOfInterestMetas (GStreamer >= 1.24)", NULL},
  {"in-place", 0, 0, G_OPTION_ARG_NONE, &opts.in_place,
      "run: each (a) row twice, its producer writing every frame into a "
        "new buffer: \"copy\" (in-place=false: the sink copies it into a "
        "slot) and \"in-place\" (the buffer is a slot from the sink's "
        "pool; on the GPU, GStreamer >= 1.24)", NULL},
  {"orderings", 0, 0, G_OPTION_ARG_STRING, &opts.orderings,
      "run: cuipcsink ordering values for (a), a row each (auto, fence, "
        "events, host; default: the sink's default, one row)", "LIST"},
  {"nvcodec-ipc-modes", 0, 0, G_OPTION_ARG_STRING, &opts.ipc_modes,
      "run: nvcodec cudaipcsink ipc-mode values, a row each "
        "(default legacy,mmap)", "LIST"},
  {"resolutions", 0, 0, G_OPTION_ARG_STRING, &opts.resolutions,
      "run: 1080p, 4k or WxH (default 1080p,4k)", "LIST"},
  {"consumers", 0, 0, G_OPTION_ARG_STRING, &opts.consumers,
      "run: consumer counts (default 1,4)", "LIST"},
  {"frames", 0, 0, G_OPTION_ARG_INT, &opts.frames,
      "measured frames per row (default 3000)", "N"},
  {"warmup", 0, 0, G_OPTION_ARG_INT, &opts.warmup,
      "frames before them, left out of the figures (default 100)", "W"},
  {"seconds", 0, 0, G_OPTION_ARG_INT, &opts.seconds,
      "stop pushing after S seconds, 0: never (default 30)", "S"},
  {"ring-size", 0, 0, G_OPTION_ARG_INT, &opts.ring_size,
      "ring slots (a), frames the shm area holds (b) (default 4)", "R"},
  {"shm-frames", 0, 0, G_OPTION_ARG_INT, &opts.shm_frames,
        "frames the shm area of (b) holds, 0: --ring-size (default 0)",
      "N"},
  {"rate", 0, 0, G_OPTION_ARG_INT, &opts.rate,
        "frames/s the producer pushes at, 0: as fast as the path takes them "
        "(default 0)", "R"},
  {"rates", 0, 0, G_OPTION_ARG_STRING, &opts.rates,
        "run: rows for each of these rates, 0: flat out (default: --rate)",
      "LIST"},
  {"consumer-device", 0, 0, G_OPTION_ARG_INT, &opts.consumer_device,
        "GPU of (a)'s consumers, cuipcsrc device-id (default 0); another "
        "than the ring's reads it through peer access", "N"},
  {"memory", 0, 0, G_OPTION_ARG_STRING, &opts.memory,
      "where frames live: auto, cuda or system (default auto)", "M"},
  {"stamp", 0, 0, G_OPTION_ARG_STRING, &opts.stamp,
      "latency starts when the sink receives the frame (sink, default) or "
        "before gst_app_src_push_buffer (push)", "WHERE"},
  {"timeout", 0, 0, G_OPTION_ARG_INT, &opts.timeout,
      "seconds a row (and every process) may take (default 120)", "S"},
  {"output", 'o', 0, G_OPTION_ARG_FILENAME, &opts.output,
      "run: results file, .json or .tsv", "FILE"},
  {"label", 0, 0, G_OPTION_ARG_STRING, &opts.label,
        "run: what is measured, for the results file (e.g. the git revision)",
      "TEXT"},
  {"plugin", 0, 0, G_OPTION_ARG_FILENAME, &opts.plugin,
      "this project's plugin (default: the one built beside)", "PATH"},
  {"verbose", 'v', 0, G_OPTION_ARG_NONE, &opts.verbose,
      "run: show what the children say", NULL},
  {"dry-run", 0, 0, G_OPTION_ARG_NONE, &opts.dry_run,
      "run: list the rows and the estimate, run none", NULL},
  {"keep-temp", 0, 0, G_OPTION_ARG_NONE, &opts.keep,
      "run: keep the temporary folder (sockets, samples)", NULL},
  {"kill-consumer-after", 0, 0, G_OPTION_ARG_INT, &opts.kill_after,
        "run, testing: SIGKILL consumer 0 of every row MS after it started",
      "MS"},
  {"consumer-wrapper", 0, 0, G_OPTION_ARG_STRING, &opts.wrapper,
        "run: command line to run consumers under, Python's too (valgrind, "
        "taskset ...)", "CMD"},
  {"producer-wrapper", 0, 0, G_OPTION_ARG_STRING, &opts.producer_wrapper,
        "run: command line to run the producer under (taskset ...)", "CMD"},
  {"transport", 0, 0, G_OPTION_ARG_STRING, &opts.transport,
      "role: floor, floor-ring, cudaipc, shm or nvcodec", "T"},
  {"socket", 0, 0, G_OPTION_ARG_FILENAME, &opts.socket, "role: socket path",
      "PATH"},
  {"width", 0, 0, G_OPTION_ARG_INT, &opts.width, "role: frame width", "W"},
  {"height", 0, 0, G_OPTION_ARG_INT, &opts.height, "role: frame height", "H"},
  {"clients", 0, 0, G_OPTION_ARG_INT, &opts.clients,
      "producer: consumers to wait for", "N"},
  {"samples", 0, 0, G_OPTION_ARG_FILENAME, &opts.samples,
      "consumer: file for latency samples", "FILE"},
  {"index", 0, 0, G_OPTION_ARG_INT, &opts.index, "consumer: its number", "I"},
  {"roi-count", 0, 0, G_OPTION_ARG_INT, &opts.rois,
      "producer: regions of interest on each frame", "N"},
  {"ipc-mode", 0, 0, G_OPTION_ARG_STRING, &opts.ipc_mode,
      "producer: nvcodec's cudaipcsink ipc-mode, or cuipcsink's ordering",
      "MODE"},
  {"idle-timeout", 0, 0, G_OPTION_ARG_INT, &opts.idle,
      "consumer: seconds without a frame that end it (default 5)", "S"},
  {"hold", 0, 0, G_OPTION_ARG_INT, &opts.hold,
      "consumer: keep each consumer's last N frames referenced, as "
        "downstream that keeps frames does (an encoder, a queue; default 0)",
      "N"},
  {"spin-us", 0, 0, G_OPTION_ARG_INT, &opts.spin_us,
        "run, consumer: (0r)'s consumers, and (a)'s with --announce "
        "shared-memory, read busily for US before they sleep (default 0: "
        "at once)", "US"},
  {"announce", 0, 0, G_OPTION_ARG_STRING, &opts.announce,
        "run, consumer: (a)'s cuipcsrc announce= (socket, the default, or "
        "shared-memory)", "HOW"},
  {"grace-ms", 0, 0, G_OPTION_ARG_INT, &opts.grace_ms,
      "consumer: once the producer has finished pushing, ms without a "
        "frame that end it (default 1000)", "MS"},
  {"parent-pid", 0, 0, G_OPTION_ARG_INT, &opts.parent,
      "role: the orchestrator's pid", "PID"},
  {NULL}
};


gint64
bench_now_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (gint64) ts.tv_sec * G_GINT64_CONSTANT (1000000000) + ts.tv_nsec;
}

gint64
bench_cpu_ns (void)
{
  struct rusage ru;

  getrusage (RUSAGE_SELF, &ru);
  return ((gint64) ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) *
      G_GINT64_CONSTANT (1000000000) +
      ((gint64) ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000;
}

const gchar *
bench_transport_name (Transport t)
{
  static const gchar *names[N_TRANSPORTS] = { "cudaipc", "shm", "nvcodec",
    "floor", "floor-ring"
  };

  return t < N_TRANSPORTS ? names[t] : "unknown";
}

const gchar *
bench_transport_label (Transport t)
{
  switch (t) {
    case TRANSPORT_CUDAIPC:
      return "(a) cuipcsink";
    case TRANSPORT_SHM:
      return bench_use_cuda ()? "(b) cudadownload+shmsink" : "(b) shmsink";
    case TRANSPORT_FLOOR:
      return "(0) floor: bare hand-over";
    case TRANSPORT_FLOOR_RING:
      return opts.spin_us > 0 ? "(0r) floor: shared-memory ring, spin" :
          "(0r) floor: shared-memory ring";
    default:
      return "(c) nvcodec cudaipcsink";
  }
}

/* The transport's label, with the ipc-mode for (c): the row's name in
 * the table and the results file. */
gchar *
bench_row_label (const Row * row)
{
  GString *s = g_string_new (bench_transport_label (row->transport));

  if (row->ipc_mode && row->transport == TRANSPORT_CUDAIPC && opts.in_place)
    g_string_append_printf (s, " %s, producer writes",
        g_str_equal (row->ipc_mode, "copy") ? "copy" : "in place");
  else if (row->ipc_mode)
    g_string_append_printf (s, " %s=%s",
        row->transport == TRANSPORT_CUDAIPC ? "ordering" : "ipc-mode",
        row->ipc_mode);
  if (row->rois > 0)
    g_string_append_printf (s, " %s=%u",
        opts.detections ? "detections" : "rois", row->rois);
  if (row->python)
    g_string_append (s, ", Python consumer");
  if (row->transport == TRANSPORT_CUDAIPC && opts.announce &&
      !g_str_equal (opts.announce, "socket"))
    g_string_append_printf (s, ", announce=%s%s", opts.announce,
        opts.spin_us > 0 ? " spin" : "");
  return g_string_free (s, FALSE);
}

gboolean
bench_transport_from_name (const gchar * name, Transport * t)
{
  static const gchar *aliases[N_TRANSPORTS] = { "a", "b", "c", "0", "0r" };

  for (guint i = 0; i < N_TRANSPORTS; i++) {
    if (g_strcmp0 (name, bench_transport_name (i)) == 0 ||
        g_strcmp0 (name, aliases[i]) == 0) {
      *t = (Transport) i;
      return TRUE;
    }
  }
  return FALSE;
}

/* With --rate: sleeps until frame @i is due, @i / rate after @start (both
 * producers' first push); a late one goes at once (no catching up in
 * bursts beyond what is due). Flat out: returns at once. */
void
bench_pace (gint64 start, guint64 i)
{
  gint64 due, now;

  if (opts.rate <= 0)
    return;
  due = start + (gint64) (i * GST_SECOND / opts.rate);
  now = bench_now_ns ();
  if (due > now)
    g_usleep ((due - now) / 1000);
}

gboolean
bench_use_cuda (void)
{
  return g_strcmp0 (opts.memory, "cuda") == 0;
}

gboolean
bench_stamp_at_sink (void)
{
  return g_strcmp0 (opts.stamp, "push") != 0;
}

gint
bench_cmp_i64 (gconstpointer a, gconstpointer b)
{
  gint64 x = *(const gint64 *) a, y = *(const gint64 *) b;

  return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of @sorted; -1 when empty. */
gint64
bench_percentile (const gint64 * sorted, guint n, gdouble q)
{
  gsize rank;

  if (n == 0)
    return -1;
  rank = (gsize) ceil (q * n);
  return sorted[CLAMP (rank, 1, n) - 1];
}

int
main (int argc, char **argv)
{
  GOptionContext *ctx;
  GError *err = NULL;
  Transport t = TRANSPORT_CUDAIPC;
  const gchar *role;
  int ret;

  ctx = g_option_context_new ("run|producer|consumer - compare frame "
      "transports between processes");
  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_add_group (ctx, gst_init_get_option_group ());
  if (!g_option_context_parse (ctx, &argc, &argv, &err)) {
    g_printerr ("%s\n", err->message);
    g_clear_error (&err);
    g_option_context_free (ctx);
    return 2;
  }
  g_option_context_free (ctx);

  role = argc >= 2 ? argv[1] : "";
  if (opts.stamp == NULL)
    opts.stamp = g_strdup ("sink");
  if (!g_str_equal (opts.stamp, "sink") && !g_str_equal (opts.stamp, "push")) {
    g_printerr ("--stamp is sink or push\n");
    return 2;
  }
#ifndef HAVE_GST_ANALYTICS
  if (opts.detections) {
    g_printerr ("--detections needs GStreamer's analytics library (>= 1.24), "
        "which this build was made without\n");
    return 2;
  }
#endif
  if (opts.memory && !g_str_equal (opts.memory, "auto") &&
      !g_str_equal (opts.memory, "cuda")
      && !g_str_equal (opts.memory, "system")) {
    g_printerr ("--memory is auto, cuda or system\n");
    return 2;
  }
  if (opts.frames < 1 || opts.warmup < 0 || opts.ring_size < 2 ||
      opts.shm_frames < 0 || opts.timeout < 1 || opts.consumer_device < 0 ||
      opts.rate < 0 || opts.seconds < 0 || opts.idle < 1 || opts.grace_ms < 1) {
    g_printerr ("need --frames >= 1, --warmup >= 0, --ring-size >= 2, "
        "--shm-frames >= 0, --timeout >= 1, --consumer-device >= 0, "
        "--rate >= 0, --seconds >= 0, --idle-timeout >= 1, "
        "--grace-ms >= 1\n");
    return 2;
  }
  /* split into words once, here, for every child */
  for (guint i = 0; i < 2; i++) {
    const gchar *cmd = i == 0 ? opts.wrapper : opts.producer_wrapper;
    gchar ***words = i == 0 ? &opts.consumer_wrap : &opts.producer_wrap;
    g_autoptr (GError) werr = NULL;

    if (cmd != NULL && !g_shell_parse_argv (cmd, NULL, words, &werr)) {
      g_printerr ("--%s-wrapper: %s\n", i == 0 ? "consumer" : "producer",
          werr->message);
      return 2;
    }
  }

  if (g_str_equal (role, "run")) {
    ret = bench_run ();
  } else if (g_str_equal (role, "producer") || g_str_equal (role, "consumer")) {
    gboolean known = bench_transport_from_name (opts.transport, &t);

    if (!known || opts.socket == NULL) {
      g_printerr ("%s needs --transport and --socket\n", role);
      return 2;
    }
    if (opts.plugin == NULL) {
      gchar *exe = g_file_read_link ("/proc/self/exe", NULL);

      opts.plugin = bench_default_plugin_path (exe);
      g_free (exe);
    }
    if (opts.memory == NULL)
      opts.memory = g_strdup ("system");
    if (!bench_role_guard ())
      return 1;
    if (t == TRANSPORT_FLOOR || t == TRANSPORT_FLOOR_RING)
      ret = g_str_equal (role, "producer") ?
          bench_run_floor_producer (t == TRANSPORT_FLOOR_RING) :
          bench_run_floor_consumer (t == TRANSPORT_FLOOR_RING);
    else
      ret = g_str_equal (role, "producer") ? bench_run_producer (t) :
          bench_run_consumer (t);
    /* the pipeline has stopped: its time limits are done with (a wrapper
     * such as valgrind may take long over the rest) */
    alarm (0);
  } else {
    g_printerr ("usage: %s run [options] (see --help)\n", argv[0]);
    return 2;
  }

  gst_deinit ();
  return ret;
}
