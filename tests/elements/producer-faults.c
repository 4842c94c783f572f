/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * elements suite: cuipcsrc against a producer that breaks the rules on
 * time or on volume, played by hand in this process (connection.h,
 * ring.h and fence-page.h over the host backend) on a thread of its own:
 *
 *  - a FRAME whose fence word never comes: set_state (NULL) returns
 *    within 0.5 s while the source waits on it (the protocol's own limit
 *    for that frame is 2 s);
 *  - a FRAME published long ago, then EVENTs as fast as the socket takes
 *    them for 2 s: the frame goes out long before the flood ends, and
 *    the source's memory stays within 100 MB of where it was.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <sys/socket.h>
#include <sys/time.h>

#include <gst/check/gstcheck.h>

#include "wire/connection.h"
#include "ring/fence-page.h"
#include "ring/ring.h"
#include "test-main.h"
#include "test-util.h"

#define W 64
#define H 4
#define GEN 1
#define FLOOD_EVENTS 100000
#define FLOOD_US (2 * G_USEC_PER_SEC)

typedef enum
{
  UNFINISHED,                   /* the frame's fence word never comes */
  FLOOD,                        /* a late frame, then a flood of EVENTs */
} Mode;

typedef struct
{
  Mode mode;
  gchar *path;
  int listen_fd;
  GThread *thread;
  GMutex lock;
  GCond cond;
  gint64 sent_at;               /* the FRAME went out (monotonic us) */
  guint events;                 /* EVENTs sent */
  gint64 flood_ended;
  gint64 got_at;                /* the consumer's sink got the frame */
} FakeProducer;

static FakeProducer *fake;

static void
send_or_die (CudaIpcConn * conn, const CudaIpcMsg * msg)
{
  g_assert_cmpint (cudaipc_conn_send (conn, msg), ==, 0);
}

/* Custom events of about 4 KB, of many small fields, as many as the
 * socket takes, up to FLOOD_EVENTS or for FLOOD_US. */
static void
flood (FakeProducer * p, CudaIpcConn * conn)
{
  GString *structure = g_string_new ("flood");
  gint64 until = g_get_monotonic_time () + FLOOD_US;
  struct timeval tv = { 0, 100 * 1000 };
  int fd = cudaipc_conn_get_fd (conn);
  int sndbuf = 4 << 20;
  CudaIpcMsg msg;
  guint n = 0;

  for (guint i = 0; structure->len < 4000; i++)
    g_string_append_printf (structure, ", f%u=(int)%u", i, i);
  /* blocking sends, each a while at most, so that the flood knows when
   * to end; a socket buffer that a moment's stall of this thread does
   * not leave empty (the most an unprivileged process may ask for,
   * usually) */
  g_assert_cmpint (setsockopt (fd, SOL_SOCKET, SO_SNDTIMEO, &tv,
          sizeof (tv)), ==, 0);
  setsockopt (fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof (sndbuf));
  cudaipc_msg_init (&msg, CUDAIPC_MSG_EVENT);
  msg.u.event.event_type = GST_EVENT_CUSTOM_DOWNSTREAM;
  msg.u.event.running_time = GST_CLOCK_TIME_NONE;
  msg.u.event.structure = structure->str;
  while (n < FLOOD_EVENTS && g_get_monotonic_time () < until) {
    gint r = cudaipc_conn_send (conn, &msg);

    if (r == -EAGAIN)
      continue;
    if (r < 0)
      break;
    n++;
  }
  tv.tv_usec = 0;
  g_assert_cmpint (setsockopt (fd, SOL_SOCKET, SO_SNDTIMEO, &tv,
          sizeof (tv)), ==, 0);
  g_string_free (structure, TRUE);
  g_mutex_lock (&p->lock);
  p->events = n;
  p->flood_ended = g_get_monotonic_time ();
  g_mutex_unlock (&p->lock);
}

/* Runs on its own thread: g_assert, not fail_unless. */
static gpointer
producer_thread (gpointer data)
{
  FakeProducer *p = data;
  g_autoptr (CudaIpcDevice) dev = NULL;
  g_autoptr (CudaIpcRing) ring = NULL;
  g_autoptr (CudaIpcFencePage) fence = NULL;
  guint64 page = cudaipc_test_page ();
  CudaIpcConn *conn;
  CudaIpcMsg msg;
  int fd = -1;

  dev = cudaipc_device_new (CUDAIPC_BACKEND_HOST, 0, NULL);
  g_assert_nonnull (dev);
  ring = cudaipc_ring_new (dev, 2, page, 0, GEN, NULL);
  g_assert_nonnull (ring);
  if (p->mode == UNFINISHED) {
    fence = cudaipc_fence_page_new (dev, NULL);
    g_assert_nonnull (fence);
  }
  g_assert_cmpint (cudaipc_socket_accept (p->listen_fd, &fd), ==, 0);
  conn = cudaipc_conn_new (fd);

  cudaipc_msg_init (&msg, CUDAIPC_MSG_HELLO);
  msg.u.hello.version = CUDAIPC_PROTOCOL_VERSION;
  msg.u.hello.backend = CUDAIPC_BACKEND_HOST;
  msg.u.hello.caps = fence ? CUDAIPC_CAP_FENCE : 0;
  msg.u.hello.pid = getpid ();
  msg.u.hello.name = "fake-producer";
  send_or_die (conn, &msg);
  /* the rest goes at once, the consumer's HELLO left in the socket: by
   * the time the consumer reads the FRAME, the flood behind it is there */

  cudaipc_msg_init (&msg, CUDAIPC_MSG_RING);
  msg.u.ring.generation = GEN;
  msg.u.ring.n_slots = 2;
  msg.u.ring.slot_size = page;
  if (fence) {
    msg.u.ring.flags = CUDAIPC_RING_HAS_FENCE;
    msg.fds[0] = cudaipc_fence_page_get_fd (fence);
    msg.n_fds = 1;
  }
  send_or_die (conn, &msg);
  for (guint i = 0; i < 2; i++) {
    const CudaIpcDescriptor *desc =
        cudaipc_block_get_descriptor (cudaipc_ring_get_block (ring, i));

    cudaipc_msg_init (&msg, CUDAIPC_MSG_SLOT);
    msg.u.slot.generation = GEN;
    msg.u.slot.index = i;
    msg.u.slot.size = cudaipc_descriptor_get_size (desc);
    msg.u.slot.n_allocs = cudaipc_descriptor_get_n_fds (desc);
    for (guint j = 0; j < msg.u.slot.n_allocs; j++) {
      msg.u.slot.alloc_sizes[j] = cudaipc_descriptor_get_sizes (desc)[j];
      msg.fds[j] = cudaipc_descriptor_get_fds (desc)[j];
    }
    msg.n_fds = msg.u.slot.n_allocs;
    send_or_die (conn, &msg);
  }
  cudaipc_msg_init (&msg, CUDAIPC_MSG_CAPS);
  msg.u.caps.caps_id = 1;
  msg.u.caps.caps = "video/x-raw, format=(string)GRAY8, width=(int)64, "
      "height=(int)4, framerate=(fraction)30/1";
  send_or_die (conn, &msg);

  cudaipc_msg_init (&msg, CUDAIPC_MSG_FRAME);
  msg.u.frame.generation = GEN;
  msg.u.frame.slot = 0;
  msg.u.frame.seq = 1;
  msg.u.frame.caps_id = 1;
  msg.u.frame.pts = 0;
  msg.u.frame.dts = GST_CLOCK_TIME_NONE;
  msg.u.frame.duration = GST_SECOND / 30;
  msg.u.frame.size = W * H;
  /* a flood comes behind a frame old enough to be checked before it goes
   * out */
  msg.u.frame.publish_time = (guint64) g_get_monotonic_time () * 1000 -
      (p->mode == FLOOD ? 2 * GST_SECOND : 0);
  msg.u.frame.clock_time = GST_CLOCK_TIME_NONE;
  msg.u.frame.n_planes = 1;
  msg.u.frame.planes[0].stride = W;
  send_or_die (conn, &msg);
  g_mutex_lock (&p->lock);
  p->sent_at = g_get_monotonic_time ();
  g_cond_broadcast (&p->cond);
  g_mutex_unlock (&p->lock);

  if (p->mode == FLOOD)
    flood (p, conn);

  /* until the consumer leaves */
  while (cudaipc_conn_wait (conn, 10000) == 1 &&
      cudaipc_conn_recv (conn, &msg) == 0)
    cudaipc_msg_clear (&msg);
  cudaipc_conn_free (conn);
  return NULL;
}

static void
fake_start (Mode mode)
{
  fake->mode = mode;
  g_assert_cmpint (cudaipc_socket_listen (fake->path, 0600,
          &fake->listen_fd), ==, 0);
  fake->thread = g_thread_new ("fake-producer", producer_thread, fake);
}

/* Waits until the FRAME went out; returns when it did. */
static gint64
fake_wait_sent (void)
{
  gint64 end = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;
  gint64 at;

  g_mutex_lock (&fake->lock);
  while (fake->sent_at == 0 && g_cond_wait_until (&fake->cond, &fake->lock,
          end)) {
  }
  at = fake->sent_at;
  g_mutex_unlock (&fake->lock);
  fail_unless (at != 0, "the consumer never connected");
  return at;
}

static void
setup (void)
{
  fake = g_new0 (FakeProducer, 1);
  fake->path = cudaipc_test_socket_path ("producer-faults", "s.sock");
  fake->listen_fd = -1;
  g_mutex_init (&fake->lock);
  g_cond_init (&fake->cond);
}

static void
teardown (void)
{
  if (fake->thread)
    g_thread_join (fake->thread);
  if (fake->listen_fd >= 0)
    close (fake->listen_fd);
  cudaipc_test_socket_remove (&fake->path);
  g_mutex_clear (&fake->lock);
  g_cond_clear (&fake->cond);
  g_clear_pointer (&fake, g_free);
}

static GstElement *
consumer (const gchar * sink)
{
  g_autofree gchar *desc = g_strdup_printf ("cuipcsrc socket-path=%s ! %s",
      fake->path, sink);
  GError *err = NULL;
  GstElement *pipe = gst_parse_launch (desc, &err);

  fail_unless (pipe != NULL && err == NULL, "%s: %s", desc,
      err ? err->message : "");
  fail_if (gst_element_set_state (pipe, GST_STATE_PLAYING) ==
      GST_STATE_CHANGE_FAILURE);
  return pipe;
}

/* Stopping does not wait for a frame whose copy never lands. */
GST_START_TEST (test_stop_while_frame_unfinished)
{
  GstElement *pipe;
  gint64 t0, took;

  fake_start (UNFINISHED);
  pipe = consumer ("fakesink");
  fake_wait_sent ();
  /* the source is well into its wait for the fence word by now */
  g_usleep (300 * 1000);
  t0 = g_get_monotonic_time ();
  gst_element_set_state (pipe, GST_STATE_NULL);
  took = g_get_monotonic_time () - t0;
  gst_object_unref (pipe);
  g_print ("producer-faults: set_state (NULL) during a wait for a fence "
      "word took %" G_GINT64_FORMAT " us\n", took);
  fail_unless (took < 500 * 1000, "set_state (NULL) took %" G_GINT64_FORMAT
      " us", took);
}

GST_END_TEST;

static void
on_handoff (GstElement * sink, GstBuffer * buf, GstPad * pad, gpointer data)
{
  g_mutex_lock (&fake->lock);
  if (fake->got_at == 0)
    fake->got_at = g_get_monotonic_time ();
  g_mutex_unlock (&fake->lock);
}

/* A late frame with a flood of events behind it goes out without the
 * source reading the whole flood first, and its memory stays bounded. */
GST_START_TEST (test_late_frame_before_flood)
{
  GstElement *pipe, *sink;
  guint64 before, peak, now;
  gint64 sent_at, flood_ended, got_at;
  guint events;

  before = cudaipc_test_rss_kib ();
  fake_start (FLOOD);
  pipe = consumer ("fakesink name=sink signal-handoffs=true");
  sink = gst_bin_get_by_name (GST_BIN (pipe), "sink");
  g_signal_connect (sink, "handoff", G_CALLBACK (on_handoff), NULL);
  gst_object_unref (sink);
  sent_at = fake_wait_sent ();

  peak = before;
  for (;;) {
    g_usleep (20 * 1000);
    now = cudaipc_test_rss_kib ();
    peak = MAX (peak, now);
    g_mutex_lock (&fake->lock);
    flood_ended = fake->flood_ended;
    got_at = fake->got_at;
    g_mutex_unlock (&fake->lock);
    if (flood_ended != 0 && got_at != 0)
      break;
    fail_unless (g_get_monotonic_time () < sent_at + 10 * G_USEC_PER_SEC,
        "no frame after 10 s");
  }
  gst_element_set_state (pipe, GST_STATE_NULL);
  gst_object_unref (pipe);
  g_mutex_lock (&fake->lock);
  events = fake->events;
  g_mutex_unlock (&fake->lock);

  g_print ("producer-faults: a late frame before %u events (a flood of %"
      G_GINT64_FORMAT " ms): out after %" G_GINT64_FORMAT " ms; RSS %"
      G_GUINT64_FORMAT " -> peak %" G_GUINT64_FORMAT " KiB\n", events,
      (flood_ended - sent_at) / 1000, (got_at - sent_at) / 1000, before, peak);
  fail_unless (got_at - sent_at < 1 * G_USEC_PER_SEC, "the frame went out "
      "after %" G_GINT64_FORMAT " us", got_at - sent_at);
  fail_unless (peak < before + 100 * 1024 + CUDAIPC_TEST_RSS_SLACK_KIB,
      "RSS grew from %" G_GUINT64_FORMAT " to %" G_GUINT64_FORMAT " KiB",
      before, peak);
}

GST_END_TEST;

static Suite *
producer_faults_suite (void)
{
  Suite *s = suite_create ("producer-faults");
  TCase *tc = cudaipc_test_case (s, "general", 60);

  tcase_add_checked_fixture (tc, setup, teardown);
  tcase_add_test (tc, test_stop_while_frame_unfinished);
  tcase_add_test (tc, test_late_frame_before_flood);
  return s;
}

const CudaIpcTestMain cudaipc_test_main = {
  .name = "producer-faults",
  .suite = producer_faults_suite,
};
