/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The consumer role: <src> ! [caps ! cudaupload ! CUDA caps !] fakesink,
 * measured by a probe on the source's src pad (its streaming thread; the
 * main thread reads the figures under the lock). Prints "ready" once
 * PLAYING and "result ..." at the end: the last frame, EOS, the producer
 * closing shm, no frame for --grace-ms once the orchestrator said "pushed
 * N" (the producer has finished: nvcodec's sink sends no EOS while it
 * runs, and a consumer that got none of the frames ends there too), or no
 * frame for --idle-timeout before that. Latency samples go to --samples
 * as gint64 ns. With $CUDAIPC_BENCH_STAGES set to a folder, it also
 * writes there, as control-c-PID.txt, how long a fixed loop took every
 * 256 measured frames and the CPUs it ran on: the same control as the
 * Python consumer's (bench-consumer.py), which tells a process that runs
 * slower from a frame that costs more.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <sched.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

/* the control loop's length, and how often it runs */
#define CONTROL_ITERATIONS 20000
#define CONTROL_EVERY 256

typedef struct
{
  Transport transport;
  GstElement *src;
  GMutex lock;
  GArray *samples;              /* gint64 ns */
  guint64 received, measured, bad_stamps, repeats;
  gint64 first_stamp, last_arrival, last_seen, cpu0, cpu1;
  gint64 last_index;
  gboolean done;
  gboolean counted;             /* (c) without the frame meta: arrivals */
  gchar *memory;                /* mem_type reaching the sink */
  GQueue held;                  /* --hold: the last frames, referenced */
  GArray *control;              /* $CUDAIPC_BENCH_STAGES: gint64 ns a
                                 * loop, NULL without */
  GArray *control_cpus;         /* gint64: the CPU after each */
} Consumer;

/* A fixed loop of integer work, no call: its time says how fast the CPU
 * runs this process. */
static gint64
control_loop (void)
{
  volatile guint32 x = 1;
  struct timespec t0, t1;

  clock_gettime (CLOCK_MONOTONIC, &t0);
  for (guint i = 0; i < CONTROL_ITERATIONS; i++)
    x = x * 1664525u + 1013904223u;
  clock_gettime (CLOCK_MONOTONIC, &t1);
  return (t1.tv_sec - t0.tv_sec) * G_GINT64_CONSTANT (1000000000) +
      (t1.tv_nsec - t0.tv_nsec);
}

static void
control_report (Consumer * c, const gchar * dir)
{
  GString *text = g_string_new (NULL);
  gchar *path;

  const gint64 *ns = (const gint64 *) c->control->data;
  const gint64 *cpus = (const gint64 *) c->control_cpus->data;

  g_array_sort (c->control, bench_cmp_i64);
  g_array_sort (c->control_cpus, bench_cmp_i64);
  g_string_append_printf (text, "control loop p50 %.2f p90 %.2f ns an "
      "iteration (%u samples)\nCPUs it ran on:",
      bench_percentile (ns, c->control->len, 0.50) /
      (double) CONTROL_ITERATIONS,
      bench_percentile (ns, c->control->len, 0.90) /
      (double) CONTROL_ITERATIONS, c->control->len);
  for (guint i = 0; i < c->control_cpus->len; i++) {
    if (i == 0 || cpus[i] != cpus[i - 1])
      g_string_append_printf (text, " %" G_GINT64_FORMAT, cpus[i]);
  }
  g_string_append_c (text, '\n');
  path = g_strdup_printf ("%s/control-c-%d.txt", dir, (int) getpid ());
  if (!g_file_set_contents (path, text->str, -1, NULL))
    g_printerr ("consumer %d: could not write %s\n", opts.index, path);
  g_free (path);
  g_string_free (text, TRUE);
}

static GstPadProbeReturn
consumer_probe (GstPad * pad, GstPadProbeInfo * info, gpointer data)
{
  Consumer *c = data;
  GstBuffer *buf = GST_PAD_PROBE_INFO_BUFFER (info);
  gint64 now = bench_now_ns ();
  guint64 stamp, index, flags = 0;
  gboolean done = FALSE;

  /* downstream that keeps its last frames (the streaming thread alone
   * touches the queue) */
  if (opts.hold > 0) {
    g_queue_push_tail (&c->held, gst_buffer_ref (buf));
    while (g_queue_get_length (&c->held) > (guint) opts.hold)
      gst_buffer_unref (g_queue_pop_head (&c->held));
  }

  switch (c->transport) {
    case TRANSPORT_SHM:{
      guint64 hdr[BENCH_HDR_WORDS];

      if (gst_buffer_extract (buf, 0, hdr, BENCH_HDR_SIZE) != BENCH_HDR_SIZE) {
        g_mutex_lock (&c->lock);
        c->bad_stamps++;
        g_mutex_unlock (&c->lock);
        return GST_PAD_PROBE_OK;
      }
      stamp = hdr[0];
      index = hdr[1];
      flags = hdr[2];
      break;
    }
    case TRANSPORT_CUDAIPC:
      stamp = GST_BUFFER_PTS (buf);
      index = GST_BUFFER_OFFSET (buf);
      if (GST_BUFFER_FLAG_IS_SET (buf, GST_BUFFER_FLAG_MARKER))
        flags |= BENCH_FLAG_LAST;
      break;
    default:{
      GstCustomMeta *meta = gst_buffer_get_custom_meta (buf, BENCH_META_NAME);
      gboolean last = FALSE;

      /* nvcodec: its source pushes the sender's clock time minus our base
       * time, or 0 where that was earlier than our base time (not a
       * stamp) */
      stamp = GST_BUFFER_PTS (buf);
      if (GST_CLOCK_TIME_IS_VALID (stamp) && stamp > 0)
        stamp += gst_element_get_base_time (c->src);
      else
        stamp = GST_CLOCK_TIME_NONE;
      /* frame number and last flag from the frame meta; without it (a
       * GStreamer that does not carry custom metas) count arrivals */
      if (meta && gst_structure_get_uint64 (gst_custom_meta_get_structure
              (meta), "index", &index) && index != G_MAXUINT64) {
        gst_structure_get_boolean (gst_custom_meta_get_structure (meta),
            "last", &last);
        if (last)
          flags |= BENCH_FLAG_LAST;
      } else {
        index = G_MAXUINT64;
      }
      break;
    }
  }

  g_mutex_lock (&c->lock);
  if (index == G_MAXUINT64) {
    index = c->received;
    c->counted = TRUE;
  } else if (c->last_index >= 0 && (gint64) index <= c->last_index) {
    /* a frame again, or one older than the last: not a new frame */
    c->repeats++;
    c->received++;
    c->last_seen = now;
    g_mutex_unlock (&c->lock);
    return GST_PAD_PROBE_OK;
  }
  c->received++;
  c->last_seen = now;
  c->last_index = (gint64) index;
  if (index >= (guint64) opts.warmup && !c->done) {
    if (c->measured == 0) {
      c->first_stamp = GST_CLOCK_TIME_IS_VALID (stamp) ? (gint64) stamp : now;
      c->cpu0 = bench_cpu_ns ();
    }
    c->measured++;
    c->last_arrival = now;
    if (c->control && c->measured % CONTROL_EVERY == 0) {
      gint64 ns = control_loop ();
      gint64 cpu = sched_getcpu ();

      g_array_append_val (c->control, ns);
      g_array_append_val (c->control_cpus, cpu);
    }
    if (GST_CLOCK_TIME_IS_VALID (stamp) && (gint64) stamp <= now) {
      gint64 lat = now - (gint64) stamp;

      g_array_append_val (c->samples, lat);
    } else {
      c->bad_stamps++;
    }
  }
  if (!c->done && ((flags & BENCH_FLAG_LAST) ||
          index + 1 >= (guint64) opts.warmup + opts.frames)) {
    c->done = TRUE;
    c->cpu1 = bench_cpu_ns ();
    done = TRUE;
  }
  g_mutex_unlock (&c->lock);

  if (done)
    gst_element_post_message (c->src,
        gst_message_new_application (GST_OBJECT (c->src),
            gst_structure_new_empty ("bench-done")));
  return GST_PAD_PROBE_OK;
}

static GstPadProbeReturn
memory_probe (GstPad * pad, GstPadProbeInfo * info, gpointer data)
{
  Consumer *c = data;
  GstMemory *mem = gst_buffer_peek_memory (GST_PAD_PROBE_INFO_BUFFER (info),
      0);

  g_mutex_lock (&c->lock);
  if (c->memory == NULL)
    c->memory = g_strdup (mem->allocator && mem->allocator->mem_type ?
        mem->allocator->mem_type : "unknown");
  g_mutex_unlock (&c->lock);
  return GST_PAD_PROBE_REMOVE;
}

int
bench_run_consumer (Transport t)
{
  Consumer c;
  GstElement *pipeline, *sink;
  GstElement *chain[5] = { NULL, };
  GstBus *bus;
  GstPad *pad;
  GstClock *clock;
  const gchar *ended = "timeout";
  gboolean ok = TRUE, stdin_closed = FALSE, producer_done = FALSE;
  gint64 p50, p99, last_index, done_at = 0;
  gint64 grace = (gint64) opts.grace_ms * GST_MSECOND;
  guint64 received, pushed = 0, driver_calls = 0;
  guint64 copy_waits = 0, copy_wait_ns = 0;
  guint n = 0;
  gchar *line;

  memset (&c, 0, sizeof (c));
  c.transport = t;
  g_mutex_init (&c.lock);
  c.samples = g_array_sized_new (FALSE, FALSE, sizeof (gint64), opts.frames);
  c.last_index = -1;
  if (g_getenv ("CUDAIPC_BENCH_STAGES")) {
    c.control = g_array_new (FALSE, FALSE, sizeof (gint64));
    c.control_cpus = g_array_new (FALSE, FALSE, sizeof (gint64));
  }

  pipeline = gst_pipeline_new ("consumer");
  switch (t) {
    case TRANSPORT_CUDAIPC:
      c.src = bench_make_ipc_element (t, FALSE, "src");
      if (c.src) {
        gchar *name = g_strdup_printf ("bench-consumer-%d", opts.index);

        g_object_set (c.src, "socket-path", opts.socket, "connect-timeout",
            (guint) opts.timeout * 1000, "reconnect", FALSE, "client-name",
            name, "device-id", opts.consumer_device, NULL);
        gst_util_set_object_arg (G_OBJECT (c.src), "timestamp-mode",
            "passthrough");
        if (opts.announce) {
          gst_util_set_object_arg (G_OBJECT (c.src), "announce",
              opts.announce);
          g_object_set (c.src, "spin-us", (guint) MAX (opts.spin_us, 0),
              NULL);
        }
        g_free (name);
      }
      chain[n++] = c.src;
      if (bench_use_cuda ())
        chain[n++] = bench_make_capsfilter ("gpu", BENCH_CUDA_CAPS);
      break;
    case TRANSPORT_SHM:{
      gchar *caps = g_strdup_printf ("video/x-raw,format=NV12,width=%d,"
          "height=%d,framerate=30/1", opts.width, opts.height);

      c.src = bench_make ("shmsrc", "src");
      if (c.src)
        g_object_set (c.src, "socket-path", opts.socket, "is-live", TRUE, NULL);
      chain[n++] = c.src;
      chain[n++] = bench_make_capsfilter ("caps", caps);
      g_free (caps);
      if (bench_use_cuda ()) {
        chain[n++] = bench_make ("cudaupload", "upload");
        chain[n++] = bench_make_capsfilter ("gpu", BENCH_CUDA_CAPS);
      }
      break;
    }
    default:
      /* before the first frame, whose meta is deserialized by name */
      bench_frame_meta_register ();
      c.src = bench_make_ipc_element (t, FALSE, "src");
      if (c.src)
        g_object_set (c.src, "address", opts.socket, NULL);
      chain[n++] = c.src;
      break;
  }
  sink = bench_make ("fakesink", "sink");
  if (sink)
    g_object_set (sink, "sync", FALSE, "async", FALSE, "silent", TRUE,
        "enable-last-sample", FALSE, NULL);
  chain[n++] = sink;

  for (guint i = 0; i < n; i++) {
    if (chain[i] == NULL) {
      for (guint j = 0; j < n; j++)
        if (chain[j])
          gst_object_unref (gst_object_ref_sink (chain[j]));
      gst_object_unref (pipeline);
      ok = FALSE;
      goto out;
    }
  }
  for (guint i = 0; i < n; i++) {
    gst_bin_add (GST_BIN (pipeline), chain[i]);
    if (i > 0 && !gst_element_link (chain[i - 1], chain[i])) {
      g_printerr ("cannot link %s to %s\n", GST_OBJECT_NAME (chain[i - 1]),
          GST_OBJECT_NAME (chain[i]));
      ok = FALSE;
      goto done;
    }
  }
  g_printerr ("consumer %d: src is %s\n", opts.index,
      G_OBJECT_TYPE_NAME (c.src));

  pad = gst_element_get_static_pad (c.src, "src");
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, consumer_probe, &c, NULL);
  gst_object_unref (pad);
  pad = gst_element_get_static_pad (sink, "sink");
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, memory_probe, &c, NULL);
  gst_object_unref (pad);

  clock = gst_system_clock_obtain ();
  gst_pipeline_use_clock (GST_PIPELINE (pipeline), clock);
  gst_object_unref (clock);

  if (gst_element_set_state (pipeline, GST_STATE_PLAYING) ==
      GST_STATE_CHANGE_FAILURE) {
    bench_bus_ok (pipeline, 0, NULL);
    g_printerr ("consumer %d: cannot start\n", opts.index);
    ok = FALSE;
    goto done;
  }
  bench_say ("ready");

  bus = gst_element_get_bus (pipeline);
  for (;;) {
    GstMessage *msg = gst_bus_timed_pop_filtered (bus, 50 * GST_MSECOND,
        GST_MESSAGE_ERROR | GST_MESSAGE_EOS | GST_MESSAGE_APPLICATION);
    gint64 last_seen, now;

    if (msg) {
      GstMessageType type = GST_MESSAGE_TYPE (msg);

      if (type == GST_MESSAGE_ERROR) {
        GError *err = NULL;
        gchar *dbg = NULL;

        gst_message_parse_error (msg, &err, &dbg);
        g_mutex_lock (&c.lock);
        received = c.received;
        g_mutex_unlock (&c.lock);
        /* shmsrc has no EOS: the producer closing is its end */
        if (t == TRANSPORT_SHM && received > 0) {
          ended = "closed";
        } else {
          g_printerr ("consumer %d: error from %s: %s (%s)\n", opts.index,
              GST_OBJECT_NAME (msg->src), err->message, dbg ? dbg : "");
          ended = "error";
          ok = FALSE;
        }
        g_clear_error (&err);
        g_free (dbg);
      } else if (type == GST_MESSAGE_EOS) {
        ended = "eos";
      } else if (type == GST_MESSAGE_APPLICATION &&
          gst_message_has_name (msg, "bench-done")) {
        ended = "last";
      } else {
        gst_message_unref (msg);
        continue;
      }
      gst_message_unref (msg);
      break;
    }

    /* "pushed N": the producer has finished; what is still to come comes
     * within the grace period */
    if (!stdin_closed && !producer_done) {
      gchar *cmd = bench_poll_command (&stdin_closed);

      if (cmd && g_str_has_prefix (cmd, "pushed ")) {
        pushed = g_ascii_strtoull (cmd + 7, NULL, 10);
        producer_done = TRUE;
        done_at = bench_now_ns ();
      } else if (cmd) {
        g_printerr ("consumer %d: unexpected command '%s'\n", opts.index, cmd);
      }
      g_free (cmd);
    }

    g_mutex_lock (&c.lock);
    received = c.received;
    last_seen = c.last_seen;
    g_mutex_unlock (&c.lock);
    now = bench_now_ns ();
    if (producer_done && now - MAX (last_seen, done_at) > grace) {
      ended = received > 0 ? "drained" : "none";
      break;
    }
    if (received > 0 && now - last_seen > (gint64) opts.idle * GST_SECOND) {
      ended = "idle";
      break;
    }
  }
  gst_object_unref (bus);

  /* the streaming thread may still run the probe: no more samples */
  g_mutex_lock (&c.lock);
  if (!c.done) {
    c.done = TRUE;
    c.cpu1 = bench_cpu_ns ();
  }
  received = c.received;
  last_index = c.last_index;
  g_mutex_unlock (&c.lock);

  g_array_sort (c.samples, bench_cmp_i64);
  p50 = bench_percentile ((gint64 *) c.samples->data, c.samples->len, 0.50);
  p99 = bench_percentile ((gint64 *) c.samples->data, c.samples->len, 0.99);
  if (opts.samples && !g_file_set_contents (opts.samples, c.samples->data,
          (gssize) (c.samples->len * sizeof (gint64)), NULL)) {
    g_printerr ("consumer %d: cannot write %s\n", opts.index, opts.samples);
    ok = FALSE;
  }

  /* our source's driver calls on its per-frame path (0 for the others) */
  if (t == TRANSPORT_CUDAIPC) {
    GstStructure *st = NULL;

    g_object_get (c.src, "stats", &st, NULL);
    if (st) {
      guint64 copied = 0;

      gst_structure_get_uint64 (st, "driver-calls", &driver_calls);
      /* frames handed before the producer's write had landed: the
       * wait (busy, then sleeping) is this consumer's */
      gst_structure_get_uint64 (st, "copy-waits", &copy_waits);
      gst_structure_get_uint64 (st, "copy-wait-ns", &copy_wait_ns);
      if (gst_structure_get_uint64 (st, "frames-copied", &copied))
        g_printerr ("consumer %d: frames-copied=%" G_GUINT64_FORMAT " of %"
            G_GUINT64_FORMAT " received (--hold %d)\n", opts.index, copied,
            received, opts.hold);
      gst_structure_free (st);
    }
  }

  /* ids: where frame numbers came from; pushed: as the orchestrator
   * passed it on, -1 before it did */
  line = g_strdup_printf ("result received=%" G_GUINT64_FORMAT " measured=%"
      G_GUINT64_FORMAT " samples=%u bad_stamps=%" G_GUINT64_FORMAT
      " repeats=%" G_GUINT64_FORMAT " first_stamp=%" G_GINT64_FORMAT
      " last_arrival=%" G_GINT64_FORMAT " cpu_ns=%" G_GINT64_FORMAT
      " cpu_total_ns=%" G_GINT64_FORMAT " last_index=%" G_GINT64_FORMAT
      " p50_ns=%" G_GINT64_FORMAT " p99_ns=%" G_GINT64_FORMAT
      " pushed=%" G_GINT64_FORMAT " ended=%s ids=%s memory=%s"
      " driver_calls=%" G_GUINT64_FORMAT " copy_waits=%" G_GUINT64_FORMAT
      " copy_wait_ns=%" G_GUINT64_FORMAT " src_type=%s",
      received, c.measured, c.samples->len, c.bad_stamps, c.repeats,
      c.first_stamp, c.last_arrival, c.measured ? c.cpu1 - c.cpu0 : 0,
      bench_cpu_ns (), last_index, p50, p99,
      producer_done ? (gint64) pushed : -1, ended,
      c.counted ? "counted" : "carried", c.memory ? c.memory : "none",
      driver_calls, copy_waits, copy_wait_ns, G_OBJECT_TYPE_NAME (c.src));
  bench_say (line);
  if (c.control) {
    control_report (&c, g_getenv ("CUDAIPC_BENCH_STAGES"));
    g_array_unref (c.control);
    g_array_unref (c.control_cpus);
  }
  g_free (line);
  /* nvcodec's cudaipcsrc stops only once its server answers (a frame,
   * or EOS when the producer's sink stops): the orchestrator sends the
   * producer "quit" now that this result is out, and this bounds the
   * rest */
  bench_arm_teardown ();

done:
  gst_element_set_state (pipeline, GST_STATE_NULL);
  g_queue_clear_full (&c.held, (GDestroyNotify) gst_buffer_unref);
  gst_object_unref (pipeline);
out:
  g_array_unref (c.samples);
  g_free (c.memory);
  g_mutex_clear (&c.lock);
  return ok ? 0 : 1;
}
