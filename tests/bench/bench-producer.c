/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The producer role: appsrc ! [cudadownload ! video/x-raw !] <sink>, fed
 * with gst_buffer_copy()s of one frame, as fast as the sink takes them or
 * at --rate. Prints "listening", waits for "go" and for its consumers,
 * pushes warm-up + measured frames (the last with GST_BUFFER_FLAG_MARKER,
 * and for (c) the frame meta), waits for EOS, prints "result ...", then
 * stays until "quit".
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include <gst/app/gstappsrc.h>
#include <gst/base/gstbasesink.h>
#include <gst/video/video.h>

#include "bench.h"
#include "bench-regions.h"
#include "device/cuda-loader.h"
#include "buffers/gstcuda.h"
#include "buffers/memory.h"
#include "test-pool.h"

typedef struct
{
  Transport transport;
  GstElement *appsrc;
  gint n_clients;               /* atomic: shmsink's client-connected */
  gint failed;                  /* atomic: an error was posted */
  gint warnings;                /* atomic: warnings posted */
} Producer;

/* Wakes a gst_app_src_push_buffer() that waits for room (the queue is
 * unbounded from now on): the push loop then stops at p->failed instead
 * of waiting for ever. On a thread of its own, as the thread that posted
 * the error may hold appsrc's lock. */
static gpointer
unblock_appsrc (gpointer data)
{
  GstElement *appsrc = data;

  gst_app_src_set_max_buffers (GST_APP_SRC (appsrc), 0);
  gst_object_unref (appsrc);
  return NULL;
}

static GstBusSyncReply
producer_bus_sync (GstBus * bus, GstMessage * msg, gpointer data)
{
  Producer *p = data;

  if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR &&
      g_atomic_int_compare_and_exchange (&p->failed, 0, 1))
    g_thread_unref (g_thread_new ("unblock", unblock_appsrc,
            gst_object_ref (p->appsrc)));
  /* e.g. nvcodec's sink falling back from ipc-mode=mmap to legacy */
  if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_WARNING) {
    GError *err = NULL;
    gchar *dbg = NULL;

    gst_message_parse_warning (msg, &err, &dbg);
    g_printerr ("producer: warning from %s: %s (%s)\n",
        GST_OBJECT_NAME (msg->src), err->message, dbg ? dbg : "");
    g_clear_error (&err);
    g_free (dbg);
    g_atomic_int_inc (&p->warnings);
  }
  return GST_BUS_PASS;
}

static void
on_client_connected (GstElement * shmsink, gint fd, gpointer data)
{
  Producer *p = data;

  g_atomic_int_inc (&p->n_clients);
}

/* (b) with cudadownload: shmsink's answer to the allocation query offers
 * its allocator, and cudadownload's pool then takes its buffers from the
 * shm area and keeps them while idle. Once the area is spent that way the
 * pool's next buffer comes from the heap, shmsink waits for a free block
 * to copy it into, and none comes: the pipeline stalls (seen with one
 * consumer on GStreamer 1.22). The allocator is taken out of the answer,
 * so shmsink copies every frame into its area, as it does for any upstream
 * that does not use its allocator. */
static GstPadProbeReturn
strip_allocator (GstPad * pad, GstPadProbeInfo * info, gpointer data)
{
  GstQuery *query = GST_PAD_PROBE_INFO_QUERY (info);

  if (GST_QUERY_TYPE (query) == GST_QUERY_ALLOCATION &&
      (GST_PAD_PROBE_INFO_TYPE (info) & GST_PAD_PROBE_TYPE_PULL)) {
    while (gst_query_get_n_allocation_params (query) > 0)
      gst_query_remove_nth_allocation_param (query, 0);
  }
  return GST_PAD_PROBE_OK;
}

/* (b): stamp, index and flags into the frame's first bytes; in place when
 * the memory is ours alone, else in a memory of their own in front of
 * the rest of the frame (shared, not copied): shmsink copies either into
 * its area the same way. */
static GstBuffer *
write_header (GstBuffer * buf, const guint64 hdr[BENCH_HDR_WORDS])
{
  GstBuffer *out;
  GstMemory *mem;
  gpointer copy;

  buf = gst_buffer_make_writable (buf);
  mem = gst_buffer_peek_memory (buf, 0);
  if (gst_memory_is_writable (mem) && mem->size >= BENCH_HDR_SIZE &&
      !GST_MEMORY_FLAG_IS_SET (mem, GST_MEMORY_FLAG_READONLY)) {
    gst_buffer_fill (buf, 0, hdr, BENCH_HDR_SIZE);
    return buf;
  }

  out = gst_buffer_copy_region (buf, GST_BUFFER_COPY_METADATA |
      GST_BUFFER_COPY_MEMORY, BENCH_HDR_SIZE,
      gst_buffer_get_size (buf) - BENCH_HDR_SIZE);
  copy = g_memdup2 (hdr, BENCH_HDR_SIZE);
  gst_buffer_prepend_memory (out, gst_memory_new_wrapped (0, copy,
          BENCH_HDR_SIZE, 0, BENCH_HDR_SIZE, copy, g_free));
  gst_buffer_unref (buf);
  return out;
}

/* --roi-count regions of interest, each with a "detection" parameter, as
 * a detector's output: added on the sink's streaming thread, before the
 * stamp, as an analytics element just upstream of the sink would (made on
 * the pushing thread instead, they were created on one core and read and
 * freed on another, a cost of this benchmark's appsrc, not of the
 * transport) */
static GstBuffer *
add_regions (GstBuffer * buf)
{
  buf = gst_buffer_make_writable (buf);
#ifdef HAVE_GST_ANALYTICS
  /* --detections: the same boxes as one relation meta's detections */
  if (opts.detections) {
    bench_detections_add (buf, (guint) opts.rois);
    return buf;
  }
#endif
  bench_regions_add (buf, (guint) opts.rois, TRUE);
  return buf;
}

static GstPadProbeReturn
stamp_probe (GstPad * pad, GstPadProbeInfo * info, gpointer data)
{
  Producer *p = data;
  GstBuffer *buf = GST_PAD_PROBE_INFO_BUFFER (info);
  guint64 stamp;

  if (opts.rois > 0)
    buf = add_regions (buf);
  stamp = bench_stamp_at_sink ()? (guint64) bench_now_ns () :
      GST_BUFFER_PTS (buf);

  if (p->transport == TRANSPORT_SHM) {
    guint64 hdr[BENCH_HDR_WORDS];

    hdr[0] = stamp;
    hdr[1] = GST_BUFFER_OFFSET (buf);
    hdr[2] = GST_BUFFER_FLAG_IS_SET (buf, GST_BUFFER_FLAG_MARKER) ?
        BENCH_FLAG_LAST : 0;
    buf = write_header (buf, hdr);
  } else if (bench_stamp_at_sink ()) {
    buf = gst_buffer_make_writable (buf);
    GST_BUFFER_PTS (buf) = stamp;
  }
  GST_PAD_PROBE_INFO_DATA (info) = buf;
  return GST_PAD_PROBE_OK;
}

/* nvcodec's cudaipcsink ipc-mode (GstCudaIpcMode: "legacy", "mmap"),
 * checked against the enum the element has, not assumed. */
static gboolean
set_ipc_mode (GstElement * sink, const gchar * mode)
{
  GParamSpec *pspec = g_object_class_find_property (G_OBJECT_GET_CLASS (sink),
      "ipc-mode");
  GEnumClass *klass;
  gboolean known;

  if (pspec == NULL || !G_IS_PARAM_SPEC_ENUM (pspec)) {
    g_printerr ("producer: %s has no ipc-mode property\n",
        G_OBJECT_TYPE_NAME (sink));
    return FALSE;
  }
  klass = G_PARAM_SPEC_ENUM (pspec)->enum_class;
  known = g_enum_get_value_by_nick (klass, mode) != NULL;
  if (!known) {
    g_printerr ("producer: %s has no ipc-mode '%s'\n",
        G_OBJECT_TYPE_NAME (sink), mode);
    return FALSE;
  }
  gst_util_set_object_arg (G_OBJECT (sink), "ipc-mode", mode);
  return TRUE;
}

/* (c): frame number and last flag, which nvcodec carries for us only as
 * a custom meta (its PTS is the stamp) */
static void
add_frame_meta (GstBuffer * buf, guint64 index, gboolean last)
{
  GstCustomMeta *meta = gst_buffer_add_custom_meta (buf, BENCH_META_NAME);

  if (meta)
    gst_structure_set (gst_custom_meta_get_structure (meta), "index",
        G_TYPE_UINT64, index, "last", G_TYPE_BOOLEAN, last, NULL);
}

/* @frame (GstCudaMemory) copied device to device into @buf's, in the
 * frame's CUDA context, complete on return: as nvcodec's elements write
 * into memory of no stream of its own. */
static gboolean
write_on_gpu (GstBuffer * buf, GstBuffer * frame)
{
  GstMemory *src_mem = gst_buffer_peek_memory (frame, 0);
  CUcontext ctx = cudaipc_gstcuda_context_handle
      (cudaipc_gstcuda_memory_context (src_mem)), prev;
  const CudaIpcCudaFuncs *cu =
      cudaipc_cuda_load (NULL) ? cudaipc_cuda () : NULL;
  GstMapInfo in, out;
  gboolean ok;

  if (ctx == NULL || cu == NULL)
    return FALSE;
  if (!gst_buffer_map (frame, &in, GST_MAP_READ | CUDAIPC_MAP_CUDA))
    return FALSE;
  if (!gst_buffer_map (buf, &out, GST_MAP_WRITE | CUDAIPC_MAP_CUDA)) {
    gst_buffer_unmap (frame, &in);
    return FALSE;
  }
  ok = cu->CtxPushCurrent (ctx) == CUDA_SUCCESS;
  if (ok) {
    ok = cu->MemcpyDtoD ((CUdeviceptr) out.data, (CUdeviceptr) in.data,
        MIN (in.size, out.size)) == CUDA_SUCCESS &&
        cu->StreamSynchronize (NULL) == CUDA_SUCCESS;
    cu->CtxPopCurrent (&prev);
  }
  gst_buffer_unmap (buf, &out);
  gst_buffer_unmap (frame, &in);
  return ok;
}

/* @frame written into a new buffer, as an element producing it would:
 * from @pool where there is one (the sink's, in place; else, for a frame
 * on the GPU, a GstCudaBufferPool of the producer's own), else in system
 * memory of its own. */
static GstBuffer *
write_frame (GstBufferPool * pool, GstBuffer * frame)
{
  GstBuffer *buf = NULL;
  GstMapInfo in, out;

  if (pool) {
    if (gst_buffer_pool_acquire_buffer (pool, &buf, NULL) != GST_FLOW_OK)
      return NULL;
  } else {
    buf = gst_buffer_new_allocate (NULL, gst_buffer_get_size (frame), NULL);
  }
  if (cudaipc_gstcuda_memory_context (gst_buffer_peek_memory (frame, 0))) {
    if (!write_on_gpu (buf, frame))
      goto fail;
    return buf;
  }
  if (!gst_buffer_map (frame, &in, GST_MAP_READ))
    goto fail;
  if (!gst_buffer_map (buf, &out, GST_MAP_WRITE)) {
    gst_buffer_unmap (frame, &in);
    goto fail;
  }
  memcpy (out.data, in.data, MIN (in.size, out.size));
  gst_buffer_unmap (buf, &out);
  gst_buffer_unmap (frame, &in);
  return buf;
fail:
  gst_buffer_unref (buf);
  return NULL;
}

int
bench_run_producer (Transport t)
{
  Producer p = { t, NULL, 0, 0, 0 };
  /* (a) with --in-place: the producer writes every frame, into a slot of
   * the sink's pool or into its own memory that the sink copies */
  gboolean writes = t == TRANSPORT_CUDAIPC && opts.ipc_mode &&
      (g_str_equal (opts.ipc_mode, "copy") ||
      g_str_equal (opts.ipc_mode, "in-place"));
  gboolean in_place = writes && g_str_equal (opts.ipc_mode, "in-place");
  GstBufferPool *pool = NULL;
  GstElement *pipeline, *sink = NULL, *frame_pipe = NULL;
  GstElement *chain[4] = { NULL, };
  GstBuffer *frame;
  GstCaps *caps = NULL;
  GstBus *bus;
  GstPad *pad;
  GstClock *clock;
  GstVideoInfo info;
  gint64 t0 = 0, t1, cpu0 = 0, cpu1, deadline, start;
  guint64 total = (guint64) opts.warmup + opts.frames, pushed = 0;
  guint64 published = 0, dropped = 0, host_syncs = 0;
  GstClockTime sink_latency = 0;
  gboolean eos = FALSE, ok = TRUE;
  GList *contexts;
  guint n = 0;
  gchar *line;

  frame = bench_make_frame (&frame_pipe, &caps);
  if (frame == NULL)
    return 1;
  gst_video_info_from_caps (&info, caps);

  pipeline = gst_pipeline_new ("producer");
  p.appsrc = bench_make ("appsrc", "src");
  g_object_set (p.appsrc, "format", GST_FORMAT_TIME, "is-live", FALSE,
      "block", TRUE, "max-buffers", (guint64) 2, "max-bytes", (guint64) 0,
      "max-time", (guint64) 0, "caps", caps, NULL);
  chain[n++] = p.appsrc;

  switch (t) {
    case TRANSPORT_CUDAIPC:
      sink = bench_make_ipc_element (t, TRUE, "sink");
      if (sink) {
        g_object_set (sink, "socket-path", opts.socket, "ring-size",
            (guint) opts.ring_size, "full-timeout", (guint) 5000, NULL);
        gst_util_set_object_arg (G_OBJECT (sink), "backend",
            bench_use_cuda ()? "cuda" : "host");
        gst_util_set_object_arg (G_OBJECT (sink), "on-full", "wait");
        if (writes)
          g_object_set (sink, "in-place", in_place, NULL);
        else if (opts.ipc_mode)
          gst_util_set_object_arg (G_OBJECT (sink), "ordering", opts.ipc_mode);
      }
      break;
    case TRANSPORT_SHM:
      if (bench_use_cuda ()) {
        chain[n++] = bench_make ("cudadownload", "download");
        chain[n++] = bench_make_capsfilter ("sysmem", "video/x-raw");
      }
      sink = bench_make ("shmsink", "sink");
      if (sink) {
        /* the area holds --shm-frames (else ring-size) frames, each
         * page-aligned */
        guint64 frame_size = (info.size + 4095) & ~(guint64) 4095;
        guint frames = opts.shm_frames ? opts.shm_frames : opts.ring_size;

        g_object_set (sink, "socket-path", opts.socket, "shm-size",
            (guint) (frames * frame_size + 4096),
            "wait-for-connection", TRUE, NULL);
        g_signal_connect (sink, "client-connected",
            G_CALLBACK (on_client_connected), &p);
      }
      break;
    case TRANSPORT_NVCODEC:
      bench_frame_meta_register ();
      sink = bench_make_ipc_element (t, TRUE, "sink");
      if (sink) {
        g_object_set (sink, "address", opts.socket, NULL);
        if (opts.ipc_mode && !set_ipc_mode (sink, opts.ipc_mode)) {
          gst_object_unref (gst_object_ref_sink (sink));
          sink = NULL;
        }
      }
      break;
    default:
      break;
  }
  chain[n++] = sink;
  for (guint i = 0; i < n; i++) {
    if (chain[i] == NULL) {
      for (guint j = 0; j < n; j++)
        if (chain[j])
          gst_object_unref (gst_object_ref_sink (chain[j]));
      gst_object_unref (pipeline);
      gst_buffer_unref (frame);
      gst_caps_unref (caps);
      gst_element_set_state (frame_pipe, GST_STATE_NULL);
      gst_object_unref (frame_pipe);
      return 1;
    }
  }
  for (guint i = 0; i < n; i++) {
    gst_bin_add (GST_BIN (pipeline), chain[i]);
    if (i > 0 && !gst_element_link (chain[i - 1], chain[i])) {
      g_printerr ("cannot link %s to %s\n", GST_OBJECT_NAME (chain[i - 1]),
          GST_OBJECT_NAME (chain[i]));
      return 1;
    }
  }
  g_object_set (sink, "sync", FALSE, "enable-last-sample", FALSE, NULL);

  /* the frame's CUDA context (cudaupload's) for cudadownload too: one
   * context in this process, not one per pipeline */
  contexts = gst_element_get_contexts (frame_pipe);
  for (GList * l = contexts; l; l = l->next)
    gst_element_set_context (pipeline, l->data);
  g_list_free_full (contexts, (GDestroyNotify) gst_context_unref);

  g_printerr ("producer: %s is %s\n", GST_OBJECT_NAME (sink),
      G_OBJECT_TYPE_NAME (sink));

  pad = gst_element_get_static_pad (sink, "sink");
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, stamp_probe, &p, NULL);
  if (t == TRANSPORT_SHM && bench_use_cuda ())
    gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_QUERY_DOWNSTREAM,
        strip_allocator, NULL, NULL);
  gst_object_unref (pad);

  bus = gst_element_get_bus (pipeline);
  gst_bus_set_sync_handler (bus, producer_bus_sync, &p, NULL);
  gst_object_unref (bus);

  /* base time 0: running time is the monotonic clock. nvcodec's sink
   * sends running time + base time + its latency (0, reported as
   * sink_latency_ns) as the PTS, unconverted when the pipeline's clock is
   * the system clock on CLOCK_MONOTONIC (this one): the stamps
   * themselves */
  clock = gst_system_clock_obtain ();
  gst_pipeline_use_clock (GST_PIPELINE (pipeline), clock);
  gst_object_unref (clock);
  gst_element_set_start_time (pipeline, GST_CLOCK_TIME_NONE);
  gst_element_set_base_time (pipeline, 0);

  if (gst_element_set_state (pipeline, GST_STATE_PLAYING) ==
      GST_STATE_CHANGE_FAILURE) {
    bench_bus_ok (pipeline, 0, NULL);
    g_printerr ("producer: cannot start\n");
    ok = FALSE;
    goto done;
  }
  bench_say ("listening");
  if (writes) {
    GstPad *srcpad = gst_element_get_static_pad (p.appsrc, "src");

    /* what an element that writes its output would take */
    pool = cudaipc_test_downstream_pool (srcpad, caps, info.size);
    gst_object_unref (srcpad);
  }
  if (in_place && pool == NULL)
    g_printerr ("producer: the sink proposed no pool: every frame copied\n");
  if (writes && pool == NULL && cudaipc_gstcuda_memory_context
      (gst_buffer_peek_memory (frame, 0)) != NULL) {
    /* an element writing GPU frames writes into a pool of CUDA memory */
    pool = cudaipc_gstcuda_pool_new (cudaipc_gstcuda_memory_context
        (gst_buffer_peek_memory (frame, 0)), caps, info.size);
    if (pool == NULL) {
      g_printerr ("producer: cannot make a GstCudaBufferPool to write "
          "frames into (GStreamer's CUDA library is missing or cannot "
          "load): the rows where the producer writes need it on the GPU\n");
      ok = FALSE;
      goto done;
    }
  }

  if (!bench_wait_command (pipeline, "go", opts.timeout)) {
    ok = FALSE;
    goto done;
  }

  /* every consumer connected, as far as the sink can tell */
  deadline = bench_now_ns () + (gint64) opts.timeout * GST_SECOND;
  for (;;) {
    guint have = opts.clients;

    if (t == TRANSPORT_CUDAIPC)
      g_object_get (sink, "num-clients", &have, NULL);
    else if (t == TRANSPORT_SHM)
      have = g_atomic_int_get (&p.n_clients);
    else
      /* nvcodec's sink does not count; its clients connect on start */
      g_usleep (500 * 1000);
    if (have >= (guint) opts.clients)
      break;
    if (bench_now_ns () > deadline
        || !bench_bus_ok (pipeline, GST_MSECOND, NULL)) {
      g_printerr ("producer: %u of %d consumers connected\n", have,
          opts.clients);
      ok = FALSE;
      goto done;
    }
  }

  start = bench_now_ns ();
  for (guint64 i = 0; i < total && !g_atomic_int_get (&p.failed); i++) {
    GstBuffer *buf;
    gboolean last = i + 1 == total;

    bench_pace (start, i);
    buf = writes ? write_frame (pool, frame) : gst_buffer_copy (frame);
    if (buf == NULL) {
      g_printerr ("producer: could not write frame %" G_GUINT64_FORMAT
          " into a buffer\n", i);
      ok = FALSE;
      break;
    }

    if (i == (guint64) opts.warmup) {
      t0 = bench_now_ns ();
      cpu0 = bench_cpu_ns ();
    }
    if (i >= (guint64) opts.warmup && opts.seconds > 0 &&
        bench_now_ns () - t0 >= (gint64) opts.seconds * GST_SECOND)
      last = TRUE;

    GST_BUFFER_DTS (buf) = GST_CLOCK_TIME_NONE;
    GST_BUFFER_DURATION (buf) = GST_CLOCK_TIME_NONE;
    GST_BUFFER_OFFSET (buf) = i;
    GST_BUFFER_OFFSET_END (buf) = i + 1;
    if (last)
      GST_BUFFER_FLAG_SET (buf, GST_BUFFER_FLAG_MARKER);
    if (t == TRANSPORT_NVCODEC)
      add_frame_meta (buf, i, last);
    GST_BUFFER_PTS (buf) = bench_now_ns ();
    if (gst_app_src_push_buffer (GST_APP_SRC (p.appsrc), buf) != GST_FLOW_OK)
      break;
    pushed = i + 1;
    if (last)
      break;
  }
  if (pushed <= (guint64) opts.warmup) {
    t0 = bench_now_ns ();
    cpu0 = bench_cpu_ns ();
  }
  gst_app_src_end_of_stream (GST_APP_SRC (p.appsrc));
  if (!bench_bus_ok (pipeline, (GstClockTime) opts.timeout * GST_SECOND, &eos)
      || !eos) {
    g_printerr ("producer: no EOS after %" G_GUINT64_FORMAT " frames\n",
        pushed);
    ok = FALSE;
    goto done;
  }
  t1 = bench_now_ns ();
  cpu1 = bench_cpu_ns ();

  if (t == TRANSPORT_CUDAIPC) {
    GstStructure *stats = NULL;

    g_object_get (sink, "stats", &stats, NULL);
    if (stats) {
      gst_structure_get_uint64 (stats, "frames-published", &published);
      gst_structure_get_uint64 (stats, "frames-dropped", &dropped);
      gst_structure_get_uint64 (stats, "host-syncs", &host_syncs);
      gst_structure_free (stats);
    }
  }

  /* (c)'s stamps are running time + base time (0) + this latency: 0
   * with a non-live appsrc, reported so that it can be checked */
  if (GST_IS_BASE_SINK (sink))
    sink_latency = gst_base_sink_get_latency (GST_BASE_SINK (sink));

  line = g_strdup_printf ("result pushed=%" G_GUINT64_FORMAT " measured=%"
      G_GUINT64_FORMAT " push_ns=%" G_GINT64_FORMAT " cpu_ns=%"
      G_GINT64_FORMAT " cpu_total_ns=%" G_GINT64_FORMAT " published=%"
      G_GUINT64_FORMAT " dropped=%" G_GUINT64_FORMAT " warnings=%d"
      " sink_latency_ns=%" G_GUINT64_FORMAT " ipc_mode=%s host_syncs=%"
      G_GUINT64_FORMAT " sink_type=%s",
      pushed, pushed > (guint64) opts.warmup ? pushed - opts.warmup : 0,
      t1 - t0, cpu1 - cpu0, cpu1, published, dropped,
      g_atomic_int_get (&p.warnings), (guint64) sink_latency,
      opts.ipc_mode ? opts.ipc_mode : "none", host_syncs,
      G_OBJECT_TYPE_NAME (sink));
  bench_say (line);
  g_free (line);

  /* consumers may still be reading: stay until the orchestrator says;
   * then a stop that hangs is cut short (bench_arm_teardown) */
  bench_wait_command (NULL, "quit", opts.timeout);
  bench_arm_teardown ();

done:
  gst_element_set_state (pipeline, GST_STATE_NULL);
  if (pool) {
    gst_buffer_pool_set_active (pool, FALSE);
    gst_object_unref (pool);
  }
  gst_object_unref (pipeline);
  gst_buffer_unref (frame);
  gst_caps_unref (caps);
  if (frame_pipe) {
    gst_element_set_state (frame_pipe, GST_STATE_NULL);
    gst_object_unref (frame_pipe);
  }
  return ok ? 0 : 1;
}
