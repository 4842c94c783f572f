/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * elements suite: cuipcsrc against a producer that breaks the rules on
 * time, played by hand in this process (connection.h, ring.h and
 * fence-page.h over the host backend) on a thread of its own:
 *
 *  - a FRAME whose fence word never comes: set_state (NULL) returns
 *    within 0.5 s while the source waits on it (the protocol's own limit
 *    for that frame is 2 s).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/check/gstcheck.h>

#include "wire/connection.h"
#include "ring/fence-page.h"
#include "ring/ring.h"
#include "test-main.h"
#include "test-util.h"

#define W 64
#define H 4
#define GEN 1

typedef enum
{
  UNFINISHED,                   /* the frame's fence word never comes */
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
} FakeProducer;

static FakeProducer *fake;

static void
send_or_die (CudaIpcConn * conn, const CudaIpcMsg * msg)
{
  g_assert_cmpint (cudaipc_conn_send (conn, msg), ==, 0);
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
  /* the rest goes at once, the consumer's HELLO left in the socket */

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
  msg.u.frame.publish_time = (guint64) g_get_monotonic_time () * 1000;
  msg.u.frame.clock_time = GST_CLOCK_TIME_NONE;
  msg.u.frame.n_planes = 1;
  msg.u.frame.planes[0].stride = W;
  send_or_die (conn, &msg);
  g_mutex_lock (&p->lock);
  p->sent_at = g_get_monotonic_time ();
  g_cond_broadcast (&p->cond);
  g_mutex_unlock (&p->lock);

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

static Suite *
producer_faults_suite (void)
{
  Suite *s = suite_create ("producer-faults");
  TCase *tc = cudaipc_test_case (s, "general", 60);

  tcase_add_checked_fixture (tc, setup, teardown);
  tcase_add_test (tc, test_stop_while_frame_unfinished);
  return s;
}

const CudaIpcTestMain cudaipc_test_main = {
  .name = "producer-faults",
  .suite = producer_faults_suite,
};
