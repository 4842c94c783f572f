/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * gpu suite: GPU ordering with interprocess CUDA events (fence.h).
 *
 *  - A fence page made here (fence-page.h), and a legacy event (fence.h),
 *    each order a large copy queued behind other work on a stream:
 *    gpu-fence-peer, a second process, maps the page from RING or opens
 *    the event's handle from SLOT, gets the FRAME while the copy is still
 *    in flight, waits and then reads every byte of the frame.
 *  - An event handle that does not open is a GError with the driver's
 *    text.
 *  - Elements: a cuipcsrc here, fed by an ipc-node producer with the
 *    cuda backend, makes no driver call per frame with the fence page and
 *    a few with events (the wait between a context push and pop), and
 *    sees every frame intact.
 *  - Elements: a cuipcsink here publishes without host synchronisation
 *    while its consumer (an ipc-node) reads the fence page (ordering=auto)
 *    or waits on events (ordering=events), and falls back to
 *    synchronising its stream, frame by frame, while a consumer that reads
 *    neither is connected.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib/gstdio.h>
#include <gst/check/gstcheck.h>
#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <gst/video/video.h>

#include "ring/block.h"
#include "wire/connection.h"
#include "device/cuda-loader.h"
#include "device/device.h"
#include "common/error.h"
#include "ring/fence.h"
#include "ring/fence-page.h"
#include "ipc-nodes.h"
#include "test-main.h"
#include "test-pattern.h"
#include "test-util.h"

/* the peer checks the pattern of this key */
#define FENCE_KEY 3
#define FENCE_GEN 9
#define FRAME_BYTES (256u << 20)
/* work queued ahead of the frame's copy: tens of ms on an H200 */
#define BUSY_BYTES (512u << 20)
#define BUSY_ROUNDS 128

#define ELEMENT_FRAMES 200
#define WIDTH 320
#define HEIGHT 240

static CudaIpcDevice *device;

#define cu_ok(call) G_STMT_START { \
  CUresult _res = (call); \
  if (_res != CUDA_SUCCESS) { \
    gchar *_text = cudaipc_cuda_error (_res); \
    fail ("%s: %s", #call, _text); \
    g_free (_text); \
  } \
} G_STMT_END

static void
recv_ok (CudaIpcConn * conn, CudaIpcMsg * msg, CudaIpcMsgType type)
{
  fail_unless_equals_int (cudaipc_conn_wait (conn, 60000), 1);
  fail_unless_equals_int (cudaipc_conn_recv (conn, msg), 0);
  fail_unless (msg->type == type, "got %s, expected %s",
      cudaipc_msg_type_name (msg->type), cudaipc_msg_type_name (type));
}

static CudaIpcBlock *
new_block (guint64 size)
{
  GError *err = NULL;
  CudaIpcBlock *block = cudaipc_block_new (device, size, 0, &err);

  fail_unless (block != NULL, "block of %" G_GUINT64_FORMAT ": %s", size,
      err ? err->message : "");
  return block;
}

static guint64
field_of (const gchar * text, const gchar * name)
{
  gchar *key = g_strdup_printf ("%s=", name);
  const gchar *at = strstr (text, key);
  guint64 v;

  fail_unless (at != NULL, "no %s in '%s'", name, text);
  v = g_ascii_strtoull (at + strlen (key), NULL, 10);
  g_free (key);
  return v;
}

/* The driver keeps one descriptor of its own (legacy IPC event support)
 * open from the first exported event on; make it exist before counting, and
 * check that events come and go without leaving any. */
static guint
fence_warm_fds (void)
{
  guint before;

  cudaipc_fence_free (cudaipc_fence_new (device, NULL));
  before = cudaipc_test_count_fds ();
  for (guint i = 0; i < 20; i++)
    cudaipc_fence_free (cudaipc_fence_new (device, NULL));
  fail_unless_equals_int (cudaipc_test_count_fds (), before);
  return before;
}

/* The frame's copy queued behind other work, its FRAME sent at once, and
 * the second process waits on the fence page's word (@use_page) or on the
 * slot's legacy event before it reads. */
static void
fence_orders_a_copy (gboolean use_page)
{
  const CudaIpcCudaFuncs *cu = cudaipc_cuda ();
  CudaIpcFencePage *page = NULL;
  guint fds_before = fence_warm_fds ();
  gchar *path = cudaipc_test_socket_path ("fence", "fence.sock");
  const gchar *peer = g_getenv ("CUDAIPC_GPU_FENCE_PEER");
  CudaIpcBlock *slot, *staging, *busy_a, *busy_b;
  const CudaIpcDescriptor *desc;
  CudaIpcFence *fence;
  CUstream stream = NULL;
  CudaIpcConn *conn;
  CudaIpcMsg msg;
  GError *err = NULL;
  guint8 *host;
  gboolean done = TRUE;
  int lfd = -1, cfd = -1, status = 0;
  gint64 t0, t1;
  GPid pid;

  fail_unless (peer != NULL, "CUDAIPC_GPU_FENCE_PEER is not set");
  slot = new_block (FRAME_BYTES);
  staging = new_block (FRAME_BYTES);
  busy_a = new_block (BUSY_BYTES);
  busy_b = new_block (BUSY_BYTES);
  if (use_page) {
    page = cudaipc_fence_page_new (device, &err);
    fail_unless (page != NULL, "fence page: %s", err ? err->message : "");
    fence = NULL;
  } else {
    fence = cudaipc_fence_new (device, &err);
    fail_unless (fence != NULL, "fence: %s", err ? err->message : "");
    fail_unless (cudaipc_fence_get_handle (fence) != NULL);
  }

  /* the frame waits in device memory; the slot starts zeroed */
  host = g_malloc (FRAME_BYTES);
  cudaipc_test_fill_pattern (host, FRAME_BYTES, FENCE_KEY, FENCE_GEN);
  fail_unless (cudaipc_device_push (device, &err), "%s",
      err ? err->message : "");
  cu_ok (cu->StreamCreate (&stream, CU_STREAM_NON_BLOCKING));
  cu_ok (cu->MemcpyHtoDAsync (cudaipc_block_get_ptr (staging), host,
          FRAME_BYTES, stream));
  cu_ok (cu->MemsetD8 (cudaipc_block_get_ptr (slot), 0, FRAME_BYTES));
  cu_ok (cu->StreamSynchronize (stream));
  cu_ok (cu->StreamSynchronize (NULL));

  fail_unless_equals_int (cudaipc_socket_listen (path, 0600, &lfd), 0);
  {
    gchar *argv[] = { (gchar *) peer, path, NULL };

    fail_unless (g_spawn_async (NULL, argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD,
            NULL, NULL, &pid, &err), "spawn %s: %s", peer,
        err ? err->message : "");
  }
  fail_unless_equals_int (cudaipc_socket_accept (lfd, &cfd), 0);
  conn = cudaipc_conn_new (cfd);

  cudaipc_msg_init (&msg, CUDAIPC_MSG_HELLO);
  msg.u.hello.version = CUDAIPC_PROTOCOL_VERSION;
  msg.u.hello.backend = CUDAIPC_BACKEND_CUDA;
  cudaipc_device_get_uuid (device, msg.u.hello.uuid);
  msg.u.hello.caps = use_page ? CUDAIPC_CAP_FENCE : CUDAIPC_CAP_EVENTS;
  msg.u.hello.name = "gpu-fence-test";
  cudaipc_test_send_ok (conn, &msg);
  recv_ok (conn, &msg, CUDAIPC_MSG_HELLO);
  fail_unless (msg.u.hello.caps & (use_page ? CUDAIPC_CAP_FENCE :
          CUDAIPC_CAP_EVENTS));
  cudaipc_msg_clear (&msg);

  cudaipc_msg_init (&msg, CUDAIPC_MSG_RING);
  msg.u.ring.generation = FENCE_GEN;
  msg.u.ring.n_slots = 1;
  msg.u.ring.slot_size = cudaipc_block_get_size (slot);
  if (use_page) {
    msg.u.ring.flags = CUDAIPC_RING_HAS_FENCE;
    msg.fds[0] = cudaipc_fence_page_get_fd (page);
    msg.n_fds = 1;
  }
  cudaipc_test_send_ok (conn, &msg);

  desc = cudaipc_block_get_descriptor (slot);
  cudaipc_msg_init (&msg, CUDAIPC_MSG_SLOT);
  msg.u.slot.generation = FENCE_GEN;
  msg.u.slot.index = 0;
  msg.u.slot.size = cudaipc_descriptor_get_size (desc);
  msg.u.slot.n_allocs = cudaipc_descriptor_get_n_fds (desc);
  memcpy (msg.u.slot.alloc_sizes, cudaipc_descriptor_get_sizes (desc),
      msg.u.slot.n_allocs * sizeof (guint64));
  memcpy (msg.fds, cudaipc_descriptor_get_fds (desc),
      msg.u.slot.n_allocs * sizeof (int));
  msg.n_fds = msg.u.slot.n_allocs;
  if (!use_page) {
    msg.u.slot.flags = CUDAIPC_SLOT_HAS_EVENT;
    memcpy (msg.u.slot.event_handle, cudaipc_fence_get_handle (fence),
        CUDAIPC_FENCE_HANDLE_SIZE);
  }
  cudaipc_test_send_ok (conn, &msg);

  /* the peer imported the slot and opened the event */
  recv_ok (conn, &msg, CUDAIPC_MSG_RELEASE);
  cudaipc_msg_clear (&msg);

  /* the frame's copy waits behind other work; nothing here waits */
  t0 = g_get_monotonic_time ();
  for (guint i = 0; i < BUSY_ROUNDS; i++)
    cu_ok (cu->MemcpyDtoDAsync (cudaipc_block_get_ptr (busy_b),
            cudaipc_block_get_ptr (busy_a), BUSY_BYTES, stream));
  cu_ok (cu->MemcpyDtoDAsync (cudaipc_block_get_ptr (slot),
          cudaipc_block_get_ptr (staging), FRAME_BYTES, stream));
  if (use_page) {
    guint calls = 0;

    fail_unless (cudaipc_fence_page_signal (page, 0, 1, stream, &calls,
            &err), "signal: %s", err ? err->message : "");
    fail_unless_equals_int (calls, 1);
  } else {
    fail_unless (cudaipc_fence_record (fence, stream, &err), "record: %s",
        err ? err->message : "");
  }
  t1 = g_get_monotonic_time ();

  cudaipc_msg_init (&msg, CUDAIPC_MSG_FRAME);
  msg.u.frame.generation = FENCE_GEN;
  msg.u.frame.slot = 0;
  msg.u.frame.seq = 1;
  msg.u.frame.size = FRAME_BYTES;
  cudaipc_test_send_ok (conn, &msg);
  if (use_page)
    done = cudaipc_fence_page_peek (page, 0) >= 1;
  else
    fail_unless (cudaipc_fence_query (fence, &done, &err), "query: %s",
        err ? err->message : "");

  recv_ok (conn, &msg, CUDAIPC_MSG_BYE);
  g_print ("gpu-fence (%s): queued %u copies behind %u busy ones in %"
      G_GINT64_FORMAT " us (pending here after the FRAME: %d); the second "
      "process says: %s\n", use_page ? "fence page" : "events", 1,
      BUSY_ROUNDS, t1 - t0, !done, msg.u.bye.text);
  fail_unless (g_str_has_prefix (msg.u.bye.text, "ok"), "peer: %s",
      msg.u.bye.text);
  /* the wait had something to wait for: the test means something */
  fail_unless_equals_int (field_of (msg.u.bye.text, "pending_at_frame"), 1);
  fail_unless_equals_uint64 (field_of (msg.u.bye.text, "bytes"), FRAME_BYTES);
  fail_unless_equals_int (field_of (msg.u.bye.text, "page"), use_page);
  cudaipc_msg_clear (&msg);

  cudaipc_msg_init (&msg, CUDAIPC_MSG_BYE);
  msg.u.bye.text = "done";
  cudaipc_test_send_ok (conn, &msg);
  fail_unless (waitpid (pid, &status, 0) == pid);
  g_spawn_close_pid (pid);
  fail_unless (WIFEXITED (status) && WEXITSTATUS (status) == 0,
      "peer exit status %d", status);

  cu_ok (cu->StreamSynchronize (stream));
  cu_ok (cu->StreamDestroy (stream));
  cudaipc_device_pop (device);
  cudaipc_conn_free (conn);
  close (lfd);
  cudaipc_socket_unlink (path);
  cudaipc_fence_free (fence);
  cudaipc_fence_page_free (page);
  cudaipc_block_free (slot);
  cudaipc_block_free (staging);
  cudaipc_block_free (busy_a);
  cudaipc_block_free (busy_b);
  g_free (host);
  cudaipc_test_socket_remove (&path);
  CUDAIPC_ASSERT_NO_FD_LEAK (fds_before);
}

GST_START_TEST (test_fence_page_orders_a_copy_across_processes)
{
  fence_orders_a_copy (TRUE);
}

GST_END_TEST;

GST_START_TEST (test_event_orders_a_copy_across_processes)
{
  fence_orders_a_copy (FALSE);
}

GST_END_TEST;

GST_START_TEST (test_fence_calls)
{
  guint8 garbage[CUDAIPC_FENCE_HANDLE_SIZE];
  CudaIpcFence *fence, *opened;
  GError *err = NULL;
  gboolean done = FALSE;

  fence = cudaipc_fence_new (device, &err);
  fail_unless (fence != NULL, "fence: %s", err ? err->message : "");

  /* never recorded: complete, and a wait returns at once */
  fail_unless (cudaipc_device_push (device, NULL));
  fail_unless (cudaipc_fence_query (fence, &done, &err));
  fail_unless (done);
  fail_unless (cudaipc_fence_wait (fence, &err));
  cudaipc_device_pop (device);

  /* a handle that names no event: the driver's text, no event */
  memset (garbage, 0xa5, sizeof (garbage));
  opened = cudaipc_fence_open (device, garbage, &err);
  fail_unless (opened == NULL);
  fail_unless (g_error_matches (err, CUDAIPC_ERROR, CUDAIPC_ERROR_CUDA),
      "%s", err ? err->message : "no error");
  fail_unless (strstr (err->message, "cuIpcOpenEventHandle") != NULL);
  g_print ("gpu-fence: a bad handle: %s\n", err->message);
  g_clear_error (&err);

  cudaipc_fence_free (fence);
}

GST_END_TEST;

/* Elements */

static GstCaps *
nv12_caps (void)
{
  return gst_caps_new_simple ("video/x-raw", "format", G_TYPE_STRING, "NV12",
      "width", G_TYPE_INT, WIDTH, "height", G_TYPE_INT, HEIGHT, "framerate",
      GST_TYPE_FRACTION, 30, 1, NULL);
}

static GstElement *
launch (const gchar * desc)
{
  GError *err = NULL;
  GstElement *pipeline = gst_parse_launch (desc, &err);

  fail_unless (pipeline != NULL, "%s: %s", desc, err ? err->message : "");
  return pipeline;
}

/* Fails on an error message; TRUE at EOS. */
static gboolean
bus_eos (GstElement * pipeline, GstClockTime timeout)
{
  GstBus *bus = gst_element_get_bus (pipeline);
  GstMessage *m = gst_bus_timed_pop_filtered (bus, timeout,
      GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  gboolean eos = FALSE;

  if (m && GST_MESSAGE_TYPE (m) == GST_MESSAGE_ERROR) {
    GError *err = NULL;
    gchar *debug = NULL;

    gst_message_parse_error (m, &err, &debug);
    fail ("error from %s: %s (%s)", GST_OBJECT_NAME (m->src), err->message,
        debug ? debug : "");
  }
  eos = m != NULL;
  gst_clear_message (&m);
  gst_object_unref (bus);
  return eos;
}

/* A cuipcsrc here, fed by a producer with @ordering: its driver calls per
 * frame. */
static void
src_driver_calls (const gchar * ordering)
{
  GstElement *pipeline, *src, *sink;
  guint64 calls, pushed, received;
  guint n = 0, bad = 0;
  gchar *desc, *frames, *props;
  gboolean use_page = g_str_equal (ordering, "fence");
  Node *producer;

  nodes_setup ();
  frames = g_strdup_printf ("%d", ELEMENT_FRAMES);
  props = g_strdup_printf ("backend=cuda full-timeout=0 ordering=%s", ordering);
  producer = spawn_node ("producer", "--frames", frames, "--clients", "1",
      "--sink", props, NULL);
  /* max-held=0: every frame is checked (appsink queues them) */
  desc = g_strdup_printf ("cuipcsrc name=src socket-path=\"%s\" "
      "reconnect=false connect-timeout=30000 max-held=0 ! appsink name=sink "
      "sync=false", sock);
  pipeline = launch (desc);
  src = gst_bin_get_by_name (GST_BIN (pipeline), "src");
  sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  fail_unless (gst_element_set_state (pipeline, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);

  for (;;) {
    GstSample *sample = gst_app_sink_try_pull_sample (GST_APP_SINK (sink),
        60 * GST_SECOND);
    GstBuffer *buf;
    GstVideoInfo info;
    GstVideoFrame frame;
    guint8 *tight;

    if (sample == NULL)
      break;
    buf = gst_sample_get_buffer (sample);
    fail_unless (gst_video_info_from_caps (&info,
            gst_sample_get_caps (sample)));
    /* a frame copied into a CUDA pool has that pool's strides: the rows
     * go back into the producer's tight layout before the check */
    fail_unless (gst_video_frame_map (&frame, &info, buf, GST_MAP_READ));
    tight = g_malloc (info.size);
    for (guint p = 0; p < GST_VIDEO_FRAME_N_PLANES (&frame); p++) {
      const guint8 *row = GST_VIDEO_FRAME_PLANE_DATA (&frame, p);
      guint8 *to = tight + GST_VIDEO_INFO_PLANE_OFFSET (&info, p);
      gint comp[GST_VIDEO_MAX_COMPONENTS];
      gsize width;

      gst_video_format_info_component (info.finfo, p, comp);
      width = GST_VIDEO_FRAME_COMP_WIDTH (&frame, comp[0]) *
          GST_VIDEO_FRAME_COMP_PSTRIDE (&frame, comp[0]);
      for (gint y = 0; y < GST_VIDEO_FRAME_COMP_HEIGHT (&frame, comp[0]);
          y++, row += GST_VIDEO_FRAME_PLANE_STRIDE (&frame, p),
          to += GST_VIDEO_INFO_PLANE_STRIDE (&info, p))
        memcpy (to, row, width);
    }
    gst_video_frame_unmap (&frame);
    if (cudaipc_test_check_pattern (tight, info.size,
            (guint) GST_BUFFER_OFFSET (buf), 0) >= 0) {
      GstMemory *mem = gst_buffer_peek_memory (buf, 0);

      /* which frames, in which memory, say where the ordering broke */
      if (bad++ < 5)
        g_print ("gpu-fence: frame %u (offset %" G_GUINT64_FORMAT ") bad, "
            "%u memories, %s, caps %" GST_PTR_FORMAT "\n", n,
            GST_BUFFER_OFFSET (buf), gst_buffer_n_memory (buf),
            mem->allocator ? mem->allocator->mem_type : "?",
            gst_sample_get_caps (sample));
    }
    g_free (tight);
    gst_sample_unref (sample);
    n++;
  }
  fail_unless (gst_app_sink_is_eos (GST_APP_SINK (sink)), "no EOS after %u "
      "frames", n);
  wait_node (producer, 60);
  assert_exit_ok (producer);

  calls = cudaipc_test_stats_uint64 (src, "driver-calls");
  pushed = cudaipc_test_stats_uint64 (src, "frames-pushed");
  received = cudaipc_test_stats_uint64 (src, "frames-received");
  {
    GstStructure *st = NULL;
    gchar *text;

    g_object_get (src, "stats", &st, NULL);
    text = st ? gst_structure_to_string (st) : g_strdup ("no stats");
    g_print ("gpu-fence: ordering=%s: %s\n", ordering, text);
    g_free (text);
    if (st)
      gst_structure_free (st);
  }
  g_print ("gpu-fence: ordering=%s: cuipcsrc pushed %" G_GUINT64_FORMAT
      " frames (%u bad) with %" G_GUINT64_FORMAT " driver calls: %.3f per "
      "frame\n", ordering, pushed, bad, calls,
      pushed ? (gdouble) calls / pushed : 0.0);
  fail_unless_equals_int (n, ELEMENT_FRAMES);
  fail_unless_equals_int (bad, 0);
  fail_unless_equals_uint64 (pushed, ELEMENT_FRAMES);
  if (use_page) {
    /* the fence word is read on the CPU */
    fail_unless_equals_uint64 (calls, 0);
  } else {
    /* a push, a wait and a pop per frame (events in use) */
    fail_unless (calls >= 3 * received, "%" G_GUINT64_FORMAT " driver "
        "calls for %" G_GUINT64_FORMAT " frames: events not in use?", calls,
        received);
    /* the wait (cuEventQuery) is one query per frame whose copy is done
     * when it arrives, a short busy poll for one still in flight, between
     * the push and the pop: ten a frame on average would mean most frames
     * waited, or calls other than the wait */
    fail_unless (calls <= 10 * received + 1, "%" G_GUINT64_FORMAT " driver "
        "calls for %" G_GUINT64_FORMAT " frames", calls, received);
  }
  /* each of the producer's 4 slots imported once, whatever the frames */
  {
    GstStructure *st = NULL;
    guint imports = 0;

    g_object_get (src, "stats", &st, NULL);
    fail_unless (st && gst_structure_get_uint (st, "imports", &imports));
    gst_structure_free (st);
    fail_unless_equals_int (imports, 4);
  }

  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (src);
  gst_object_unref (sink);
  gst_object_unref (pipeline);
  node_free (producer);
  g_free (desc);
  g_free (frames);
  g_free (props);
  nodes_teardown ();
}

GST_START_TEST (test_src_no_driver_call_with_fence_page)
{
  src_driver_calls ("fence");
}

GST_END_TEST;

GST_START_TEST (test_src_driver_calls_with_events)
{
  src_driver_calls ("events");
}

GST_END_TEST;

/* A consumer that asks for no events: it releases every frame at once. */
typedef struct
{
  CudaIpcConn *conn;
  GThread *thread;
  gint frames;                  /* atomic */
} RawClient;

static gpointer
raw_client_thread (gpointer data)
{
  RawClient *rc = data;
  CudaIpcMsg msg;

  while (cudaipc_conn_wait (rc->conn, 60000) == 1 &&
      cudaipc_conn_recv (rc->conn, &msg) == 0) {
    CudaIpcMsgType type = msg.type;

    if (type == CUDAIPC_MSG_FRAME) {
      CudaIpcMsg rel;

      cudaipc_msg_init (&rel, CUDAIPC_MSG_RELEASE);
      rel.u.release.generation = msg.u.frame.generation;
      rel.u.release.slot = msg.u.frame.slot;
      rel.u.release.seq = msg.u.frame.seq;
      g_atomic_int_inc (&rc->frames);
      cudaipc_conn_send (rc->conn, &rel);
    } else if (type == CUDAIPC_MSG_SLOT) {
      /* asked for none: gets none */
      g_assert_cmpuint (msg.u.slot.flags & CUDAIPC_SLOT_HAS_EVENT, ==, 0);
    } else if (type == CUDAIPC_MSG_RING) {
      g_assert_cmpuint (msg.u.ring.flags & CUDAIPC_RING_HAS_FENCE, ==, 0);
    }
    cudaipc_msg_clear (&msg);
    if (type == CUDAIPC_MSG_BYE)
      break;
  }
  return NULL;
}

static void
raw_client_start (RawClient * rc, guint32 offered)
{
  CudaIpcMsg msg;
  int fd = -1;

  fail_unless_equals_int (cudaipc_socket_connect (sock, &fd), 0);
  rc->conn = cudaipc_conn_new (fd);
  recv_ok (rc->conn, &msg, CUDAIPC_MSG_HELLO);
  fail_unless (msg.u.hello.caps & offered);
  cudaipc_msg_clear (&msg);
  cudaipc_msg_init (&msg, CUDAIPC_MSG_HELLO);
  msg.u.hello.version = CUDAIPC_PROTOCOL_VERSION;
  msg.u.hello.backend = CUDAIPC_BACKEND_CUDA;
  cudaipc_device_get_uuid (device, msg.u.hello.uuid);
  msg.u.hello.caps = 0;
  msg.u.hello.pid = getpid ();
  msg.u.hello.name = "no-events";
  cudaipc_test_send_ok (rc->conn, &msg);
  rc->thread = g_thread_new ("raw-client", raw_client_thread, rc);
}

static void
push_frames (GstElement * appsrc, guint from, guint to)
{
  GstVideoInfo info;
  GstCaps *caps = nv12_caps ();

  gst_video_info_from_caps (&info, caps);
  gst_caps_unref (caps);
  for (guint i = from; i < to; i++) {
    GstBuffer *buf = gst_buffer_new_allocate (NULL, info.size, NULL);
    GstMapInfo map;

    gst_buffer_map (buf, &map, GST_MAP_WRITE);
    cudaipc_test_fill_pattern (map.data, map.size, i, 0);
    gst_buffer_unmap (buf, &map);
    GST_BUFFER_PTS (buf) = i * GST_SECOND / 30;
    GST_BUFFER_DURATION (buf) = GST_SECOND / 30;
    GST_BUFFER_OFFSET (buf) = i;
    GST_BUFFER_OFFSET_END (buf) = i + 1;
    fail_unless_equals_int (gst_app_src_push_buffer (GST_APP_SRC (appsrc),
            buf), GST_FLOW_OK);
  }
}

static void
wait_published (GstElement * sink, guint64 n)
{
  for (gint i = 0; i < 6000; i++) {
    if (cudaipc_test_stats_uint64 (sink, "frames-published") +
        cudaipc_test_stats_uint64 (sink, "frames-dropped") >= n)
      return;
    g_usleep (10000);
  }
  fail ("fewer than %" G_GUINT64_FORMAT " frames rendered", n);
}

static void
wait_clients (GstElement * sink, guint n)
{
  for (gint i = 0; i < 6000; i++) {
    guint have = 0;

    g_object_get (sink, "num-clients", &have, NULL);
    if (have >= n)
      return;
    g_usleep (10000);
  }
  fail ("fewer than %u consumers came", n);
}

/* TRUE when every consumer in the sink's stats has @field (fence, or
 * events) set. */
static gboolean
every_client_has (GstElement * sink, const gchar * field)
{
  GstStructure *stats = NULL;
  const GValue *arr;
  gboolean all = TRUE;

  g_object_get (sink, "stats", &stats, NULL);
  arr = gst_structure_get_value (stats, "client-stats");
  for (guint i = 0; i < gst_value_array_get_size (arr); i++) {
    const GstStructure *cs =
        gst_value_get_structure (gst_value_array_get_value (arr, i));
    gboolean events = FALSE;

    gst_structure_get_boolean (cs, field, &events);
    all = all && events;
  }
  gst_structure_free (stats);
  return all;
}

/* A cuipcsink here with @ordering publishes without host synchronisation
 * while its consumer (an ipc-node) reads the fence page, or waits on the
 * events, and synchronises frame by frame while a consumer that reads
 * neither is connected. */
static void
sink_syncs (const gchar * ordering)
{
  const guint n_first = 100, n_second = 50;
  gboolean use_page = g_str_equal (ordering, "auto");
  GstElement *pipeline, *appsrc, *sink;
  guint64 published1, published2, syncs1, syncs2, calls;
  RawClient raw = { 0 };
  GstCaps *caps;
  gchar *desc;
  Node *consumer;

  nodes_setup ();
  desc = g_strdup_printf ("appsrc name=src format=time is-live=false "
      "block=true max-bytes=1 ! cuipcsink name=sink sync=false "
      "backend=cuda wait-for-connection=true ordering=%s "
      "socket-path=\"%s\"", ordering, sock);
  pipeline = launch (desc);
  appsrc = gst_bin_get_by_name (GST_BIN (pipeline), "src");
  sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  caps = nv12_caps ();
  gst_app_src_set_caps (GST_APP_SRC (appsrc), caps);
  gst_caps_unref (caps);
  gst_element_set_state (pipeline, GST_STATE_PLAYING);

  /* a consumer that waits on the slots' events (another process) */
  consumer = spawn_node ("consumer", NULL);
  wait_clients (sink, 1);
  push_frames (appsrc, 0, n_first);
  wait_published (sink, n_first);
  fail_unless (every_client_has (sink, use_page ? "fence" : "events"),
      "the consumer does not use the %s", use_page ? "fence page" : "events");
  published1 = cudaipc_test_stats_uint64 (sink, "frames-published");
  syncs1 = cudaipc_test_stats_uint64 (sink, "host-syncs");
  g_print ("gpu-fence: ordering=%s: %" G_GUINT64_FORMAT " frames published "
      "to a consumer that %s: %" G_GUINT64_FORMAT " host synchronisations\n",
      ordering, published1, use_page ? "reads the fence page" :
      "waits on events", syncs1);
  fail_unless_equals_uint64 (syncs1, 0);

  /* one that does not: every frame published meanwhile is synchronised */
  raw_client_start (&raw, use_page ? CUDAIPC_CAP_FENCE : CUDAIPC_CAP_EVENTS);
  wait_clients (sink, 2);
  push_frames (appsrc, n_first, n_first + n_second);
  wait_published (sink, n_first + n_second);
  published2 = cudaipc_test_stats_uint64 (sink, "frames-published");
  syncs2 = cudaipc_test_stats_uint64 (sink, "host-syncs");
  calls = cudaipc_test_stats_uint64 (sink, "driver-calls");
  g_print ("gpu-fence: %" G_GUINT64_FORMAT " more frames with a consumer "
      "that reads neither: %" G_GUINT64_FORMAT " host synchronisations; %"
      G_GUINT64_FORMAT " driver calls in render() for %" G_GUINT64_FORMAT
      " frames\n", published2 - published1, syncs2 - syncs1, calls, published2);
  fail_unless (published2 > published1);
  fail_unless_equals_uint64 (syncs2 - syncs1, published2 - published1);

  gst_app_src_end_of_stream (GST_APP_SRC (appsrc));
  fail_unless (bus_eos (pipeline, 60 * GST_SECOND), "no EOS");
  wait_node (consumer, 60);
  assert_exit_ok (consumer);
  fail_unless_equals_uint64 (field (consumer, "bad"), 0);
  fail_unless_equals_uint64 (field (consumer, "recheck_bad"), 0);
  fail_unless_equals_uint64 (field (consumer, "frames"), published2);

  /* stopping says BYE to the raw client */
  gst_element_set_state (pipeline, GST_STATE_NULL);
  g_thread_join (raw.thread);
  fail_unless (g_atomic_int_get (&raw.frames) > 0);
  cudaipc_conn_free (raw.conn);
  gst_object_unref (appsrc);
  gst_object_unref (sink);
  gst_object_unref (pipeline);
  node_free (consumer);
  g_free (desc);
  nodes_teardown ();
}

GST_START_TEST (test_sink_syncs_only_for_a_consumer_without_fence)
{
  sink_syncs ("auto");
}

GST_END_TEST;

GST_START_TEST (test_sink_syncs_only_for_a_consumer_without_events)
{
  sink_syncs ("events");
}

GST_END_TEST;

static Suite *
gpu_fence_suite (void)
{
  Suite *s = suite_create ("gpu-fence");
  TCase *tc = cudaipc_test_case (s, "general", 240);

  tcase_add_test (tc, test_fence_page_orders_a_copy_across_processes);
  tcase_add_test (tc, test_event_orders_a_copy_across_processes);
  tcase_add_test (tc, test_src_no_driver_call_with_fence_page);
  tcase_add_test (tc, test_src_driver_calls_with_events);
  tcase_add_test (tc, test_sink_syncs_only_for_a_consumer_without_fence);
  tcase_add_test (tc, test_sink_syncs_only_for_a_consumer_without_events);
  /* last: it hands the driver a handle that names nothing */
  tcase_add_test (tc, test_fence_calls);
  return s;
}

/* device 0, once, for every test: they run in this process (CK_FORK=no) */
static gint
open_device (void)
{
  GError *err = NULL;

  device = cudaipc_device_new (CUDAIPC_BACKEND_CUDA, 0, &err);
  if (!device) {
    g_print ("SKIP: %s\n", err->message);
    g_clear_error (&err);
    return CUDAIPC_TEST_SKIP;
  }
  g_print ("gpu: device 0 is %s\n", cudaipc_device_get_name (device));
  return 0;
}

static void
close_device (void)
{
  cudaipc_device_unref (device);
}

const CudaIpcTestMain cudaipc_test_main = {
  .name = "gpu-fence",
  .suite = gpu_fence_suite,
  .prepare = open_device,
  .finish = close_device,
};
