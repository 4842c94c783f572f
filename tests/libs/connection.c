/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Connections over socketpair() and over listening sockets (a path in a
 * temporary folder, an abstract name): messages and fds in both directions,
 * every receive error with the fds that came along closed, sequence
 * checks, peer credentials, socket file handling.
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <gst/check/gstcheck.h>

#include "wire/connection.h"
#include "test-main.h"
#include "test-util.h"

static CudaIpcConn *conn_a, *conn_b;
static int raw_a, raw_b;        /* borrowed: the connections own them */

static void
setup_pair (void)
{
  int pair[2];

  fail_unless_equals_int (cudaipc_socket_pair (pair), 0);
  raw_a = pair[0];
  raw_b = pair[1];
  conn_a = cudaipc_conn_new (raw_a);
  conn_b = cudaipc_conn_new (raw_b);
  fail_unless (conn_a != NULL && conn_b != NULL);
  fail_unless_equals_int (cudaipc_conn_get_fd (conn_a), raw_a);
}

static void
teardown_pair (void)
{
  cudaipc_conn_free (conn_a);
  cudaipc_conn_free (conn_b);
  conn_a = conn_b = NULL;
}

static gboolean
fd_is_cloexec (int fd)
{
  int flags = fcntl (fd, F_GETFD);

  fail_unless (flags >= 0);
  return (flags & FD_CLOEXEC) != 0;
}

static void
assert_fd_closed (int fd)
{
  errno = 0;
  fail_unless_equals_int (fcntl (fd, F_GETFD), -1);
  fail_unless_equals_int (errno, EBADF);
}

static int
memfd_with (const gchar * content)
{
  int fd = cudaipc_test_memfd (0, FALSE);
  gsize len = strlen (content);

  fail_unless_equals_int (write (fd, content, len), len);
  return fd;
}

static void
assert_fd_content (int fd, const gchar * content)
{
  gchar got[64] = { 0 };
  gsize len = strlen (content);

  fail_unless (len < sizeof (got));
  fail_unless_equals_int (pread (fd, got, sizeof (got) - 1, 0), len);
  fail_unless_equals_string (got, content);
}

static gsize
build (const CudaIpcMsg * msg, guint32 seq, guint8 * buf, gsize size)
{
  gssize len = cudaipc_msg_build (msg, seq, buf, size);

  fail_unless (len > 0);
  return len;
}

static void
fill_sample (CudaIpcMsg * msg, CudaIpcMsgType type)
{
  cudaipc_msg_init (msg, type);

  switch (type) {
    case CUDAIPC_MSG_HELLO:
      msg->u.hello.version = CUDAIPC_PROTOCOL_VERSION;
      msg->u.hello.backend = CUDAIPC_BACKEND_HOST;
      for (guint i = 0; i < CUDAIPC_UUID_LEN; i++)
        msg->u.hello.uuid[i] = i + 1;
      msg->u.hello.caps = CUDAIPC_CAP_EVENTS;
      msg->u.hello.pid = getpid ();
      msg->u.hello.name = "consumer";
      break;
    case CUDAIPC_MSG_RING:
      msg->u.ring.generation = 2;
      msg->u.ring.n_slots = 4;
      msg->u.ring.slot_size = 1 << 20;
      break;
    case CUDAIPC_MSG_SLOT:
      msg->u.slot.generation = 2;
      msg->u.slot.index = 1;
      msg->u.slot.size = 1 << 20;
      msg->u.slot.n_allocs = 1;
      msg->u.slot.alloc_sizes[0] = 1 << 20;
      break;
    case CUDAIPC_MSG_CAPS:
      msg->u.caps.caps_id = 1;
      msg->u.caps.caps = "video/x-raw, format=(string)RGBA";
      break;
    case CUDAIPC_MSG_FRAME:
      msg->u.frame.generation = 2;
      msg->u.frame.slot = 3;
      msg->u.frame.seq = 99;
      msg->u.frame.caps_id = 1;
      msg->u.frame.flags = 0x40;
      msg->u.frame.pts = 1000;
      msg->u.frame.dts = 900;
      msg->u.frame.duration = 40;
      msg->u.frame.offset = 5;
      msg->u.frame.offset_end = 6;
      msg->u.frame.size = 4096;
      msg->u.frame.publish_time = 123456;
      msg->u.frame.clock_time = GST_CLOCK_TIME_NONE;
      msg->u.frame.n_planes = 2;
      msg->u.frame.planes[0].offset = 0;
      msg->u.frame.planes[0].stride = 256;
      msg->u.frame.planes[1].offset = 2048;
      msg->u.frame.planes[1].stride = 128;
      break;
    case CUDAIPC_MSG_RELEASE:
      msg->u.release.generation = 2;
      msg->u.release.slot = 3;
      msg->u.release.seq = 99;
      break;
    case CUDAIPC_MSG_EVENT:
      msg->u.event.event_type = GST_EVENT_EOS;
      msg->u.event.running_time = GST_CLOCK_TIME_NONE;
      msg->u.event.structure = "";
      break;
    case CUDAIPC_MSG_BYE:
      msg->u.bye.reason = CUDAIPC_BYE_NORMAL;
      msg->u.bye.text = "bye";
      break;
    case CUDAIPC_MSG_CHANNEL:
      msg->u.channel.capacity = 4096;
      break;
  }
}

/* The parsed form must build to the same bytes as the original, sequence
 * aside: every field compared at once. */
static void
assert_same_message (const CudaIpcMsg * sent, const CudaIpcMsg * got)
{
  static guint8 a[CUDAIPC_MAX_MESSAGE], b[CUDAIPC_MAX_MESSAGE];
  gsize la, lb;

  fail_unless_equals_int (sent->type, got->type);
  fail_unless_equals_int (sent->n_fds, got->n_fds);
  la = build (sent, 1, a, sizeof (a));
  lb = build (got, 1, b, sizeof (b));
  fail_unless_equals_int (la, lb);
  fail_unless (memcmp (a, b, la) == 0);
}

GST_START_TEST (test_send_recv_all)
{
  static const CudaIpcMsgType types[] = {
    CUDAIPC_MSG_HELLO, CUDAIPC_MSG_RING, CUDAIPC_MSG_SLOT, CUDAIPC_MSG_CAPS,
    CUDAIPC_MSG_FRAME, CUDAIPC_MSG_RELEASE, CUDAIPC_MSG_EVENT,
    CUDAIPC_MSG_BYE,
  };
  int fd = memfd_with ("x");

  for (guint t = 0; t < G_N_ELEMENTS (types); t++) {
    CudaIpcMsg msg, got;

    fill_sample (&msg, types[t]);
    if (types[t] == CUDAIPC_MSG_SLOT) {
      msg.fds[0] = fd;
      msg.n_fds = 1;
    }

    /* a to b, then b to a */
    fail_unless_equals_int (cudaipc_conn_send (conn_a, &msg), 0);
    fail_unless_equals_int (cudaipc_conn_recv (conn_b, &got), 0);
    fail_unless_equals_int (got.seq, t + 1);
    assert_same_message (&msg, &got);
    cudaipc_msg_clear (&got);

    fail_unless_equals_int (cudaipc_conn_send (conn_b, &msg), 0);
    fail_unless_equals_int (cudaipc_conn_recv (conn_a, &got), 0);
    fail_unless_equals_int (got.seq, t + 1);
    assert_same_message (&msg, &got);
    cudaipc_msg_clear (&got);
  }

  /* the sender kept its fd */
  fail_unless (fd_is_cloexec (fd));
  close (fd);
}

GST_END_TEST;

/* Messages larger than the connection's small buffer (FRAMEs with
 * metadata, up to the largest), then small ones with fds, then large
 * again: once a connection builds in its large buffer every message goes
 * through it, each whole and in sequence. */
GST_START_TEST (test_large_then_small)
{
  guint8 *meta = g_malloc (CUDAIPC_MAX_META_BYTES);
  int fd = memfd_with ("slot");

  for (guint i = 0; i < CUDAIPC_MAX_META_BYTES; i++)
    meta[i] = (guint8) (i * 13);
  for (guint round = 0; round < 3; round++) {
    static const guint lens[] = { 2000, 0, CUDAIPC_MAX_META_BYTES, 10 };
    CudaIpcMsg msg, got;

    for (guint i = 0; i < G_N_ELEMENTS (lens); i++) {
      fill_sample (&msg, CUDAIPC_MSG_FRAME);
      msg.u.frame.seq = round * 10 + i;
      msg.u.frame.meta = lens[i] ? meta + round : NULL;
      msg.u.frame.meta_len = lens[i] ? lens[i] - round : 0;
      fail_unless_equals_int (cudaipc_conn_send (conn_a, &msg), 0);
      fail_unless_equals_int (cudaipc_conn_recv (conn_b, &got), 0);
      assert_same_message (&msg, &got);
      cudaipc_msg_clear (&got);
    }
    fill_sample (&msg, CUDAIPC_MSG_SLOT);
    msg.fds[0] = fd;
    msg.n_fds = 1;
    fail_unless_equals_int (cudaipc_conn_send (conn_a, &msg), 0);
    fail_unless_equals_int (cudaipc_conn_recv (conn_b, &got), 0);
    assert_same_message (&msg, &got);
    assert_fd_content (got.fds[0], "slot");
    cudaipc_msg_clear (&got);
  }
  close (fd);
  g_free (meta);
}

GST_END_TEST;

GST_START_TEST (test_slot_fds)
{
  static const gchar *contents[] = { "first", "second", "third" };
  int fds[3];
  CudaIpcMsg msg, got;

  fill_sample (&msg, CUDAIPC_MSG_SLOT);
  msg.u.slot.n_allocs = 3;
  msg.u.slot.size = 3 << 20;
  msg.u.slot.flags = CUDAIPC_SLOT_HAS_EVENT;
  memset (msg.u.slot.event_handle, 0x5a, sizeof (msg.u.slot.event_handle));
  for (guint i = 0; i < 3; i++) {
    msg.u.slot.alloc_sizes[i] = 1 << 20;
    fds[i] = msg.fds[i] = memfd_with (contents[i]);
  }
  msg.n_fds = 3;

  fail_unless_equals_int (cudaipc_conn_send (conn_a, &msg), 0);
  fail_unless_equals_int (cudaipc_conn_recv (conn_b, &got), 0);
  assert_same_message (&msg, &got);
  fail_unless_equals_int (got.n_fds, 3);
  for (guint i = 0; i < 3; i++) {
    fail_unless (got.fds[i] >= 0);
    fail_unless (got.fds[i] != fds[i]);
    fail_unless (fd_is_cloexec (got.fds[i]));
    /* in address order: each fd is the one sent in its place */
    assert_fd_content (got.fds[i], contents[i]);
  }
  for (guint i = 3; i < CUDAIPC_MAX_MSG_FDS; i++)
    fail_unless_equals_int (got.fds[i], -1);

  /* the received fds are the message's; the sent ones stay the caller's */
  {
    int got_fds[3] = { got.fds[0], got.fds[1], got.fds[2] };

    cudaipc_msg_clear (&got);
    for (guint i = 0; i < 3; i++) {
      assert_fd_closed (got_fds[i]);
      assert_fd_content (fds[i], contents[i]);
      close (fds[i]);
    }
  }
}

GST_END_TEST;

GST_START_TEST (test_split_control)
{
  static const gchar *contents[] = { "one", "two", "three" };
  guint8 buf[512];
  int fds[3];
  CudaIpcMsg msg, got;
  gsize len;

  /* three fds in two SCM_RIGHTS messages: one, then two */
  fill_sample (&msg, CUDAIPC_MSG_SLOT);
  msg.u.slot.n_allocs = msg.n_fds = 3;
  msg.u.slot.size = 3 << 20;
  for (guint i = 0; i < 3; i++) {
    msg.u.slot.alloc_sizes[i] = 1 << 20;
    fds[i] = memfd_with (contents[i]);
  }
  len = build (&msg, 1, buf, sizeof (buf));
  cudaipc_test_send_raw_split (raw_a, buf, len, fds, 3, 1);
  for (guint i = 0; i < 3; i++)
    close (fds[i]);

  fail_unless_equals_int (cudaipc_conn_recv (conn_b, &got), 0);
  fail_unless_equals_int (got.n_fds, 3);
  for (guint i = 0; i < 3; i++)
    assert_fd_content (got.fds[i], contents[i]);
  cudaipc_msg_clear (&got);
}

GST_END_TEST;

GST_START_TEST (test_sequence)
{
  guint8 buf[256];
  CudaIpcMsg msg, got;
  gsize len;

  fill_sample (&msg, CUDAIPC_MSG_RELEASE);

  /* 1, 2 through the connection, then a 4 by hand */
  fail_unless_equals_int (cudaipc_conn_send (conn_a, &msg), 0);
  fail_unless_equals_int (cudaipc_conn_send (conn_a, &msg), 0);
  len = build (&msg, 4, buf, sizeof (buf));
  cudaipc_test_send_raw (raw_a, buf, len, NULL, 0);

  fail_unless_equals_int (cudaipc_conn_recv (conn_b, &got), 0);
  fail_unless_equals_int (got.seq, 1);
  cudaipc_msg_clear (&got);
  fail_unless_equals_int (cudaipc_conn_recv (conn_b, &got), 0);
  fail_unless_equals_int (got.seq, 2);
  cudaipc_msg_clear (&got);
  fail_unless_equals_int (cudaipc_conn_recv (conn_b, &got), -EPROTO);
  cudaipc_msg_clear (&got);

  /* the other direction starts at 1: a first message numbered 0 or 2 is
   * refused, and so is a repeat */
  len = build (&msg, 0, buf, sizeof (buf));
  cudaipc_test_send_raw (raw_b, buf, len, NULL, 0);
  fail_unless_equals_int (cudaipc_conn_recv (conn_a, &got), -EPROTO);
  cudaipc_msg_clear (&got);
  len = build (&msg, 2, buf, sizeof (buf));
  cudaipc_test_send_raw (raw_b, buf, len, NULL, 0);
  fail_unless_equals_int (cudaipc_conn_recv (conn_a, &got), -EPROTO);
  cudaipc_msg_clear (&got);
  len = build (&msg, 1, buf, sizeof (buf));
  cudaipc_test_send_raw (raw_b, buf, len, NULL, 0);
  fail_unless_equals_int (cudaipc_conn_recv (conn_a, &got), 0);
  cudaipc_msg_clear (&got);
  cudaipc_test_send_raw (raw_b, buf, len, NULL, 0);
  fail_unless_equals_int (cudaipc_conn_recv (conn_a, &got), -EPROTO);
  cudaipc_msg_clear (&got);
}

GST_END_TEST;

GST_START_TEST (test_sequence_with_fds)
{
  guint8 buf[256];
  CudaIpcMsg msg, got;
  int fd = memfd_with ("slot");
  gsize len;

  /* a SLOT out of sequence: its fd is closed with it */
  fill_sample (&msg, CUDAIPC_MSG_SLOT);
  msg.fds[0] = fd;
  msg.n_fds = 1;
  len = build (&msg, 5, buf, sizeof (buf));
  cudaipc_test_send_raw (raw_a, buf, len, &fd, 1);
  close (fd);
  fail_unless_equals_int (cudaipc_conn_recv (conn_b, &got), -EPROTO);
  fail_unless_equals_int (got.n_fds, 0);
  cudaipc_msg_clear (&got);
}

GST_END_TEST;

GST_START_TEST (test_fd_count_mismatch)
{
  guint8 buf[256];
  CudaIpcMsg msg, got;
  int fds[2];
  gsize len;

  fds[0] = memfd_with ("a");
  fds[1] = memfd_with ("b");

  /* a RING (header: no fds) with two fds */
  fill_sample (&msg, CUDAIPC_MSG_RING);
  len = build (&msg, 1, buf, sizeof (buf));
  cudaipc_test_send_raw (raw_a, buf, len, fds, 2);
  fail_unless_equals_int (cudaipc_conn_recv (conn_b, &got), -EPROTO);
  cudaipc_msg_clear (&got);

  /* a SLOT whose header says one, with two */
  fill_sample (&msg, CUDAIPC_MSG_SLOT);
  msg.fds[0] = fds[0];
  msg.n_fds = 1;
  len = build (&msg, 1, buf, sizeof (buf));
  cudaipc_test_send_raw (raw_b, buf, len, fds, 2);
  fail_unless_equals_int (cudaipc_conn_recv (conn_a, &got), -EPROTO);
  cudaipc_msg_clear (&got);

  /* a SLOT whose header says one, with none */
  cudaipc_test_send_raw (raw_b, buf, len, NULL, 0);
  fail_unless_equals_int (cudaipc_conn_recv (conn_a, &got), -EPROTO);
  cudaipc_msg_clear (&got);

  close (fds[0]);
  close (fds[1]);
  /* teardown counts: any fd that arrived and stayed open is a leak */
}

GST_END_TEST;

GST_START_TEST (test_too_many_fds)
{
  int fds[CUDAIPC_MAX_MSG_FDS + 4];
  guint8 buf[512];
  CudaIpcMsg msg, got;
  gsize len;

  /* more fds than the control buffer holds: MSG_CTRUNC */
  for (guint i = 0; i < G_N_ELEMENTS (fds); i++)
    fds[i] = memfd_with ("x");
  fill_sample (&msg, CUDAIPC_MSG_SLOT);
  msg.n_fds = 1;
  len = build (&msg, 1, buf, sizeof (buf));
  cudaipc_test_send_raw (raw_a, buf, len, fds, G_N_ELEMENTS (fds));
  for (guint i = 0; i < G_N_ELEMENTS (fds); i++)
    close (fds[i]);
  fail_unless_equals_int (cudaipc_conn_recv (conn_b, &got), -EPROTO);
  cudaipc_msg_clear (&got);
}

GST_END_TEST;

GST_START_TEST (test_oversized)
{
  gsize len = CUDAIPC_MAX_MESSAGE + 100;
  guint8 *big = g_malloc0 (len);
  CudaIpcMsg got;
  int fd = memfd_with ("x");

  GST_WRITE_UINT16_LE (big, CUDAIPC_MSG_CAPS);
  GST_WRITE_UINT32_LE (big + 4, len - CUDAIPC_HEADER_SIZE);
  GST_WRITE_UINT32_LE (big + 8, 1);
  cudaipc_test_send_raw (raw_a, big, len, &fd, 1);
  close (fd);
  fail_unless_equals_int (cudaipc_conn_recv (conn_b, &got), -EMSGSIZE);
  cudaipc_msg_clear (&got);

  /* one byte beyond the largest message is too much already */
  len = CUDAIPC_MAX_MESSAGE + 1;
  GST_WRITE_UINT32_LE (big + 4, len - CUDAIPC_HEADER_SIZE);
  cudaipc_test_send_raw (raw_a, big, len, NULL, 0);
  fail_unless_equals_int (cudaipc_conn_recv (conn_b, &got), -EMSGSIZE);
  cudaipc_msg_clear (&got);

  /* a datagram of exactly the largest size reaches the parser */
  len = CUDAIPC_MAX_MESSAGE;
  GST_WRITE_UINT32_LE (big + 4, len - CUDAIPC_HEADER_SIZE);
  cudaipc_test_send_raw (raw_a, big, len, NULL, 0);
  fail_unless_equals_int (cudaipc_conn_recv (conn_b, &got), -EBADMSG);
  cudaipc_msg_clear (&got);

  g_free (big);
}

GST_END_TEST;

GST_START_TEST (test_garbage)
{
  guint8 buf[8] = { 1, 2, 3 };
  CudaIpcMsg got;

  /* shorter than a header */
  cudaipc_test_send_raw (raw_a, buf, sizeof (buf), NULL, 0);
  fail_unless_equals_int (cudaipc_conn_recv (conn_b, &got), -EBADMSG);
  cudaipc_msg_clear (&got);
}

GST_END_TEST;

GST_START_TEST (test_peer_closed)
{
  CudaIpcMsg msg, got;

  /* what was sent before the close is still delivered */
  fill_sample (&msg, CUDAIPC_MSG_BYE);
  fail_unless_equals_int (cudaipc_conn_send (conn_a, &msg), 0);
  cudaipc_conn_free (conn_a);
  conn_a = NULL;

  fail_unless_equals_int (cudaipc_conn_wait (conn_b, 1000), 1);
  fail_unless_equals_int (cudaipc_conn_recv (conn_b, &got), 0);
  fail_unless_equals_int (got.type, CUDAIPC_MSG_BYE);
  cudaipc_msg_clear (&got);
  fail_unless_equals_int (cudaipc_conn_wait (conn_b, 1000), 1);
  fail_unless_equals_int (cudaipc_conn_recv (conn_b, &got), -EPIPE);
  cudaipc_msg_clear (&got);
  fail_unless_equals_int (cudaipc_conn_recv (conn_b, &got), -EPIPE);
  cudaipc_msg_clear (&got);
}

GST_END_TEST;

/* A peer that closes with messages of ours unread: the kernel reports a
 * reset first, and the message it sent before closing still arrives. */
GST_START_TEST (test_peer_closed_unread)
{
  CudaIpcMsg msg, got;

  fill_sample (&msg, CUDAIPC_MSG_RELEASE);
  for (guint i = 0; i < 3; i++)
    fail_unless_equals_int (cudaipc_conn_send (conn_b, &msg), 0);
  fill_sample (&msg, CUDAIPC_MSG_BYE);
  fail_unless_equals_int (cudaipc_conn_send (conn_a, &msg), 0);
  /* conn_a never reads what conn_b sent */
  cudaipc_conn_free (conn_a);
  conn_a = NULL;

  fail_unless_equals_int (cudaipc_conn_wait (conn_b, 1000), 1);
  fail_unless_equals_int (cudaipc_conn_recv (conn_b, &got), 0);
  fail_unless_equals_int (got.type, CUDAIPC_MSG_BYE);
  cudaipc_msg_clear (&got);
  fail_unless_equals_int (cudaipc_conn_recv (conn_b, &got), -EPIPE);
  cudaipc_msg_clear (&got);
}

GST_END_TEST;

GST_START_TEST (test_send_to_closed)
{
  CudaIpcMsg msg;
  int fd = memfd_with ("x");

  /* SIGPIPE's default action would kill the test */
  signal (SIGPIPE, SIG_DFL);

  cudaipc_conn_free (conn_b);
  conn_b = NULL;
  fill_sample (&msg, CUDAIPC_MSG_RELEASE);
  fail_unless_equals_int (cudaipc_conn_send (conn_a, &msg), -EPIPE);
  fill_sample (&msg, CUDAIPC_MSG_SLOT);
  msg.fds[0] = fd;
  msg.n_fds = 1;
  fail_unless_equals_int (cudaipc_conn_send (conn_a, &msg), -EPIPE);
  close (fd);
}

GST_END_TEST;

GST_START_TEST (test_send_invalid)
{
  CudaIpcMsg msg, got;

  /* a message that cannot be built sends nothing and uses no sequence */
  fill_sample (&msg, CUDAIPC_MSG_FRAME);
  msg.u.frame.n_planes = CUDAIPC_MAX_PLANES + 1;
  fail_unless_equals_int (cudaipc_conn_send (conn_a, &msg), -EMSGSIZE);
  fill_sample (&msg, CUDAIPC_MSG_HELLO);
  msg.n_fds = 1;
  fail_unless_equals_int (cudaipc_conn_send (conn_a, &msg), -EINVAL);

  fill_sample (&msg, CUDAIPC_MSG_RELEASE);
  fail_unless_equals_int (cudaipc_conn_send (conn_a, &msg), 0);
  fail_unless_equals_int (cudaipc_conn_recv (conn_b, &got), 0);
  fail_unless_equals_int (got.seq, 1);
  cudaipc_msg_clear (&got);
}

GST_END_TEST;

GST_START_TEST (test_nonblocking)
{
  CudaIpcMsg msg, got;

  fail_unless_equals_int (cudaipc_conn_set_nonblocking (conn_b, TRUE), 0);
  fail_unless (fcntl (raw_b, F_GETFL) & O_NONBLOCK);
  fail_unless_equals_int (cudaipc_conn_recv (conn_b, &got), -EAGAIN);
  cudaipc_msg_clear (&got);
  fail_unless_equals_int (cudaipc_conn_wait (conn_b, 0), 0);
  fail_unless_equals_int (cudaipc_conn_wait (conn_b, 20), 0);

  fill_sample (&msg, CUDAIPC_MSG_RELEASE);
  fail_unless_equals_int (cudaipc_conn_send (conn_a, &msg), 0);
  fail_unless_equals_int (cudaipc_conn_wait (conn_b, -1), 1);
  fail_unless_equals_int (cudaipc_conn_recv (conn_b, &got), 0);
  cudaipc_msg_clear (&got);
  fail_unless_equals_int (cudaipc_conn_recv (conn_b, &got), -EAGAIN);
  cudaipc_msg_clear (&got);

  /* a failed non-blocking receive does not disturb the sequence */
  fail_unless_equals_int (cudaipc_conn_send (conn_a, &msg), 0);
  fail_unless_equals_int (cudaipc_conn_recv (conn_b, &got), 0);
  fail_unless_equals_int (got.seq, 2);
  cudaipc_msg_clear (&got);

  /* a full socket: the send that does not fit is -EAGAIN */
  fail_unless_equals_int (cudaipc_conn_set_nonblocking (conn_a, TRUE), 0);
  {
    gint ret;
    guint sent = 0;

    while ((ret = cudaipc_conn_send (conn_a, &msg)) == 0)
      fail_unless (++sent < 1000000);
    fail_unless_equals_int (ret, -EAGAIN);
    fail_unless (sent > 0);
  }

  fail_unless_equals_int (cudaipc_conn_set_nonblocking (conn_b, FALSE), 0);
  fail_if (fcntl (raw_b, F_GETFL) & O_NONBLOCK);
}

GST_END_TEST;

GST_START_TEST (test_peer_cred)
{
  pid_t pid = 0;
  uid_t uid = 0;
  gid_t gid = 0;

  fail_unless_equals_int (cudaipc_conn_get_peer_cred (conn_a, &pid, &uid,
          &gid), 0);
  fail_unless_equals_int (pid, getpid ());
  fail_unless_equals_int (uid, getuid ());
  fail_unless_equals_int (gid, getgid ());
  fail_unless_equals_int (cudaipc_conn_get_peer_cred (conn_b, NULL, NULL,
          NULL), 0);
}

GST_END_TEST;

/* Listening sockets */

static gchar *sock_path;

static void
setup_dir (void)
{
  sock_path = cudaipc_test_socket_path ("connection", "sock");
}

/* the socket's folder must hold nothing else: a test leaves no file */
static void
teardown_dir (void)
{
  fail_unless_equals_int (cudaipc_test_socket_remove (&sock_path), 0);
}

/* Connects to @name, accepts on @listen_fd, and passes a message each way
 * with the peers' credentials checked. */
static void
check_connect_accept (const gchar * name, int listen_fd)
{
  CudaIpcConn *client, *server;
  CudaIpcMsg msg, got;
  int cfd = -1, sfd = -1;
  pid_t pid;
  uid_t uid;
  gid_t gid;

  fail_unless_equals_int (cudaipc_socket_connect (name, &cfd), 0);
  fail_unless (fd_is_cloexec (cfd));
  fail_unless_equals_int (cudaipc_socket_accept (listen_fd, &sfd), 0);
  fail_unless (fd_is_cloexec (sfd));

  client = cudaipc_conn_new (cfd);
  server = cudaipc_conn_new (sfd);

  fill_sample (&msg, CUDAIPC_MSG_HELLO);
  fail_unless_equals_int (cudaipc_conn_send (client, &msg), 0);
  fail_unless_equals_int (cudaipc_conn_recv (server, &got), 0);
  assert_same_message (&msg, &got);
  cudaipc_msg_clear (&got);
  fail_unless_equals_int (cudaipc_conn_send (server, &msg), 0);
  fail_unless_equals_int (cudaipc_conn_recv (client, &got), 0);
  assert_same_message (&msg, &got);
  cudaipc_msg_clear (&got);

  fail_unless_equals_int (cudaipc_conn_get_peer_cred (server, &pid, &uid,
          &gid), 0);
  fail_unless_equals_int (pid, getpid ());
  fail_unless_equals_int (uid, getuid ());
  fail_unless_equals_int (gid, getgid ());

  cudaipc_conn_free (client);
  cudaipc_conn_free (server);
}

static void
assert_mode (const gchar * path, guint mode)
{
  struct stat st;

  fail_unless_equals_int (lstat (path, &st), 0);
  fail_unless (S_ISSOCK (st.st_mode));
  fail_unless_equals_int (st.st_mode & 0777, mode);
}

GST_START_TEST (test_listen_path)
{
  int lfd = -1;

  fail_unless_equals_int (cudaipc_socket_listen (sock_path, 0660, &lfd), 0);
  fail_unless (lfd >= 0);
  fail_unless (fd_is_cloexec (lfd));
  assert_mode (sock_path, 0660);

  check_connect_accept (sock_path, lfd);
  check_connect_accept (sock_path, lfd);

  /* no client waiting: a non-blocking accept says so */
  fail_unless (fcntl (lfd, F_SETFL, O_NONBLOCK) == 0);
  {
    int fd = -1;

    fail_unless_equals_int (cudaipc_socket_accept (lfd, &fd), -EAGAIN);
    fail_unless_equals_int (fd, -1);
  }

  close (lfd);
  cudaipc_socket_unlink (sock_path);
  fail_unless (access (sock_path, F_OK) != 0 && errno == ENOENT);
  cudaipc_socket_unlink (sock_path);
}

GST_END_TEST;

GST_START_TEST (test_listen_modes)
{
  static const guint modes[] = { 0600, 0666, 0640, 0700 };
  mode_t old = umask (022);

  /* the mode asked for, whatever the umask */
  for (guint i = 0; i < G_N_ELEMENTS (modes); i++) {
    int lfd = -1;

    fail_unless_equals_int (cudaipc_socket_listen (sock_path, modes[i],
            &lfd), 0);
    assert_mode (sock_path, modes[i]);
    close (lfd);
    cudaipc_socket_unlink (sock_path);
  }
  umask (old);
}

GST_END_TEST;

GST_START_TEST (test_listen_abstract)
{
  gchar *name = g_strdup_printf ("@cudaipc-test-%d", (int) getpid ());
  int lfd = -1, lfd2 = -1;

  fail_unless_equals_int (cudaipc_socket_listen (name, 0600, &lfd), 0);
  fail_unless (fd_is_cloexec (lfd));
  /* no file, under either spelling */
  fail_unless (access (name, F_OK) != 0);
  fail_unless (access (name + 1, F_OK) != 0);

  check_connect_accept (name, lfd);

  /* a second server on a live name */
  fail_unless_equals_int (cudaipc_socket_listen (name, 0600, &lfd2),
      -EADDRINUSE);
  fail_unless_equals_int (lfd2, -1);

  /* unlink is a no-op; once the server is gone the name is free */
  cudaipc_socket_unlink (name);
  close (lfd);
  {
    int fd = -1;

    fail_unless_equals_int (cudaipc_socket_connect (name, &fd), -ECONNREFUSED);
    fail_unless_equals_int (fd, -1);
  }
  fail_unless_equals_int (cudaipc_socket_listen (name, 0600, &lfd), 0);
  check_connect_accept (name, lfd);
  close (lfd);

  g_free (name);
}

GST_END_TEST;

GST_START_TEST (test_stale_socket)
{
  struct sockaddr_un addr = { 0 };
  int fd, lfd = -1;

  /* a server that died without removing its socket */
  fd = socket (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  fail_unless (fd >= 0);
  addr.sun_family = AF_UNIX;
  g_strlcpy (addr.sun_path, sock_path, sizeof (addr.sun_path));
  fail_unless_equals_int (bind (fd, (struct sockaddr *) &addr,
          sizeof (addr)), 0);
  fail_unless_equals_int (listen (fd, 1), 0);
  close (fd);
  fail_unless_equals_int (access (sock_path, F_OK), 0);

  {
    int cfd = -1;

    fail_unless_equals_int (cudaipc_socket_connect (sock_path, &cfd),
        -ECONNREFUSED);
  }

  fail_unless_equals_int (cudaipc_socket_listen (sock_path, 0660, &lfd), 0);
  assert_mode (sock_path, 0660);
  check_connect_accept (sock_path, lfd);
  close (lfd);
}

GST_END_TEST;

GST_START_TEST (test_live_listener)
{
  int lfd = -1, lfd2 = -1;

  fail_unless_equals_int (cudaipc_socket_listen (sock_path, 0600, &lfd), 0);
  fail_unless_equals_int (cudaipc_socket_listen (sock_path, 0666, &lfd2),
      -EADDRINUSE);
  fail_unless_equals_int (lfd2, -1);
  /* the live server's socket is untouched */
  assert_mode (sock_path, 0600);
  /* the probe that found it alive shows up as a client that left at once */
  {
    CudaIpcConn *probe;
    CudaIpcMsg got;
    int fd = -1;

    fail_unless_equals_int (cudaipc_socket_accept (lfd, &fd), 0);
    probe = cudaipc_conn_new (fd);
    fail_unless_equals_int (cudaipc_conn_recv (probe, &got), -EPIPE);
    cudaipc_msg_clear (&got);
    cudaipc_conn_free (probe);
  }
  check_connect_accept (sock_path, lfd);

  /* a live server whose backlog is full is still alive */
  {
    int clients[64];
    guint n = 0;

    for (n = 0; n < G_N_ELEMENTS (clients); n++) {
      int fd = socket (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK,
          0);
      struct sockaddr_un addr = { 0 };

      addr.sun_family = AF_UNIX;
      g_strlcpy (addr.sun_path, sock_path, sizeof (addr.sun_path));
      fail_unless (fd >= 0);
      if (connect (fd, (struct sockaddr *) &addr, sizeof (addr)) < 0) {
        fail_unless_equals_int (errno, EAGAIN);
        close (fd);
        break;
      }
      clients[n] = fd;
    }
    fail_unless (n < G_N_ELEMENTS (clients));
    fail_unless_equals_int (cudaipc_socket_listen (sock_path, 0666, &lfd2),
        -EADDRINUSE);
    for (guint i = 0; i < n; i++)
      close (clients[i]);
  }

  close (lfd);
}

GST_END_TEST;

GST_START_TEST (test_not_a_socket)
{
  gchar *link_path = cudaipc_test_path_beside (sock_path, "link");
  gchar *contents = NULL;
  int lfd = -1;
  gint ret;

  /* a regular file where the socket should be is left alone */
  fail_unless (g_file_set_contents (sock_path, "precious", -1, NULL));
  ret = cudaipc_socket_listen (sock_path, 0600, &lfd);
  fail_unless (ret == -EEXIST || ret == -EADDRINUSE, "got %d", ret);
  fail_unless_equals_int (lfd, -1);
  fail_unless (g_file_get_contents (sock_path, &contents, NULL, NULL));
  fail_unless_equals_string (contents, "precious");
  g_free (contents);

  /* and so is a symlink to it */
  fail_unless_equals_int (symlink (sock_path, link_path), 0);
  ret = cudaipc_socket_listen (link_path, 0600, &lfd);
  fail_unless (ret == -EEXIST || ret == -EADDRINUSE, "got %d", ret);
  fail_unless_equals_int (lfd, -1);
  {
    struct stat st;

    fail_unless_equals_int (lstat (link_path, &st), 0);
    fail_unless (S_ISLNK (st.st_mode));
  }
  unlink (link_path);
  g_free (link_path);

  /* a directory too */
  unlink (sock_path);
  fail_unless_equals_int (mkdir (sock_path, 0700), 0);
  ret = cudaipc_socket_listen (sock_path, 0600, &lfd);
  fail_unless (ret == -EEXIST || ret == -EADDRINUSE, "got %d", ret);
  fail_unless_equals_int (rmdir (sock_path), 0);
}

GST_END_TEST;

GST_START_TEST (test_name_errors)
{
  gchar *long_path, *long_abstract;
  int fd = -1;

  fail_unless_equals_int (cudaipc_socket_connect (sock_path, &fd), -ENOENT);
  fail_unless_equals_int (fd, -1);

  long_path = g_strnfill (sizeof (((struct sockaddr_un *) NULL)->sun_path),
      'p');
  fail_unless_equals_int (cudaipc_socket_listen (long_path, 0600, &fd),
      -ENAMETOOLONG);
  fail_unless_equals_int (cudaipc_socket_connect (long_path, &fd),
      -ENAMETOOLONG);
  /* an abstract name may use every byte of sun_path after the NUL */
  long_abstract = g_strdup_printf ("@%d-%s", (int) getpid (), long_path);
  long_abstract[sizeof (((struct sockaddr_un *) NULL)->sun_path)] = '\0';
  fail_unless_equals_int (cudaipc_socket_listen (long_abstract, 0600, &fd), 0);
  close (fd);
  fd = -1;
  g_free (long_abstract);
  long_abstract = g_strdup_printf ("@%s", long_path);
  fail_unless_equals_int (cudaipc_socket_listen (long_abstract, 0600, &fd),
      -ENAMETOOLONG);

  fail_unless_equals_int (cudaipc_socket_listen ("", 0600, &fd), -EINVAL);
  fail_unless_equals_int (cudaipc_socket_listen ("@", 0600, &fd), -EINVAL);
  fail_unless_equals_int (cudaipc_socket_connect ("", &fd), -EINVAL);
  fail_unless_equals_int (fd, -1);

  g_free (long_path);
  g_free (long_abstract);
}

GST_END_TEST;

static Suite *
connection_suite (void)
{
  Suite *s = suite_create ("connection");
  TCase *tc = cudaipc_test_case (s, "pair", 60);
  TCase *tc_sock = cudaipc_test_case (s, "socket", 60);

  tcase_add_checked_fixture (tc, setup_pair, teardown_pair);
  tcase_add_test (tc, test_send_recv_all);
  tcase_add_test (tc, test_large_then_small);
  tcase_add_test (tc, test_slot_fds);
  tcase_add_test (tc, test_split_control);
  tcase_add_test (tc, test_sequence);
  tcase_add_test (tc, test_sequence_with_fds);
  tcase_add_test (tc, test_fd_count_mismatch);
  tcase_add_test (tc, test_too_many_fds);
  tcase_add_test (tc, test_oversized);
  tcase_add_test (tc, test_garbage);
  tcase_add_test (tc, test_peer_closed);
  tcase_add_test (tc, test_peer_closed_unread);
  tcase_add_test (tc, test_send_to_closed);
  tcase_add_test (tc, test_send_invalid);
  tcase_add_test (tc, test_nonblocking);
  tcase_add_test (tc, test_peer_cred);

  tcase_add_checked_fixture (tc_sock, setup_dir, teardown_dir);
  tcase_add_test (tc_sock, test_listen_path);
  tcase_add_test (tc_sock, test_listen_modes);
  tcase_add_test (tc_sock, test_listen_abstract);
  tcase_add_test (tc_sock, test_stale_socket);
  tcase_add_test (tc_sock, test_live_listener);
  tcase_add_test (tc_sock, test_not_a_socket);
  tcase_add_test (tc_sock, test_name_errors);

  return s;
}

const CudaIpcTestMain cudaipc_test_main = {
  .name = "connection",
  .suite = connection_suite,
};
