/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The fence page on the host backend (the producer stores the words on the
 * CPU): signal and wait across two mappings of one memfd, the bounded
 * wait, a word past the frame's number or going back, the checks a
 * consumer makes on the fd a producer sends before it maps anything, and
 * a page that no consumer can write.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE             /* memfd_create, F_ADD_SEALS */
#endif

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gst/check/gstcheck.h>

#include "common/error.h"
#include "ring/fence-page.h"
#include "wire/protocol.h"
#include "test-main.h"
#include "test-util.h"
#include "test-writes.h"

static CudaIpcDevice *dev;

static void
setup (void)
{
  GError *err = NULL;

  dev = cudaipc_device_new (CUDAIPC_BACKEND_HOST, 0, &err);
  fail_unless (dev != NULL, "host device: %s", err ? err->message : "?");
}

static void
teardown (void)
{
  g_clear_pointer (&dev, cudaipc_device_unref);
}

static CudaIpcFencePage *
new_page (void)
{
  GError *err = NULL;
  CudaIpcFencePage *page = cudaipc_fence_page_new (dev, &err);

  fail_unless (page != NULL, "%s", err ? err->message : "?");
  return page;
}

/* The consumer's side of @page, from a duplicate of its fd (as the kernel
 * gives one with RING). */
static CudaIpcFencePage *
open_copy (CudaIpcFencePage * page)
{
  GError *err = NULL;
  CudaIpcFencePage *peer =
      cudaipc_fence_page_open (dup (cudaipc_fence_page_get_fd (page)), &err);

  fail_unless (peer != NULL, "%s", err ? err->message : "?");
  return peer;
}

static void
signal_ok (CudaIpcFencePage * page, guint slot, guint64 value)
{
  GError *err = NULL;
  guint calls = 0;

  fail_unless (cudaipc_fence_page_signal (page, slot, value, NULL, &calls,
          &err), "%s", err ? err->message : "?");
  /* no driver call on the host backend */
  fail_unless_equals_int (calls, 0);
}

static void
expect_wait_error (CudaIpcFencePage * peer, guint slot, guint64 value,
    gint64 timeout_us, gint code, const gchar * needle)
{
  GError *err = NULL;

  fail_if (cudaipc_fence_page_wait (peer, slot, value, timeout_us, &err));
  fail_unless (g_error_matches (err, CUDAIPC_ERROR, code), "%s", err->message);
  fail_unless (strstr (err->message, needle) != NULL, "%s", err->message);
  g_error_free (err);
}

GST_START_TEST (test_signal_and_wait)
{
  CudaIpcFencePage *page = new_page (), *peer = open_copy (page);
  GError *err = NULL;

  /* a new page is all zero, and every slot index has its own word */
  for (guint i = 0; i < CUDAIPC_MAX_SLOTS; i++)
    fail_unless_equals_uint64 (cudaipc_fence_page_peek (peer, i), 0);
  signal_ok (page, 3, 7);
  signal_ok (page, CUDAIPC_MAX_SLOTS - 1, G_MAXUINT64 - 1);
  fail_unless_equals_uint64 (cudaipc_fence_page_peek (peer, 3), 7);
  fail_unless_equals_uint64 (cudaipc_fence_page_peek (peer, 2), 0);
  fail_unless_equals_uint64 (cudaipc_fence_page_peek (peer, 4), 0);
  fail_unless_equals_uint64 (cudaipc_fence_page_peek (peer,
          CUDAIPC_MAX_SLOTS - 1), G_MAXUINT64 - 1);
  fail_unless (cudaipc_fence_page_wait (peer, 3, 7, 0, &err), "%s",
      err ? err->message : "?");

  cudaipc_fence_page_free (peer);
  cudaipc_fence_page_free (page);
}

GST_END_TEST;

typedef struct
{
  CudaIpcFencePage *page;
  guint slot;
  guint64 value;
  gint delay_ms;
} Later;

static gpointer
signal_later (gpointer data)
{
  Later *l = data;

  g_usleep (l->delay_ms * 1000);
  signal_ok (l->page, l->slot, l->value);
  return NULL;
}

/* The wait ends when the word comes, and not before. */
GST_START_TEST (test_wait_until_signalled)
{
  CudaIpcFencePage *page = new_page (), *peer = open_copy (page);
  Later later = { page, 5, 42, 100 };
  GError *err = NULL;
  GThread *t;
  gint64 t0, took;

  signal_ok (page, 5, 41);
  t0 = g_get_monotonic_time ();
  t = g_thread_new ("later", signal_later, &later);
  fail_unless (cudaipc_fence_page_wait (peer, 5, 42, 10 * G_USEC_PER_SEC,
          &err), "%s", err ? err->message : "?");
  took = g_get_monotonic_time () - t0;
  g_thread_join (t);
  g_print ("fence-page: waited %" G_GINT64_FORMAT " us for a word signalled "
      "after 100 ms\n", took);
  fail_unless (took >= 90 * 1000, "returned after %" G_GINT64_FORMAT " us",
      took);
  fail_unless_equals_uint64 (cudaipc_fence_page_peek (peer, 5), 42);

  cudaipc_fence_page_free (peer);
  cudaipc_fence_page_free (page);
}

GST_END_TEST;

/* A word that never comes ends the wait after the timeout; one past the
 * frame's number, or lower than one already read, is a protocol error. */
GST_START_TEST (test_untrusted_words)
{
  CudaIpcFencePage *page = new_page (), *peer = open_copy (page);
  gint64 t0 = g_get_monotonic_time (), took;

  signal_ok (page, 1, 10);
  expect_wait_error (peer, 1, 11, 50 * 1000, CUDAIPC_ERROR_TIMEOUT,
      "did not complete within 50 ms");
  took = g_get_monotonic_time () - t0;
  fail_unless (took >= 50 * 1000 && took < 5 * G_USEC_PER_SEC,
      "gave up after %" G_GINT64_FORMAT " us", took);

  /* past: the slot was rewritten while this frame was in it */
  signal_ok (page, 1, 12);
  expect_wait_error (peer, 1, 11, G_USEC_PER_SEC, CUDAIPC_ERROR_PROTOCOL,
      "past frame 11");
  /* back: below 12, already read */
  signal_ok (page, 1, 3);
  expect_wait_error (peer, 1, 13, G_USEC_PER_SEC, CUDAIPC_ERROR_PROTOCOL,
      "went back from 12 to 3");
  /* another slot is not affected */
  signal_ok (page, 2, 1);
  fail_unless (cudaipc_fence_page_wait (peer, 2, 1, 0, NULL));

  cudaipc_fence_page_free (peer);
  cudaipc_fence_page_free (page);
}

GST_END_TEST;

static void
expect_open_refused (int fd, const gchar * needle)
{
  GError *err = NULL;
  CudaIpcFencePage *peer = cudaipc_fence_page_open (fd, &err);

  fail_unless (peer == NULL);
  fail_unless (g_error_matches (err, CUDAIPC_ERROR, CUDAIPC_ERROR_INVALID),
      "%s", err->message);
  fail_unless (strstr (err->message, needle) != NULL, "%s", err->message);
  g_error_free (err);
  /* taken and closed */
  errno = 0;
  fail_unless (fcntl (fd, F_GETFD) < 0 && errno == EBADF,
      "fd %d is still open", fd);
}

static int
memfd_of (gsize size, guint seals)
{
  int fd = memfd_create ("not-a-fence", MFD_CLOEXEC | MFD_ALLOW_SEALING);

  fail_unless (fd >= 0);
  fail_unless (ftruncate (fd, size) == 0);
  if (seals)
    fail_unless (fcntl (fd, F_ADD_SEALS, seals) == 0);
  return fd;
}

/* Whatever a producer sends as its fence page is checked before it is
 * mapped: only a memory file sealed against shrinking and against writes
 * by anyone but its producer, of a page or more. */
GST_START_TEST (test_open_checks)
{
  int pipefd[2], sv[2];
  CudaIpcFencePage *peer;
  GError *err = NULL;

  fail_unless (pipe2 (pipefd, O_CLOEXEC) == 0);
  close (pipefd[1]);
  expect_open_refused (pipefd[0], "not a memory file");
  fail_unless (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0);
  close (sv[1]);
  expect_open_refused (sv[0], "not a memory file");
  expect_open_refused (open ("/dev/null", O_RDONLY | O_CLOEXEC),
      "not a memory file");
  expect_open_refused (open ("/", O_RDONLY | O_CLOEXEC), "not a memory file");

  /* unsealed: the producer could cut it under the mapping (SIGBUS) */
  expect_open_refused (memfd_of (CUDAIPC_FENCE_PAGE_SIZE, 0),
      "no F_SEAL_SHRINK");
  expect_open_refused (memfd_of (CUDAIPC_FENCE_PAGE_SIZE, F_SEAL_GROW),
      "no F_SEAL_SHRINK");
  /* writable by every consumer it was sent to: any of them could set the
   * words of all the others */
  expect_open_refused (memfd_of (CUDAIPC_FENCE_PAGE_SIZE, F_SEAL_SHRINK),
      "no F_SEAL_FUTURE_WRITE");
  expect_open_refused (memfd_of (CUDAIPC_FENCE_PAGE_SIZE, F_SEAL_SHRINK |
          F_SEAL_GROW | F_SEAL_SEAL), "no F_SEAL_FUTURE_WRITE");
  /* too short */
  expect_open_refused (memfd_of (CUDAIPC_FENCE_PAGE_SIZE - 8, F_SEAL_SHRINK |
          F_SEAL_FUTURE_WRITE), "fewer than 4096");
  expect_open_refused (memfd_of (0, F_SEAL_SHRINK | F_SEAL_FUTURE_WRITE),
      "fewer than 4096");

  /* a sealed memfd of the size, or larger, is fine */
  peer = cudaipc_fence_page_open (memfd_of (CUDAIPC_FENCE_PAGE_SIZE,
          F_SEAL_SHRINK | F_SEAL_FUTURE_WRITE), &err);
  fail_unless (peer != NULL, "%s", err ? err->message : "?");
  cudaipc_fence_page_free (peer);
  peer = cudaipc_fence_page_open (memfd_of (4 * CUDAIPC_FENCE_PAGE_SIZE,
          F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_FUTURE_WRITE | F_SEAL_SEAL),
      &err);
  fail_unless (peer != NULL, "%s", err ? err->message : "?");
  cudaipc_fence_page_free (peer);
}

GST_END_TEST;

/* The producer's own page cannot be cut or grown either, nor written
 * through its fd. */
GST_START_TEST (test_producer_page_sealed)
{
  const int want = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_FUTURE_WRITE |
      F_SEAL_SEAL;
  CudaIpcFencePage *page = new_page ();
  int fd = cudaipc_fence_page_get_fd (page);
  int seals = fcntl (fd, F_GET_SEALS);

  fail_unless (seals >= 0);
  fail_unless ((seals & want) == want, "seals 0x%x", seals);
  fail_unless (ftruncate (fd, 0) < 0 && errno == EPERM);
  fail_unless (fcntl (fd, F_GETFD) & FD_CLOEXEC);
  cudaipc_fence_page_free (page);
}

GST_END_TEST;

/* What a consumer gets is the page's fd: every way it could write
 * through it is refused, so that no consumer sets the words every other
 * consumer orders its frames by, while the producer's own mapping, made
 * before the seal, still writes them. */
GST_START_TEST (test_consumers_cannot_write)
{
  CudaIpcFencePage *page = new_page (), *peer = open_copy (page);
  int fd = dup (cudaipc_fence_page_get_fd (page));
  GError *err = NULL;

  signal_ok (page, 1, 5);
  cudaipc_test_assert_unwritable (fd, CUDAIPC_FENCE_PAGE_SIZE,
      "a consumer's writes to the fence page");
  for (guint i = 0; i < CUDAIPC_MAX_SLOTS; i++)
    fail_unless_equals_uint64 (cudaipc_fence_page_peek (peer, i),
        i == 1 ? 5 : 0);
  /* the producer goes on */
  signal_ok (page, 1, 6);
  cudaipc_fence_page_store (page, 2, 7);
  fail_unless (cudaipc_fence_page_wait (peer, 1, 6, 0, &err), "%s",
      err ? err->message : "?");
  fail_unless (cudaipc_fence_page_wait (peer, 2, 7, 0, &err), "%s",
      err ? err->message : "?");

  close (fd);
  cudaipc_fence_page_free (peer);
  cudaipc_fence_page_free (page);
}

GST_END_TEST;

/* A kernel without F_SEAL_FUTURE_WRITE (before Linux 5.1) gets no fence
 * page, and the error says why: a page its consumers could write is one
 * they would refuse. The producer then synchronises its copies on the
 * host (ordering=auto, with a warning) or fails at start
 * (ordering=fence). */
GST_START_TEST (test_kernel_without_the_seal)
{
  GError *err = NULL;
  int fd;

  if (g_strcmp0 (g_getenv ("CK_FORK"), "no") == 0 ||
      !cudaipc_test_without_future_write_seal ()) {
    g_print ("SKIP: no seccomp filter in a process of this test's own\n");
    return;
  }
  fd = memfd_create ("probe", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  fail_unless (fcntl (fd, F_ADD_SEALS, F_SEAL_FUTURE_WRITE) < 0 &&
      errno == EINVAL);
  close (fd);

  fail_unless (cudaipc_fence_page_new (dev, &err) == NULL);
  fail_unless (g_error_matches (err, CUDAIPC_ERROR,
          CUDAIPC_ERROR_NOT_SUPPORTED), "%s", err->message);
  fail_unless (strstr (err->message, "F_SEAL_FUTURE_WRITE, Linux 5.1 or "
          "newer") != NULL, "%s", err->message);
  g_print ("fence-page: %s\n", err->message);
  g_error_free (err);
}

GST_END_TEST;

static Suite *
fence_page_suite (void)
{
  Suite *s = suite_create ("fence-page");
  TCase *tc = cudaipc_test_case (s, "general", 60);

  tcase_add_checked_fixture (tc, setup, teardown);
  tcase_add_test (tc, test_signal_and_wait);
  tcase_add_test (tc, test_wait_until_signalled);
  tcase_add_test (tc, test_untrusted_words);
  tcase_add_test (tc, test_open_checks);
  tcase_add_test (tc, test_producer_page_sealed);
  tcase_add_test (tc, test_consumers_cannot_write);
  tcase_add_test (tc, test_kernel_without_the_seal);
  return s;
}

const CudaIpcTestMain cudaipc_test_main = {
  .name = "fence_page",
  .suite = fence_page_suite,
};
