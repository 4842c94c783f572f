/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The consumer's protocol side (client.h) against a scripted fake producer
 * made of connection.h, protocol.h and ring.h, over a real socket in a
 * temporary folder, with the host backend: connecting (retry, time-out,
 * cancel, a producer that is going away), the handshake, the receive loop
 * with content checks through the GstMemory, the release path from any
 * thread, max-held, and a hostile producer in many ways, each of which
 * must give a clear error, send BYE(PROTOCOL), close every fd it sent and
 * leak nothing. Every test ends with the fd-leak check.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <glib/gstdio.h>
#include <gst/check/gstcheck.h>

#include "consumer/client.h"
#include "wire/connection.h"
#include "common/error.h"
#include "ring/fence-page.h"
#include "ring/ring.h"
#include "test-main.h"
#include "test-util.h"

#define GEN 7
#define W 64
#define H 4
#define FRAME_SIZE (W * H)
#define CAPS_GRAY "video/x-raw, format=(string)GRAY8, width=(int)64, " \
  "height=(int)4, framerate=(fraction)30/1"

/* The fake producer. Its thread listens (after @delay_ms), accepts and says
 * HELLO; everything after that the test scripts from its own thread. */
typedef struct
{
  gchar *dir;
  gchar *path;
  int listen_fd;
  CudaIpcConn *conn;            /* the producer's end, once accepted */
  CudaIpcDevice *dev;
  CudaIpcRing *ring;
  GThread *thread;
  guint delay_ms;               /* before it listens */
  guint32 hello_version;
  guint32 ring_flags;           /* of send_ring()'s RING */
  guint32 hello_caps;           /* capabilities it offers */
  gboolean dying_first;         /* first connection: BYE(NORMAL), close */
  gboolean silent;              /* accepts, never says HELLO */
  gboolean refuse;              /* BYE(PERMISSION) instead of HELLO */
} Producer;

static Producer *prod;
static CudaIpcClient *client;

static guint64
page (void)
{
  return (guint64) sysconf (_SC_PAGESIZE);
}

static void
producer_listen (Producer * p)
{
  g_assert_cmpint (cudaipc_socket_listen (p->path, 0600, &p->listen_fd), ==, 0);
}

static void
producer_send_bye (CudaIpcConn * conn, guint32 reason, const gchar * text)
{
  CudaIpcMsg msg;

  cudaipc_msg_init (&msg, CUDAIPC_MSG_BYE);
  msg.u.bye.reason = reason;
  msg.u.bye.text = text;
  g_assert_cmpint (cudaipc_conn_send (conn, &msg), ==, 0);
}

/* Runs on its own thread: g_assert, not fail_unless. */
static gpointer
producer_thread (gpointer data)
{
  Producer *p = data;
  CudaIpcMsg msg;
  int fd = -1;

  if (p->delay_ms > 0)
    g_usleep (p->delay_ms * 1000);
  if (p->listen_fd < 0)
    producer_listen (p);

  if (p->dying_first) {
    CudaIpcConn *dying;

    g_assert_cmpint (cudaipc_socket_accept (p->listen_fd, &fd), ==, 0);
    dying = cudaipc_conn_new (fd);
    producer_send_bye (dying, CUDAIPC_BYE_NORMAL, "the producer stopped");
    cudaipc_conn_free (dying);
  }

  g_assert_cmpint (cudaipc_socket_accept (p->listen_fd, &fd), ==, 0);
  p->conn = cudaipc_conn_new (fd);
  if (p->silent)
    return NULL;
  if (p->refuse) {
    producer_send_bye (p->conn, CUDAIPC_BYE_PERMISSION, "uid 1000 may not");
    return NULL;
  }

  cudaipc_msg_init (&msg, CUDAIPC_MSG_HELLO);
  msg.u.hello.version = p->hello_version;
  msg.u.hello.backend = CUDAIPC_BACKEND_HOST;
  msg.u.hello.caps = p->hello_caps;
  msg.u.hello.pid = getpid ();
  msg.u.hello.name = "fake-producer";
  g_assert_cmpint (cudaipc_conn_send (p->conn, &msg), ==, 0);
  return NULL;
}

/* Listens at once, unless the producer is to appear later. */
static void
producer_start (Producer * p)
{
  if (p->delay_ms == 0 && p->listen_fd < 0)
    producer_listen (p);
  p->thread = g_thread_new ("producer", producer_thread, p);
}

static void
producer_join (Producer * p)
{
  if (p->thread)
    g_thread_join (p->thread);
  p->thread = NULL;
}

static void
setup (void)
{
  GError *err = NULL;

  prod = g_new0 (Producer, 1);
  prod->dir = g_dir_make_tmp ("cudaipc-client-XXXXXX", NULL);
  fail_unless (prod->dir != NULL);
  prod->path = g_build_filename (prod->dir, "s.sock", NULL);
  prod->listen_fd = -1;
  prod->hello_version = CUDAIPC_PROTOCOL_VERSION;
  prod->ring_flags = 0;
  prod->dev = cudaipc_device_new (CUDAIPC_BACKEND_HOST, 0, &err);
  fail_unless (prod->dev != NULL, "host device: %s", err ? err->message : "");
  client = cudaipc_client_new (&err);
  fail_unless (client != NULL, "client: %s", err ? err->message : "");
}

static void
teardown (void)
{
  producer_join (prod);
  cudaipc_client_free (client);
  client = NULL;
  cudaipc_conn_free (prod->conn);
  cudaipc_ring_unref (prod->ring);
  cudaipc_device_unref (prod->dev);
  if (prod->listen_fd >= 0)
    close (prod->listen_fd);
  g_unlink (prod->path);
  g_rmdir (prod->dir);
  g_free (prod->path);
  g_free (prod->dir);
  g_free (prod);
  prod = NULL;
}

/* The producer's side of the script */

static void
psend (const CudaIpcMsg * msg)
{
  fail_unless_equals_int (cudaipc_conn_send (prod->conn, msg), 0);
}

/* Receives the client's next message, which must be of @type. */
static void
expect (CudaIpcMsgType type, CudaIpcMsg * msg)
{
  gint ret;

  fail_unless_equals_int (cudaipc_conn_wait (prod->conn, 5000), 1);
  ret = cudaipc_conn_recv (prod->conn, msg);
  fail_unless_equals_int (ret, 0);
  fail_unless_equals_string (cudaipc_msg_type_name (msg->type),
      cudaipc_msg_type_name (type));
}

static void
expect_release (guint32 generation, guint32 slot, guint64 seq)
{
  CudaIpcMsg msg;

  expect (CUDAIPC_MSG_RELEASE, &msg);
  fail_unless_equals_int (msg.u.release.generation, generation);
  fail_unless_equals_int (msg.u.release.slot, slot);
  fail_unless_equals_uint64 (msg.u.release.seq, seq);
  cudaipc_msg_clear (&msg);
}

static void
expect_bye (guint32 reason)
{
  CudaIpcMsg msg;

  expect (CUDAIPC_MSG_BYE, &msg);
  fail_unless_equals_int (msg.u.bye.reason, reason);
  fail_unless (msg.u.bye.text[0] != '\0');
  cudaipc_msg_clear (&msg);
}

/* The client closed its end, with nothing more sent. */
static void
expect_closed (void)
{
  CudaIpcMsg msg;

  cudaipc_msg_init (&msg, 0);
  fail_unless_equals_int (cudaipc_conn_wait (prod->conn, 5000), 1);
  fail_unless_equals_int (cudaipc_conn_recv (prod->conn, &msg), -EPIPE);
  cudaipc_msg_clear (&msg);
}

static void
expect_silence (gint ms)
{
  fail_unless_equals_int (cudaipc_conn_wait (prod->conn, ms), 0);
}

static void
send_ring (guint32 generation, guint n_slots)
{
  GError *err = NULL;
  CudaIpcMsg msg;

  cudaipc_ring_unref (prod->ring);
  prod->ring = cudaipc_ring_new (prod->dev, n_slots, page (), 0, generation,
      &err);
  fail_unless (prod->ring != NULL, "ring: %s", err ? err->message : "");
  cudaipc_msg_init (&msg, CUDAIPC_MSG_RING);
  msg.u.ring.generation = generation;
  msg.u.ring.n_slots = n_slots;
  msg.u.ring.slot_size = page ();
  msg.u.ring.flags = prod->ring_flags;
  psend (&msg);
}

/* SLOT @index of the current ring, with its fds attached. */
static void
slot_msg (guint index, CudaIpcMsg * msg)
{
  CudaIpcBlock *block = cudaipc_ring_get_block (prod->ring, index);
  const CudaIpcDescriptor *desc = cudaipc_block_get_descriptor (block);
  guint n = cudaipc_descriptor_get_n_fds (desc);

  cudaipc_msg_init (msg, CUDAIPC_MSG_SLOT);
  msg->u.slot.generation = cudaipc_ring_get_generation (prod->ring);
  msg->u.slot.index = index;
  msg->u.slot.size = cudaipc_descriptor_get_size (desc);
  msg->u.slot.n_allocs = n;
  for (guint i = 0; i < n; i++) {
    msg->u.slot.alloc_sizes[i] = cudaipc_descriptor_get_sizes (desc)[i];
    msg->fds[i] = cudaipc_descriptor_get_fds (desc)[i];
  }
  msg->n_fds = n;
}

static void
send_slots (void)
{
  for (guint i = 0; i < cudaipc_ring_get_n_slots (prod->ring); i++) {
    CudaIpcMsg msg;

    slot_msg (i, &msg);
    psend (&msg);
  }
}

static void
send_caps (guint32 caps_id, const gchar * caps)
{
  CudaIpcMsg msg;

  cudaipc_msg_init (&msg, CUDAIPC_MSG_CAPS);
  msg.u.caps.caps_id = caps_id;
  msg.u.caps.caps = caps;
  psend (&msg);
}

/* RING (@n_slots), every SLOT, CAPS 1 (GRAY8 64x4). */
static void
send_stream_start (guint n_slots)
{
  send_ring (GEN, n_slots);
  send_slots ();
  send_caps (1, CAPS_GRAY);
}

/* A good FRAME for @slot of the current ring, one plane, caps 1. */
static void
frame_msg (guint slot, guint64 seq, CudaIpcMsg * msg)
{
  cudaipc_msg_init (msg, CUDAIPC_MSG_FRAME);
  msg->u.frame.generation = cudaipc_ring_get_generation (prod->ring);
  msg->u.frame.slot = slot;
  msg->u.frame.seq = seq;
  msg->u.frame.caps_id = 1;
  msg->u.frame.pts = seq * 1000;
  msg->u.frame.dts = GST_CLOCK_TIME_NONE;
  msg->u.frame.duration = 1000;
  msg->u.frame.size = FRAME_SIZE;
  msg->u.frame.clock_time = GST_CLOCK_TIME_NONE;
  msg->u.frame.n_planes = 1;
  msg->u.frame.planes[0].offset = 0;
  msg->u.frame.planes[0].stride = W;
}

static void
fill_slot (guint slot, guint8 seed)
{
  CudaIpcBlock *block = cudaipc_ring_get_block (prod->ring, slot);
  guint8 data[FRAME_SIZE];

  for (guint i = 0; i < FRAME_SIZE; i++)
    data[i] = (guint8) (seed + i * 7);
  fail_unless (cudaipc_device_write (prod->dev, cudaipc_block_get_ptr (block),
          data, sizeof (data), NULL));
}

static void
send_frame (guint slot, guint64 seq)
{
  CudaIpcMsg msg;

  fill_slot (slot, (guint8) seq);
  frame_msg (slot, seq, &msg);
  psend (&msg);
}

/* The client's side */

static void
connect_ok (void)
{
  GError *err = NULL;
  CudaIpcClientStatus st;
  CudaIpcMsg msg;

  producer_start (prod);
  st = cudaipc_client_connect (client, prod->path, "test-client", 0, 5000,
      &err);
  fail_unless_equals_int (st, CUDAIPC_CLIENT_OK);
  fail_unless (err == NULL);
  producer_join (prod);
  fail_unless (cudaipc_client_is_connected (client));
  fail_unless_equals_int (cudaipc_client_get_backend (client),
      CUDAIPC_BACKEND_HOST);

  expect (CUDAIPC_MSG_HELLO, &msg);
  fail_unless_equals_int (msg.u.hello.version, CUDAIPC_PROTOCOL_VERSION);
  fail_unless_equals_int (msg.u.hello.backend, CUDAIPC_BACKEND_HOST);
  fail_unless_equals_int (msg.u.hello.pid, getpid ());
  fail_unless_equals_string (msg.u.hello.name, "test-client");
  /* the fence page and the release page, and no interprocess events
   * with the host backend */
  fail_unless_equals_int (msg.u.hello.caps, CUDAIPC_CAP_FENCE |
      CUDAIPC_CAP_RELEASE_PAGE);
  cudaipc_msg_clear (&msg);
}

static void
receive_frame (CudaIpcClientItem * item)
{
  GError *err = NULL;
  CudaIpcClientStatus st = cudaipc_client_receive (client, item, &err);

  fail_unless_equals_int (st, CUDAIPC_CLIENT_OK);
  fail_unless (err == NULL, "%s", err ? err->message : "");
  fail_unless_equals_int (item->type, CUDAIPC_CLIENT_ITEM_FRAME);
  fail_unless (item->frame.memory != NULL);
}

static void
receive_event (CudaIpcClientItem * item, GstEventType type)
{
  CudaIpcClientStatus st = cudaipc_client_receive (client, item, NULL);

  fail_unless_equals_int (st, CUDAIPC_CLIENT_OK);
  fail_unless_equals_int (item->type, CUDAIPC_CLIENT_ITEM_EVENT);
  fail_unless_equals_string (GST_EVENT_TYPE_NAME (item->event),
      gst_event_type_get_name (type));
}

static void
assert_content (GstMemory * mem, guint8 seed)
{
  GstMapInfo map;

  fail_unless (gst_memory_map (mem, &map, GST_MAP_READ));
  fail_unless_equals_int (map.size, FRAME_SIZE);
  for (guint i = 0; i < FRAME_SIZE; i++)
    fail_unless_equals_int (map.data[i], (guint8) (seed + i * 7));
  gst_memory_unmap (mem, &map);
}

/* The next receive() fails with a protocol error whose text has @needle
 * and the socket path; the producer got BYE(PROTOCOL), then the close. */
/* The client's receive() fails with a protocol error naming @needle and
 * the path; with @slot >= 0 it gave the frame of @slot and @seq back
 * before it closed with BYE(PROTOCOL). */
static void
expect_broken_releasing (const gchar * needle, gint slot, guint64 seq)
{
  CudaIpcClientItem item;
  GError *err = NULL;
  CudaIpcClientStatus st = cudaipc_client_receive (client, &item, &err);

  fail_unless_equals_int (st, CUDAIPC_CLIENT_ERROR);
  fail_unless (g_error_matches (err, CUDAIPC_ERROR, CUDAIPC_ERROR_PROTOCOL),
      "error %s", err ? err->message : "(none)");
  fail_unless (strstr (err->message, needle) != NULL,
      "'%s' not in '%s'", needle, err->message);
  fail_unless (strstr (err->message, prod->path) != NULL,
      "the path is not in '%s'", err->message);
  fail_unless_equals_int (item.type, CUDAIPC_CLIENT_ITEM_NONE);
  g_clear_error (&err);
  cudaipc_client_item_clear (&item);
  fail_if (cudaipc_client_is_connected (client));
  if (slot >= 0)
    expect_release (GEN, slot, seq);
  expect_bye (CUDAIPC_BYE_PROTOCOL);
  expect_closed ();
}

static void
expect_broken (const gchar * needle)
{
  expect_broken_releasing (needle, -1, 0);
}


static gpointer
cancel_later (gpointer data)
{
  g_usleep (100 * 1000);
  cudaipc_client_cancel (data);
  return NULL;
}

static gpointer
unref_memory (gpointer data)
{
  gst_memory_unref (data);
  return NULL;
}

/* Connecting */

GST_START_TEST (test_connect_retry)
{
  gint64 t0 = g_get_monotonic_time ();

  /* nothing listens for the first 300 ms */
  prod->delay_ms = 300;
  connect_ok ();
  fail_unless (g_get_monotonic_time () - t0 >= 250 * 1000);
  cudaipc_client_disconnect (client, CUDAIPC_BYE_NORMAL, "done");
  expect_bye (CUDAIPC_BYE_NORMAL);
  expect_closed ();
}

GST_END_TEST;

GST_START_TEST (test_connect_timeout)
{
  GError *err = NULL;
  gint64 t0 = g_get_monotonic_time (), dt;
  CudaIpcClientStatus st;

  st = cudaipc_client_connect (client, prod->path, NULL, 0, 200, &err);
  dt = g_get_monotonic_time () - t0;
  fail_unless_equals_int (st, CUDAIPC_CLIENT_ERROR);
  fail_unless (err != NULL && err->domain == CUDAIPC_ERROR);
  fail_unless (strstr (err->message, "No producer on") != NULL, "%s",
      err->message);
  fail_unless (strstr (err->message, prod->path) != NULL, "%s", err->message);
  fail_unless (dt >= 200 * 1000 && dt < 3 * G_USEC_PER_SEC);
  fail_if (cudaipc_client_is_connected (client));
  g_clear_error (&err);
}

GST_END_TEST;

GST_START_TEST (test_connect_to_dying_producer)
{
  CudaIpcClientItem item;

  /* the first one accepts and leaves with BYE(NORMAL): wait for the next */
  prod->dying_first = TRUE;
  connect_ok ();
  send_stream_start (1);
  send_frame (0, 0);
  receive_frame (&item);
  assert_content (item.frame.memory, 0);
  cudaipc_client_item_clear (&item);
  expect_release (GEN, 0, 0);
}

GST_END_TEST;

GST_START_TEST (test_cancel_connect)
{
  GError *err = NULL;
  GThread *t;
  gint64 t0;
  CudaIpcClientStatus st;

  /* nobody listens, no deadline */
  t0 = g_get_monotonic_time ();
  t = g_thread_new ("cancel", cancel_later, client);
  st = cudaipc_client_connect (client, prod->path, NULL, 0, 0, &err);
  g_thread_join (t);
  fail_unless_equals_int (st, CUDAIPC_CLIENT_CANCELLED);
  fail_unless (err == NULL);
  fail_unless (g_get_monotonic_time () - t0 < G_USEC_PER_SEC);

  /* still cancelled: at once */
  st = cudaipc_client_connect (client, prod->path, NULL, 0, 0, NULL);
  fail_unless_equals_int (st, CUDAIPC_CLIENT_CANCELLED);
  cudaipc_client_uncancel (client);

  /* a producer that accepts and never says HELLO */
  prod->silent = TRUE;
  producer_start (prod);
  t0 = g_get_monotonic_time ();
  t = g_thread_new ("cancel", cancel_later, client);
  st = cudaipc_client_connect (client, prod->path, NULL, 0, 0, &err);
  g_thread_join (t);
  producer_join (prod);
  fail_unless_equals_int (st, CUDAIPC_CLIENT_CANCELLED);
  fail_unless (g_get_monotonic_time () - t0 < G_USEC_PER_SEC);
  fail_if (cudaipc_client_is_connected (client));
  expect_closed ();
  cudaipc_client_uncancel (client);
}

GST_END_TEST;

GST_START_TEST (test_hello_timeout)
{
  GError *err = NULL;
  CudaIpcClientStatus st;

  prod->silent = TRUE;
  producer_start (prod);
  st = cudaipc_client_connect (client, prod->path, NULL, 0, 300, &err);
  producer_join (prod);
  fail_unless_equals_int (st, CUDAIPC_CLIENT_ERROR);
  fail_unless (strstr (err->message, "sent no HELLO within 300 ms") != NULL,
      "%s", err->message);
  fail_unless (strstr (err->message, prod->path) != NULL);
  g_clear_error (&err);
  expect_closed ();
}

GST_END_TEST;

GST_START_TEST (test_version_mismatch)
{
  GError *err = NULL;
  CudaIpcClientStatus st;

  prod->hello_version = CUDAIPC_PROTOCOL_VERSION + 1;
  producer_start (prod);
  st = cudaipc_client_connect (client, prod->path, NULL, 0, 5000, &err);
  producer_join (prod);
  fail_unless_equals_int (st, CUDAIPC_CLIENT_ERROR);
  fail_unless (g_error_matches (err, CUDAIPC_ERROR, CUDAIPC_ERROR_VERSION));
  {
    g_autofree gchar *text = g_strdup_printf ("speaks protocol version %d, "
        "this consumer %d", CUDAIPC_PROTOCOL_VERSION + 1,
        CUDAIPC_PROTOCOL_VERSION);

    fail_unless (strstr (err->message, text) != NULL, "%s", err->message);
  }
  fail_unless (strstr (err->message, prod->path) != NULL);
  g_clear_error (&err);
  fail_if (cudaipc_client_is_connected (client));
  expect_bye (CUDAIPC_BYE_VERSION);
  expect_closed ();
}

GST_END_TEST;

GST_START_TEST (test_refused)
{
  GError *err = NULL;
  CudaIpcClientStatus st;

  /* a BYE other than NORMAL instead of HELLO is a refusal */
  prod->refuse = TRUE;
  producer_start (prod);
  st = cudaipc_client_connect (client, prod->path, NULL, 0, 5000, &err);
  producer_join (prod);
  fail_unless_equals_int (st, CUDAIPC_CLIENT_ERROR);
  fail_unless (g_error_matches (err, CUDAIPC_ERROR, CUDAIPC_ERROR_PERMISSION));
  fail_unless (strstr (err->message, "refused this consumer: uid 1000 may "
          "not") != NULL, "%s", err->message);
  g_clear_error (&err);
  expect_closed ();
}

GST_END_TEST;

/* Frames and releases */

GST_START_TEST (test_normal_flow)
{
  CudaIpcClientItem a, b;
  CudaIpcClientStats stats;
  CudaIpcMsg msg;

  connect_ok ();
  send_stream_start (2);
  send_frame (0, 0);
  send_frame (1, 1);

  receive_frame (&a);
  fail_unless_equals_int (a.frame.msg.slot, 0);
  fail_unless_equals_uint64 (a.frame.msg.seq, 0);
  fail_unless_equals_uint64 (a.frame.msg.pts, 0);
  fail_unless_equals_uint64 (a.frame.msg.duration, 1000);
  fail_unless (a.frame.discont);
  fail_unless (gst_caps_is_fixed (a.frame.caps));
  fail_unless_equals_int (GST_VIDEO_INFO_FORMAT (&a.frame.info),
      GST_VIDEO_FORMAT_GRAY8);
  fail_unless_equals_int (GST_VIDEO_INFO_WIDTH (&a.frame.info), W);
  fail_unless (cudaipc_is_memory (a.frame.memory));
  fail_unless (a.frame.block != NULL);
  assert_content (a.frame.memory, 0);

  receive_frame (&b);
  fail_unless_equals_int (b.frame.msg.slot, 1);
  fail_if (b.frame.discont);
  /* one caps id: the same caps object */
  fail_unless (b.frame.caps == a.frame.caps);
  assert_content (b.frame.memory, 1);

  cudaipc_client_get_stats (client, &stats);
  fail_unless_equals_uint64 (stats.received, 2);
  fail_unless_equals_int (stats.held, 2);
  fail_unless_equals_int (stats.imports, 2);
  fail_unless_equals_int (stats.generation, GEN);
  fail_unless_equals_uint64 (stats.released, 0);

  /* nothing goes back while the frames are held */
  expect_silence (50);
  cudaipc_client_item_clear (&b);
  expect_release (GEN, 1, 1);
  cudaipc_client_item_clear (&a);
  expect_release (GEN, 0, 0);

  /* slot 0 again, with a new caps id of the same caps */
  send_caps (2, CAPS_GRAY);
  frame_msg (0, 2, &msg);
  msg.u.frame.caps_id = 2;
  fill_slot (0, 2);
  psend (&msg);
  receive_frame (&a);
  assert_content (a.frame.memory, 2);
  cudaipc_client_item_clear (&a);
  expect_release (GEN, 0, 2);

  cudaipc_client_get_stats (client, &stats);
  fail_unless_equals_uint64 (stats.received, 3);
  fail_unless_equals_uint64 (stats.released, 3);
  fail_unless_equals_int (stats.held, 0);
}

GST_END_TEST;

/* A CHANNEL of the fake producer's, sent on the socket; every later
 * message of its goes through the channel. */
static void
send_channel (void)
{
  GError *err = NULL;
  CudaIpcWake *wake = cudaipc_wake_new (getuid (), &err);
  CudaIpcChannel *ch;
  CudaIpcMsg msg;

  fail_unless (wake != NULL, "%s", err ? err->message : "");
  ch = cudaipc_channel_new (CUDAIPC_CHANNEL_CAPACITY, wake, &err);
  cudaipc_wake_unref (wake);
  fail_unless (ch != NULL, "%s", err ? err->message : "");
  cudaipc_msg_init (&msg, CUDAIPC_MSG_CHANNEL);
  msg.u.channel.capacity = cudaipc_channel_get_capacity (ch);
  msg.fds[0] = cudaipc_channel_get_memfd (ch);
  msg.fds[1] = cudaipc_channel_get_wake_fd (ch);
  msg.n_fds = CUDAIPC_CHANNEL_N_FDS;
  psend (&msg);
  cudaipc_conn_set_tx_channel (prod->conn, ch);
}

/* Connects with announce=shared-memory to a producer that offers the
 * channel; the client's HELLO asks for it. */
static void
connect_asking_channel (void)
{
  GError *err = NULL;
  CudaIpcMsg msg;

  cudaipc_client_set_announce (client, CUDAIPC_ANNOUNCE_SHARED_MEMORY, 0);
  prod->hello_caps = CUDAIPC_CAP_CHANNEL;
  producer_start (prod);
  fail_unless_equals_int (cudaipc_client_connect (client, prod->path,
          "test-client", 0, 5000, &err), CUDAIPC_CLIENT_OK);
  producer_join (prod);
  expect (CUDAIPC_MSG_HELLO, &msg);
  fail_unless (msg.u.hello.caps & CUDAIPC_CAP_CHANNEL);
  cudaipc_msg_clear (&msg);
}

/* announce=shared-memory with a producer that offers it: asked in HELLO,
 * and the stream read through the channel, the SLOTs' fds behind their
 * marks, frames released as ever. */
GST_START_TEST (test_channel_flow)
{
  CudaIpcClientItem a, b;

  connect_asking_channel ();
  send_channel ();
  send_stream_start (2);
  send_frame (0, 0);
  send_frame (1, 1);
  receive_frame (&a);
  assert_content (a.frame.memory, 0);
  receive_frame (&b);
  assert_content (b.frame.memory, 1);
  cudaipc_client_item_clear (&a);
  expect_release (GEN, 0, 0);
  cudaipc_client_item_clear (&b);
  expect_release (GEN, 1, 1);
  /* the producer's end, after what it sent */
  send_frame (0, 2);
  producer_send_bye (prod->conn, CUDAIPC_BYE_NORMAL, "done");
  receive_frame (&a);
  assert_content (a.frame.memory, 2);
  cudaipc_client_item_clear (&a);
  fail_unless_equals_int (cudaipc_client_receive (client, &b, NULL),
      CUDAIPC_CLIENT_CLOSED);
  fail_unless (b.said_bye);
  cudaipc_client_item_clear (&b);
}

GST_END_TEST;

/* A CHANNEL whose page is not sealed (the producer could cut it under
 * the consumer's mapping) breaks the protocol, with a clear error. */
GST_START_TEST (test_channel_unsealed)
{
  CudaIpcMsg msg;
  int memfd, wake[2];

  connect_asking_channel ();

  memfd = memfd_create ("unsealed", MFD_CLOEXEC);
  fail_unless (memfd >= 0 && ftruncate (memfd, 4096 + 4096) == 0);
  fail_unless (socketpair (AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, wake) == 0);
  cudaipc_msg_init (&msg, CUDAIPC_MSG_CHANNEL);
  msg.u.channel.capacity = 4096;
  msg.fds[0] = memfd;
  msg.fds[1] = wake[1];
  msg.n_fds = CUDAIPC_CHANNEL_N_FDS;
  psend (&msg);
  close (memfd);
  close (wake[0]);
  close (wake[1]);
  expect_broken ("not sealed against shrinking");
}

GST_END_TEST;

/* A CHANNEL this consumer did not ask for breaks the protocol. */
GST_START_TEST (test_channel_not_asked)
{
  connect_ok ();
  send_channel ();
  expect_broken ("did not ask for");
}

GST_END_TEST;

/* The host backend asks for no interprocess events, even from a producer
 * that offers them, and a SLOT's event handle it did not ask for changes
 * nothing: no driver call, no wait. */
GST_START_TEST (test_host_asks_no_events)
{
  CudaIpcClientItem a;
  CudaIpcClientStats stats;
  CudaIpcMsg msg;

  prod->hello_caps = CUDAIPC_CAP_EVENTS;
  connect_ok ();
  send_ring (GEN, 2);
  for (guint i = 0; i < 2; i++) {
    slot_msg (i, &msg);
    msg.u.slot.flags = CUDAIPC_SLOT_HAS_EVENT;
    memset (msg.u.slot.event_handle, 0xa5, sizeof (msg.u.slot.event_handle));
    psend (&msg);
  }
  send_caps (1, CAPS_GRAY);
  send_frame (1, 0);

  receive_frame (&a);
  fail_unless_equals_int (a.frame.msg.slot, 1);
  assert_content (a.frame.memory, 0);
  cudaipc_client_get_stats (client, &stats);
  fail_unless_equals_int (stats.imports, 2);
  fail_unless_equals_uint64 (stats.driver_calls, 0);
  cudaipc_client_item_clear (&a);
  expect_release (GEN, 1, 0);
}

GST_END_TEST;

/* The fence page */

/* RING (@n_slots) with @fence_fd as its fence page (borrowed), every SLOT,
 * CAPS 1. */
static void
send_stream_start_fenced (guint n_slots, int fence_fd)
{
  GError *err = NULL;
  CudaIpcMsg msg;

  cudaipc_ring_unref (prod->ring);
  prod->ring = cudaipc_ring_new (prod->dev, n_slots, page (), 0, GEN, &err);
  fail_unless (prod->ring != NULL, "ring: %s", err ? err->message : "");
  cudaipc_msg_init (&msg, CUDAIPC_MSG_RING);
  msg.u.ring.generation = GEN;
  msg.u.ring.n_slots = n_slots;
  msg.u.ring.slot_size = page ();
  msg.u.ring.flags = CUDAIPC_RING_HAS_FENCE;
  msg.fds[0] = fence_fd;
  msg.n_fds = 1;
  psend (&msg);
  send_slots ();
  send_caps (1, CAPS_GRAY);
}

static CudaIpcFencePage *
producer_fence (void)
{
  GError *err = NULL;
  CudaIpcFencePage *fence = cudaipc_fence_page_new (prod->dev, &err);

  fail_unless (fence != NULL, "%s", err ? err->message : "?");
  return fence;
}

static void
fence_signal (CudaIpcFencePage * fence, guint slot, guint64 value)
{
  guint calls = 0;

  fail_unless (cudaipc_fence_page_signal (fence, slot, value, NULL, &calls,
          NULL));
}

typedef struct
{
  CudaIpcFencePage *fence;
  guint slot;
  guint64 value;
} LateSignal;

static gpointer
signal_after_100ms (gpointer data)
{
  LateSignal *l = data;

  g_usleep (100 * 1000);
  fence_signal (l->fence, l->slot, l->value);
  return NULL;
}

/* A frame is handed out once its slot's fence word reaches the frame's
 * number, not before, and reading the word costs no driver call. */
GST_START_TEST (test_fence_page_orders_frames)
{
  g_autoptr (CudaIpcFencePage) fence = NULL;
  CudaIpcClientItem a, b;
  CudaIpcClientStats stats;
  CudaIpcClientInfo info;
  LateSignal later;
  GThread *t;
  gint64 t0, took;
  int slack;

  prod->hello_caps = CUDAIPC_CAP_FENCE;
  connect_ok ();
  fence = producer_fence ();
  send_stream_start_fenced (2, cudaipc_fence_page_get_fd (fence));

  /* frame 1: its copy "lands" 100 ms after the FRAME */
  send_frame (0, 1);
  later.fence = fence;
  later.slot = 0;
  later.value = 1;
  slack = prctl (PR_GET_TIMERSLACK, 0, 0, 0, 0);
  t0 = g_get_monotonic_time ();
  t = g_thread_new ("fence", signal_after_100ms, &later);
  receive_frame (&a);
  took = g_get_monotonic_time () - t0;
  g_thread_join (t);
  fail_unless (took >= 90 * 1000, "frame 1 came after %" G_GINT64_FORMAT
      " us, before its fence", took);
  /* the wait slept with a lower timer slack, then put this thread's back */
  fail_unless_equals_int (prctl (PR_GET_TIMERSLACK, 0, 0, 0, 0), slack);
  assert_content (a.frame.memory, 1);

  /* frame 2: signalled before its FRAME: at once */
  fence_signal (fence, 1, 2);
  send_frame (1, 2);
  receive_frame (&b);
  assert_content (b.frame.memory, 2);

  cudaipc_client_get_info (client, &info);
  fail_unless (info.fence);
  fail_if (info.events);
  cudaipc_client_get_stats (client, &stats);
  fail_unless_equals_uint64 (stats.driver_calls, 0);
  /* frame 1 waited for its copy about 100 ms; frame 2 not at all */
  fail_unless_equals_uint64 (stats.copy_waits, 1);
  fail_unless (stats.copy_wait_ns >= 90 * GST_MSECOND &&
      stats.copy_wait_ns <= (guint64) took * 1000, "waited %"
      G_GUINT64_FORMAT " ns, frame 1 took %" G_GINT64_FORMAT " us",
      stats.copy_wait_ns, took);
  cudaipc_client_reset_stats (client);
  cudaipc_client_get_stats (client, &stats);
  fail_unless_equals_uint64 (stats.copy_waits, 0);
  fail_unless_equals_uint64 (stats.copy_wait_ns, 0);
  cudaipc_client_item_clear (&a);
  cudaipc_client_item_clear (&b);
  expect_release (GEN, 0, 1);
  expect_release (GEN, 1, 2);

  /* frame 3: the caller's deadline ends the first wait before the copy
   * lands, the next call waits on for the same frame: one frame waited */
  send_frame (0, 3);
  later.slot = 0;
  later.value = 3;
  t = g_thread_new ("fence", signal_after_100ms, &later);
  fail_unless_equals_int (cudaipc_client_receive_until (client, &a,
          g_get_monotonic_time () + 20 * 1000, NULL), CUDAIPC_CLIENT_TIMEOUT);
  receive_frame (&a);
  g_thread_join (t);
  assert_content (a.frame.memory, 3);
  cudaipc_client_get_stats (client, &stats);
  fail_unless_equals_uint64 (stats.copy_waits, 1);
  fail_unless (stats.copy_wait_ns >= 90 * GST_MSECOND, "waited %"
      G_GUINT64_FORMAT " ns", stats.copy_wait_ns);
  cudaipc_client_item_clear (&a);
  expect_release (GEN, 0, 3);
}

GST_END_TEST;

/* A word past the frame's number: the slot was rewritten under it. */
GST_START_TEST (test_fence_word_past_frame)
{
  g_autoptr (CudaIpcFencePage) fence = NULL;

  prod->hello_caps = CUDAIPC_CAP_FENCE;
  connect_ok ();
  fence = producer_fence ();
  send_stream_start_fenced (2, cudaipc_fence_page_get_fd (fence));
  fence_signal (fence, 0, 5);
  send_frame (0, 3);
  expect_broken_releasing ("past frame 3", 0, 3);
}

GST_END_TEST;

/* A fence that never reaches the frame: the connection ends after the
 * bounded wait, as for a producer that died with its copy queued. */
GST_START_TEST (test_fence_never_reached)
{
  g_autoptr (CudaIpcFencePage) fence = NULL;
  CudaIpcClientItem item;
  CudaIpcClientStatus st;
  gint64 t0;

  prod->hello_caps = CUDAIPC_CAP_FENCE;
  connect_ok ();
  fence = producer_fence ();
  send_stream_start_fenced (2, cudaipc_fence_page_get_fd (fence));
  fence_signal (fence, 0, 1);
  send_frame (0, 2);
  t0 = g_get_monotonic_time ();
  st = cudaipc_client_receive (client, &item, NULL);
  fail_unless_equals_int (st, CUDAIPC_CLIENT_CLOSED);
  fail_if (item.said_bye);
  fail_unless (strstr (item.bye_text, "never completed") != NULL, "%s",
      item.bye_text);
  fail_unless (g_get_monotonic_time () - t0 >= G_USEC_PER_SEC);
  cudaipc_client_item_clear (&item);
  expect_release (GEN, 0, 2);
  expect_bye (CUDAIPC_BYE_PROTOCOL);
  expect_closed ();
}

GST_END_TEST;

/* A FRAME of slot 0 (seq 1) whose fence word the producer never writes,
 * on a fenced ring of two slots. */
static CudaIpcFencePage *
send_unfinished_frame (void)
{
  CudaIpcFencePage *fence;

  prod->hello_caps = CUDAIPC_CAP_FENCE;
  connect_ok ();
  fence = producer_fence ();
  send_stream_start_fenced (2, cudaipc_fence_page_get_fd (fence));
  send_frame (0, 1);
  return fence;
}

/* The frame, queued since, comes with the next call once its word does. */
static void
expect_frame_after_fence (CudaIpcFencePage * fence)
{
  CudaIpcClientItem item;

  fail_unless (cudaipc_client_is_connected (client));
  expect_silence (0);
  fence_signal (fence, 0, 1);
  receive_frame (&item);
  fail_unless_equals_uint64 (item.frame.msg.seq, 1);
  assert_content (item.frame.memory, 1);
  cudaipc_client_item_clear (&item);
  expect_release (GEN, 0, 1);
}

/* The wait for a fence word is bounded by the caller's deadline, not by
 * the protocol's 2 s: receive_until() gives up at it, and the frame is
 * not lost. */
GST_START_TEST (test_fence_wait_deadline)
{
  g_autoptr (CudaIpcFencePage) fence = send_unfinished_frame ();
  CudaIpcClientItem item;
  CudaIpcClientStatus st;
  gint64 t0, took;

  t0 = g_get_monotonic_time ();
  st = cudaipc_client_receive_until (client, &item, t0 + 200 * 1000, NULL);
  took = g_get_monotonic_time () - t0;
  g_print ("libs-client: receive_until (200 ms) on an unfinished frame: %s "
      "after %" G_GINT64_FORMAT " us\n", st == CUDAIPC_CLIENT_TIMEOUT ?
      "TIMEOUT" : "not TIMEOUT", took);
  fail_unless_equals_int (st, CUDAIPC_CLIENT_TIMEOUT);
  fail_unless (took >= 200 * 1000 && took < 300 * 1000,
      "gave up after %" G_GINT64_FORMAT " us", took);
  fail_unless_equals_int (item.type, CUDAIPC_CLIENT_ITEM_NONE);
  expect_frame_after_fence (fence);
}

GST_END_TEST;

static gint64 cancelled_at;

static gpointer
cancel_after_100ms (gpointer data)
{
  g_usleep (100 * 1000);
  cancelled_at = g_get_monotonic_time ();
  cudaipc_client_cancel (data);
  return NULL;
}

/* cancel() ends a wait for a fence word at once; the frame is not lost. */
GST_START_TEST (test_fence_wait_cancelled)
{
  g_autoptr (CudaIpcFencePage) fence = send_unfinished_frame ();
  CudaIpcClientItem item;
  CudaIpcClientStatus st;
  gint64 after;
  GThread *t;

  t = g_thread_new ("cancel", cancel_after_100ms, client);
  st = cudaipc_client_receive (client, &item, NULL);
  after = g_get_monotonic_time () - cancelled_at;
  g_thread_join (t);
  g_print ("libs-client: receive() on an unfinished frame returned %"
      G_GINT64_FORMAT " us after cancel()\n", after);
  fail_unless_equals_int (st, CUDAIPC_CLIENT_CANCELLED);
  fail_unless (after < 100 * 1000, "returned %" G_GINT64_FORMAT " us after "
      "cancel()", after);
  cudaipc_client_item_clear (&item);
  cudaipc_client_uncancel (client);
  expect_frame_after_fence (fence);
}

GST_END_TEST;

/* Calls with short deadlines do not stretch the protocol's limit: the
 * connection ends 2 s after the FRAME came, as for one long wait. */
GST_START_TEST (test_fence_wait_deadlines_then_limit)
{
  g_autoptr (CudaIpcFencePage) fence = send_unfinished_frame ();
  CudaIpcClientItem item;
  CudaIpcClientStatus st;
  guint timeouts = 0;
  gint64 t0, took;

  t0 = g_get_monotonic_time ();
  while ((st = cudaipc_client_receive_until (client, &item,
              g_get_monotonic_time () + 200 * 1000, NULL)) ==
      CUDAIPC_CLIENT_TIMEOUT)
    timeouts++;
  took = g_get_monotonic_time () - t0;
  g_print ("libs-client: %u time-outs of 200 ms, then the connection ended "
      "after %" G_GINT64_FORMAT " us\n", timeouts, took);
  fail_unless_equals_int (st, CUDAIPC_CLIENT_CLOSED);
  fail_unless (timeouts >= 8, "%u time-outs", timeouts);
  fail_unless (took >= 2 * G_USEC_PER_SEC - 100 * 1000 &&
      took < 2 * G_USEC_PER_SEC + 300 * 1000, "ended after %" G_GINT64_FORMAT
      " us", took);
  fail_if (item.said_bye);
  fail_unless (strstr (item.bye_text, "never completed") != NULL, "%s",
      item.bye_text);
  cudaipc_client_item_clear (&item);
  fail_if (cudaipc_client_is_connected (client));
  expect_release (GEN, 0, 1);
  expect_bye (CUDAIPC_BYE_PROTOCOL);
  expect_closed ();
}

GST_END_TEST;

/* What a producer sends as its fence page is checked before anything is
 * mapped, and a fence page the consumer was not offered is refused. */
GST_START_TEST (test_fence_page_checked)
{
  int fd = cudaipc_test_memfd (CUDAIPC_FENCE_PAGE_SIZE, FALSE);

  prod->hello_caps = CUDAIPC_CAP_FENCE;
  connect_ok ();
  send_stream_start_fenced (2, fd);
  close (fd);
  expect_broken ("not sealed against shrinking");
}

GST_END_TEST;

GST_START_TEST (test_fence_page_not_offered)
{
  g_autoptr (CudaIpcFencePage) fence = NULL;

  prod->hello_caps = 0;
  connect_ok ();
  fence = producer_fence ();
  send_stream_start_fenced (2, cudaipc_fence_page_get_fd (fence));
  expect_broken ("was not offered");
}

GST_END_TEST;

GST_START_TEST (test_release_from_other_thread)
{
  CudaIpcClientItem item;
  GstMemory *mem;

  connect_ok ();
  send_stream_start (2);
  send_frame (1, 5);
  receive_frame (&item);
  mem = g_steal_pointer (&item.frame.memory);
  cudaipc_client_item_clear (&item);
  expect_silence (50);
  g_thread_join (g_thread_new ("unref", unref_memory, mem));
  expect_release (GEN, 1, 5);
}

GST_END_TEST;

GST_START_TEST (test_no_release_after_disconnect)
{
  CudaIpcClientStats stats;
  CudaIpcClientItem item;
  GstMemory *mem;

  connect_ok ();
  send_stream_start (2);
  send_frame (0, 0);
  receive_frame (&item);
  mem = g_steal_pointer (&item.frame.memory);
  cudaipc_client_item_clear (&item);

  cudaipc_client_disconnect (client, CUDAIPC_BYE_NORMAL, "stopping");
  fail_if (cudaipc_client_is_connected (client));
  /* the slot stays mapped for the frame still held */
  assert_content (mem, 0);
  g_thread_join (g_thread_new ("unref", unref_memory, mem));
  expect_bye (CUDAIPC_BYE_NORMAL);
  expect_closed ();
  cudaipc_client_get_stats (client, &stats);
  fail_unless_equals_uint64 (stats.released, 0);
  fail_unless_equals_int (stats.held, 0);
}

GST_END_TEST;

GST_START_TEST (test_frame_outlives_client)
{
  CudaIpcClientItem item;
  GstMemory *mem;

  connect_ok ();
  send_stream_start (1);
  send_frame (0, 3);
  receive_frame (&item);
  mem = g_steal_pointer (&item.frame.memory);
  cudaipc_client_item_clear (&item);

  /* the session and the slot outlive the client */
  cudaipc_client_free (client);
  client = NULL;
  expect_closed ();
  assert_content (mem, 3);
  gst_memory_unref (mem);
}

GST_END_TEST;

/* Over max-held, nothing is dropped of a stream that is not live (the
 * producer waits); of a live one the frame beyond goes back at once. */
static void
check_leaky (gboolean live, CudaIpcLeaky leaky, gboolean drops)
{
  CudaIpcClientStats stats;
  CudaIpcClientInfo info;
  CudaIpcClientItem a, b, ev;
  CudaIpcMsg msg;

  prod->ring_flags = live ? CUDAIPC_RING_LIVE : 0;
  cudaipc_client_set_leaky (client, leaky);
  cudaipc_client_set_max_held (client, 1);
  connect_ok ();
  send_stream_start (3);
  send_frame (0, 0);
  send_frame (1, 1);
  cudaipc_msg_init (&msg, CUDAIPC_MSG_EVENT);
  msg.u.event.event_type = GST_EVENT_EOS;
  msg.u.event.running_time = GST_CLOCK_TIME_NONE;
  msg.u.event.structure = "";
  psend (&msg);

  receive_frame (&a);
  fail_unless_equals_int (a.frame.lent, 0);
  if (drops) {
    receive_event (&ev, GST_EVENT_EOS);
    expect_release (GEN, 1, 1);
  } else {
    receive_frame (&b);
    /* a was handed out and is held */
    fail_unless_equals_int (b.frame.lent, 1);
    fail_if (b.frame.discont);
    receive_event (&ev, GST_EVENT_EOS);
    cudaipc_client_item_clear (&b);
    expect_release (GEN, 1, 1);
  }
  cudaipc_client_item_clear (&ev);
  fail_unless (cudaipc_client_get_info (client, &info));
  fail_unless_equals_int (info.live, live);
  fail_unless_equals_int (info.leaky, drops);
  cudaipc_client_get_stats (client, &stats);
  fail_unless_equals_uint64 (stats.received, 2);
  fail_unless_equals_uint64 (stats.dropped, drops ? 1 : 0);
  cudaipc_client_item_clear (&a);
  expect_release (GEN, 0, 0);
}

GST_START_TEST (test_leaky_auto_not_live)
{
  check_leaky (FALSE, CUDAIPC_LEAKY_AUTO, FALSE);
}

GST_END_TEST;

GST_START_TEST (test_leaky_auto_live)
{
  check_leaky (TRUE, CUDAIPC_LEAKY_AUTO, TRUE);
}

GST_END_TEST;

GST_START_TEST (test_leaky_none_live)
{
  check_leaky (TRUE, CUDAIPC_LEAKY_NONE, FALSE);
}

GST_END_TEST;

GST_START_TEST (test_leaky_downstream_not_live)
{
  check_leaky (FALSE, CUDAIPC_LEAKY_DOWNSTREAM, TRUE);
}

GST_END_TEST;

GST_START_TEST (test_max_held)
{
  CudaIpcClientStats stats;
  CudaIpcClientItem a, b, ev;
  CudaIpcMsg msg;

  cudaipc_client_set_leaky (client, CUDAIPC_LEAKY_DOWNSTREAM);
  cudaipc_client_set_max_held (client, 1);
  connect_ok ();
  send_stream_start (3);
  send_frame (0, 0);
  send_frame (1, 1);
  cudaipc_msg_init (&msg, CUDAIPC_MSG_EVENT);
  msg.u.event.event_type = GST_EVENT_EOS;
  msg.u.event.running_time = GST_CLOCK_TIME_NONE;
  msg.u.event.structure = "";
  psend (&msg);

  receive_frame (&a);
  /* frame 1 is one too many: released at once, then the EOS */
  receive_event (&ev, GST_EVENT_EOS);
  cudaipc_client_item_clear (&ev);
  expect_release (GEN, 1, 1);
  cudaipc_client_get_stats (client, &stats);
  fail_unless_equals_uint64 (stats.received, 2);
  fail_unless_equals_uint64 (stats.dropped, 1);
  fail_unless_equals_uint64 (stats.released, 1);
  fail_unless_equals_int (stats.held, 1);

  cudaipc_client_item_clear (&a);
  expect_release (GEN, 0, 0);
  send_frame (2, 2);
  receive_frame (&b);
  /* after a drop */
  fail_unless (b.frame.discont);
  cudaipc_client_item_clear (&b);
  expect_release (GEN, 2, 2);

  /* an empty frame goes back at once and is no drop */
  frame_msg (0, 3, &msg);
  msg.u.frame.size = 0;
  msg.u.frame.n_planes = 0;
  psend (&msg);
  send_frame (1, 4);
  receive_frame (&b);
  expect_release (GEN, 0, 3);
  fail_if (b.frame.discont);
  cudaipc_client_item_clear (&b);
  expect_release (GEN, 1, 4);
  cudaipc_client_get_stats (client, &stats);
  fail_unless_equals_uint64 (stats.dropped, 1);
}

GST_END_TEST;

GST_START_TEST (test_new_ring_keeps_old_frames)
{
  CudaIpcClientStats stats;
  CudaIpcClientItem a, b;
  CudaIpcMsg msg;

  connect_ok ();
  send_stream_start (1);
  send_frame (0, 0);
  receive_frame (&a);

  /* a new ring (generation + 1) while slot 0 of the old one is held */
  send_ring (GEN + 1, 2);
  send_slots ();
  send_frame (0, 1);
  receive_frame (&b);
  fail_unless_equals_int (b.frame.msg.generation, GEN + 1);
  assert_content (b.frame.memory, 1);
  cudaipc_client_get_stats (client, &stats);
  fail_unless_equals_int (stats.generation, GEN + 1);
  fail_unless_equals_int (stats.imports, 3);
  fail_unless_equals_int (stats.held, 2);

  /* the old frame's release names its own generation */
  cudaipc_client_item_clear (&a);
  expect_release (GEN, 0, 0);
  cudaipc_client_item_clear (&b);
  expect_release (GEN + 1, 0, 1);

  /* a FRAME of the old generation now is stale */
  frame_msg (0, 2, &msg);
  msg.u.frame.generation = GEN;
  psend (&msg);
  expect_broken ("a FRAME names ring generation 7, the current one is 8");
}

GST_END_TEST;

/* Events and the end of the stream */

GST_START_TEST (test_events)
{
  CudaIpcClientItem item;
  const GstSegment *seg;
  const GstStructure *st;
  GstTagList *tags;
  gchar *title = NULL;
  CudaIpcMsg msg;

  connect_ok ();
  cudaipc_msg_init (&msg, CUDAIPC_MSG_EVENT);
  msg.u.event.event_type = GST_EVENT_SEGMENT;
  msg.u.event.running_time = 42;
  msg.u.event.structure = "cudaipc-segment, format=(int)3, rate=(double)2, "
      "applied-rate=(double)1, flags=(uint)0, base=(guint64)0, "
      "offset=(guint64)0, start=(guint64)1000, stop=(guint64)18446744073709551615, "
      "time=(guint64)1000, position=(guint64)1000, "
      "duration=(guint64)18446744073709551615";
  psend (&msg);
  /* not a segment: skipped */
  msg.u.event.structure = "cudaipc-segment, format=(int)2";
  psend (&msg);
  msg.u.event.event_type = GST_EVENT_TAG;
  msg.u.event.structure = "taglist, title=(string)\"hello\"";
  psend (&msg);
  msg.u.event.event_type = GST_EVENT_CUSTOM_DOWNSTREAM;
  msg.u.event.structure = "my-event, n=(int)3";
  psend (&msg);
  /* not a type that travels: skipped */
  msg.u.event.event_type = GST_EVENT_FLUSH_START;
  msg.u.event.structure = "";
  psend (&msg);
  msg.u.event.event_type = GST_EVENT_EOS;
  psend (&msg);

  receive_event (&item, GST_EVENT_SEGMENT);
  fail_unless_equals_uint64 (item.running_time, 42);
  gst_event_parse_segment (item.event, &seg);
  fail_unless_equals_int (seg->format, GST_FORMAT_TIME);
  fail_unless (seg->rate == 2.0);
  fail_unless_equals_uint64 (seg->start, 1000);
  cudaipc_client_item_clear (&item);

  receive_event (&item, GST_EVENT_TAG);
  gst_event_parse_tag (item.event, &tags);
  fail_unless (gst_tag_list_get_string (tags, GST_TAG_TITLE, &title));
  fail_unless_equals_string (title, "hello");
  g_free (title);
  cudaipc_client_item_clear (&item);

  receive_event (&item, GST_EVENT_CUSTOM_DOWNSTREAM);
  st = gst_event_get_structure (item.event);
  fail_unless (gst_structure_has_name (st, "my-event"));
  cudaipc_client_item_clear (&item);

  receive_event (&item, GST_EVENT_EOS);
  cudaipc_client_item_clear (&item);
}

GST_END_TEST;

GST_START_TEST (test_producer_bye)
{
  CudaIpcClientItem item, held;
  CudaIpcClientStatus st;

  connect_ok ();
  send_stream_start (1);
  send_frame (0, 0);
  receive_frame (&held);
  producer_send_bye (prod->conn, CUDAIPC_BYE_NORMAL, "the producer stopped");
  st = cudaipc_client_receive (client, &item, NULL);
  fail_unless_equals_int (st, CUDAIPC_CLIENT_CLOSED);
  fail_unless (item.said_bye);
  fail_unless_equals_int (item.bye_reason, CUDAIPC_BYE_NORMAL);
  fail_unless_equals_string (item.bye_text, "the producer stopped");
  fail_unless_equals_string (cudaipc_bye_reason_name
      (item.bye_reason), "normal");
  cudaipc_client_item_clear (&item);
  fail_if (cudaipc_client_is_connected (client));
  /* the frame is still good, and its release sends nothing */
  assert_content (held.frame.memory, 0);
  cudaipc_client_item_clear (&held);
  expect_closed ();
}

GST_END_TEST;

/* FRAMEs for slots 0..2, published @age_ms ago (slots 0 and 1 before an
 * EOS, slot 2 after it), then a BYE with @reason. */
static void
send_frames_then_bye (gint64 age_ms, guint32 reason)
{
  guint64 now = (guint64) g_get_monotonic_time () * 1000;
  CudaIpcMsg msg;

  send_stream_start (4);
  for (guint i = 0; i < 3; i++) {
    if (i == 2) {
      cudaipc_msg_init (&msg, CUDAIPC_MSG_EVENT);
      msg.u.event.event_type = GST_EVENT_EOS;
      msg.u.event.running_time = GST_CLOCK_TIME_NONE;
      msg.u.event.structure = "";
      psend (&msg);
    }
    fill_slot (i, (guint8) i);
    frame_msg (i, i, &msg);
    msg.u.frame.publish_time = now - age_ms * GST_MSECOND;
    psend (&msg);
  }
  producer_send_bye (prod->conn, reason, "bye");
}

static void
expect_client_closed (guint32 reason)
{
  CudaIpcClientItem item;
  CudaIpcClientStatus st = cudaipc_client_receive (client, &item, NULL);

  fail_unless_equals_int (st, CUDAIPC_CLIENT_CLOSED);
  fail_unless (item.said_bye);
  fail_unless_equals_int (item.bye_reason, reason);
  cudaipc_client_item_clear (&item);
}

/* The producer dropped this consumer (stopped, say) behind frames it sent
 * a while ago: those frames are released unpushed, the event between them
 * still goes out, then the BYE. */
GST_START_TEST (test_late_frames_behind_drop_discarded)
{
  CudaIpcClientItem ev;
  CudaIpcClientStats stats;

  connect_ok ();
  send_frames_then_bye (2000, CUDAIPC_BYE_TOO_SLOW);
  receive_event (&ev, GST_EVENT_EOS);
  cudaipc_client_item_clear (&ev);
  expect_client_closed (CUDAIPC_BYE_TOO_SLOW);
  cudaipc_client_get_stats (client, &stats);
  fail_unless_equals_uint64 (stats.received, 3);
  fail_unless_equals_uint64 (stats.discarded, 3);
  fail_unless_equals_uint64 (stats.dropped, 3);
  expect_closed ();
}

GST_END_TEST;

/* The same frames go out where the BYE is a normal stop, and where they
 * are fresh: only a drop behind old frames discards them. */
static void
kept_case (gint64 age_ms, guint32 reason)
{
  CudaIpcClientItem items[3], ev;
  CudaIpcClientStats stats;

  connect_ok ();
  send_frames_then_bye (age_ms, reason);
  receive_frame (&items[0]);
  receive_frame (&items[1]);
  receive_event (&ev, GST_EVENT_EOS);
  cudaipc_client_item_clear (&ev);
  receive_frame (&items[2]);
  expect_client_closed (reason);
  for (guint i = 0; i < 3; i++) {
    assert_content (items[i].frame.memory, (guint8) i);
    cudaipc_client_item_clear (&items[i]);
  }
  cudaipc_client_get_stats (client, &stats);
  fail_unless_equals_uint64 (stats.discarded, 0);
  fail_unless_equals_uint64 (stats.dropped, 0);
  expect_closed ();
}

GST_START_TEST (test_late_frames_kept_at_normal_stop)
{
  kept_case (2000, CUDAIPC_BYE_NORMAL);
}

GST_END_TEST;

GST_START_TEST (test_fresh_frames_kept_at_drop)
{
  kept_case (0, CUDAIPC_BYE_TOO_SLOW);
}

GST_END_TEST;

GST_START_TEST (test_producer_hangs_up)
{
  CudaIpcClientItem item;
  CudaIpcClientStatus st;

  connect_ok ();
  cudaipc_conn_free (prod->conn);
  prod->conn = NULL;
  st = cudaipc_client_receive (client, &item, NULL);
  fail_unless_equals_int (st, CUDAIPC_CLIENT_CLOSED);
  fail_if (item.said_bye);
  cudaipc_client_item_clear (&item);
  fail_if (cudaipc_client_is_connected (client));
}

GST_END_TEST;

GST_START_TEST (test_cancel_receive)
{
  CudaIpcClientItem item;
  CudaIpcClientStatus st;
  GThread *t;
  gint64 t0;

  connect_ok ();
  send_stream_start (1);
  t0 = g_get_monotonic_time ();
  t = g_thread_new ("cancel", cancel_later, client);
  st = cudaipc_client_receive (client, &item, NULL);
  g_thread_join (t);
  fail_unless_equals_int (st, CUDAIPC_CLIENT_CANCELLED);
  fail_unless (g_get_monotonic_time () - t0 < G_USEC_PER_SEC);
  cudaipc_client_item_clear (&item);
  fail_unless (cudaipc_client_is_connected (client));

  /* uncancelled, the connection goes on */
  cudaipc_client_uncancel (client);
  send_frame (0, 0);
  receive_frame (&item);
  assert_content (item.frame.memory, 0);
  cudaipc_client_item_clear (&item);
  expect_release (GEN, 0, 0);
}

GST_END_TEST;

/* Only fixed caps: a list is refused; a flag set, which a string gives
 * back unfixed from fixed caps (nvh264dec's multiview flags), is fixated. */
GST_START_TEST (test_caps_fixed_only)
{
  CudaIpcClientItem item;

  connect_ok ();
  send_ring (GEN, 1);
  send_slots ();
  send_caps (1, "video/x-raw, format=(string)GRAY8, width=(int)64, "
      "height=(int)4, framerate=(fraction)30/1, "
      "multiview-flags=(GstVideoMultiviewFlagsSet)0:ffffffff");
  send_frame (0, 0);
  receive_frame (&item);
  fail_unless (gst_caps_is_fixed (item.frame.caps));
  fail_unless (gst_caps_get_features (item.frame.caps, 0) == NULL ||
      gst_caps_features_is_equal (gst_caps_get_features (item.frame.caps, 0),
          GST_CAPS_FEATURES_MEMORY_SYSTEM_MEMORY));
  cudaipc_client_item_clear (&item);
  expect_release (GEN, 0, 0);

  /* a list: the producer sends fixed caps, or is broken */
  send_caps (2, "video/x-raw, format=(string)GRAY8, width=(int)64, "
      "height=(int)4, framerate=(fraction){ 30/1, 15/1 }");
  expect_broken ("caps that are not fixed (field framerate)");
}

GST_END_TEST;

GST_START_TEST (test_caps_zero_size)
{
  connect_ok ();
  send_ring (GEN, 1);
  send_slots ();
  send_caps (1, "video/x-raw, format=(string)GRAY8, width=(int)0, "
      "height=(int)4, framerate=(fraction)30/1");
  expect_broken ("raw video of 0 x 4 pixels");
}

GST_END_TEST;

/* A field nested @depth levels deep in fixed-looking caps. */
static gchar *
nested_caps (guint depth)
{
  GString *s = g_string_new ("video/x-raw, format=(string)GRAY8, "
      "width=(int)64, height=(int)4, framerate=(fraction)30/1, x=(int)");

  for (guint i = 0; i < depth; i++)
    g_string_append_c (s, '{');
  g_string_append_c (s, '1');
  for (guint i = 0; i < depth; i++)
    g_string_append_c (s, '}');
  return g_string_free (s, FALSE);
}

/* One connection whose producer sends @caps, refused. */
static void
hostile_caps_connection (const gchar * caps, const gchar * needle)
{
  connect_ok ();
  send_ring (GEN, 1);
  send_slots ();
  send_caps (1, caps);
  expect_broken (needle);
  g_clear_pointer (&prod->conn, cudaipc_conn_free);
}

/* A hostile producer's deeply nested CAPS (16,000 lists in 32 KB: a copy
 * of such a value recursed until it took gigabytes) are refused before
 * GStreamer parses them, and a flood of them leaves memory flat. */
GST_START_TEST (test_caps_nesting_flood)
{
  g_autofree gchar *deep = nested_caps (16000);
  g_autofree gchar *three = nested_caps (3);
  guint64 before, after;
  gint64 t0;

  fail_unless (strlen (deep) < CUDAIPC_MAX_STRING);
  hostile_caps_connection (three, "nested more than 2 deep");
  hostile_caps_connection (deep, "nested more than 2 deep");
  before = cudaipc_test_rss_kib ();
  t0 = g_get_monotonic_time ();
  for (guint i = 0; i < 50; i++)
    hostile_caps_connection (deep, "nested more than 2 deep");
  after = cudaipc_test_rss_kib ();
  g_print ("libs-client: 50 connections of 16000-deep CAPS in %"
      G_GINT64_FORMAT " us, RSS %" G_GUINT64_FORMAT " -> %" G_GUINT64_FORMAT
      " KiB\n", g_get_monotonic_time () - t0, before, after);
  fail_unless (after < before + 8 * 1024 + CUDAIPC_TEST_RSS_SLACK_KIB,
      "RSS grew from %" G_GUINT64_FORMAT
      " to %" G_GUINT64_FORMAT " KiB", before, after);
}

GST_END_TEST;

/* The producer's side of a flood: EVENTs of @bytes (custom, of many small
 * fields), as many as the socket takes, up to FLOOD_EVENTS or for 2 s, or
 * until the consumer leaves. */
#define FLOOD_EVENTS 100000

typedef struct
{
  guint bytes;
  guint sent;
  gint64 ended;
} Flood;

static gchar *
flood_structure (guint bytes)
{
  GString *s = g_string_new ("flood");

  for (guint i = 0; s->len + 24 < bytes; i++)
    g_string_append_printf (s, ", f%u=(int)%u", i, i);
  return g_string_free (s, FALSE);
}

static gpointer
flood_events (gpointer data)
{
  Flood *f = data;
  g_autofree gchar *structure = flood_structure (f->bytes);
  gint64 until = g_get_monotonic_time () + 2 * G_USEC_PER_SEC;
  struct timeval tv = { 0, 100 * 1000 };
  int fd = cudaipc_conn_get_fd (prod->conn);
  int sndbuf = 4 << 20;
  CudaIpcMsg msg;

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
  msg.u.event.structure = structure;
  while (g_atomic_int_get (&f->sent) < FLOOD_EVENTS &&
      g_get_monotonic_time () < until) {
    gint r = cudaipc_conn_send (prod->conn, &msg);

    if (r == -EAGAIN)
      continue;
    if (r < 0)
      break;
    g_atomic_int_inc (&f->sent);
  }
  tv.tv_usec = 0;
  g_assert_cmpint (setsockopt (fd, SOL_SOCKET, SO_SNDTIMEO, &tv,
          sizeof (tv)), ==, 0);
  f->ended = g_get_monotonic_time ();
  return NULL;
}

/* A frame published long ago, then a flood of EVENTs that keeps the
 * socket full: the consumer reads ahead of the frame a bounded amount,
 * with memory bounded too, and hands the frame out long before the flood
 * ends; every event comes after it, none lost. */
GST_START_TEST (test_late_frame_before_flood)
{
  guint64 now = (guint64) g_get_monotonic_time () * 1000;
  guint64 before, at_frame, peak;
  CudaIpcClientItem item;
  CudaIpcClientStatus st;
  GError *err = NULL;
  Flood flood = { 4000, };
  guint events = 0;
  gint64 t0, took;
  CudaIpcMsg msg;
  GThread *t;

  connect_ok ();
  send_stream_start (2);
  fill_slot (0, 1);
  frame_msg (0, 1, &msg);
  msg.u.frame.publish_time = now - 2 * GST_SECOND;
  psend (&msg);

  before = cudaipc_test_rss_kib ();
  t = g_thread_new ("flood", flood_events, &flood);
  /* the socket full behind the frame before the consumer reads it */
  while (g_atomic_int_get (&flood.sent) < 20)
    g_usleep (1000);
  t0 = g_get_monotonic_time ();
  st = cudaipc_client_receive (client, &item, &err);
  took = g_get_monotonic_time () - t0;
  at_frame = peak = cudaipc_test_rss_kib ();
  fail_unless_equals_int (st, CUDAIPC_CLIENT_OK);
  fail_unless (err == NULL, "%s", err ? err->message : "");
  fail_unless_equals_int (item.type, CUDAIPC_CLIENT_ITEM_FRAME);
  fail_unless_equals_uint64 (item.frame.msg.seq, 1);
  assert_content (item.frame.memory, 1);
  cudaipc_client_item_clear (&item);

  /* the rest of the flood, in order, at the consumer's pace */
  while ((st = cudaipc_client_receive_until (client, &item,
              g_get_monotonic_time () + 500 * 1000, NULL)) ==
      CUDAIPC_CLIENT_OK) {
    fail_unless_equals_int (item.type, CUDAIPC_CLIENT_ITEM_EVENT);
    cudaipc_client_item_clear (&item);
    if (++events % 1000 == 0)
      peak = MAX (peak, cudaipc_test_rss_kib ());
  }
  g_thread_join (t);
  peak = MAX (peak, cudaipc_test_rss_kib ());
  g_print ("libs-client: a late frame before a flood of %u events (%"
      G_GINT64_FORMAT " ms): out after %" G_GINT64_FORMAT " ms; RSS %"
      G_GUINT64_FORMAT " KiB, %" G_GUINT64_FORMAT " at the frame, peak %"
      G_GUINT64_FORMAT "\n", flood.sent, (flood.ended - t0) / 1000,
      took / 1000, before, at_frame, peak);
  fail_unless_equals_int (st, CUDAIPC_CLIENT_TIMEOUT);
  fail_unless_equals_int (events, flood.sent);
#ifdef CUDAIPC_TEST_ASAN
  /* every message costs more under the sanitizer: the frame still came
   * while the flood went on, not once it ended */
  fail_unless (t0 + took < flood.ended, "the frame came after %"
      G_GINT64_FORMAT " us, once the flood had ended", took);
#else
  fail_unless (took < 500 * 1000, "the frame came after %" G_GINT64_FORMAT
      " us", took);
#endif
  fail_unless (peak < before + 100 * 1024 + CUDAIPC_TEST_RSS_SLACK_KIB,
      "RSS grew from %" G_GUINT64_FORMAT " to %" G_GUINT64_FORMAT " KiB",
      before, peak);
  expect_release (GEN, 0, 1);
}

GST_END_TEST;

/* While the caller is away, the background reader queues a flood of the
 * largest events for it up to a bound in bytes as well as in items (256
 * of them, queued, took 34 MB). */
GST_START_TEST (test_reader_queue_bounded)
{
  guint64 before, away;
  CudaIpcClientItem item;
  CudaIpcClientStatus st;
  Flood flood = { CUDAIPC_MAX_STRING - 1, };
  guint events = 0;
  GThread *t;

  connect_ok ();
  send_stream_start (2);
  send_frame (0, 1);
  /* the first frame starts the background reader */
  receive_frame (&item);
  cudaipc_client_item_clear (&item);
  expect_release (GEN, 0, 1);

  before = cudaipc_test_rss_kib ();
  t = g_thread_new ("flood", flood_events, &flood);
  /* away for longer than the reader takes to fill its queue */
  g_usleep (G_USEC_PER_SEC);
  away = cudaipc_test_rss_kib ();
  while ((st = cudaipc_client_receive_until (client, &item,
              g_get_monotonic_time () + 500 * 1000, NULL)) ==
      CUDAIPC_CLIENT_OK) {
    fail_unless_equals_int (item.type, CUDAIPC_CLIENT_ITEM_EVENT);
    cudaipc_client_item_clear (&item);
    events++;
  }
  g_thread_join (t);
  g_print ("libs-client: the caller away 1 s in a flood of %u events of %u "
      "bytes: RSS %" G_GUINT64_FORMAT " -> %" G_GUINT64_FORMAT " KiB\n",
      flood.sent, flood.bytes, before, away);
  fail_unless_equals_int (st, CUDAIPC_CLIENT_TIMEOUT);
  fail_unless_equals_int (events, flood.sent);
  fail_unless (away < before + 16 * 1024 + CUDAIPC_TEST_RSS_SLACK_KIB,
      "RSS grew from %" G_GUINT64_FORMAT " to %" G_GUINT64_FORMAT " KiB",
      before, away);
}

GST_END_TEST;

/* A hostile producer */

GST_START_TEST (test_ring_generation_not_newer)
{
  connect_ok ();
  send_ring (GEN, 1);
  send_slots ();
  send_ring (GEN, 1);
  expect_broken ("RING names generation 7, not newer than the current one, "
      "7");
}

GST_END_TEST;

GST_START_TEST (test_slot_wrong_generation)
{
  CudaIpcMsg msg;

  connect_ok ();
  send_ring (GEN, 2);
  slot_msg (0, &msg);
  msg.u.slot.generation = GEN + 1;
  psend (&msg);
  expect_broken ("SLOT 0 names ring generation 8, the current one is 7");
}

GST_END_TEST;

GST_START_TEST (test_slot_twice)
{
  CudaIpcMsg msg;

  connect_ok ();
  send_ring (GEN, 2);
  slot_msg (1, &msg);
  psend (&msg);
  psend (&msg);
  expect_broken ("SLOT 1 was announced twice");
}

GST_END_TEST;

GST_START_TEST (test_slot_beyond_ring)
{
  CudaIpcMsg msg;

  connect_ok ();
  send_ring (GEN, 2);
  slot_msg (1, &msg);
  msg.u.slot.index = 2;
  psend (&msg);
  expect_broken ("SLOT 2 is beyond the ring's 2 slots");
}

GST_END_TEST;

GST_START_TEST (test_slot_before_ring)
{
  CudaIpcMsg msg;

  connect_ok ();
  /* the producer's own ring, never announced */
  prod->ring = cudaipc_ring_new (prod->dev, 1, page (), 0, GEN, NULL);
  fail_unless (prod->ring != NULL);
  slot_msg (0, &msg);
  psend (&msg);
  expect_broken ("SLOT 0 came before any RING");
}

GST_END_TEST;

GST_START_TEST (test_slot_unaligned)
{
  CudaIpcMsg msg;

  connect_ok ();
  send_ring (GEN, 1);
  slot_msg (0, &msg);
  /* not a multiple of the page */
  msg.u.slot.alloc_sizes[0] = page () / 2;
  msg.u.slot.size = page () / 2;
  psend (&msg);
  expect_broken ("the descriptor of slot 0 failed its checks");
}

GST_END_TEST;

GST_START_TEST (test_frame_unknown_slot)
{
  CudaIpcMsg msg;

  connect_ok ();
  send_ring (GEN, 2);
  /* only slot 0 is announced */
  slot_msg (0, &msg);
  psend (&msg);
  send_caps (1, CAPS_GRAY);
  frame_msg (1, 0, &msg);
  psend (&msg);
  expect_broken ("a FRAME names slot 1, which no SLOT announced");
}

GST_END_TEST;

GST_START_TEST (test_frame_before_ring)
{
  CudaIpcMsg msg;

  connect_ok ();
  cudaipc_msg_init (&msg, CUDAIPC_MSG_FRAME);
  msg.u.frame.size = FRAME_SIZE;
  psend (&msg);
  expect_broken ("a FRAME came before any RING");
}

GST_END_TEST;

GST_START_TEST (test_frame_stale_generation)
{
  CudaIpcMsg msg;

  connect_ok ();
  send_stream_start (1);
  frame_msg (0, 0, &msg);
  msg.u.frame.generation = GEN - 1;
  psend (&msg);
  expect_broken ("a FRAME names ring generation 6, the current one is 7");
}

GST_END_TEST;

GST_START_TEST (test_frame_larger_than_slot)
{
  CudaIpcMsg msg;

  connect_ok ();
  send_stream_start (1);
  frame_msg (0, 0, &msg);
  msg.u.frame.size = page () + 1;
  psend (&msg);
  expect_broken ("does not fit slot 0");
}

GST_END_TEST;

GST_START_TEST (test_plane_offset_outside)
{
  CudaIpcMsg msg;

  connect_ok ();
  send_stream_start (1);
  frame_msg (0, 0, &msg);
  msg.u.frame.planes[0].offset = FRAME_SIZE;
  psend (&msg);
  expect_broken ("plane 0 of a FRAME starts at byte 256, beyond the "
      "frame's 256 bytes");
}

GST_END_TEST;

GST_START_TEST (test_plane_stride_outside)
{
  CudaIpcMsg msg;

  connect_ok ();
  send_stream_start (1);
  frame_msg (0, 0, &msg);
  /* four rows of 128 bytes do not fit 256 */
  msg.u.frame.planes[0].stride = 2 * W;
  psend (&msg);
  expect_broken ("beyond the frame's 256 bytes");
}

GST_END_TEST;

GST_START_TEST (test_plane_stride_short)
{
  CudaIpcMsg msg;

  connect_ok ();
  send_stream_start (1);
  frame_msg (0, 0, &msg);
  msg.u.frame.planes[0].stride = W - 1;
  psend (&msg);
  expect_broken ("less than a row of 64 bytes");
}

GST_END_TEST;

GST_START_TEST (test_plane_count)
{
  CudaIpcMsg msg;

  connect_ok ();
  send_stream_start (1);
  frame_msg (0, 0, &msg);
  msg.u.frame.n_planes = 2;
  psend (&msg);
  expect_broken ("a FRAME has 2 planes, its format GRAY8 has 1");
}

GST_END_TEST;

GST_START_TEST (test_slot_republished_while_held)
{
  CudaIpcClientItem item;

  connect_ok ();
  send_stream_start (2);
  send_frame (0, 0);
  receive_frame (&item);
  send_frame (0, 1);
  expect_broken ("slot 0 was published again while this consumer still "
      "holds it");
  /* the frame from before stays readable; its release sends nothing */
  assert_content (item.frame.memory, 1);
  cudaipc_client_item_clear (&item);
}

GST_END_TEST;

GST_START_TEST (test_frame_unknown_caps)
{
  CudaIpcMsg msg;

  connect_ok ();
  send_stream_start (1);
  frame_msg (0, 0, &msg);
  msg.u.frame.caps_id = 9;
  psend (&msg);
  expect_broken ("a FRAME names caps id 9, which no CAPS announced");
}

GST_END_TEST;

GST_START_TEST (test_caps_not_video)
{
  connect_ok ();
  send_ring (GEN, 1);
  send_caps (3, "audio/x-raw, format=(string)S16LE, rate=(int)48000, "
      "channels=(int)2, layout=(string)interleaved");
  expect_broken ("CAPS 3 are not raw video");
}

GST_END_TEST;

GST_START_TEST (test_caps_not_one_structure)
{
  connect_ok ();
  send_caps (4, "video/x-raw, width=(int)2; video/x-raw, width=(int)4");
  expect_broken ("CAPS 4 are not one caps structure");
}

GST_END_TEST;

GST_START_TEST (test_garbage_datagram)
{
  static const guint8 junk[] = { 0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6,
    7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17
  };
  union
  {
    struct cmsghdr align;
    guint8 buf[CMSG_SPACE (sizeof (int))];
  } control;
  struct iovec iov = { (void *) junk, sizeof (junk) };
  struct msghdr mh = { 0 };
  struct cmsghdr *cmsg;
  int memfd;

  connect_ok ();
  /* an fd comes along: the client must close it */
  memfd = memfd_create ("junk", MFD_CLOEXEC);
  fail_unless (memfd >= 0);
  memset (&control, 0, sizeof (control));
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  mh.msg_control = control.buf;
  mh.msg_controllen = sizeof (control.buf);
  cmsg = CMSG_FIRSTHDR (&mh);
  cmsg->cmsg_level = SOL_SOCKET;
  cmsg->cmsg_type = SCM_RIGHTS;
  cmsg->cmsg_len = CMSG_LEN (sizeof (int));
  memcpy (CMSG_DATA (cmsg), &memfd, sizeof (int));
  fail_unless_equals_int (sendmsg (cudaipc_conn_get_fd (prod->conn), &mh,
          MSG_NOSIGNAL), sizeof (junk));
  close (memfd);
  expect_broken ("sent a bad");
}

GST_END_TEST;

GST_START_TEST (test_release_from_producer)
{
  CudaIpcMsg msg;

  connect_ok ();
  send_stream_start (1);
  cudaipc_msg_init (&msg, CUDAIPC_MSG_RELEASE);
  msg.u.release.generation = GEN;
  psend (&msg);
  expect_broken ("unexpected RELEASE message");
}

GST_END_TEST;

GST_START_TEST (test_hello_again)
{
  CudaIpcMsg msg;

  connect_ok ();
  cudaipc_msg_init (&msg, CUDAIPC_MSG_HELLO);
  msg.u.hello.version = CUDAIPC_PROTOCOL_VERSION;
  msg.u.hello.name = "again";
  psend (&msg);
  expect_broken ("unexpected HELLO message");
}

GST_END_TEST;

static Suite *
client_suite (void)
{
  Suite *s = suite_create ("client");
  TCase *tc = cudaipc_test_case (s, "general", 60);

  tcase_add_checked_fixture (tc, setup, teardown);
  tcase_add_test (tc, test_connect_retry);
  tcase_add_test (tc, test_connect_timeout);
  tcase_add_test (tc, test_connect_to_dying_producer);
  tcase_add_test (tc, test_cancel_connect);
  tcase_add_test (tc, test_hello_timeout);
  tcase_add_test (tc, test_version_mismatch);
  tcase_add_test (tc, test_refused);
  tcase_add_test (tc, test_normal_flow);
  tcase_add_test (tc, test_channel_flow);
  tcase_add_test (tc, test_channel_not_asked);
  tcase_add_test (tc, test_channel_unsealed);
  tcase_add_test (tc, test_host_asks_no_events);
  tcase_add_test (tc, test_fence_page_orders_frames);
  tcase_add_test (tc, test_fence_word_past_frame);
  tcase_add_test (tc, test_fence_never_reached);
  tcase_add_test (tc, test_fence_wait_deadline);
  tcase_add_test (tc, test_fence_wait_cancelled);
  tcase_add_test (tc, test_fence_wait_deadlines_then_limit);
  tcase_add_test (tc, test_fence_page_checked);
  tcase_add_test (tc, test_fence_page_not_offered);
  tcase_add_test (tc, test_release_from_other_thread);
  tcase_add_test (tc, test_no_release_after_disconnect);
  tcase_add_test (tc, test_frame_outlives_client);
  tcase_add_test (tc, test_max_held);
  tcase_add_test (tc, test_leaky_auto_not_live);
  tcase_add_test (tc, test_leaky_auto_live);
  tcase_add_test (tc, test_leaky_none_live);
  tcase_add_test (tc, test_leaky_downstream_not_live);
  tcase_add_test (tc, test_new_ring_keeps_old_frames);
  tcase_add_test (tc, test_events);
  tcase_add_test (tc, test_producer_bye);
  tcase_add_test (tc, test_late_frames_behind_drop_discarded);
  tcase_add_test (tc, test_late_frames_kept_at_normal_stop);
  tcase_add_test (tc, test_fresh_frames_kept_at_drop);
  tcase_add_test (tc, test_late_frame_before_flood);
  tcase_add_test (tc, test_reader_queue_bounded);
  tcase_add_test (tc, test_producer_hangs_up);
  tcase_add_test (tc, test_cancel_receive);
  tcase_add_test (tc, test_caps_fixed_only);
  tcase_add_test (tc, test_caps_zero_size);
  tcase_add_test (tc, test_caps_nesting_flood);
  tcase_add_test (tc, test_slot_wrong_generation);
  tcase_add_test (tc, test_ring_generation_not_newer);
  tcase_add_test (tc, test_slot_twice);
  tcase_add_test (tc, test_slot_beyond_ring);
  tcase_add_test (tc, test_slot_before_ring);
  tcase_add_test (tc, test_slot_unaligned);
  tcase_add_test (tc, test_frame_unknown_slot);
  tcase_add_test (tc, test_frame_before_ring);
  tcase_add_test (tc, test_frame_stale_generation);
  tcase_add_test (tc, test_frame_larger_than_slot);
  tcase_add_test (tc, test_plane_offset_outside);
  tcase_add_test (tc, test_plane_stride_outside);
  tcase_add_test (tc, test_plane_stride_short);
  tcase_add_test (tc, test_plane_count);
  tcase_add_test (tc, test_slot_republished_while_held);
  tcase_add_test (tc, test_frame_unknown_caps);
  tcase_add_test (tc, test_caps_not_video);
  tcase_add_test (tc, test_caps_not_one_structure);
  tcase_add_test (tc, test_garbage_datagram);
  tcase_add_test (tc, test_release_from_producer);
  tcase_add_test (tc, test_hello_again);
  return s;
}

const CudaIpcTestMain cudaipc_test_main = {
  .name = "client",
  .suite = client_suite,
};
