/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The announce channel (wire/channel.h) under a connection over a
 * socketpair: messages through shared memory in order with those that go
 * on the socket behind a mark (fds, long ones), the ring wrapping and
 * filling, the wake-up (one for several channels, and none a consumer
 * can make the producer block on), the peer's end, and each side lied to
 * by the other: a tail or a head that could not be, records that do not
 * fit, a message on the socket without its mark, a mark with no message,
 * fds that are not what CHANNEL says.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>
#include <gst/check/gstcheck.h>

#include "wire/connection.h"
#include "common/error.h"
#include "test-main.h"
#include "test-util.h"

#define CAPACITY 4096
#define PAGE_HEAD 0
#define PAGE_TAIL 64

static CudaIpcConn *prod, *cons;
static CudaIpcWake *wake;
static CudaIpcChannel *tx;      /* borrowed: prod owns it */
static guint8 *page;            /* the test's own mapping of the page */

static void
setup (void)
{
  int pair[2];
  GError *err = NULL;
  CudaIpcChannel *rx;

  fail_unless_equals_int (cudaipc_socket_pair (pair), 0);
  prod = cudaipc_conn_new (pair[0]);
  cons = cudaipc_conn_new (pair[1]);
  wake = cudaipc_wake_new (getuid (), &err);
  fail_unless (wake != NULL, "%s", err ? err->message : "");
  tx = cudaipc_channel_new (CAPACITY, wake, &err);
  fail_unless (tx != NULL, "%s", err ? err->message : "");
  page = mmap (NULL, 4096 + CAPACITY, PROT_READ | PROT_WRITE, MAP_SHARED,
      cudaipc_channel_get_memfd (tx), 0);
  fail_unless (page != MAP_FAILED);
  rx = cudaipc_channel_open (dup (cudaipc_channel_get_memfd (tx)),
      dup (cudaipc_channel_get_wake_fd (tx)), CAPACITY, &err);
  fail_unless (rx != NULL, "%s", err ? err->message : "");
  cudaipc_conn_set_tx_channel (prod, tx);
  fail_unless (cudaipc_conn_set_rx_channel (cons, rx, 0, &err));
}

static void
teardown (void)
{
  munmap (page, 4096 + CAPACITY);
  cudaipc_conn_free (prod);
  cudaipc_conn_free (cons);
  g_clear_pointer (&wake, cudaipc_wake_unref);
  prod = cons = NULL;
}

static void
send_event (CudaIpcConn * conn, const gchar * text)
{
  CudaIpcMsg msg;

  cudaipc_msg_init (&msg, CUDAIPC_MSG_EVENT);
  msg.u.event.event_type = GST_EVENT_CUSTOM_DOWNSTREAM;
  msg.u.event.running_time = GST_CLOCK_TIME_NONE;
  msg.u.event.structure = text;
  fail_unless_equals_int (cudaipc_conn_send (conn, &msg), 0);
}

static void
expect_event (const gchar * text)
{
  CudaIpcMsg msg;

  fail_unless_equals_int (cudaipc_conn_try_recv (cons, &msg), 0);
  fail_unless_equals_int (msg.type, CUDAIPC_MSG_EVENT);
  fail_unless_equals_string (msg.u.event.structure, text);
  cudaipc_msg_clear (&msg);
}

static void
expect_nothing (void)
{
  CudaIpcMsg msg;

  fail_unless_equals_int (cudaipc_conn_try_recv (cons, &msg), -EAGAIN);
  fail_unless_equals_int (cudaipc_conn_recv (cons, &msg), -EAGAIN);
}

GST_START_TEST (test_in_order_with_marked)
{
  gchar *long_text = g_strnfill (CUDAIPC_CHANNEL_MAX_RECORD + 100, 'x');
  CudaIpcMsg msg;
  int fds[2];
  guint8 built[256];
  gssize len;

  /* a message, one with fds, a long one, a built one, a message */
  send_event (prod, "first");
  fail_unless_equals_int (pipe2 (fds, O_CLOEXEC), 0);
  cudaipc_msg_init (&msg, CUDAIPC_MSG_SLOT);
  msg.u.slot.generation = 1;
  msg.u.slot.index = 0;
  msg.u.slot.size = 4096;
  msg.u.slot.n_allocs = 2;
  msg.u.slot.alloc_sizes[0] = msg.u.slot.alloc_sizes[1] = 2048;
  msg.fds[0] = fds[0];
  msg.fds[1] = fds[1];
  msg.n_fds = 2;
  fail_unless_equals_int (cudaipc_conn_send (prod, &msg), 0);
  close (fds[0]);
  close (fds[1]);
  send_event (prod, long_text);
  cudaipc_msg_init (&msg, CUDAIPC_MSG_RELEASE);
  len = cudaipc_msg_build (&msg, 0, built, sizeof (built));
  fail_unless (len > 0);
  fail_unless_equals_int (cudaipc_conn_send_built (prod, built, len), 0);
  send_event (prod, "last");

  /* a wait finds them there at once */
  fail_unless (cudaipc_conn_begin_wait (cons, TRUE));
  fail_unless (cudaipc_conn_pending (cons));
  expect_event ("first");
  fail_unless_equals_int (cudaipc_conn_try_recv (cons, &msg), 0);
  fail_unless_equals_int (msg.type, CUDAIPC_MSG_SLOT);
  fail_unless_equals_int (msg.n_fds, 2);
  fail_unless (msg.fds[0] >= 0 && msg.fds[1] >= 0);
  cudaipc_msg_clear (&msg);
  expect_event (long_text);
  fail_unless_equals_int (cudaipc_conn_recv (cons, &msg), 0);
  fail_unless_equals_int (msg.type, CUDAIPC_MSG_RELEASE);
  cudaipc_msg_clear (&msg);
  expect_event ("last");
  expect_nothing ();
  fail_if (cudaipc_conn_pending (cons));
  g_free (long_text);
}

GST_END_TEST;

GST_START_TEST (test_wraps_and_fills)
{
  gchar text[64];
  guint sent = 0, got = 0;
  CudaIpcMsg msg;
  gint ret;

  /* round after round, more than the capacity in all: each record lands
   * wherever the last left off, the end of the space skipped */
  for (guint round = 0; round < 40; round++) {
    for (guint i = 0; i < 7; i++) {
      g_snprintf (text, sizeof (text), "m%u-%s", sent, round % 3 ? "a" :
          "a longer one, to move the records about");
      send_event (prod, text);
      sent++;
    }
    while (cudaipc_conn_try_recv (cons, &msg) == 0) {
      g_snprintf (text, sizeof (text), "m%u-", got);
      fail_unless (g_str_has_prefix (msg.u.event.structure, text));
      cudaipc_msg_clear (&msg);
      got++;
    }
  }
  fail_unless_equals_int (got, sent);

  /* unread, it fills: the producer hears so, as from a full socket */
  for (;;) {
    cudaipc_msg_init (&msg, CUDAIPC_MSG_EVENT);
    msg.u.event.structure = "filler";
    ret = cudaipc_conn_send (prod, &msg);
    if (ret != 0)
      break;
    sent++;
  }
  fail_unless_equals_int (ret, -EAGAIN);
  fail_unless (sent - got > 10);
  while (cudaipc_conn_try_recv (cons, &msg) == 0) {
    cudaipc_msg_clear (&msg);
    got++;
  }
  fail_unless_equals_int (got, sent);
  /* and goes on once read */
  send_event (prod, "after");
  expect_event ("after");
}

GST_END_TEST;

GST_START_TEST (test_wakes_a_sleeper)
{
  struct pollfd pfd;

  /* nothing there: it sleeps, and the wait fd is quiet */
  fail_if (cudaipc_conn_begin_wait (cons, TRUE));
  pfd.fd = cudaipc_conn_get_wait_fd (cons);
  pfd.events = POLLIN;
  fail_unless (pfd.fd != -1);
  fail_unless_equals_int (poll (&pfd, 1, 0), 0);
  /* a record wakes it */
  send_event (prod, "wake");
  fail_unless_equals_int (poll (&pfd, 1, 1000), 1);
  cudaipc_conn_end_wait (cons);
  expect_event ("wake");
  /* a spurious wake-up: its event taken, nothing to read */
  fail_if (cudaipc_conn_begin_wait (cons, TRUE));
  send_event (prod, "again");
  fail_unless_equals_int (poll (&pfd, 1, 1000), 1);
  expect_event ("again");
  cudaipc_conn_end_wait (cons);
  fail_unless_equals_int (poll (&pfd, 1, 0), 0);
  expect_nothing ();
  /* not asleep: no wake-up written, the record is seen all the same */
  send_event (prod, "awake");
  fail_unless_equals_int (poll (&pfd, 1, 0), 0);
  fail_unless (cudaipc_conn_begin_wait (cons, TRUE));
  expect_event ("awake");
}

GST_END_TEST;

/* Datagrams queued on the wake's consumer end, taken out. */
static guint
take_wakes (int fd)
{
  guint8 byte;
  guint n = 0;

  while (recv (fd, &byte, 1, MSG_DONTWAIT) == 1)
    n++;
  return n;
}

/* A consumer has its own copy of the wake's end, but the file is the
 * producer's too: it clears O_NONBLOCK on it, tries to send on it, and
 * sleeps for ever without taking a single event. The producer's wake-ups
 * never block: once the queue is full it drains it, and every record
 * goes on. */
GST_START_TEST (test_wake_cannot_block_producer)
{
  int fd = dup (cudaipc_channel_get_wake_fd (tx));
  guint8 byte = 1;
  gchar text[32];

  fail_unless_equals_int (fcntl (fd, F_SETFL, 0), 0);
  fail_unless (send (fd, &byte, 1, MSG_DONTWAIT) < 0);
  alarm (20);
  for (guint i = 0; i < 20000; i++) {
    /* asleep for every record */
    fail_if (cudaipc_conn_begin_wait (cons, FALSE));
    g_snprintf (text, sizeof (text), "r%u", i);
    send_event (prod, text);
    expect_event (text);
  }
  alarm (0);
  fail_unless_equals_uint64 (cudaipc_wake_get_sent (wake), 20000);
  fail_unless (cudaipc_wake_get_drains (wake) > 0);
  cudaipc_conn_end_wait (cons);
  close (fd);
}

GST_END_TEST;

/* Two channels with one wake, both consumers asleep: held, the two
 * records cost one datagram, and each consumer's edge-triggered wait
 * sees it; not held, one each. */
GST_START_TEST (test_one_wake_for_two)
{
  GError *err = NULL;
  CudaIpcChannel *tx2, *rx2;
  int ep[2], fd = cudaipc_wake_get_fd (wake);
  struct epoll_event ev = { EPOLLIN | EPOLLET, };
  guint8 rec[64];
  gsize len;

  tx2 = cudaipc_channel_new (CAPACITY, wake, &err);
  fail_unless (tx2 != NULL, "%s", err ? err->message : "");
  rx2 = cudaipc_channel_open (dup (cudaipc_channel_get_memfd (tx2)),
      dup (fd), CAPACITY, &err);
  fail_unless (rx2 != NULL, "%s", err ? err->message : "");
  for (guint i = 0; i < 2; i++) {
    ep[i] = epoll_create1 (EPOLL_CLOEXEC);
    fail_unless (epoll_ctl (ep[i], EPOLL_CTL_ADD, i ? cudaipc_channel_get_wake_fd
            (rx2) : cudaipc_conn_get_wait_fd (cons), &ev) == 0);
  }

  fail_if (cudaipc_conn_begin_wait (cons, FALSE));
  fail_if (cudaipc_channel_begin_wait (rx2, 0));
  cudaipc_wake_hold (wake);
  send_event (prod, "one");
  fail_unless_equals_int (cudaipc_channel_write (tx2, (const guint8 *) "x",
          1), 0);
  fail_unless_equals_int (take_wakes (fd), 0);
  fail_unless_equals_int (cudaipc_wake_flush (wake), 0);
  fail_unless_equals_uint64 (cudaipc_wake_get_sent (wake), 1);
  for (guint i = 0; i < 2; i++)
    fail_unless_equals_int (epoll_wait (ep[i], &ev, 1, 1000), 1);
  fail_unless_equals_int (take_wakes (fd), 1);
  cudaipc_conn_end_wait (cons);
  cudaipc_channel_end_wait (rx2);
  expect_event ("one");
  fail_unless_equals_int (cudaipc_channel_read (rx2, rec, sizeof (rec),
          &len), CUDAIPC_CHANNEL_MESSAGE);

  /* a flush with nothing asked sends nothing */
  cudaipc_wake_hold (wake);
  fail_unless_equals_int (cudaipc_wake_flush (wake), 0);
  fail_unless_equals_uint64 (cudaipc_wake_get_sent (wake), 1);

  /* not held: a datagram a sleeper */
  fail_if (cudaipc_conn_begin_wait (cons, FALSE));
  fail_if (cudaipc_channel_begin_wait (rx2, 0));
  send_event (prod, "two");
  fail_unless_equals_int (cudaipc_channel_write (tx2, (const guint8 *) "y",
          1), 0);
  fail_unless_equals_uint64 (cudaipc_wake_get_sent (wake), 3);
  fail_unless_equals_int (take_wakes (fd), 2);
  cudaipc_conn_end_wait (cons);
  cudaipc_channel_end_wait (rx2);
  expect_event ("two");

  close (ep[0]);
  close (ep[1]);
  cudaipc_channel_free (rx2);
  cudaipc_channel_free (tx2);
}

GST_END_TEST;

GST_START_TEST (test_peer_end_after_records)
{
  CudaIpcMsg msg;

  send_event (prod, "one");
  send_event (prod, "two");
  cudaipc_conn_free (prod);
  prod = NULL;
  /* what it sent first, then its end */
  expect_event ("one");
  expect_event ("two");
  fail_unless_equals_int (cudaipc_conn_try_recv (cons, &msg), -EPIPE);
}

GST_END_TEST;

static void
poke64 (gsize offset, guint64 value)
{
  __atomic_store_n ((guint64 *) (page + offset), value, __ATOMIC_SEQ_CST);
}

GST_START_TEST (test_consumer_lies_about_tail)
{
  CudaIpcMsg msg;

  send_event (prod, "one");
  /* a tail past what was written */
  poke64 (PAGE_TAIL, 1 << 20);
  cudaipc_msg_init (&msg, CUDAIPC_MSG_EVENT);
  msg.u.event.structure = "two";
  fail_unless_equals_int (cudaipc_conn_send (prod, &msg), -EPROTO);
  /* a tail that goes back */
  poke64 (PAGE_TAIL, 0);
  expect_event ("one");
  send_event (prod, "two");
  poke64 (PAGE_TAIL, 0);
  fail_unless_equals_int (cudaipc_conn_send (prod, &msg), -EPROTO);
}

GST_END_TEST;

GST_START_TEST (test_producer_lies_about_head)
{
  CudaIpcMsg msg;

  /* a head more than the capacity ahead */
  poke64 (PAGE_HEAD, CAPACITY * 2);
  fail_unless_equals_int (cudaipc_conn_try_recv (cons, &msg), -EPROTO);
  /* a head short of a record's header */
  poke64 (PAGE_HEAD, 4);
  fail_unless_equals_int (cudaipc_conn_try_recv (cons, &msg), -EPROTO);
}

GST_END_TEST;

GST_START_TEST (test_producer_bad_records)
{
  CudaIpcMsg msg;
  guint8 *data = page + 4096;

  /* a record of an unknown kind */
  send_event (prod, "one");
  GST_WRITE_UINT32_LE (data + 4, 9);
  fail_unless_equals_int (cudaipc_conn_try_recv (cons, &msg), -EPROTO);
}

GST_END_TEST;

GST_START_TEST (test_producer_record_too_long)
{
  CudaIpcMsg msg;
  guint8 *data = page + 4096;

  /* a length beyond the bytes written */
  send_event (prod, "one");
  GST_WRITE_UINT32_LE (data, 2000);
  fail_unless_equals_int (cudaipc_conn_try_recv (cons, &msg), -EPROTO);
}

GST_END_TEST;

GST_START_TEST (test_producer_record_garbled)
{
  CudaIpcMsg msg;
  guint8 *data = page + 4096;

  /* a record whose message is not one: refused as on the socket */
  send_event (prod, "one");
  memset (data + 8, 0xff, 16);
  fail_unless (cudaipc_msg_error_is_peers (cudaipc_conn_try_recv (cons,
              &msg)));
}

GST_END_TEST;

GST_START_TEST (test_message_without_mark)
{
  CudaIpcMsg msg;
  guint8 built[256];
  gssize len;
  int raw = cudaipc_conn_get_fd (prod);

  /* on the socket, behind no mark: out of order */
  cudaipc_msg_init (&msg, CUDAIPC_MSG_RELEASE);
  len = cudaipc_msg_build (&msg, 1, built, sizeof (built));
  fail_unless_equals_int (send (raw, built, len, 0), len);
  fail_unless_equals_int (cudaipc_conn_try_recv (cons, &msg), -EPROTO);
}

GST_END_TEST;

GST_START_TEST (test_mark_without_message)
{
  CudaIpcMsg msg;
  gint64 start;

  /* a mark, and nothing on the socket: refused after a bounded wait */
  fail_unless_equals_int (cudaipc_channel_write (tx, NULL, 0), 0);
  start = g_get_monotonic_time ();
  fail_unless_equals_int (cudaipc_conn_try_recv (cons, &msg), -EPROTO);
  fail_unless (g_get_monotonic_time () - start < 5 * G_USEC_PER_SEC);
}

GST_END_TEST;

GST_START_TEST (test_open_checks)
{
  GError *err = NULL;
  CudaIpcChannel *ch;
  int fds[2], memfd;

  /* a capacity not a power of two */
  ch = cudaipc_channel_open (dup (cudaipc_channel_get_memfd (tx)),
      dup (cudaipc_channel_get_wake_fd (tx)), CAPACITY + 8, &err);
  fail_unless (ch == NULL);
  fail_unless (g_error_matches (err, CUDAIPC_ERROR, CUDAIPC_ERROR_INVALID));
  g_clear_error (&err);
  /* larger than the page */
  ch = cudaipc_channel_open (dup (cudaipc_channel_get_memfd (tx)),
      dup (cudaipc_channel_get_wake_fd (tx)), CAPACITY * 2, &err);
  fail_unless (ch == NULL);
  g_clear_error (&err);
  /* a memfd without seals */
  memfd = memfd_create ("unsealed", MFD_CLOEXEC);
  fail_unless (memfd >= 0 && ftruncate (memfd, 4096 + CAPACITY) == 0);
  ch = cudaipc_channel_open (memfd, dup (cudaipc_channel_get_wake_fd (tx)),
      CAPACITY, &err);
  fail_unless (ch == NULL);
  fail_unless (strstr (err->message, "shrinking") != NULL, "%s",
      err->message);
  g_clear_error (&err);
  /* a pipe for the wake */
  fail_unless_equals_int (pipe2 (fds, O_CLOEXEC), 0);
  ch = cudaipc_channel_open (dup (cudaipc_channel_get_memfd (tx)), fds[0],
      CAPACITY, &err);
  fail_unless (ch == NULL);
  fail_unless (strstr (err->message, "datagram socket") != NULL, "%s",
      err->message);
  g_clear_error (&err);
  close (fds[1]);
  /* an eventfd, which a consumer would have to read (and a producer
   * could make that read block) */
  ch = cudaipc_channel_open (dup (cudaipc_channel_get_memfd (tx)),
      eventfd (0, EFD_CLOEXEC), CAPACITY, &err);
  fail_unless (ch == NULL);
  fail_unless (strstr (err->message, "datagram socket") != NULL, "%s",
      err->message);
  g_clear_error (&err);
  /* a stream socket */
  fail_unless_equals_int (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC,
          0, fds), 0);
  ch = cudaipc_channel_open (dup (cudaipc_channel_get_memfd (tx)), fds[0],
      CAPACITY, &err);
  fail_unless (ch == NULL);
  g_clear_error (&err);
  close (fds[1]);
}

GST_END_TEST;

static Suite *
channel_suite (void)
{
  Suite *s = suite_create ("channel");
  TCase *tc = cudaipc_test_case (s, "general", 30);

  tcase_add_checked_fixture (tc, setup, teardown);
  tcase_add_test (tc, test_in_order_with_marked);
  tcase_add_test (tc, test_wraps_and_fills);
  tcase_add_test (tc, test_wakes_a_sleeper);
  tcase_add_test (tc, test_wake_cannot_block_producer);
  tcase_add_test (tc, test_one_wake_for_two);
  tcase_add_test (tc, test_peer_end_after_records);
  tcase_add_test (tc, test_consumer_lies_about_tail);
  tcase_add_test (tc, test_producer_lies_about_head);
  tcase_add_test (tc, test_producer_bad_records);
  tcase_add_test (tc, test_producer_record_too_long);
  tcase_add_test (tc, test_producer_record_garbled);
  tcase_add_test (tc, test_message_without_mark);
  tcase_add_test (tc, test_mark_without_message);
  tcase_add_test (tc, test_open_checks);
  return s;
}

const CudaIpcTestMain cudaipc_test_main = {
  .name = "channel",
  .suite = channel_suite,
};
