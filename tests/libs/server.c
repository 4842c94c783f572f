/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The producer's server over a real socket in a temporary folder, with
 * the host backend, driven by raw clients written with connection.h and
 * protocol.h: the handshake and its refusals, the handshake timeout,
 * holds and releases across two clients, misbehaving clients, waits for a
 * slot (deadline, flushing, wake-up, a client that leaves), the ring made
 * with the caps and rebuilt on a caps change, late joiners, shutdown, and
 * a consumer that tries to write what it was given to read.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE             /* memfd_create */
#endif

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib/gstdio.h>
#include <gst/check/gstcheck.h>

#include "ring/block.h"
#include "wire/connection.h"
#include "ring/descriptor.h"
#include "common/error.h"
#include "common/fdutil.h"
#include "ring/fence-page.h"
#include "ring/release-page.h"
#include "producer/server.h"
#include "test-main.h"
#include "test-util.h"
#include "test-writes.h"

#define CAPS_SMALL "video/x-raw, format=(string)GRAY8, width=(int)64, " \
  "height=(int)64, framerate=(fraction)30/1"
#define CAPS_LARGE "video/x-raw, format=(string)GRAY8, width=(int)192, " \
  "height=(int)64, framerate=(fraction)30/1"
#define WAIT_MS 5000

static gchar *tmpdir, *sock_path;
static CudaIpcDevice *dev;
static guint64 page;

/* Notices from the server's callbacks, as text */
static GMutex notice_lock;
static GCond notice_cond;
static GPtrArray *notices;
static GThread *test_thread;
static gint wrong_thread;

static void
add_notice (gchar * text)
{
  if (g_thread_self () == test_thread)
    g_atomic_int_inc (&wrong_thread);
  g_mutex_lock (&notice_lock);
  g_ptr_array_add (notices, text);
  g_cond_broadcast (&notice_cond);
  g_mutex_unlock (&notice_lock);
}

/* a consumer process of the test's own (spawn_neighbour), else 0 */
static gint neighbour_pid;

static void
on_joined (const gchar * name, gint pid, gpointer user_data)
{
  fail_unless (pid == getpid () || pid == g_atomic_int_get (&neighbour_pid),
      "a client of pid %d joined", pid);
  add_notice (g_strdup_printf ("joined %s", name));
}

static void
on_left (const gchar * name, gint pid, const gchar * reason, gpointer user_data)
{
  add_notice (g_strdup_printf ("left %s: %s", name, reason));
}

static void
on_warning (const gchar * text, const gchar * debug, gpointer user_data)
{
  fail_unless (debug != NULL);
  add_notice (g_strdup_printf ("warning %s", text));
}

static const CudaIpcServerCallbacks callbacks = {
  on_joined, on_left, on_warning,
};

/* Waits for a notice that contains @what and takes it off the list. */
static void
expect_notice (const gchar * what)
{
  gint64 deadline = g_get_monotonic_time () + WAIT_MS * 1000;
  gboolean found = FALSE;

  g_mutex_lock (&notice_lock);
  while (!found) {
    for (guint i = 0; i < notices->len; i++) {
      if (strstr (g_ptr_array_index (notices, i), what)) {
        g_ptr_array_remove_index (notices, i);
        found = TRUE;
        break;
      }
    }
    if (!found && !g_cond_wait_until (&notice_cond, &notice_lock, deadline))
      break;
  }
  g_mutex_unlock (&notice_lock);
  fail_unless (found, "no notice \"%s\"", what);
}

static guint
count_notices (const gchar * what)
{
  guint n = 0;

  g_mutex_lock (&notice_lock);
  for (guint i = 0; i < notices->len; i++) {
    if (strstr (g_ptr_array_index (notices, i), what))
      n++;
  }
  g_mutex_unlock (&notice_lock);
  return n;
}

static void
setup (void)
{
  GError *err = NULL;

  dev = cudaipc_device_new (CUDAIPC_BACKEND_HOST, 0, &err);
  fail_unless (dev != NULL, "host device: %s", err ? err->message : "?");
  page = cudaipc_device_get_granularity (dev);
  tmpdir = g_dir_make_tmp ("cudaipc-server-XXXXXX", &err);
  fail_unless (tmpdir != NULL, "%s", err ? err->message : "?");
  sock_path = g_build_filename (tmpdir, "producer.sock", NULL);
  notices = g_ptr_array_new_with_free_func (g_free);
  test_thread = g_thread_self ();
  wrong_thread = 0;
}

static void
teardown (void)
{
  fail_unless (!g_file_test (sock_path, G_FILE_TEST_EXISTS),
      "the socket file is still there");
  fail_unless_equals_int (g_rmdir (tmpdir), 0);
  fail_unless_equals_int (g_atomic_int_get (&wrong_thread), 0);
  g_clear_pointer (&notices, g_ptr_array_unref);
  g_clear_pointer (&sock_path, g_free);
  g_clear_pointer (&tmpdir, g_free);
  g_clear_pointer (&dev, cudaipc_device_unref);
}

/* The config of a server of @n_slots on the test's socket. */
static CudaIpcServerConfig
test_config (guint n_slots)
{
  CudaIpcServerConfig config;

  cudaipc_server_config_init (&config);
  config.socket_name = sock_path;
  config.mode = 0600;
  config.n_slots = n_slots;
  config.name = "test-producer";
  return config;
}

static CudaIpcServer *
start_server_with (const CudaIpcServerConfig * config)
{
  GError *err = NULL;
  CudaIpcServer *s = cudaipc_server_new (dev, config, &callbacks, NULL, &err);

  fail_unless (s != NULL, "server: %s", err ? err->message : "?");
  return s;
}

static CudaIpcServer *
start_server (guint n_slots)
{
  CudaIpcServerConfig config = test_config (n_slots);

  return start_server_with (&config);
}

/* Raw clients */

static void
recv_msg (CudaIpcConn * conn, CudaIpcMsg * msg, CudaIpcMsgType type)
{
  gint ret;

  fail_unless_equals_int (cudaipc_conn_wait (conn, WAIT_MS), 1);
  ret = cudaipc_conn_recv (conn, msg);
  fail_unless_equals_int (ret, 0);
  fail_unless (msg->type == type, "got %s, expected %s",
      cudaipc_msg_type_name (msg->type), cudaipc_msg_type_name (type));
}

/* Nothing more arrives within @ms. */
static void
expect_quiet (CudaIpcConn * conn, gint ms)
{
  fail_unless_equals_int (cudaipc_conn_wait (conn, ms), 0);
}

static void
expect_closed (CudaIpcConn * conn)
{
  CudaIpcMsg msg;

  fail_unless_equals_int (cudaipc_conn_wait (conn, WAIT_MS), 1);
  fail_unless_equals_int (cudaipc_conn_recv (conn, &msg), -EPIPE);
}

static void
expect_bye (CudaIpcConn * conn, CudaIpcByeReason reason, const gchar * text)
{
  CudaIpcMsg msg;

  recv_msg (conn, &msg, CUDAIPC_MSG_BYE);
  fail_unless_equals_int (msg.u.bye.reason, reason);
  fail_unless (strstr (msg.u.bye.text, text) != NULL, "BYE \"%s\"",
      msg.u.bye.text);
  cudaipc_msg_clear (&msg);
  expect_closed (conn);
}

static void
send_msg (CudaIpcConn * conn, const CudaIpcMsg * msg)
{
  fail_unless_equals_int (cudaipc_conn_send (conn, msg), 0);
}

static void
send_hello (CudaIpcConn * conn, guint32 version, guint32 backend,
    const gchar * name)
{
  CudaIpcMsg msg;

  cudaipc_msg_init (&msg, CUDAIPC_MSG_HELLO);
  msg.u.hello.version = version;
  msg.u.hello.backend = backend;
  msg.u.hello.pid = getpid ();
  msg.u.hello.name = name;
  send_msg (conn, &msg);
}

static void
send_release (CudaIpcConn * conn, guint32 generation, guint32 slot, guint64 seq)
{
  CudaIpcMsg msg;

  cudaipc_msg_init (&msg, CUDAIPC_MSG_RELEASE);
  msg.u.release.generation = generation;
  msg.u.release.slot = slot;
  msg.u.release.seq = seq;
  send_msg (conn, &msg);
}

/* Connects and reads the server's HELLO. */
static CudaIpcConn *
connect_client (void)
{
  CudaIpcMsg msg;
  guint8 zero[CUDAIPC_UUID_LEN] = { 0 };
  int fd = -1;
  CudaIpcConn *conn;

  fail_unless_equals_int (cudaipc_socket_connect (sock_path, &fd), 0);
  conn = cudaipc_conn_new (fd);
  recv_msg (conn, &msg, CUDAIPC_MSG_HELLO);
  fail_unless_equals_int (msg.u.hello.version, CUDAIPC_PROTOCOL_VERSION);
  fail_unless_equals_int (msg.u.hello.backend, CUDAIPC_BACKEND_HOST);
  fail_unless (memcmp (msg.u.hello.uuid, zero, sizeof (zero)) == 0);
  fail_unless_equals_int (msg.u.hello.pid, getpid ());
  fail_unless_equals_string (msg.u.hello.name, "test-producer");
  cudaipc_msg_clear (&msg);
  return conn;
}

/* A client past its handshake. */
static CudaIpcConn *
join (const gchar * name)
{
  CudaIpcConn *conn = connect_client ();
  gchar *what = g_strdup_printf ("joined %s", name);

  send_hello (conn, CUDAIPC_PROTOCOL_VERSION, CUDAIPC_BACKEND_HOST, name);
  expect_notice (what);
  g_free (what);
  return conn;
}

/* RING, one SLOT per slot, CAPS. With @blocks, each slot is imported
 * into it (the fds are checked the way a consumer does). Returns the slot
 * size. */
static guint64
expect_ring (CudaIpcConn * conn, guint32 generation, guint n_slots,
    guint32 caps_id, const gchar * caps, CudaIpcBlock ** blocks)
{
  CudaIpcMsg msg;
  guint64 slot_size;

  recv_msg (conn, &msg, CUDAIPC_MSG_RING);
  fail_unless_equals_int (msg.u.ring.generation, generation);
  fail_unless_equals_int (msg.u.ring.n_slots, n_slots);
  slot_size = msg.u.ring.slot_size;
  fail_unless (slot_size > 0 && slot_size % page == 0);

  for (guint i = 0; i < n_slots; i++) {
    recv_msg (conn, &msg, CUDAIPC_MSG_SLOT);
    fail_unless_equals_int (msg.u.slot.generation, generation);
    fail_unless_equals_int (msg.u.slot.index, i);
    fail_unless (msg.u.slot.n_allocs >= 1);
    fail_unless_equals_int (msg.n_fds, msg.u.slot.n_allocs);
    fail_unless (msg.u.slot.size >= slot_size);
    if (blocks) {
      GError *err = NULL;
      CudaIpcDescriptor *desc = cudaipc_descriptor_new_from_fds (dev,
          msg.fds, msg.u.slot.alloc_sizes, msg.n_fds, msg.u.slot.size,
          &err);

      fail_unless (desc != NULL, "descriptor: %s", err ? err->message : "?");
      blocks[i] = cudaipc_block_import (dev, desc, &err);
      fail_unless (blocks[i] != NULL, "import: %s", err ? err->message : "?");
      cudaipc_descriptor_free (desc);
    }
    cudaipc_msg_clear (&msg);
  }

  recv_msg (conn, &msg, CUDAIPC_MSG_CAPS);
  fail_unless_equals_int (msg.u.caps.caps_id, caps_id);
  fail_unless_equals_string (msg.u.caps.caps, caps);
  cudaipc_msg_clear (&msg);
  return slot_size;
}

static void
expect_frame (CudaIpcConn * conn, CudaIpcFrameMsg * frame)
{
  CudaIpcMsg msg;

  recv_msg (conn, &msg, CUDAIPC_MSG_FRAME);
  *frame = msg.u.frame;
  cudaipc_msg_clear (&msg);
}

/* The producer side */

/* Acquires a slot (waiting up to WAIT_MS), fills @size bytes with @fill
 * and publishes it; returns the frame as sent. */
static CudaIpcFrameMsg
produce (CudaIpcServer * s, guint64 size, guint8 fill)
{
  GError *err = NULL;
  CudaIpcServerStatus st;
  CudaIpcFrameMsg f = { 0 };
  CudaIpcBlock *block = NULL;
  guint slot = G_MAXUINT;

  st = cudaipc_server_acquire (s, size,
      g_get_monotonic_time () + WAIT_MS * 1000, &slot, &block, &err);
  fail_unless_equals_int (st, CUDAIPC_SERVER_OK);
  fail_unless (block != NULL);
  fail_unless (cudaipc_block_get_size (block) >= size);
  memset ((void *) cudaipc_block_get_ptr (block), fill, size);

  f.size = size;
  f.pts = fill * GST_MSECOND;
  f.dts = GST_CLOCK_TIME_NONE;
  f.duration = GST_MSECOND;
  f.clock_time = GST_CLOCK_TIME_NONE;
  f.n_planes = 1;
  f.planes[0].stride = 64;
  cudaipc_server_publish (s, slot, &f);
  fail_unless_equals_int (f.slot, slot);
  return f;
}

static CudaIpcServerStatus
try_acquire (CudaIpcServer * s, gint64 deadline, guint * slot)
{
  CudaIpcBlock *block = NULL;
  GError *err = NULL;
  CudaIpcServerStatus st;

  st = cudaipc_server_acquire (s, page, deadline, slot, &block, &err);
  fail_unless (st != CUDAIPC_SERVER_ERROR, "%s", err ? err->message : "?");
  return st;
}

/* The stats of the client named @client, or NULL. */
static const CudaIpcServerClientStats *
find_client_stats (const CudaIpcServerStats * st, const gchar * client)
{
  for (guint i = 0; i < st->clients->len; i++) {
    const CudaIpcServerClientStats *cs =
        &g_array_index (st->clients, CudaIpcServerClientStats, i);

    if (g_strcmp0 (cs->name, client) == 0)
      return cs;
  }
  return NULL;
}

/* A counter of the stats, or of the client named @client in them. */
static guint64
stat_of (CudaIpcServer * s, const gchar * client, const gchar * field)
{
  CudaIpcServerStats st;
  guint64 v = 0;

  cudaipc_server_get_stats (s, &st);
  fail_unless (st.clients != NULL);
  if (client) {
    const CudaIpcServerClientStats *cs = find_client_stats (&st, client);

    fail_unless (cs != NULL, "no client %s in the stats", client);
    if (g_str_equal (field, "frames-sent"))
      v = cs->frames_sent;
    else if (g_str_equal (field, "frames-released"))
      v = cs->frames_released;
    else if (g_str_equal (field, "held"))
      v = cs->held;
    else
      fail ("no client counter %s", field);
  } else if (g_str_equal (field, "frames-published")) {
    v = st.frames_published;
  } else if (g_str_equal (field, "frames-dropped")) {
    v = st.frames_dropped;
  } else if (g_str_equal (field, "clients")) {
    v = st.n_clients;
  } else if (g_str_equal (field, "generation")) {
    v = st.generation;
  } else if (g_str_equal (field, "rings-retired")) {
    v = st.rings_retired;
  } else {
    fail ("no counter %s", field);
  }
  cudaipc_server_stats_clear (&st);
  return v;
}

/* Waits until the server counted @n RELEASEs from @client. */
static void
wait_released (CudaIpcServer * s, const gchar * client, guint64 n)
{
  for (gint i = 0; i < WAIT_MS / 5; i++) {
    if (stat_of (s, client, "frames-released") >= n)
      return;
    g_usleep (5000);
  }
  fail ("client %s released fewer than %" G_GUINT64_FORMAT " frames",
      client, n);
}

/* Acquire in another thread */

typedef struct
{
  CudaIpcServer *server;
  gint64 deadline;
  CudaIpcServerStatus status;
  guint slot;
  gint64 took;
} Waiter;

static gpointer
waiter_func (gpointer data)
{
  Waiter *w = data;
  CudaIpcBlock *block = NULL;
  gint64 t0 = g_get_monotonic_time ();

  w->status = cudaipc_server_acquire (w->server, page, w->deadline, &w->slot,
      &block, NULL);
  w->took = g_get_monotonic_time () - t0;
  return NULL;
}

static GThread *
start_waiter (Waiter * w, CudaIpcServer * s, gint64 deadline)
{
  GThread *t;

  w->server = s;
  w->deadline = deadline;
  w->status = CUDAIPC_SERVER_ERROR;
  t = g_thread_new ("waiter", waiter_func, w);
  /* most likely waiting by now; the checks hold either way */
  g_usleep (100000);
  return t;
}

/* Tests */

GST_START_TEST (test_handshake)
{
  CudaIpcServer *s = start_server (2);
  CudaIpcBlock *blocks[2] = { NULL, NULL };
  CudaIpcFrameMsg sent, got;
  GError *err = NULL;
  const guint8 *p;
  CudaIpcConn *c;

  fail_unless_equals_int (cudaipc_server_get_n_clients (s), 0);
  fail_unless_equals_int (cudaipc_server_get_generation (s), 0);

  c = join ("c1");
  fail_unless_equals_int (cudaipc_server_get_n_clients (s), 1);
  fail_unless_equals_int (stat_of (s, NULL, "clients"), 1);
  fail_unless_equals_int (stat_of (s, "c1", "frames-sent"), 0);
  /* no ring yet: nothing more */
  expect_quiet (c, 100);

  /* the caps make the ring: it goes out with them, before any frame */
  fail_unless (cudaipc_server_set_caps (s, CAPS_SMALL, page, &err));
  fail_unless_equals_int (cudaipc_server_get_generation (s), 1);
  expect_ring (c, 1, 2, 1, CAPS_SMALL, blocks);
  expect_quiet (c, 100);
  sent = produce (s, page, 0x5a);
  fail_unless_equals_int (sent.seq, 1);
  fail_unless_equals_int (sent.generation, 1);
  fail_unless_equals_int (sent.caps_id, 1);

  expect_frame (c, &got);
  fail_unless_equals_int (got.generation, 1);
  fail_unless_equals_int (got.slot, sent.slot);
  fail_unless_equals_int (got.seq, 1);
  fail_unless_equals_int (got.caps_id, 1);
  fail_unless_equals_int (got.size, page);
  fail_unless_equals_uint64 (got.pts, 0x5a * GST_MSECOND);
  fail_unless_equals_uint64 (got.publish_time, sent.publish_time);
  fail_unless_equals_int (got.n_planes, 1);
  fail_unless_equals_int (got.planes[0].stride, 64);
  /* the bytes went through the slot's own memory */
  p = (const guint8 *) cudaipc_block_get_ptr (blocks[got.slot]);
  fail_unless (p[0] == 0x5a && p[page - 1] == 0x5a);
  fail_unless_equals_int (stat_of (s, "c1", "frames-sent"), 1);
  fail_unless_equals_int (stat_of (s, "c1", "held"), 1);
  fail_unless_equals_int (stat_of (s, NULL, "frames-published"), 1);

  send_release (c, got.generation, got.slot, got.seq);
  wait_released (s, "c1", 1);
  fail_unless_equals_int (stat_of (s, "c1", "held"), 0);

  cudaipc_conn_free (c);
  expect_notice ("left c1: connection closed");
  fail_unless_equals_int (cudaipc_server_get_n_clients (s), 0);
  cudaipc_block_free (blocks[0]);
  cudaipc_block_free (blocks[1]);
  cudaipc_server_free (s);
  fail_unless_equals_int (count_notices ("warning"), 0);
}

GST_END_TEST;

GST_START_TEST (test_busy_and_stop)
{
  CudaIpcServer *s = start_server (2), *other;
  GError *err = NULL;
  gchar *text;

  CudaIpcServerConfig config = test_config (2);

  /* a live producer on the path: refused, and its socket left alone */
  config.name = "second";
  other = cudaipc_server_new (dev, &config, NULL, NULL, &err);
  fail_unless (other == NULL);
  fail_unless (g_error_matches (err, CUDAIPC_ERROR, CUDAIPC_ERROR_BUSY));
  text = g_strdup_printf ("another producer is live on %s", sock_path);
  fail_unless_equals_string (err->message, text);
  g_free (text);
  g_clear_error (&err);
  fail_unless (g_file_test (sock_path, G_FILE_TEST_EXISTS));

  /* bad arguments */
  config.socket_name = "";
  fail_unless (cudaipc_server_new (dev, &config, NULL, NULL, &err) == NULL);
  fail_unless (g_error_matches (err, CUDAIPC_ERROR, CUDAIPC_ERROR_INVALID));
  g_clear_error (&err);
  config = test_config (0);
  fail_unless (cudaipc_server_new (dev, &config, NULL, NULL, &err) == NULL);
  fail_unless (g_error_matches (err, CUDAIPC_ERROR, CUDAIPC_ERROR_LIMIT));
  g_clear_error (&err);

  cudaipc_server_free (s);
}

GST_END_TEST;

/* Unwelcome neighbours */

/* The neighbour, a process of user 65534 (this program run again with
 * --neighbour, neighbour_main()): once the parent has noted its pid, opens
 * @n connections to @name, counts those that got BYE of @reason within a
 * second without sending anything, writes the count to its end of @pair
 * (pair[1]) and keeps the connections open until the parent says go. With
 * @hello it instead joins with one connection and reports 1 when it got
 * the ring's or any message past the handshake. The child execs at once:
 * between fork() and exec() it makes only async-signal-safe calls, as the
 * server's threads may hold a lock (malloc's, the sanitizer's) at the
 * fork. */
static pid_t
spawn_neighbour (const int pair[2], const gchar * name, guint n,
    guint32 reason, gboolean hello)
{
  int ctl = pair[1];
  g_autofree gchar *n_arg = g_strdup_printf ("%u", n);
  g_autofree gchar *reason_arg = g_strdup_printf ("%u", reason);
  g_autofree gchar *ctl_arg = g_strdup_printf ("%d", ctl);
  gchar *args[] = { (gchar *) "libs-server", (gchar *) "--neighbour",
    (gchar *) name, n_arg, reason_arg, (gchar *) (hello ? "1" : "0"),
    ctl_arg, NULL
  };
  pid_t pid = fork ();

  fail_unless (pid >= 0);
  if (pid > 0) {
    /* the child connects only once its pid is known here, so that
     * on_joined never sees it first */
    g_atomic_int_set (&neighbour_pid, pid);
    fail_unless_equals_int (write (pair[0], "s", 1), 1);
    return pid;
  }

  if (setgid (65534) != 0 || setuid (65534) != 0)
    _exit (2);
  if (fcntl (ctl, F_SETFD, 0) != 0)
    _exit (6);
  execv ("/proc/self/exe", args);
  _exit (7);
}

/* The neighbour's side (spawn_neighbour()): NAME N REASON HELLO CTL. */
static gint
neighbour_main (gint argc, gchar ** argv)
{
  const gchar *name;
  guint n;
  guint32 reason, count = 0;
  gboolean hello;
  int ctl;
  CudaIpcConn **conns;
  gint status = 0;
  char go;

  if (argc != 7)
    return 8;
  name = argv[2];
  n = (guint) g_ascii_strtoull (argv[3], NULL, 10);
  reason = (guint32) g_ascii_strtoull (argv[4], NULL, 10);
  hello = strcmp (argv[5], "1") == 0;
  ctl = (int) g_ascii_strtoll (argv[6], NULL, 10);
  if (n == 0 || n > 1000 || ctl < 0)
    return 8;
  if (read (ctl, &go, 1) != 1)
    return 5;

  conns = g_new0 (CudaIpcConn *, n);
  for (guint i = 0; i < n; i++) {
    int fd = -1, ret, tries = 0;

    /* a full backlog: again, as a consumer would */
    while ((ret = cudaipc_socket_connect (name, &fd)) == -EAGAIN &&
        tries++ < 1000)
      g_usleep (1000);
    if (ret < 0) {
      status = 3;
      goto done;
    }
    conns[i] = cudaipc_conn_new (fd);
  }
  for (guint i = 0; i < n; i++) {
    CudaIpcMsg msg;

    if (cudaipc_conn_wait (conns[i], 1000) != 1 ||
        cudaipc_conn_recv (conns[i], &msg) != 0)
      continue;
    if (hello && msg.type == CUDAIPC_MSG_HELLO) {
      CudaIpcMsg h;

      cudaipc_msg_init (&h, CUDAIPC_MSG_HELLO);
      h.u.hello.version = CUDAIPC_PROTOCOL_VERSION;
      h.u.hello.backend = CUDAIPC_BACKEND_HOST;
      h.u.hello.pid = getpid ();
      h.u.hello.name = "neighbour";
      if (cudaipc_conn_send (conns[i], &h) == 0)
        count++;
    } else if (!hello && msg.type == CUDAIPC_MSG_BYE &&
        msg.u.bye.reason == reason) {
      count++;
    }
    cudaipc_msg_clear (&msg);
  }
  if (write (ctl, &count, sizeof count) != sizeof count ||
      read (ctl, &go, 1) != 1)
    status = 4;
done:
  for (guint i = 0; i < n; i++)
    cudaipc_conn_free (conns[i]);
  g_free (conns);
  return status;
}

static guint32
neighbour_report (int ctl)
{
  struct pollfd pfd = { ctl, POLLIN, 0 };
  guint32 count = G_MAXUINT32;

  fail_unless_equals_int (poll (&pfd, 1, 10000), 1);
  fail_unless_equals_int (read (ctl, &count, sizeof count), sizeof count);
  return count;
}

static void
neighbour_end (int ctl, pid_t pid)
{
  int status = 0;

  fail_unless_equals_int (write (ctl, "g", 1), 1);
  fail_unless_equals_int (waitpid (pid, &status, 0), pid);
  fail_unless (WIFEXITED (status) && WEXITSTATUS (status) == 0,
      "neighbour status %d", status);
}

/* A user who may not connect is refused when it connects, before anything
 * is read from it, and its connections are closed at once, so the
 * producer's fds do not grow with them; the warnings come at most one a
 * second. */
GST_START_TEST (test_refused_at_accept)
{
  g_autofree gchar *name = g_strdup_printf ("@cudaipc-refused-%d",
      (int) getpid ());
  CudaIpcServerConfig config = test_config (2);
  CudaIpcServer *s;
  int ctl[2];
  guint fds_server;
  pid_t pid;

  config.socket_name = name;
  s = start_server_with (&config);
  fds_server = cudaipc_test_count_fds ();
  fail_unless (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ctl) == 0);
  pid = spawn_neighbour (ctl, name, 200, CUDAIPC_BYE_PERMISSION, FALSE);
  close (ctl[1]);
  fail_unless_equals_int (neighbour_report (ctl[0]), 200);
  /* the neighbour still holds its 200 connections open */
  g_usleep (100 * 1000);
  g_print ("libs-server: 200 connections refused; the producer's fds %u -> "
      "%u while they stay open; %u warning(s)\n", fds_server,
      cudaipc_test_count_fds (), count_notices ("Refused"));
  fail_unless (cudaipc_test_count_fds () <= fds_server + 2);
  fail_unless (count_notices ("Refused") >= 1 &&
      count_notices ("Refused") <= 2);
  fail_unless_equals_int (cudaipc_server_get_n_clients (s), 0);
  neighbour_end (ctl[0], pid);
  close (ctl[0]);
  cudaipc_server_free (s);
}

GST_END_TEST;

/* Connections in their handshake are capped per user: one user's idle
 * connections beyond its share are closed at once, and another user
 * still joins. */
GST_START_TEST (test_pending_capped_per_user)
{
  g_autofree gchar *name = g_strdup_printf ("@cudaipc-pending-%d",
      (int) getpid ());
  CudaIpcServerConfig config = test_config (2);
  const guint uids[] = { 65534 };
  CudaIpcConn *idle[8];
  CudaIpcServer *s;
  guint refused = 0;
  int ctl[2];
  pid_t pid;

  config.socket_name = name;
  config.uids = uids;
  config.n_uids = 1;
  config.max_pending_per_user = 4;
  s = start_server_with (&config);
  for (guint i = 0; i < G_N_ELEMENTS (idle); i++) {
    int fd = -1;

    fail_unless_equals_int (cudaipc_socket_connect (name, &fd), 0);
    idle[i] = cudaipc_conn_new (fd);
  }
  for (guint i = 0; i < G_N_ELEMENTS (idle); i++) {
    CudaIpcMsg msg;

    fail_unless_equals_int (cudaipc_conn_wait (idle[i], WAIT_MS), 1);
    fail_unless_equals_int (cudaipc_conn_recv (idle[i], &msg), 0);
    if (msg.type == CUDAIPC_MSG_BYE) {
      fail_unless_equals_int (msg.u.bye.reason, CUDAIPC_BYE_LOCAL);
      fail_unless (strstr (msg.u.bye.text, "too many connections") != NULL);
      refused++;
    } else {
      fail_unless_equals_int (msg.type, CUDAIPC_MSG_HELLO);
    }
    cudaipc_msg_clear (&msg);
  }
  fail_unless_equals_int (refused, 4);

  /* user 65534 has its own share */
  fail_unless (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ctl) == 0);
  pid = spawn_neighbour (ctl, name, 1, 0, TRUE);
  close (ctl[1]);
  fail_unless_equals_int (neighbour_report (ctl[0]), 1);
  expect_notice ("joined neighbour");
  neighbour_end (ctl[0], pid);
  close (ctl[0]);
  for (guint i = 0; i < G_N_ELEMENTS (idle); i++)
    cudaipc_conn_free (idle[i]);
  cudaipc_server_free (s);
}

GST_END_TEST;

/* An idle connection (connected, never a byte sent) costs the producer
 * little memory: no receive buffer until it sends something. */
GST_START_TEST (test_idle_connections_memory)
{
  CudaIpcServerConfig config = test_config (2);
  const guint n = 300;
  guint64 before, during;
  CudaIpcServer *s;
  int *fds = g_new (int, n);

  config.max_pending = config.max_pending_per_user = n;
  s = start_server_with (&config);
  before = cudaipc_test_rss_kib ();
  for (guint i = 0; i < n; i++) {
    int ret, tries = 0;

    while ((ret = cudaipc_socket_connect (sock_path, &fds[i])) == -EAGAIN &&
        tries++ < 1000)
      g_usleep (1000);
    fail_unless_equals_int (ret, 0);
  }
  /* until the producer has accepted them all and sent each its HELLO */
  for (guint i = 0; i < n; i++) {
    struct pollfd pfd = { fds[i], POLLIN, 0 };

    fail_unless_equals_int (poll (&pfd, 1, WAIT_MS), 1);
  }
  during = cudaipc_test_rss_kib ();
  g_print ("libs-server: %u idle connections: RSS %" G_GUINT64_FORMAT " -> %"
      G_GUINT64_FORMAT " KiB (%.1f KiB each)\n", n, before, during,
      (during - before) / (gdouble) n);
  /* it was two 64 KiB buffers each */
  fail_unless (during < before + n * 8 + CUDAIPC_TEST_RSS_SLACK_KIB,
      "%" G_GUINT64_FORMAT " KiB more",
      during - before);
  for (guint i = 0; i < n; i++)
    close (fds[i]);
  g_free (fds);
  cudaipc_server_free (s);
}

GST_END_TEST;

/* A producer's stop removes its socket file only while it is still the
 * socket it bound: not a second producer's that took the path after the
 * first one's was removed, and not a regular file put there. */
GST_START_TEST (test_stop_removes_only_its_socket)
{
  CudaIpcServerConfig config = test_config (2);
  CudaIpcServer *a = start_server (2), *b;
  CudaIpcConn *c;
  FILE *f;

  fail_unless_equals_int (g_unlink (sock_path), 0);
  b = start_server_with (&config);
  cudaipc_server_free (a);
  fail_unless (g_file_test (sock_path, G_FILE_TEST_EXISTS),
      "the first producer's stop removed the second one's socket");
  /* and the second is still reachable there */
  c = join ("after");
  cudaipc_conn_free (c);
  expect_notice ("left after");
  cudaipc_server_free (b);
  fail_if (g_file_test (sock_path, G_FILE_TEST_EXISTS));

  a = start_server (2);
  fail_unless_equals_int (g_unlink (sock_path), 0);
  f = fopen (sock_path, "w");
  fail_unless (f != NULL);
  fputs ("not a socket\n", f);
  fclose (f);
  cudaipc_server_free (a);
  fail_unless (g_file_test (sock_path, G_FILE_TEST_IS_REGULAR),
      "a regular file at the path was removed");
  fail_unless_equals_int (g_unlink (sock_path), 0);
}

GST_END_TEST;

GST_START_TEST (test_stop_says_bye)
{
  CudaIpcServer *s = start_server (2);
  CudaIpcFrameMsg f;
  CudaIpcServerStats stats;
  CudaIpcConn *c;

  c = join ("c1");
  produce (s, page, 1);
  produce (s, page, 2);
  /* no caps were set: RING and SLOTs only */
  {
    CudaIpcMsg msg;

    recv_msg (c, &msg, CUDAIPC_MSG_RING);
    cudaipc_msg_clear (&msg);
    for (guint i = 0; i < 2; i++) {
      recv_msg (c, &msg, CUDAIPC_MSG_SLOT);
      cudaipc_msg_clear (&msg);
    }
  }
  expect_frame (c, &f);
  expect_frame (c, &f);

  cudaipc_server_stop (s);
  expect_notice ("left c1: the producer stopped");
  expect_bye (c, CUDAIPC_BYE_NORMAL, "the producer stopped");
  fail_unless (!g_file_test (sock_path, G_FILE_TEST_EXISTS));

  /* counters outlive stop() */
  fail_unless_equals_int (cudaipc_server_get_n_clients (s), 0);
  cudaipc_server_get_stats (s, &stats);
  fail_unless_equals_int (stats.frames_published, 2);
  fail_unless_equals_int (stats.clients->len, 0);
  cudaipc_server_stats_clear (&stats);

  cudaipc_server_free (s);
  cudaipc_conn_free (c);

  /* and a server that never ran */
  cudaipc_server_get_stats (NULL, &stats);
  fail_unless_equals_int (stats.frames_published, 0);
  fail_unless (stats.clients != NULL);
  fail_unless_equals_int (stats.clients->len, 0);
  cudaipc_server_stats_clear (&stats);
  cudaipc_server_stats_clear (&stats);
  cudaipc_server_free (NULL);
}

GST_END_TEST;

GST_START_TEST (test_version_mismatch)
{
  CudaIpcServer *s = start_server (2);
  CudaIpcConn *c = connect_client ();
  gchar *text;

  send_hello (c, CUDAIPC_PROTOCOL_VERSION + 1, CUDAIPC_BACKEND_HOST, "new");
  text = g_strdup_printf ("protocol version %d is not supported",
      CUDAIPC_PROTOCOL_VERSION + 1);
  expect_bye (c, CUDAIPC_BYE_VERSION, text);
  g_free (text);
  text = g_strdup_printf ("warning Refused consumer (pid %d): protocol "
      "version %d is not supported, this producer speaks %d", getpid (),
      CUDAIPC_PROTOCOL_VERSION + 1, CUDAIPC_PROTOCOL_VERSION);
  expect_notice (text);
  g_free (text);
  fail_unless_equals_int (cudaipc_server_get_n_clients (s), 0);
  fail_unless_equals_int (count_notices ("joined"), 0);
  fail_unless_equals_int (count_notices ("left"), 0);

  cudaipc_conn_free (c);
  cudaipc_server_free (s);
}

GST_END_TEST;

GST_START_TEST (test_backend_mismatch)
{
  CudaIpcServer *s = start_server (2);
  CudaIpcConn *c = connect_client ();

  send_hello (c, CUDAIPC_PROTOCOL_VERSION, CUDAIPC_BACKEND_CUDA, "gpu");
  expect_bye (c, CUDAIPC_BYE_BACKEND,
      "the consumer uses the cuda backend, this producer uses host");
  expect_notice ("warning Refused consumer 'gpu'");
  fail_unless_equals_int (cudaipc_server_get_n_clients (s), 0);
  fail_unless_equals_int (count_notices ("joined"), 0);

  cudaipc_conn_free (c);
  cudaipc_server_free (s);
}

GST_END_TEST;

GST_START_TEST (test_handshake_timeout)
{
  CudaIpcServerConfig config = test_config (2);
  CudaIpcServer *s;
  CudaIpcConn *c, *ok;
  gint64 t0, took;

  config.handshake_timeout_ms = 200;
  s = start_server_with (&config);
  t0 = g_get_monotonic_time ();
  c = connect_client ();
  /* a client that answers in time is not affected */
  ok = join ("ok");

  expect_bye (c, CUDAIPC_BYE_PROTOCOL, "no HELLO in time");
  took = g_get_monotonic_time () - t0;
  fail_unless (took >= 190 * 1000 && took < 3 * G_USEC_PER_SEC,
      "dropped after %" G_GINT64_FORMAT " us", took);
  expect_notice ("did not complete its handshake in 200 ms; disconnected it");
  fail_unless_equals_int (cudaipc_server_get_n_clients (s), 1);
  expect_quiet (ok, 100);

  cudaipc_conn_free (c);
  cudaipc_conn_free (ok);
  cudaipc_server_free (s);
}

GST_END_TEST;

GST_START_TEST (test_slot_held_until_every_client_released)
{
  CudaIpcServer *s = start_server (2);
  CudaIpcConn *c1, *c2;
  CudaIpcFrameMsg a, b, f;
  GError *err = NULL;
  guint slot;

  c1 = join ("c1");
  c2 = join ("c2");
  fail_unless (cudaipc_server_set_caps (s, CAPS_SMALL, page, &err));
  a = produce (s, page, 1);
  b = produce (s, page, 2);
  fail_unless (a.slot != b.slot);
  for (guint i = 0; i < 2; i++) {
    CudaIpcConn *c = i == 0 ? c1 : c2;

    expect_ring (c, 1, 2, 1, CAPS_SMALL, NULL);
    expect_frame (c, &f);
    fail_unless_equals_int (f.slot, a.slot);
    expect_frame (c, &f);
    fail_unless_equals_int (f.slot, b.slot);
  }

  /* both slots held by both clients: a frame now is dropped */
  fail_unless_equals_int (try_acquire (s, 0, &slot), CUDAIPC_SERVER_TIMEOUT);
  fail_unless_equals_int (stat_of (s, NULL, "frames-dropped"), 1);

  /* one of two holders released slot a: still not free */
  send_release (c1, a.generation, a.slot, a.seq);
  wait_released (s, "c1", 1);
  fail_unless_equals_int (stat_of (s, "c1", "held"), 1);
  fail_unless_equals_int (stat_of (s, "c2", "held"), 2);
  fail_unless_equals_int (try_acquire (s, g_get_monotonic_time () + 50000,
          &slot), CUDAIPC_SERVER_TIMEOUT);
  fail_unless_equals_int (stat_of (s, NULL, "frames-dropped"), 2);

  /* the second holder released it: free */
  send_release (c2, a.generation, a.slot, a.seq);
  fail_unless_equals_int (try_acquire (s, g_get_monotonic_time () +
          WAIT_MS * 1000, &slot), CUDAIPC_SERVER_OK);
  fail_unless_equals_int (slot, a.slot);
  cudaipc_server_abort (s, slot);
  fail_unless_equals_int (stat_of (s, NULL, "frames-published"), 2);

  cudaipc_conn_free (c1);
  cudaipc_conn_free (c2);
  cudaipc_server_free (s);
}

GST_END_TEST;

GST_START_TEST (test_release_not_held)
{
  CudaIpcServer *s = start_server (4);
  CudaIpcConn *good, *bad, *worse;
  CudaIpcFrameMsg f, g;
  GError *err = NULL;
  gchar *text;

  good = join ("good");
  bad = join ("bad");
  worse = join ("worse");
  fail_unless (cudaipc_server_set_caps (s, CAPS_SMALL, page, &err));
  f = produce (s, page, 1);
  expect_ring (good, 1, 4, 1, CAPS_SMALL, NULL);
  expect_ring (bad, 1, 4, 1, CAPS_SMALL, NULL);
  expect_ring (worse, 1, 4, 1, CAPS_SMALL, NULL);
  expect_frame (good, &g);
  expect_frame (bad, &g);
  expect_frame (worse, &g);

  /* a slot of the ring it never got, and one that does not exist */
  send_release (bad, f.generation, (f.slot + 1) % 4, 77);
  send_release (worse, f.generation, 40, 78);
  expect_bye (bad, CUDAIPC_BYE_PROTOCOL, "released a slot it does not hold");
  expect_bye (worse, CUDAIPC_BYE_PROTOCOL, "released a slot it does not hold");
  text = g_strdup_printf ("warning Consumer 'bad' (pid %d) released slot "
      "%u of generation 1, which it does not hold; disconnected it",
      getpid (), (f.slot + 1) % 4);
  expect_notice (text);
  g_free (text);
  expect_notice ("slot 40 of generation 1, which does not exist; "
      "disconnected it");
  expect_notice ("left bad: protocol error: released slot");
  expect_notice ("left worse: protocol error: released slot 40 of "
      "generation 1, which does not exist");
  fail_unless_equals_int (cudaipc_server_get_n_clients (s), 1);

  /* the others' holds went with them; the good one goes on receiving
   * every frame, round the ring several times */
  send_release (good, f.generation, f.slot, f.seq);
  for (guint i = 0; i < 12; i++) {
    CudaIpcFrameMsg sent = produce (s, page, 10 + i);

    expect_frame (good, &g);
    fail_unless_equals_int (g.seq, sent.seq);
    fail_unless_equals_int (g.seq, f.seq + 1 + i);
    send_release (good, g.generation, g.slot, g.seq);
  }
  wait_released (s, "good", 13);
  fail_unless_equals_int (stat_of (s, NULL, "frames-dropped"), 0);
  fail_unless_equals_int (stat_of (s, "good", "frames-sent"), 13);

  cudaipc_conn_free (good);
  cudaipc_conn_free (bad);
  cudaipc_conn_free (worse);
  cudaipc_server_free (s);
}

GST_END_TEST;

GST_START_TEST (test_stale_release_ignored)
{
  CudaIpcServer *s = start_server (2);
  CudaIpcFrameMsg old, cur, g;
  GError *err = NULL;
  CudaIpcConn *c;

  c = join ("c1");
  fail_unless (cudaipc_server_set_caps (s, CAPS_SMALL, page, &err));
  old = produce (s, page, 1);
  expect_ring (c, 1, 2, 1, CAPS_SMALL, NULL);
  expect_frame (c, &g);

  /* bigger frames: generation 2 with the caps, while the client holds a
   * slot of 1; the caps come once, with the new ring */
  fail_unless (cudaipc_server_set_caps (s, CAPS_LARGE, 3 * page, &err));
  expect_ring (c, 2, 2, 2, CAPS_LARGE, NULL);
  cur = produce (s, 3 * page, 2);
  fail_unless_equals_int (cur.generation, 2);
  expect_frame (c, &g);

  /* stale: counted, nothing else; the same slot index of generation 2
   * is still held */
  send_release (c, old.generation, cur.slot, old.seq);
  wait_released (s, "c1", 1);
  fail_unless_equals_int (stat_of (s, "c1", "held"), 1);
  fail_unless_equals_int (cudaipc_server_get_n_clients (s), 1);

  send_release (c, cur.generation, cur.slot, cur.seq);
  wait_released (s, "c1", 2);
  fail_unless_equals_int (stat_of (s, "c1", "held"), 0);
  produce (s, 3 * page, 3);
  expect_frame (c, &g);
  fail_unless_equals_int (g.seq, 3);
  fail_unless_equals_int (count_notices ("warning"), 0);
  fail_unless_equals_int (count_notices ("left"), 0);

  cudaipc_conn_free (c);
  cudaipc_server_free (s);
}

GST_END_TEST;

/* Releases of old generations are allowed for the frames a consumer held
 * when their ring was replaced, and no more: a flood of them, or a release
 * of a generation not made yet, drops that consumer; another loses
 * nothing. */
GST_START_TEST (test_release_flood_dropped)
{
  CudaIpcServer *s = start_server (2);
  CudaIpcFrameMsg old, cur, g;
  CudaIpcConn *flood, *future, *good;
  GError *err = NULL;

  flood = join ("flood");
  future = join ("future");
  good = join ("good");
  fail_unless (cudaipc_server_set_caps (s, CAPS_SMALL, page, &err));
  old = produce (s, page, 1);
  for (guint i = 0; i < 3; i++) {
    CudaIpcConn *c = i == 0 ? flood : i == 1 ? future : good;

    expect_ring (c, 1, 2, 1, CAPS_SMALL, NULL);
    expect_frame (c, &g);
  }

  /* generation 2 while everyone holds the frame of generation 1 */
  fail_unless (cudaipc_server_set_caps (s, CAPS_LARGE, 3 * page, &err));
  cur = produce (s, 3 * page, 2);
  fail_unless_equals_int (cur.generation, 2);
  for (guint i = 0; i < 3; i++) {
    CudaIpcConn *c = i == 0 ? flood : i == 1 ? future : good;

    expect_ring (c, 2, 2, 2, CAPS_LARGE, NULL);
    expect_frame (c, &g);
  }

  /* the one old frame each held: accepted; then the flood begins */
  send_release (flood, old.generation, old.slot, old.seq);
  send_release (good, old.generation, old.slot, old.seq);
  for (guint i = 0; i < 50; i++) {
    CudaIpcMsg rel;

    /* the producer may hang up mid-flood: sends may then fail */
    cudaipc_msg_init (&rel, CUDAIPC_MSG_RELEASE);
    rel.u.release.generation = old.generation;
    rel.u.release.slot = old.slot;
    rel.u.release.seq = old.seq;
    if (cudaipc_conn_send (flood, &rel) != 0)
      break;
  }
  send_release (future, cur.generation + 1, cur.slot, cur.seq);
  expect_bye (flood, CUDAIPC_BYE_PROTOCOL, "released a slot it does not hold");
  expect_bye (future, CUDAIPC_BYE_PROTOCOL,
      "released a slot it does not hold");
  expect_notice ("generation 1, which it does not hold; disconnected it");
  expect_notice ("generation 3, a generation not made yet; disconnected it");
  fail_unless_equals_int (cudaipc_server_get_n_clients (s), 1);

  /* the good one: its old release counted, and every frame still comes */
  wait_released (s, "good", 1);
  send_release (good, cur.generation, cur.slot, cur.seq);
  wait_released (s, "good", 2);
  for (guint i = 0; i < 6; i++) {
    CudaIpcFrameMsg sent = produce (s, 3 * page, 10 + i);

    expect_frame (good, &g);
    fail_unless_equals_int (g.seq, sent.seq);
    send_release (good, g.generation, g.slot, g.seq);
  }
  wait_released (s, "good", 8);
  fail_unless_equals_int (stat_of (s, NULL, "frames-dropped"), 0);

  cudaipc_conn_free (flood);
  cudaipc_conn_free (future);
  cudaipc_conn_free (good);
  cudaipc_server_free (s);
}

GST_END_TEST;

GST_START_TEST (test_closed_client_frees_its_slots)
{
  CudaIpcServer *s = start_server (2);
  CudaIpcFrameMsg g;
  CudaIpcConn *c;
  Waiter w;
  GThread *t;

  c = join ("c1");
  produce (s, page, 1);
  produce (s, page, 2);
  fail_unless_equals_int (stat_of (s, "c1", "held"), 2);

  t = start_waiter (&w, s, g_get_monotonic_time () + 20 * G_USEC_PER_SEC);
  /* it never released a frame; closing gives both slots back at once */
  cudaipc_conn_free (c);
  g_thread_join (t);
  fail_unless_equals_int (w.status, CUDAIPC_SERVER_OK);
  fail_unless (w.took < 5 * G_USEC_PER_SEC);
  cudaipc_server_abort (s, w.slot);
  expect_notice ("left c1: connection closed");
  fail_unless_equals_int (stat_of (s, NULL, "frames-dropped"), 0);

  /* and the other slot is free too; the aborted frame's number 3 is
   * skipped */
  g = produce (s, page, 3);
  fail_unless_equals_int (g.seq, 4);
  produce (s, page, 4);

  cudaipc_server_free (s);
}

GST_END_TEST;

/* Sends @len bytes as one datagram with @fd attached. */
static void
send_raw_with_fd (int sock, const guint8 * data, gsize len, int fd)
{
  union
  {
    struct cmsghdr align;
    guint8 buf[CMSG_SPACE (sizeof (int))];
  } control;
  struct msghdr mh = { 0 };
  struct iovec iov = { (void *) data, len };
  struct cmsghdr *cmsg;

  memset (&control, 0, sizeof (control));
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  mh.msg_control = control.buf;
  mh.msg_controllen = sizeof (control.buf);
  cmsg = CMSG_FIRSTHDR (&mh);
  cmsg->cmsg_level = SOL_SOCKET;
  cmsg->cmsg_type = SCM_RIGHTS;
  cmsg->cmsg_len = CMSG_LEN (sizeof (int));
  memcpy (CMSG_DATA (cmsg), &fd, sizeof (int));
  fail_unless_equals_int (sendmsg (sock, &mh, MSG_NOSIGNAL), len);
}

GST_START_TEST (test_garbage_drops_client)
{
  CudaIpcServer *s = start_server (2);
  CudaIpcConn *junk, *good;
  CudaIpcFrameMsg f, g;
  GError *err = NULL;
  gchar *text;
  guint8 garbage[200];
  guint n_fds;
  int memfd;

  good = join ("good");
  junk = join ("junk");

  for (guint i = 0; i < sizeof (garbage); i++)
    garbage[i] = (guint8) (i * 37 + 11);
  memfd = memfd_create ("cudaipc-test-junk", MFD_CLOEXEC);
  fail_unless (memfd >= 0);
  n_fds = cudaipc_test_count_fds ();
  send_raw_with_fd (cudaipc_conn_get_fd (junk), garbage, sizeof (garbage),
      memfd);
  expect_bye (junk, CUDAIPC_BYE_PROTOCOL, "malformed message");
  text = g_strdup_printf ("warning Consumer 'junk' (pid %d) sent a "
      "malformed message", getpid ());
  expect_notice (text);
  g_free (text);
  expect_notice ("left junk: protocol error");
  /* the server's end of that connection is closed, and so is the copy
   * of the fd that reached it */
  fail_unless_equals_int (cudaipc_test_count_fds (), n_fds - 1);
  close (memfd);

  /* the other client is not affected */
  fail_unless_equals_int (cudaipc_server_get_n_clients (s), 1);
  fail_unless (cudaipc_server_set_caps (s, CAPS_SMALL, page, &err));
  f = produce (s, page, 1);
  expect_ring (good, 1, 2, 1, CAPS_SMALL, NULL);
  expect_frame (good, &g);
  fail_unless_equals_int (g.seq, f.seq);

  cudaipc_conn_free (junk);
  cudaipc_conn_free (good);
  cudaipc_server_free (s);
}

GST_END_TEST;

/* One hostile consumer per case, each dropped with BYE(PROTOCOL), the fd
 * it attached and its connection closed; a good consumer meanwhile gets
 * every frame. The RELEASE each case starts from is well formed (sequence
 * 2, after the HELLO). */
typedef enum
{
  HOSTILE_TRUNCATED,
  HOSTILE_OVERSIZED,
  HOSTILE_UNKNOWN_TYPE,
  HOSTILE_FD_ON_RELEASE,
  HOSTILE_BAD_SEQUENCE,
  HOSTILE_RESERVED,
  N_HOSTILE
} Hostile;

static void
send_hostile (CudaIpcConn * conn, Hostile how)
{
  CudaIpcMsg rel;
  guint8 *buf = g_malloc0 (CUDAIPC_MAX_MESSAGE + 4096);
  gssize len;
  int memfd = -1;

  cudaipc_msg_init (&rel, CUDAIPC_MSG_RELEASE);
  rel.u.release.generation = 1;
  len = cudaipc_msg_build (&rel, how == HOSTILE_BAD_SEQUENCE ? 7 : 2, buf,
      CUDAIPC_MAX_MESSAGE);
  fail_unless (len > CUDAIPC_HEADER_SIZE);
  switch (how) {
    case HOSTILE_TRUNCATED:
      len -= 3;
      break;
    case HOSTILE_OVERSIZED:
      len = CUDAIPC_MAX_MESSAGE + 4096;
      break;
    case HOSTILE_UNKNOWN_TYPE:
      buf[0] = 99;
      buf[1] = 0;
      break;
    case HOSTILE_FD_ON_RELEASE:
      memfd = memfd_create ("cudaipc-test-hostile", MFD_CLOEXEC);
      fail_unless (memfd >= 0);
      break;
    case HOSTILE_RESERVED:
      buf[12] = 1;
      break;
    default:
      break;
  }
  if (memfd >= 0) {
    send_raw_with_fd (cudaipc_conn_get_fd (conn), buf, len, memfd);
    close (memfd);
  } else {
    fail_unless_equals_int (send (cudaipc_conn_get_fd (conn), buf, len,
            MSG_NOSIGNAL), len);
  }
  g_free (buf);
}

GST_START_TEST (test_hostile_messages_drop_client)
{
  CudaIpcServer *s = start_server (2);
  CudaIpcFrameMsg f, g;
  CudaIpcConn *good;
  GError *err = NULL;

  good = join ("good");
  fail_unless (cudaipc_server_set_caps (s, CAPS_SMALL, page, &err));
  f = produce (s, page, 1);
  expect_ring (good, 1, 2, 1, CAPS_SMALL, NULL);
  expect_frame (good, &g);
  send_release (good, g.generation, g.slot, g.seq);

  for (guint how = 0; how < N_HOSTILE; how++) {
    g_autofree gchar *name = g_strdup_printf ("hostile-%u", how);
    g_autofree gchar *left = g_strdup_printf ("left %s: protocol error",
        name);
    guint n_fds = cudaipc_test_count_fds ();
    CudaIpcConn *bad = join (name);
    CudaIpcFrameMsg sent;
    CudaIpcMsg bye;

    /* it is sent the ring and a frame like anyone, then misbehaves */
    sent = produce (s, page, 10 + how);
    expect_ring (bad, 1, 2, 1, CAPS_SMALL, NULL);
    expect_frame (bad, &g);
    send_hostile (bad, how);
    recv_msg (bad, &bye, CUDAIPC_MSG_BYE);
    fail_unless_equals_int (bye.u.bye.reason, CUDAIPC_BYE_PROTOCOL);
    cudaipc_msg_clear (&bye);
    expect_closed (bad);
    expect_notice (left);
    cudaipc_conn_free (bad);
    /* its connection and every fd it sent are closed */
    fail_unless_equals_int (cudaipc_test_count_fds (), n_fds);

    /* the good one got this frame too, and goes on */
    expect_frame (good, &g);
    fail_unless_equals_int (g.seq, sent.seq);
    send_release (good, g.generation, g.slot, g.seq);
  }
  wait_released (s, "good", 1 + N_HOSTILE);
  fail_unless_equals_int (stat_of (s, NULL, "frames-dropped"), 0);
  fail_unless_equals_int (cudaipc_server_get_n_clients (s), 1);
  (void) f;

  cudaipc_conn_free (good);
  cudaipc_server_free (s);
}

GST_END_TEST;

/* A consumer that holds nothing and never reads: the producer's messages
 * (events here) fill its socket, and it is dropped as too slow, without
 * blocking the producer or costing a reading consumer anything. */
GST_START_TEST (test_deaf_client_dropped)
{
  CudaIpcServer *s = start_server (2);
  CudaIpcConn *deaf, *good;
  GError *err = NULL;
  CudaIpcFrameMsg g;
  CudaIpcMsg msg;
  guint sent = 0;
  gchar pad[512];

  memset (pad, 'x', sizeof (pad) - 1);
  pad[sizeof (pad) - 1] = 0;
  good = join ("good");
  deaf = join ("deaf");
  fail_unless (cudaipc_server_set_caps (s, CAPS_SMALL, page, &err));
  for (sent = 0; sent < 100000 && cudaipc_server_get_n_clients (s) == 2;
      sent++) {
    GstEvent *ev = gst_event_new_custom (GST_EVENT_CUSTOM_DOWNSTREAM,
        gst_structure_new ("deaf-test", "n", G_TYPE_UINT, sent, "pad",
            G_TYPE_STRING, pad, NULL));

    fail_unless (cudaipc_server_send_event (s, ev, GST_CLOCK_TIME_NONE, &err),
        "%s", err ? err->message : "?");
    gst_event_unref (ev);
    /* the good one reads everything at once */
    while (cudaipc_conn_wait (good, 0) == 1) {
      fail_unless_equals_int (cudaipc_conn_recv (good, &msg), 0);
      cudaipc_msg_clear (&msg);
    }
  }
  fail_unless (sent < 100000, "the deaf consumer was never dropped");
  g_print ("deaf consumer dropped after %u events\n", sent);
  expect_notice ("is not reading its messages and was disconnected");
  expect_notice ("left deaf: too slow");
  fail_unless_equals_int (cudaipc_server_get_n_clients (s), 1);

  /* the good one goes on */
  produce (s, page, 1);
  for (;;) {
    fail_unless_equals_int (cudaipc_conn_wait (good, WAIT_MS), 1);
    fail_unless_equals_int (cudaipc_conn_recv (good, &msg), 0);
    if (msg.type == CUDAIPC_MSG_FRAME) {
      g = msg.u.frame;
      cudaipc_msg_clear (&msg);
      break;
    }
    cudaipc_msg_clear (&msg);
  }
  fail_unless_equals_int (g.seq, 1);

  cudaipc_conn_free (deaf);
  cudaipc_conn_free (good);
  cudaipc_server_free (s);
}

GST_END_TEST;

/* Every byte of @block's first @size bytes is @fill. */
static void
check_fill (CudaIpcBlock * block, guint64 size, guint8 fill)
{
  const guint8 *p = (const guint8 *) cudaipc_block_get_ptr (block);

  for (guint64 i = 0; i < size; i++)
    fail_unless (p[i] == fill, "byte %" G_GUINT64_FORMAT " is %u, not %u",
        i, p[i], fill);
}

/* Reads messages until a FRAME, importing a RING's slots into @blocks
 * (whose old imports stay where they are: the caller frees them). */
static void
read_to_frame (CudaIpcConn * conn, guint32 generation, guint n_slots,
    CudaIpcBlock ** blocks, CudaIpcFrameMsg * f)
{
  expect_ring (conn, generation, n_slots, 1, CAPS_SMALL, blocks);
  expect_frame (conn, f);
  fail_unless_equals_int (f->generation, generation);
}

/* A consumer that stops (SIGSTOP, say) while it holds every slot is
 * dropped as stuck, and the ring it held is retired, not rewritten: the
 * frames it took, and those queued for it, stay as they were; the
 * consumer that kept releasing gets a new ring and goes on. */
GST_START_TEST (test_stuck_consumer_ring_retired)
{
  CudaIpcServerConfig config = test_config (2);
  CudaIpcServer *s;
  CudaIpcConn *stuck, *good;
  CudaIpcBlock *old_blocks[2] = { NULL, NULL }, *new_blocks[2] = { NULL, };
  CudaIpcBlock *good_blocks[2] = { NULL, NULL };
  CudaIpcFrameMsg a, b, f, g;
  GError *err = NULL;

  config.client_timeout_ms = 200;
  s = start_server_with (&config);
  stuck = join ("stuck");
  good = join ("good");
  fail_unless (cudaipc_server_set_caps (s, CAPS_SMALL, page, &err));
  a = produce (s, page, 1);
  b = produce (s, page, 2);
  expect_ring (stuck, 1, 2, 1, CAPS_SMALL, old_blocks);
  expect_frame (stuck, &f);
  expect_frame (stuck, &f);
  expect_ring (good, 1, 2, 1, CAPS_SMALL, good_blocks);
  expect_frame (good, &g);
  send_release (good, g.generation, g.slot, g.seq);
  expect_frame (good, &g);
  send_release (good, g.generation, g.slot, g.seq);
  wait_released (s, "good", 2);

  /* every slot held by one that releases nothing: after the timeout it is
   * dropped, and this frame goes into a new ring */
  f = produce (s, page, 3);
  fail_unless_equals_int (f.generation, 2);
  expect_notice ("left stuck: stuck: held 2 frames");
  expect_notice ("warning");
  expect_bye (stuck, CUDAIPC_BYE_TOO_SLOW, "stopped releasing");
  fail_unless_equals_int (stat_of (s, NULL, "rings-retired"), 1);
  fail_unless_equals_int (stat_of (s, NULL, "generation"), 2);
  fail_unless_equals_int (cudaipc_server_get_n_clients (s), 1);

  /* the stuck one's frames did not change, nor do they as frames go on */
  for (guint i = 4; i < 10; i++) {
    if (i == 4)
      read_to_frame (good, 2, 2, new_blocks, &g);
    else
      expect_frame (good, &g);
    fail_unless_equals_int (g.seq, i - 1);
    check_fill (new_blocks[g.slot], page, i - 1);
    send_release (good, g.generation, g.slot, g.seq);
    wait_released (s, "good", i - 1);
    produce (s, page, i);
    check_fill (old_blocks[a.slot], page, 1);
    check_fill (old_blocks[b.slot], page, 2);
  }
  expect_frame (good, &g);
  fail_unless_equals_int (g.seq, 9);
  fail_unless_equals_int (stat_of (s, NULL, "rings-retired"), 1);
  fail_unless_equals_int (count_notices ("left"), 0);

  for (guint i = 0; i < 2; i++) {
    cudaipc_block_free (old_blocks[i]);
    cudaipc_block_free (new_blocks[i]);
    cudaipc_block_free (good_blocks[i]);
  }
  cudaipc_conn_free (stuck);
  cudaipc_conn_free (good);
  cudaipc_server_free (s);
}

GST_END_TEST;

/* Consumers that take frames and never release them join one after
 * another, beside one that keeps its newest two frames (max-held 2 of a
 * ring of 4) and releases the rest: each taker is dropped once it holds
 * every slot; the keeper never is, and the frames it keeps never change
 * (each drop retires the ring). */
GST_START_TEST (test_keeper_of_newest_frames_not_dropped)
{
  CudaIpcServerConfig config = test_config (4);
  CudaIpcServer *s;
  CudaIpcConn *keeper;
  CudaIpcBlock *blocks[4][4] = { {NULL,}, };
  GQueue kept = G_QUEUE_INIT;   /* CudaIpcFrameMsg*, oldest first */
  CudaIpcFrameMsg f;
  GError *err = NULL;
  guint8 fill = 0;
  /* each taker is this process, and each drop pins a retired ring on its
   * user: a third would be refused (server-pinned.c) */
  const guint rounds = 2;

  config.client_timeout_ms = 200;
  s = start_server_with (&config);
  keeper = join ("keeper");
  fail_unless (cudaipc_server_set_caps (s, CAPS_SMALL, page, &err));
  f = produce (s, page, ++fill);
  read_to_frame (keeper, 1, 4, blocks[0], &f);
  g_queue_push_tail (&kept, g_memdup2 (&f, sizeof (f)));

  for (guint r = 0; r < rounds; r++) {
    gchar *name = g_strdup_printf ("taker-%u", r);
    gchar *left = g_strdup_printf ("left %s: stuck: held 4 frames", name);
    CudaIpcConn *taker = join (name);

    expect_ring (taker, r + 1, 4, 1, CAPS_SMALL, NULL);
    /* four frames: the taker holds every slot, the keeper its newest two */
    for (guint i = 0; i < 4; i++) {
      CudaIpcFrameMsg *k;

      produce (s, page, ++fill);
      expect_frame (taker, &f);
      expect_frame (keeper, &f);
      fail_unless_equals_int (f.seq, fill);
      g_queue_push_tail (&kept, g_memdup2 (&f, sizeof (f)));
      while (g_queue_get_length (&kept) > 2) {
        k = g_queue_pop_head (&kept);
        send_release (keeper, k->generation, k->slot, k->seq);
        g_free (k);
      }
    }
    wait_released (s, "keeper", fill - 2);
    /* nothing is free now, and nobody releases: the taker goes, the
     * keeper stays although it released nothing for as long */
    g_usleep (300 * 1000);
    f = produce (s, page, ++fill);
    fail_unless_equals_int (f.generation, r + 2);
    expect_notice (left);
    expect_bye (taker, CUDAIPC_BYE_TOO_SLOW, "stopped releasing");
    fail_unless_equals_int (cudaipc_server_get_n_clients (s), 1);
    fail_unless_equals_int (stat_of (s, NULL, "rings-retired"), r + 1);

    /* the keeper's frames, of the ring just retired, are as they were */
    for (GList * l = kept.head; l; l = l->next) {
      CudaIpcFrameMsg *k = l->data;

      check_fill (blocks[k->generation - 1][k->slot], page, (guint8) k->seq);
    }
    read_to_frame (keeper, r + 2, 4, blocks[r + 1], &f);
    fail_unless_equals_int (f.seq, fill);
    check_fill (blocks[r + 1][f.slot], page, fill);
    g_queue_push_tail (&kept, g_memdup2 (&f, sizeof (f)));
    while (g_queue_get_length (&kept) > 2) {
      CudaIpcFrameMsg *k = g_queue_pop_head (&kept);

      send_release (keeper, k->generation, k->slot, k->seq);
      g_free (k);
    }
    cudaipc_conn_free (taker);
    g_free (left);
    g_free (name);
    wait_released (s, "keeper", fill - 2);
  }
  fail_unless_equals_int (count_notices ("left keeper"), 0);

  g_queue_clear_full (&kept, g_free);
  for (guint r = 0; r < 4; r++)
    for (guint i = 0; i < 4; i++)
      g_clear_pointer (&blocks[r][i], cudaipc_block_free);
  cudaipc_conn_free (keeper);
  cudaipc_server_free (s);
}

GST_END_TEST;

GST_START_TEST (test_flushing_and_wake)
{
  CudaIpcServer *s = start_server (1);
  CudaIpcConn *c;
  guint slot;
  Waiter w;
  GThread *t;

  /* no client yet: waits end on the deadline, flushing or a wake-up */
  fail_unless_equals_int (cudaipc_server_wait_for_client (s,
          g_get_monotonic_time () + 50000), CUDAIPC_SERVER_TIMEOUT);
  cudaipc_server_wake (s);
  fail_unless_equals_int (cudaipc_server_wait_for_client (s, -1),
      CUDAIPC_SERVER_WOKEN);
  cudaipc_server_set_flushing (s, TRUE);
  fail_unless_equals_int (cudaipc_server_wait_for_client (s, -1),
      CUDAIPC_SERVER_FLUSHING);
  cudaipc_server_set_flushing (s, FALSE);

  c = join ("c1");
  fail_unless_equals_int (cudaipc_server_wait_for_client (s, -1),
      CUDAIPC_SERVER_OK);
  produce (s, page, 1);
  fail_unless_equals_int (stat_of (s, "c1", "held"), 1);

  /* the only slot is held: flushing ends a wait without a time limit */
  t = start_waiter (&w, s, -1);
  cudaipc_server_set_flushing (s, TRUE);
  g_thread_join (t);
  fail_unless_equals_int (w.status, CUDAIPC_SERVER_FLUSHING);
  /* and any wait while it lasts */
  fail_unless_equals_int (try_acquire (s, -1, &slot), CUDAIPC_SERVER_FLUSHING);
  /* but upstream's wait for a slot to write in place: only its own pool's
   * flushing ends it */
  {
    CudaIpcSlotTicket *ticket = NULL;
    gint cancel = 0;

    fail_unless_equals_int (cudaipc_server_acquire_in_place (s, 1,
            g_get_monotonic_time () + 20000, &cancel, &ticket, NULL),
        CUDAIPC_SERVER_TIMEOUT);
    cancel = 1;
    fail_unless_equals_int (cudaipc_server_acquire_in_place (s, 1, -1,
            &cancel, &ticket, NULL), CUDAIPC_SERVER_FLUSHING);
    fail_unless (ticket == NULL);
  }
  cudaipc_server_set_flushing (s, FALSE);
  fail_unless_equals_int (try_acquire (s, 0, &slot), CUDAIPC_SERVER_TIMEOUT);

  /* wake() ends one wait */
  t = start_waiter (&w, s, -1);
  cudaipc_server_wake (s);
  g_thread_join (t);
  fail_unless_equals_int (w.status, CUDAIPC_SERVER_WOKEN);
  fail_unless_equals_int (try_acquire (s, g_get_monotonic_time () + 20000,
          &slot), CUDAIPC_SERVER_TIMEOUT);
  /* flushing and wake-ups are not drops */
  fail_unless_equals_int (stat_of (s, NULL, "frames-dropped"), 2);

  cudaipc_conn_free (c);
  cudaipc_server_free (s);
}

GST_END_TEST;

GST_START_TEST (test_caps_change_rebuilds_ring)
{
  CudaIpcServer *s = start_server (3);
  CudaIpcFrameMsg f, g;
  GError *err = NULL;
  CudaIpcConn *c;
  CudaIpcMsg msg;
  guint64 size;

  c = join ("c1");
  fail_unless (cudaipc_server_set_caps (s, CAPS_SMALL, page, &err));
  size = expect_ring (c, 1, 3, 1, CAPS_SMALL, NULL);
  fail_unless_equals_int (size, page);
  f = produce (s, page, 1);
  expect_frame (c, &g);
  send_release (c, g.generation, g.slot, g.seq);

  /* caps of larger frames: a new ring at once, announced in full before
   * any frame uses it, the caps once, with it */
  fail_unless (cudaipc_server_set_caps (s, CAPS_LARGE, 3 * page, &err));
  fail_unless_equals_int (cudaipc_server_get_generation (s), 2);
  size = expect_ring (c, 2, 3, 2, CAPS_LARGE, NULL);
  fail_unless (size >= 3 * page);
  expect_quiet (c, 50);

  f = produce (s, 3 * page, 2);
  fail_unless_equals_int (f.generation, 2);
  fail_unless_equals_int (f.caps_id, 2);
  expect_frame (c, &g);
  fail_unless_equals_int (g.generation, 2);
  fail_unless_equals_int (g.caps_id, 2);
  fail_unless_equals_int (g.size, 3 * page);
  fail_unless_equals_int (stat_of (s, NULL, "generation"), 2);

  /* caps the ring fits: they go out at once, alone, and no ring */
  fail_unless (cudaipc_server_set_caps (s, CAPS_SMALL, page, &err));
  recv_msg (c, &msg, CUDAIPC_MSG_CAPS);
  fail_unless_equals_int (msg.u.caps.caps_id, 3);
  fail_unless_equals_string (msg.u.caps.caps, CAPS_SMALL);
  cudaipc_msg_clear (&msg);
  expect_quiet (c, 50);
  fail_unless_equals_int (cudaipc_server_get_generation (s), 2);

  /* a smaller frame fits: no new ring */
  f = produce (s, page, 3);
  fail_unless_equals_int (f.generation, 2);
  expect_frame (c, &g);
  fail_unless_equals_int (g.seq, 3);
  fail_unless_equals_int (g.caps_id, 3);

  /* a frame larger than its caps say still gets a ring of its own */
  f = produce (s, 4 * page, 4);
  fail_unless_equals_int (f.generation, 3);
  size = expect_ring (c, 3, 3, 3, CAPS_SMALL, NULL);
  fail_unless (size >= 4 * page);
  expect_frame (c, &g);
  fail_unless_equals_int (g.generation, 3);

  /* the caps limit: nothing changes, nothing is sent */
  {
    gchar *huge = g_strnfill (CUDAIPC_MAX_STRING, 'x');

    fail_if (cudaipc_server_set_caps (s, huge, 0, &err));
    fail_unless (g_error_matches (err, CUDAIPC_ERROR, CUDAIPC_ERROR_LIMIT));
    g_clear_error (&err);
    g_free (huge);
  }
  expect_quiet (c, 50);
  fail_unless_equals_int (cudaipc_server_get_generation (s), 3);

  cudaipc_conn_free (c);
  cudaipc_server_free (s);
}

GST_END_TEST;

/* RING of @generation, its LIVE bit @live, then its SLOTs and the CAPS
 * of @caps_id. */
static void
expect_ring_live (CudaIpcConn * conn, guint32 generation, guint n_slots,
    guint32 caps_id, gboolean live)
{
  CudaIpcMsg msg;

  recv_msg (conn, &msg, CUDAIPC_MSG_RING);
  fail_unless_equals_int (msg.u.ring.generation, generation);
  fail_unless_equals_int (! !(msg.u.ring.flags & CUDAIPC_RING_LIVE), live);
  cudaipc_msg_clear (&msg);
  for (guint i = 0; i < n_slots; i++) {
    recv_msg (conn, &msg, CUDAIPC_MSG_SLOT);
    fail_unless_equals_int (msg.u.slot.generation, generation);
    cudaipc_msg_clear (&msg);
  }
  recv_msg (conn, &msg, CUDAIPC_MSG_CAPS);
  fail_unless_equals_int (msg.u.caps.caps_id, caps_id);
  cudaipc_msg_clear (&msg);
}

/* The ring is made with the caps, before any frame: a client there gets
 * it at once, one that joins before the first frame when it joins; caps
 * that come with a change of liveness make a new ring at once, with its
 * LIVE bit; caps without a frame size leave the ring to the first
 * acquire(). */
GST_START_TEST (test_ring_made_at_caps)
{
  CudaIpcServer *s = start_server (2);
  CudaIpcConn *early, *late;
  CudaIpcFrameMsg f, g;
  GError *err = NULL;

  early = join ("early");
  fail_unless (cudaipc_server_set_caps (s, CAPS_SMALL, 0, &err));
  fail_unless_equals_int (cudaipc_server_get_generation (s), 0);
  expect_quiet (early, 50);

  cudaipc_server_set_live (s, TRUE);
  fail_unless (cudaipc_server_set_caps (s, CAPS_SMALL, page, &err));
  fail_unless_equals_int (cudaipc_server_get_generation (s), 1);
  expect_ring_live (early, 1, 2, 2, TRUE);
  expect_quiet (early, 50);

  late = join ("late");
  expect_ring_live (late, 1, 2, 2, TRUE);
  expect_quiet (late, 50);

  /* the same caps, the stream no longer live: a new ring, not a frame
   * later */
  cudaipc_server_set_live (s, FALSE);
  fail_unless (cudaipc_server_set_caps (s, CAPS_SMALL, page, &err));
  fail_unless_equals_int (cudaipc_server_get_generation (s), 2);
  expect_ring_live (early, 2, 2, 3, FALSE);
  expect_ring_live (late, 2, 2, 3, FALSE);
  expect_quiet (early, 50);

  f = produce (s, page, 1);
  fail_unless_equals_int (f.generation, 2);
  fail_unless_equals_int (f.caps_id, 3);
  expect_frame (early, &g);
  fail_unless_equals_int (g.seq, f.seq);
  expect_frame (late, &g);
  fail_unless_equals_int (g.seq, f.seq);
  fail_unless_equals_int (count_notices ("warning"), 0);

  cudaipc_conn_free (early);
  cudaipc_conn_free (late);
  cudaipc_server_free (s);
}

GST_END_TEST;

GST_START_TEST (test_late_joiner)
{
  CudaIpcServer *s = start_server (2);
  CudaIpcConn *early, *late, *later;
  GstSegment segment;
  GstEvent *event;
  GError *err = NULL;
  CudaIpcMsg msg;
  CudaIpcFrameMsg g;

  early = join ("early");
  fail_unless (cudaipc_server_set_caps (s, CAPS_SMALL, page, &err));
  produce (s, page, 1);
  expect_ring (early, 1, 2, 1, CAPS_SMALL, NULL);
  expect_frame (early, &g);

  gst_segment_init (&segment, GST_FORMAT_TIME);
  segment.start = 5 * GST_SECOND;
  event = gst_event_new_segment (&segment);
  fail_unless (cudaipc_server_send_event (s, event, 42, &err));
  gst_event_unref (event);
  event = gst_event_new_eos ();
  fail_unless (cudaipc_server_send_event (s, event, GST_CLOCK_TIME_NONE, &err));
  gst_event_unref (event);

  recv_msg (early, &msg, CUDAIPC_MSG_EVENT);
  fail_unless_equals_int (msg.u.event.event_type, GST_EVENT_SEGMENT);
  fail_unless_equals_uint64 (msg.u.event.running_time, 42);
  fail_unless (g_str_has_prefix (msg.u.event.structure, "cudaipc-segment"));
  cudaipc_msg_clear (&msg);
  recv_msg (early, &msg, CUDAIPC_MSG_EVENT);
  fail_unless_equals_int (msg.u.event.event_type, GST_EVENT_EOS);
  fail_unless_equals_string (msg.u.event.structure, "");
  cudaipc_msg_clear (&msg);

  /* a late joiner gets the ring, the last segment and the EOS */
  late = join ("late");
  expect_ring (late, 1, 2, 1, CAPS_SMALL, NULL);
  recv_msg (late, &msg, CUDAIPC_MSG_EVENT);
  fail_unless_equals_int (msg.u.event.event_type, GST_EVENT_SEGMENT);
  {
    GstStructure *st = gst_structure_from_string (msg.u.event.structure,
        NULL);
    guint64 start = 0;

    fail_unless (st != NULL);
    fail_unless (gst_structure_get_uint64 (st, "start", &start));
    fail_unless_equals_uint64 (start, 5 * GST_SECOND);
    gst_structure_free (st);
  }
  cudaipc_msg_clear (&msg);
  recv_msg (late, &msg, CUDAIPC_MSG_EVENT);
  fail_unless_equals_int (msg.u.event.event_type, GST_EVENT_EOS);
  cudaipc_msg_clear (&msg);
  expect_quiet (late, 50);

  /* after a flush, no EOS for the next one */
  cudaipc_server_clear_eos (s);
  later = join ("later");
  expect_ring (later, 1, 2, 1, CAPS_SMALL, NULL);
  recv_msg (later, &msg, CUDAIPC_MSG_EVENT);
  fail_unless_equals_int (msg.u.event.event_type, GST_EVENT_SEGMENT);
  cudaipc_msg_clear (&msg);
  expect_quiet (later, 100);

  cudaipc_conn_free (early);
  cudaipc_conn_free (late);
  cudaipc_conn_free (later);
  cudaipc_server_free (s);
}

GST_END_TEST;

/* GPU ordering: the host backend has no fences */

static gint sync_calls;

static gboolean
sync_ok (const gchar * why, gpointer user_data, GError ** error)
{
  fail_unless (strstr (why, "no fence page") != NULL, "why: %s", why);
  fail_unless (user_data == &sync_calls);
  sync_calls++;
  return TRUE;
}

static gboolean
sync_fails (const gchar * why, gpointer user_data, GError ** error)
{
  sync_calls++;
  g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_CUDA, "injected failure");
  return FALSE;
}

/* Whether the client named @client reads the fence page (@fence) or
 * waits on events, in the stats. */
static gboolean
client_orders (CudaIpcServer * s, const gchar * client, gboolean fence)
{
  CudaIpcServerStats st;
  const CudaIpcServerClientStats *cs;
  gboolean v;

  cudaipc_server_get_stats (s, &st);
  cs = find_client_stats (&st, client);
  fail_unless (cs != NULL, "no client %s", client);
  v = fence ? cs->fence : cs->events;
  cudaipc_server_stats_clear (&st);
  return v;
}

#define client_fence(s, c) client_orders ((s), (c), TRUE)
#define client_events(s, c) client_orders ((s), (c), FALSE)


/* A raw client whose HELLO asks for @caps, past its handshake; *@offered
 * is what the producer's HELLO offered. */
static CudaIpcConn *
join_asking (const gchar * name, guint32 caps, guint32 * offered)
{
  CudaIpcMsg msg;
  int fd = -1;
  CudaIpcConn *c;
  gchar *what = g_strdup_printf ("joined %s", name);

  fail_unless_equals_int (cudaipc_socket_connect (sock_path, &fd), 0);
  c = cudaipc_conn_new (fd);
  recv_msg (c, &msg, CUDAIPC_MSG_HELLO);
  *offered = msg.u.hello.caps;
  cudaipc_msg_clear (&msg);
  cudaipc_msg_init (&msg, CUDAIPC_MSG_HELLO);
  msg.u.hello.version = CUDAIPC_PROTOCOL_VERSION;
  msg.u.hello.backend = CUDAIPC_BACKEND_HOST;
  msg.u.hello.caps = caps;
  msg.u.hello.pid = getpid ();
  msg.u.hello.name = name;
  send_msg (c, &msg);
  expect_notice (what);
  g_free (what);
  return c;
}

/* RING and what follows it; the fence page's fd, checked the way a
 * consumer checks it, is mapped into *@fence where it came. */
static void
expect_ring_fence (CudaIpcConn * c, guint n_slots, CudaIpcFencePage ** fence)
{
  CudaIpcMsg msg;

  recv_msg (c, &msg, CUDAIPC_MSG_RING);
  *fence = NULL;
  if (msg.u.ring.flags & CUDAIPC_RING_HAS_FENCE) {
    GError *err = NULL;

    fail_unless_equals_int (msg.n_fds, 1);
    *fence = cudaipc_fence_page_open (msg.fds[0], &err);
    msg.fds[0] = -1;
    msg.n_fds = 0;
    fail_unless (*fence != NULL, "%s", err ? err->message : "?");
  } else {
    fail_unless_equals_int (msg.n_fds, 0);
  }
  cudaipc_msg_clear (&msg);
  for (guint i = 0; i < n_slots; i++) {
    recv_msg (c, &msg, CUDAIPC_MSG_SLOT);
    fail_unless_equals_int (msg.u.slot.flags, 0);
    cudaipc_msg_clear (&msg);
  }
  recv_msg (c, &msg, CUDAIPC_MSG_CAPS);
  cudaipc_msg_clear (&msg);
}

static gint fence_syncs;

static gboolean
count_sync (const gchar * why, gpointer user_data, GError ** error)
{
  fail_unless (strstr (why, "does not read the fence page") != NULL,
      "why: %s", why);
  fence_syncs++;
  return TRUE;
}

/* Publishes a frame of @fill into a slot, with publish_fenced() and the
 * fence word signalled as a copier does. */
static CudaIpcFrameMsg
produce_fenced_size (CudaIpcServer * s, guint64 size, guint8 fill)
{
  CudaIpcFencePage *fence;
  CudaIpcFrameMsg f = { 0 };
  CudaIpcBlock *block = NULL;
  GError *err = NULL;
  guint slot = 0, n = 0, calls = 0;
  guint64 seq;

  fail_unless_equals_int (cudaipc_server_acquire (s, size,
          g_get_monotonic_time () + WAIT_MS * 1000, &slot, &block, &err),
      CUDAIPC_SERVER_OK);
  memset ((void *) cudaipc_block_get_ptr (block), fill, size);
  /* after acquire(), which may have made a new ring and with it a page */
  fence = cudaipc_server_get_fence_page (s);
  seq = cudaipc_server_get_next_seq (s);
  fail_unless (cudaipc_fence_page_signal (fence, slot, seq, NULL, &calls,
          &err));
  f.size = size;
  f.n_planes = 1;
  f.planes[0].stride = 64;
  fail_unless (cudaipc_server_publish_fenced (s, slot, &f, count_sync, NULL,
          &n, &err), "%s", err ? err->message : "?");
  fail_unless_equals_uint64 (f.seq, seq);
  return f;
}

#define produce_fenced(s, fill) produce_fenced_size ((s), page, (fill))

/* A consumer "pager" with a release page, joined to @s (2 slots) before
 * its first caps: its page (@rp), and the two frames it then holds. */
static CudaIpcConn *
join_pager (CudaIpcServer * s, CudaIpcReleasePage ** rp,
    CudaIpcFrameMsg * got1, CudaIpcFrameMsg * got2)
{
  guint32 offered = 0;
  GError *err = NULL;
  CudaIpcConn *a;
  CudaIpcMsg msg;

  a = join_asking ("pager", CUDAIPC_CAP_RELEASE_PAGE, &offered);
  fail_unless (offered & CUDAIPC_CAP_RELEASE_PAGE);
  fail_unless (cudaipc_server_set_caps (s, CAPS_SMALL, page, &err));
  produce (s, page, 1);
  recv_msg (a, &msg, CUDAIPC_MSG_RING);
  fail_unless (msg.u.ring.flags & CUDAIPC_RING_HAS_RELEASE_PAGE);
  fail_unless_equals_int (msg.n_fds, 1);
  *rp = cudaipc_release_page_open (msg.fds[0], &err);
  msg.fds[0] = -1;
  msg.n_fds = 0;
  fail_unless (*rp != NULL, "%s", err ? err->message : "?");
  cudaipc_msg_clear (&msg);
  for (gint i = 0; i < 2; i++) {
    recv_msg (a, &msg, CUDAIPC_MSG_SLOT);
    cudaipc_msg_clear (&msg);
  }
  recv_msg (a, &msg, CUDAIPC_MSG_CAPS);
  cudaipc_msg_clear (&msg);
  expect_frame (a, got1);
  produce (s, page, 2);
  expect_frame (a, got2);
  return a;
}

/* Waits until @rp says that the producer waits for a slot (a release of
 * number 0, which names no frame, tells). */
static void
wait_page_says_waiting (CudaIpcReleasePage * rp, guint slot)
{
  gint i;

  for (i = 0; i < WAIT_MS / 5; i++) {
    if (cudaipc_release_page_release (rp, slot, 0))
      break;
    g_usleep (5000);
  }
  fail_unless (i < WAIT_MS / 5, "the producer's wait is not in the page");
}

/* A consumer with a release page gives frames back without a message:
 * the producer frees a slot whose word names the frame in it, and nothing
 * for a word naming another; while it waits for a slot the page says so,
 * and a RELEASE then only wakes it, no more of those than frames given
 * back through the page. */
GST_START_TEST (test_release_page)
{
  CudaIpcServer *s = start_server (2);
  CudaIpcFrameMsg got1, got2;
  CudaIpcReleasePage *rp;
  CudaIpcConn *a;
  GThread *t;
  Waiter w;
  guint slot;

  a = join_pager (s, &rp, &got1, &got2);

  /* both slots held; a word naming another frame frees neither */
  fail_unless_equals_int (try_acquire (s, g_get_monotonic_time () + 50000,
          &slot), CUDAIPC_SERVER_TIMEOUT);
  fail_if (cudaipc_release_page_release (rp, got1.slot, got1.seq + 7));
  fail_unless_equals_int (try_acquire (s, g_get_monotonic_time () + 50000,
          &slot), CUDAIPC_SERVER_TIMEOUT);
  /* the frame's own number frees its slot, no message sent */
  fail_if (cudaipc_release_page_release (rp, got1.slot, got1.seq));
  fail_unless_equals_int (try_acquire (s, g_get_monotonic_time () +
          WAIT_MS * 1000, &slot), CUDAIPC_SERVER_OK);
  fail_unless_equals_int (slot, got1.slot);
  cudaipc_server_abort (s, slot);
  fail_unless_equals_uint64 (stat_of (s, "pager", "frames-released"), 1);

  /* the slot is taken again; a producer waiting for the other one says
   * so in the page, and the RELEASE that follows the word wakes it */
  fail_unless_equals_int (try_acquire (s, g_get_monotonic_time () +
          WAIT_MS * 1000, &slot), CUDAIPC_SERVER_OK);
  t = start_waiter (&w, s, g_get_monotonic_time () + WAIT_MS * 1000);
  wait_page_says_waiting (rp, got2.slot);
  fail_unless (cudaipc_release_page_release (rp, got2.slot, got2.seq));
  send_release (a, got2.generation, got2.slot, got2.seq);
  g_thread_join (t);
  fail_unless_equals_int (w.status, CUDAIPC_SERVER_OK);
  fail_unless_equals_int (w.slot, got2.slot);
  fail_unless (w.took < WAIT_MS * 1000 / 2);
  cudaipc_server_abort (s, w.slot);
  cudaipc_server_abort (s, slot);
  fail_unless_equals_uint64 (stat_of (s, "pager", "frames-released"), 2);

  /* two frames given back through the page: one more wake-up is taken,
   * the next is a release of a frame it does not hold */
  send_release (a, got2.generation, got2.slot, got2.seq);
  expect_quiet (a, 100);
  send_release (a, got2.generation, got2.slot, got2.seq);
  expect_bye (a, CUDAIPC_BYE_PROTOCOL, "does not hold");
  expect_notice ("left pager");

  cudaipc_release_page_free (rp);
  cudaipc_conn_free (a);
  cudaipc_server_free (s);
}

GST_END_TEST;

/* The CHANNEL a consumer that asked gets, read as a consumer does: every
 * later message comes through it. */
static CudaIpcConn *
join_with_channel_wake (const gchar * name, int *wake_fd)
{
  guint32 offered = 0;
  CudaIpcConn *c = join_asking (name, CUDAIPC_CAP_CHANNEL, &offered);
  CudaIpcChannel *ch;
  GError *err = NULL;
  CudaIpcMsg msg;

  fail_unless (offered & CUDAIPC_CAP_CHANNEL);
  recv_msg (c, &msg, CUDAIPC_MSG_CHANNEL);
  fail_unless_equals_int (msg.n_fds, CUDAIPC_CHANNEL_N_FDS);
  if (wake_fd)
    *wake_fd = dup (msg.fds[1]);
  ch = cudaipc_channel_open (msg.fds[0], msg.fds[1], msg.u.channel.capacity,
      &err);
  msg.fds[0] = msg.fds[1] = -1;
  msg.n_fds = 0;
  cudaipc_msg_clear (&msg);
  fail_unless (ch != NULL, "%s", err ? err->message : "?");
  fail_unless (cudaipc_conn_set_rx_channel (c, ch, 0, &err));
  return c;
}

static CudaIpcConn *
join_with_channel (const gchar * name)
{
  return join_with_channel_wake (name, NULL);
}

static void
expect_ring_slots_caps (CudaIpcConn * c, guint n_slots)
{
  CudaIpcMsg msg;

  recv_msg (c, &msg, CUDAIPC_MSG_RING);
  cudaipc_msg_clear (&msg);
  for (guint i = 0; i < n_slots; i++) {
    recv_msg (c, &msg, CUDAIPC_MSG_SLOT);
    fail_unless (msg.n_fds > 0);
    cudaipc_msg_clear (&msg);
  }
  recv_msg (c, &msg, CUDAIPC_MSG_CAPS);
  cudaipc_msg_clear (&msg);
}

/* A consumer gives a frame back through its page, finds the producer
 * waiting and sends a RELEASE to wake it; the producer took the frame from
 * the page and replaced the ring before that message came. The message is
 * a wake-up for a frame of the old ring, not a release of a frame it does
 * not hold; what the consumer held of the old ring is still its to give
 * back, each frame once. */
GST_START_TEST (test_release_page_wake_across_rings)
{
  CudaIpcServer *s = start_server (2);
  CudaIpcFrameMsg got1, got2;
  CudaIpcReleasePage *rp;
  GError *err = NULL;
  CudaIpcConn *a;
  GThread *t;
  Waiter w;

  a = join_pager (s, &rp, &got1, &got2);

  /* the producer waits for a slot; frame 1 goes back through the page,
   * which says it waits */
  t = start_waiter (&w, s, g_get_monotonic_time () + WAIT_MS * 1000);
  wait_page_says_waiting (rp, got1.slot);
  fail_unless (cudaipc_release_page_release (rp, got1.slot, got1.seq));
  g_thread_join (t);
  fail_unless_equals_int (w.status, CUDAIPC_SERVER_OK);
  cudaipc_server_abort (s, w.slot);

  /* a new ring, then the wake-up for frame 1, then frame 2 of the old
   * ring given back with a message */
  fail_unless (cudaipc_server_set_caps (s, CAPS_LARGE, 3 * page, &err));
  expect_ring_slots_caps (a, 2);
  send_release (a, got1.generation, got1.slot, got1.seq);
  send_release (a, got2.generation, got2.slot, got2.seq);
  wait_released (s, "pager", 2);
  expect_quiet (a, 100);
  fail_unless_equals_int (cudaipc_server_get_n_clients (s), 1);
  fail_unless_equals_int (count_notices ("left"), 0);

  /* frame 2 again: a frame it does not hold */
  send_release (a, got2.generation, got2.slot, got2.seq);
  expect_bye (a, CUDAIPC_BYE_PROTOCOL, "does not hold");
  expect_notice ("left pager");

  cudaipc_release_page_free (rp);
  cudaipc_conn_free (a);
  cudaipc_server_free (s);
}

GST_END_TEST;

/* A consumer that asks for the announce channel gets it: its RING, its
 * SLOTs with their fds (on the socket, behind their marks), CAPS and
 * FRAMEs in order; another that did not ask reads the same on the
 * socket. */
GST_START_TEST (test_channel_announces)
{
  CudaIpcServer *s = start_server (2);
  CudaIpcConn *a = join_with_channel ("shm"), *b;
  CudaIpcFrameMsg sent, got;
  GError *err = NULL;
  guint32 offered;

  b = join_asking ("socket", 0, &offered);
  fail_unless (cudaipc_conn_has_rx_channel (a));
  fail_unless (cudaipc_server_set_caps (s, CAPS_SMALL, page, &err));
  for (guint i = 0; i < 6; i++) {
    sent = produce (s, page, (guint8) i);
    if (i == 0) {
      expect_ring_slots_caps (a, 2);
      expect_ring_slots_caps (b, 2);
    }
    expect_frame (a, &got);
    fail_unless_equals_uint64 (got.seq, sent.seq);
    send_release (a, got.generation, got.slot, got.seq);
    expect_frame (b, &got);
    fail_unless_equals_uint64 (got.seq, sent.seq);
    send_release (b, got.generation, got.slot, got.seq);
  }
  wait_released (s, "shm", 6);
  wait_released (s, "socket", 6);
  cudaipc_conn_free (a);
  cudaipc_conn_free (b);
  cudaipc_server_free (s);
}

GST_END_TEST;

/* Two consumers of one user that read through channels share one wake:
 * with both asleep, a frame costs the producer one datagram, which wakes
 * each; awake, none. */
GST_START_TEST (test_channel_one_wake_per_user)
{
  CudaIpcServer *s = start_server (2);
  int wa = -1, wb = -1;
  CudaIpcConn *a = join_with_channel_wake ("a", &wa);
  CudaIpcConn *b = join_with_channel_wake ("b", &wb);
  CudaIpcConn *both[2] = { a, b };
  CudaIpcFrameMsg sent, got;
  struct stat sta, stb;
  GError *err = NULL;
  guint8 byte;
  guint queued;

  fail_unless (fstat (wa, &sta) == 0 && fstat (wb, &stb) == 0);
  fail_unless (sta.st_ino == stb.st_ino && sta.st_dev == stb.st_dev);
  fail_unless (cudaipc_server_set_caps (s, CAPS_SMALL, page, &err));
  for (guint i = 0; i < 4; i++) {
    gboolean asleep = i % 2 == 1;

    for (guint k = 0; asleep && k < 2; k++)
      fail_if (cudaipc_conn_begin_wait (both[k], FALSE));
    sent = produce (s, page, (guint8) i);
    for (guint k = 0; asleep && k < 2; k++) {
      struct pollfd pfd = { cudaipc_conn_get_wait_fd (both[k]), POLLIN, 0 };

      fail_unless_equals_int (poll (&pfd, 1, 1000), 1);
    }
    /* taken out only now: a wait looks for them when it wakes */
    for (queued = 0; recv (wa, &byte, 1, MSG_DONTWAIT) == 1; queued++) {
    }
    fail_unless_equals_int (queued, asleep ? 1 : 0);
    for (guint k = 0; k < 2; k++) {
      cudaipc_conn_end_wait (both[k]);
      if (i == 0)
        expect_ring_slots_caps (both[k], 2);
      expect_frame (both[k], &got);
      fail_unless_equals_uint64 (got.seq, sent.seq);
      send_release (both[k], got.generation, got.slot, got.seq);
    }
  }
  wait_released (s, "a", 4);
  wait_released (s, "b", 4);
  close (wa);
  close (wb);
  cudaipc_conn_free (a);
  cudaipc_conn_free (b);
  cudaipc_server_free (s);
}

GST_END_TEST;

/* A consumer that writes a tail into its channel that it could not have
 * (past what was written) is dropped at the next message, and the other
 * consumer goes on with every frame. */
GST_START_TEST (test_channel_consumer_breaks_tail)
{
  CudaIpcServer *s = start_server (2);
  CudaIpcConn *a, *b;
  CudaIpcFrameMsg sent, got;
  GError *err = NULL;
  CudaIpcMsg msg;
  int memfd;
  guint64 *words;

  /* the liar keeps a mapping of its page of its own */
  guint32 offered = 0;

  a = join_asking ("liar", CUDAIPC_CAP_CHANNEL, &offered);
  recv_msg (a, &msg, CUDAIPC_MSG_CHANNEL);
  memfd = msg.fds[0];
  words = mmap (NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
  fail_unless (words != MAP_FAILED);
  cudaipc_msg_clear (&msg);
  b = join_with_channel ("honest");
  fail_unless (cudaipc_server_set_caps (s, CAPS_SMALL, page, &err));
  /* its tail (word 8, offset 64) far past the head */
  words[8] = G_GUINT64_CONSTANT (1) << 40;
  for (guint i = 0; i < 4; i++) {
    sent = produce (s, page, (guint8) i);
    if (i == 0)
      expect_ring_slots_caps (b, 2);
    expect_frame (b, &got);
    fail_unless_equals_uint64 (got.seq, sent.seq);
    send_release (b, got.generation, got.slot, got.seq);
  }
  expect_notice ("left liar");
  wait_released (s, "honest", 4);
  munmap (words, 4096);
  cudaipc_conn_free (a);
  cudaipc_conn_free (b);
  cudaipc_server_free (s);
}

GST_END_TEST;

/* ordering=fence on the host backend: the fence page is offered in HELLO,
 * its fd travels with RING to the consumers that asked for it, each
 * frame's word is its FRAME's number, and the frame is synchronised on
 * the host only while a ready consumer does not read the page. */
GST_START_TEST (test_fence_page_ordering)
{
  CudaIpcServerConfig config = test_config (2);
  CudaIpcFencePage *fence_a = NULL, *fence_b = NULL;
  CudaIpcServer *s;
  CudaIpcConn *a, *b;
  CudaIpcFrameMsg f, got;
  GError *err = NULL;
  guint32 offered = 0;

  config.ordering = CUDAIPC_ORDERING_FENCE;
  s = start_server_with (&config);
  fail_unless (cudaipc_server_get_fence_page (s) != NULL);
  a = join_asking ("reads-fence", CUDAIPC_CAP_FENCE, &offered);
  fail_unless_equals_int (offered, CUDAIPC_CAP_FENCE |
      CUDAIPC_CAP_RELEASE_PAGE | CUDAIPC_CAP_CHANNEL);
  b = join_asking ("no-fence", 0, &offered);
  fail_unless (cudaipc_server_set_caps (s, CAPS_SMALL, page, &err));

  fence_syncs = 0;
  f = produce_fenced (s, 1);
  /* b does not read the page: the frame was made complete first */
  fail_unless_equals_int (fence_syncs, 1);
  expect_ring_fence (a, 2, &fence_a);
  expect_ring_fence (b, 2, &fence_b);
  fail_unless (fence_a != NULL);
  fail_unless (fence_b == NULL);
  expect_frame (a, &got);
  fail_unless_equals_uint64 (got.seq, f.seq);
  fail_unless (cudaipc_fence_page_wait (fence_a, got.slot, got.seq, 0, &err),
      "%s", err ? err->message : "?");
  fail_unless (client_fence (s, "reads-fence"));
  fail_if (client_fence (s, "no-fence"));

  /* with only a reader of the page, no host synchronisation */
  cudaipc_conn_free (b);
  expect_notice ("left no-fence");
  send_release (a, got.generation, got.slot, got.seq);
  wait_released (s, "reads-fence", 1);
  f = produce_fenced (s, 2);
  fail_unless_equals_int (fence_syncs, 1);
  expect_frame (a, &got);
  fail_unless (cudaipc_fence_page_wait (fence_a, got.slot, got.seq, 0, &err),
      "%s", err ? err->message : "?");

  /* a new ring has a page of its own: a consumer still working through
   * the old ring's frames reads their words, never the new ring's */
  send_release (a, got.generation, got.slot, got.seq);
  wait_released (s, "reads-fence", 2);
  fail_unless (cudaipc_server_set_caps (s, CAPS_LARGE, 3 * page, &err));
  for (guint i = 0; i < 2; i++) {
    CudaIpcFrameMsg g = produce_fenced_size (s, 3 * page, 3 + i);

    fail_unless_equals_int (g.generation, 2);
  }
  {
    CudaIpcFencePage *fence_new = NULL;
    CudaIpcFrameMsg g;

    /* the new ring came with the caps: no CAPS of its own before it */
    expect_ring_fence (a, 2, &fence_new);
    fail_unless (fence_new != NULL);
    /* both of the new ring's slots written: the old page is as it was */
    fail_unless_equals_uint64 (cudaipc_fence_page_peek (fence_a, got.slot),
        got.seq);
    for (guint i = 0; i < 2; i++) {
      expect_frame (a, &g);
      fail_unless (cudaipc_fence_page_wait (fence_new, g.slot, g.seq, 0,
              &err), "%s", err ? err->message : "?");
    }
    cudaipc_fence_page_free (fence_new);
  }

  cudaipc_fence_page_free (fence_a);
  cudaipc_conn_free (a);
  cudaipc_server_free (s);
}

GST_END_TEST;

GST_START_TEST (test_host_backend_no_events)
{
  CudaIpcServer *s = start_server (2);
  CudaIpcFrameMsg f = { 0 }, got;
  CudaIpcBlock *block = NULL;
  CudaIpcFence *fence;
  GError *err = NULL;
  CudaIpcConn *c;
  CudaIpcMsg msg;
  guint slot = 0, again = 0, n = 99;
  int fd = -1;

  fence = cudaipc_fence_new (dev, &err);
  fail_unless (fence == NULL);
  fail_unless (g_error_matches (err, CUDAIPC_ERROR,
          CUDAIPC_ERROR_NOT_SUPPORTED), "%s", err ? err->message : "?");
  g_clear_error (&err);
  cudaipc_fence_free (NULL);

  /* the producer offers no events (the release page and the announce
   * channel only), and one who asks gets none */
  fail_unless_equals_int (cudaipc_socket_connect (sock_path, &fd), 0);
  c = cudaipc_conn_new (fd);
  recv_msg (c, &msg, CUDAIPC_MSG_HELLO);
  fail_unless_equals_int (msg.u.hello.caps, CUDAIPC_CAP_RELEASE_PAGE |
      CUDAIPC_CAP_CHANNEL);
  cudaipc_msg_clear (&msg);
  cudaipc_msg_init (&msg, CUDAIPC_MSG_HELLO);
  msg.u.hello.version = CUDAIPC_PROTOCOL_VERSION;
  msg.u.hello.backend = CUDAIPC_BACKEND_HOST;
  msg.u.hello.caps = CUDAIPC_CAP_EVENTS;
  msg.u.hello.pid = getpid ();
  msg.u.hello.name = "asks";
  send_msg (c, &msg);
  expect_notice ("joined asks");
  fail_if (client_events (s, "asks"));

  fail_unless (cudaipc_server_set_caps (s, CAPS_SMALL, page, &err));
  produce (s, page, 3);
  recv_msg (c, &msg, CUDAIPC_MSG_RING);
  cudaipc_msg_clear (&msg);
  for (guint i = 0; i < 2; i++) {
    recv_msg (c, &msg, CUDAIPC_MSG_SLOT);
    fail_unless_equals_int (msg.u.slot.flags, 0);
    cudaipc_msg_clear (&msg);
    fail_unless (cudaipc_server_get_fence (s, i) == NULL);
  }
  recv_msg (c, &msg, CUDAIPC_MSG_CAPS);
  cudaipc_msg_clear (&msg);
  expect_frame (c, &got);
  send_release (c, got.generation, got.slot, got.seq);
  wait_released (s, "asks", 1);

  /* publish_fenced: a slot without a fence is synchronised first */
  sync_calls = 0;
  fail_unless_equals_int (try_acquire (s, -1, &slot), CUDAIPC_SERVER_OK);
  f.size = page;
  f.n_planes = 1;
  f.planes[0].stride = 64;
  fail_unless (cudaipc_server_publish_fenced (s, slot, &f, sync_ok,
          &sync_calls, &n, &err));
  fail_unless_equals_int (sync_calls, 1);
  fail_unless_equals_int (n, 1);
  expect_frame (c, &got);
  fail_unless_equals_int (got.slot, slot);

  /* a failed synchronisation gives the slot back unpublished */
  fail_unless_equals_int (try_acquire (s, -1, &slot), CUDAIPC_SERVER_OK);
  fail_if (cudaipc_server_publish_fenced (s, slot, &f, sync_fails, NULL, &n,
          &err));
  fail_unless (g_error_matches (err, CUDAIPC_ERROR, CUDAIPC_ERROR_CUDA));
  g_clear_error (&err);
  fail_unless_equals_int (sync_calls, 2);
  fail_unless_equals_int (n, 0);
  expect_quiet (c, 100);
  fail_unless_equals_int (stat_of (s, NULL, "frames-published"), 2);
  fail_unless_equals_int (cudaipc_server_acquire (s, page, 0, &again, &block,
          &err), CUDAIPC_SERVER_OK);
  fail_unless_equals_int (again, slot);
  cudaipc_server_abort (s, again);

  cudaipc_conn_free (c);
  expect_notice ("left asks");
  cudaipc_server_free (s);
}

GST_END_TEST;

/* A consumer may only read what it is sent */

/* The rogue's side of a ring: RING, its fence page and SLOTs, each fd
 * tried every way a write could go and kept in @fds for later tries. */
static void
rogue_reads_ring (CudaIpcConn * c, guint n_slots, GArray * fds, GArray * sizes)
{
  CudaIpcMsg msg;
  guint64 size;

  recv_msg (c, &msg, CUDAIPC_MSG_RING);
  fail_unless (msg.u.ring.flags & CUDAIPC_RING_HAS_FENCE);
  fail_unless_equals_int (msg.n_fds, 1);
  size = CUDAIPC_FENCE_PAGE_SIZE;
  g_array_append_val (fds, msg.fds[0]);
  g_array_append_val (sizes, size);
  msg.n_fds = 0;
  cudaipc_msg_clear (&msg);
  cudaipc_test_assert_unwritable (g_array_index (fds, int, 0),
      CUDAIPC_FENCE_PAGE_SIZE, "the rogue's writes to the fence page");

  for (guint i = 0; i < n_slots; i++) {
    recv_msg (c, &msg, CUDAIPC_MSG_SLOT);
    for (guint j = 0; j < msg.n_fds; j++) {
      g_autofree gchar *what = g_strdup_printf ("the rogue's writes to slot "
          "%u, allocation %u", i, j);

      g_array_append_val (fds, msg.fds[j]);
      g_array_append_val (sizes, msg.u.slot.alloc_sizes[j]);
      cudaipc_test_assert_unwritable (msg.fds[j], msg.u.slot.alloc_sizes[j],
          what);
    }
    msg.n_fds = 0;
    cudaipc_msg_clear (&msg);
  }
  recv_msg (c, &msg, CUDAIPC_MSG_CAPS);
  cudaipc_msg_clear (&msg);
}

/* The honest consumer's side: the fence page mapped, every slot imported
 * into @blocks, as cuipcsrc does. */
static CudaIpcFencePage *
honest_reads_ring (CudaIpcConn * c, guint n_slots, CudaIpcBlock ** blocks)
{
  CudaIpcFencePage *fence;
  CudaIpcMsg msg;
  GError *err = NULL;

  recv_msg (c, &msg, CUDAIPC_MSG_RING);
  fail_unless_equals_int (msg.n_fds, 1);
  fence = cudaipc_fence_page_open (cudaipc_steal_fd (&msg.fds[0]), &err);
  msg.n_fds = 0;
  cudaipc_msg_clear (&msg);
  fail_unless (fence != NULL, "%s", err ? err->message : "?");
  for (guint i = 0; i < n_slots; i++) {
    CudaIpcDescriptor *desc;

    recv_msg (c, &msg, CUDAIPC_MSG_SLOT);
    desc = cudaipc_descriptor_new_from_fds (dev, msg.fds,
        msg.u.slot.alloc_sizes, msg.n_fds, msg.u.slot.size, &err);
    msg.n_fds = 0;
    cudaipc_msg_clear (&msg);
    fail_unless (desc != NULL, "descriptor: %s", err ? err->message : "?");
    blocks[i] = cudaipc_block_import (dev, desc, &err);
    cudaipc_descriptor_free (desc);
    fail_unless (blocks[i] != NULL, "import: %s", err ? err->message : "?");
  }
  recv_msg (c, &msg, CUDAIPC_MSG_CAPS);
  cudaipc_msg_clear (&msg);
  return fence;
}

/* A rogue consumer tries every way to write the fence page and the
 * slots it was sent, at the ring and again at every frame, and is
 * refused each time with EPERM; an honest consumer beside it, which holds
 * each frame until the next one came, reads every frame as the producer
 * wrote it, and its fence words are the producer's. The producer's own
 * writes (the copies, the fence words) go on through its mappings. */
GST_START_TEST (test_consumers_cannot_write)
{
  const guint n_slots = 3, n_frames = 12;
  CudaIpcServerConfig config = test_config (n_slots);
  CudaIpcBlock *blocks[3] = { NULL };
  GArray *fds = g_array_new (FALSE, FALSE, sizeof (int));
  GArray *sizes = g_array_new (FALSE, FALSE, sizeof (guint64));
  CudaIpcFencePage *fence = NULL;
  CudaIpcFrameMsg f, got, held = { 0 };
  gboolean holding = FALSE;
  CudaIpcConn *rogue, *honest;
  CudaIpcServer *s;
  GError *err = NULL;
  guint32 offered = 0;

  config.ordering = CUDAIPC_ORDERING_FENCE;
  s = start_server_with (&config);
  rogue = join_asking ("rogue", CUDAIPC_CAP_FENCE, &offered);
  honest = join_asking ("honest", CUDAIPC_CAP_FENCE, &offered);
  fail_unless (cudaipc_server_set_caps (s, CAPS_SMALL, page, &err));

  fence_syncs = 0;
  for (guint n = 0; n < n_frames; n++) {
    guint8 fill = 0x10 + n;

    f = produce_fenced (s, fill);
    if (n == 0) {
      rogue_reads_ring (rogue, n_slots, fds, sizes);
      fence = honest_reads_ring (honest, n_slots, blocks);
    }

    /* the rogue tries again while the frame is in its slot */
    expect_frame (rogue, &got);
    fail_unless_equals_uint64 (got.seq, f.seq);
    for (guint i = 0; i < fds->len; i++)
      cudaipc_test_assert_unwritable (g_array_index (fds, int, i),
          g_array_index (sizes, guint64, i), "the rogue's writes, again");
    send_release (rogue, got.generation, got.slot, got.seq);

    expect_frame (honest, &got);
    fail_unless_equals_uint64 (got.seq, f.seq);
    fail_unless (cudaipc_fence_page_wait (fence, got.slot, got.seq, 0, &err),
        "frame %u: %s", n, err ? err->message : "?");
    check_fill (blocks[got.slot], page, fill);
    /* the frame held since the last one is as it was too */
    if (holding) {
      check_fill (blocks[held.slot], page, fill - 1);
      fail_unless_equals_uint64 (cudaipc_fence_page_peek (fence, held.slot),
          held.seq);
      send_release (honest, held.generation, held.slot, held.seq);
    }
    held = got;
    holding = TRUE;
  }
  send_release (honest, held.generation, held.slot, held.seq);
  wait_released (s, "honest", n_frames);
  wait_released (s, "rogue", n_frames);
  /* both read the fence page: no frame was synchronised for either */
  fail_unless_equals_int (fence_syncs, 0);

  for (guint i = 0; i < fds->len; i++)
    close (g_array_index (fds, int, i));
  g_array_free (fds, TRUE);
  g_array_free (sizes, TRUE);
  for (guint i = 0; i < n_slots; i++)
    cudaipc_block_free (blocks[i]);
  cudaipc_fence_page_free (fence);
  cudaipc_conn_free (rogue);
  cudaipc_conn_free (honest);
  cudaipc_server_free (s);
}

GST_END_TEST;

/* A kernel without F_SEAL_FUTURE_WRITE (before Linux 5.1): ordering=fence
 * fails at start, saying why, and a host ring cannot be made, at caps or
 * later (nothing is sent that consumers could write, and no consumer
 * would take it). */
GST_START_TEST (test_kernel_without_the_seal)
{
  CudaIpcServerConfig config = test_config (2);
  CudaIpcBlock *block = NULL;
  CudaIpcServer *s;
  GError *err = NULL;
  guint slot = 0;

  if (g_strcmp0 (g_getenv ("CK_FORK"), "no") == 0 ||
      !cudaipc_test_without_future_write_seal ()) {
    g_print ("SKIP: no seccomp filter in a process of this test's own\n");
    return;
  }
  config.ordering = CUDAIPC_ORDERING_FENCE;
  fail_unless (cudaipc_server_new (dev, &config, &callbacks, NULL,
          &err) == NULL);
  fail_unless (g_error_matches (err, CUDAIPC_ERROR,
          CUDAIPC_ERROR_NOT_SUPPORTED), "%s", err->message);
  fail_unless (g_str_has_prefix (err->message, "No fence page: sealing the "
          "fence page against writes by its consumers (F_SEAL_FUTURE_WRITE, "
          "Linux 5.1 or newer)"), "%s", err->message);
  g_print ("server: %s\n", err->message);
  g_clear_error (&err);

  s = start_server (2);
  fail_unless (cudaipc_server_get_fence_page (s) == NULL);
  /* the ring is made with the caps: they fail, saying why */
  fail_if (cudaipc_server_set_caps (s, CAPS_SMALL, page, &err));
  fail_unless (g_error_matches (err, CUDAIPC_ERROR,
          CUDAIPC_ERROR_NOT_SUPPORTED), "%s", err->message);
  fail_unless (g_str_has_prefix (err->message, "Cannot allocate a ring of 2 "
          "slots for frames of "), "%s", err->message);
  g_print ("server: %s\n", err->message);
  g_clear_error (&err);
  fail_unless_equals_int (cudaipc_server_get_generation (s), 0);
  /* the caps were kept: acquire() tries again, and fails alike */
  fail_unless_equals_int (cudaipc_server_acquire (s, page, 0, &slot, &block,
          &err), CUDAIPC_SERVER_ERROR);
  fail_unless (g_error_matches (err, CUDAIPC_ERROR,
          CUDAIPC_ERROR_NOT_SUPPORTED), "%s", err->message);
  g_print ("server: %s\n", err->message);
  g_clear_error (&err);
  cudaipc_server_free (s);
}

GST_END_TEST;

static Suite *
server_suite (void)
{
  Suite *s = suite_create ("server");
  TCase *tc = cudaipc_test_case (s, "general", 60);

  tcase_add_checked_fixture (tc, setup, teardown);
  tcase_add_test (tc, test_handshake);
  tcase_add_test (tc, test_busy_and_stop);
  tcase_add_test (tc, test_stop_removes_only_its_socket);
  tcase_add_test (tc, test_refused_at_accept);
  tcase_add_test (tc, test_pending_capped_per_user);
  tcase_add_test (tc, test_idle_connections_memory);
  tcase_add_test (tc, test_stop_says_bye);
  tcase_add_test (tc, test_version_mismatch);
  tcase_add_test (tc, test_backend_mismatch);
  tcase_add_test (tc, test_handshake_timeout);
  tcase_add_test (tc, test_slot_held_until_every_client_released);
  tcase_add_test (tc, test_release_not_held);
  tcase_add_test (tc, test_stale_release_ignored);
  tcase_add_test (tc, test_release_flood_dropped);
  tcase_add_test (tc, test_hostile_messages_drop_client);
  tcase_add_test (tc, test_deaf_client_dropped);
  tcase_add_test (tc, test_stuck_consumer_ring_retired);
  tcase_add_test (tc, test_keeper_of_newest_frames_not_dropped);
  tcase_add_test (tc, test_closed_client_frees_its_slots);
  tcase_add_test (tc, test_garbage_drops_client);
  tcase_add_test (tc, test_flushing_and_wake);
  tcase_add_test (tc, test_caps_change_rebuilds_ring);
  tcase_add_test (tc, test_ring_made_at_caps);
  tcase_add_test (tc, test_late_joiner);
  tcase_add_test (tc, test_host_backend_no_events);
  tcase_add_test (tc, test_fence_page_ordering);
  tcase_add_test (tc, test_channel_announces);
  tcase_add_test (tc, test_channel_consumer_breaks_tail);
  tcase_add_test (tc, test_channel_one_wake_per_user);
  tcase_add_test (tc, test_release_page);
  tcase_add_test (tc, test_release_page_wake_across_rings);
  tcase_add_test (tc, test_consumers_cannot_write);
  tcase_add_test (tc, test_kernel_without_the_seal);
  return s;
}

/* run again as its own neighbour (spawn_neighbour()) */
static gint
early (gint argc, gchar ** argv)
{
  if (argc > 1 && strcmp (argv[1], "--neighbour") == 0)
    return neighbour_main (argc, argv);
  return -1;
}

const CudaIpcTestMain cudaipc_test_main = {
  .name = "server",
  .suite = server_suite,
  .early = early,
};
