/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Descriptor validation: one case per documented check, on the host
 * backend. Every rejected descriptor must have closed every fd it was
 * given, whichever check refused it.
 */
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

#include "ring/descriptor.h"
#include "common/error.h"
#include "common/fdutil.h"
#include "test-main.h"
#include "test-util.h"

static gboolean
fd_is_closed (int fd)
{
  errno = 0;
  return fcntl (fd, F_GETFD) == -1 && errno == EBADF;
}

/* Expects new_from_fds() to refuse with @code, saying @needle where it is
 * not NULL, and to close every fd. */
static void
expect_reject_saying (CudaIpcDevice * dev, int *fds, const guint64 * sizes,
    guint n, guint64 size, gint code, const gchar * needle)
{
  GError *err = NULL;
  int *copy = g_memdup2 (fds, n * sizeof (int));
  CudaIpcDescriptor *desc;

  desc = cudaipc_descriptor_new_from_fds (dev, fds, sizes, n, size, &err);
  fail_unless (desc == NULL);
  fail_unless (err != NULL);
  GST_INFO ("refused as expected: %s", err->message);
  fail_unless (g_error_matches (err, CUDAIPC_ERROR, code),
      "expected code %d, got %s %d: %s", code,
      g_quark_to_string (err->domain), err->code, err->message);
  fail_unless (err->message != NULL && err->message[0] != '\0');
  fail_unless (needle == NULL || strstr (err->message, needle) != NULL,
      "no \"%s\" in \"%s\"", needle, err->message);
  for (guint i = 0; i < n; i++) {
    if (copy[i] >= 0)
      fail_unless (fd_is_closed (copy[i]), "fd %d (allocation %u) left open",
          copy[i], i);
    fail_unless_equals_int (fds[i], -1);
  }
  g_error_free (err);
  g_free (copy);
}

#define expect_reject(dev, fds, sizes, n, size, code) \
  expect_reject_saying ((dev), (fds), (sizes), (n), (size), (code), NULL)

GST_START_TEST (test_count_zero)
{
  const guint64 page = cudaipc_test_page ();
  CudaIpcDevice *dev = cudaipc_test_host_device ();
  int fds[1] = { -1 };
  guint64 sizes[1] = { page };

  expect_reject (dev, fds, sizes, 0, page, CUDAIPC_ERROR_INVALID);

  cudaipc_device_unref (dev);
}

GST_END_TEST;

GST_START_TEST (test_count_over_limit)
{
  const guint64 page = cudaipc_test_page ();
  CudaIpcDevice *dev = cudaipc_test_host_device ();
  const guint n = CUDAIPC_MAX_ALLOCS + 1;
  int fds[CUDAIPC_MAX_ALLOCS + 1];
  guint64 sizes[CUDAIPC_MAX_ALLOCS + 1];

  for (guint i = 0; i < n; i++) {
    fds[i] = cudaipc_test_memfd (page, TRUE);
    sizes[i] = page;
  }
  expect_reject (dev, fds, sizes, n, page, CUDAIPC_ERROR_LIMIT);

  cudaipc_device_unref (dev);
}

GST_END_TEST;

GST_START_TEST (test_alloc_size_zero)
{
  const guint64 page = cudaipc_test_page ();
  CudaIpcDevice *dev = cudaipc_test_host_device ();
  int fds[2];
  guint64 sizes[2] = { page, 0 };

  fds[0] = cudaipc_test_memfd (page, TRUE);
  fds[1] = cudaipc_test_memfd (page, TRUE);
  expect_reject (dev, fds, sizes, 2, page, CUDAIPC_ERROR_INVALID);

  cudaipc_device_unref (dev);
}

GST_END_TEST;

GST_START_TEST (test_alloc_not_granular)
{
  const guint64 page = cudaipc_test_page ();
  CudaIpcDevice *dev = cudaipc_test_host_device ();
  GError *err = NULL;
  int fds[3];
  guint64 sizes[3] = { page, page, page + 1 };

  fail_unless_equals_uint64 (cudaipc_device_get_granularity (dev), page);
  for (guint i = 0; i < 3; i++)
    fds[i] = cudaipc_test_memfd (2 * page, TRUE);
  expect_reject (dev, fds, sizes, 3, page, CUDAIPC_ERROR_INVALID);

  /* The message names the allocation, its size and the granularity. */
  fds[0] = cudaipc_test_memfd (2 * page, TRUE);
  sizes[0] = page + 1;
  fail_if (cudaipc_descriptor_new_from_fds (dev, fds, sizes, 1, 1, &err));
  fail_unless (g_error_matches (err, CUDAIPC_ERROR, CUDAIPC_ERROR_INVALID));
  {
    gchar *want = g_strdup_printf ("allocation 0 size %" G_GUINT64_FORMAT
        " is not a multiple of the granularity %" G_GUINT64_FORMAT,
        page + 1, page);
    fail_unless (strstr (err->message, want) != NULL, "message: %s",
        err->message);
    g_free (want);
  }
  g_clear_error (&err);

  cudaipc_device_unref (dev);
}

GST_END_TEST;

GST_START_TEST (test_total_over_limit)
{
  const guint64 page = cudaipc_test_page ();
  CudaIpcDevice *dev = cudaipc_test_host_device ();
  const guint64 half = CUDAIPC_MAX_SLOT_SIZE / 2;
  const guint64 top = G_MAXUINT64 - (page - 1); /* page multiple */
  int fds[2];
  guint64 sizes[2];

  /* Just over the limit. */
  fds[0] = cudaipc_test_memfd (page, TRUE);
  fds[1] = cudaipc_test_memfd (page, TRUE);
  sizes[0] = half;
  sizes[1] = half + page;
  expect_reject (dev, fds, sizes, 2, page, CUDAIPC_ERROR_LIMIT);

  /* Exactly at the limit the total is fine; the (small) fds then fail. */
  fds[0] = cudaipc_test_memfd (page, TRUE);
  fds[1] = cudaipc_test_memfd (page, TRUE);
  sizes[0] = half;
  sizes[1] = half;
  expect_reject (dev, fds, sizes, 2, page, CUDAIPC_ERROR_INVALID);

  /* Sizes whose u64 sum wraps around to 0 and to one page. */
  fds[0] = cudaipc_test_memfd (page, TRUE);
  fds[1] = cudaipc_test_memfd (page, TRUE);
  sizes[0] = G_GUINT64_CONSTANT (1) << 63;
  sizes[1] = G_GUINT64_CONSTANT (1) << 63;
  expect_reject (dev, fds, sizes, 2, page, CUDAIPC_ERROR_LIMIT);

  fds[0] = cudaipc_test_memfd (page, TRUE);
  fds[1] = cudaipc_test_memfd (page, TRUE);
  sizes[0] = top;
  sizes[1] = 2 * page;
  fail_unless_equals_uint64 (sizes[0] + sizes[1], page);
  expect_reject (dev, fds, sizes, 2, page, CUDAIPC_ERROR_LIMIT);

  cudaipc_device_unref (dev);
}

GST_END_TEST;

GST_START_TEST (test_size_zero)
{
  const guint64 page = cudaipc_test_page ();
  CudaIpcDevice *dev = cudaipc_test_host_device ();
  int fds[1];
  guint64 sizes[1] = { page };

  fds[0] = cudaipc_test_memfd (page, TRUE);
  expect_reject (dev, fds, sizes, 1, 0, CUDAIPC_ERROR_INVALID);

  cudaipc_device_unref (dev);
}

GST_END_TEST;

GST_START_TEST (test_size_over_sum)
{
  const guint64 page = cudaipc_test_page ();
  CudaIpcDevice *dev = cudaipc_test_host_device ();
  int fds[2];
  guint64 sizes[2] = { page, page };

  fds[0] = cudaipc_test_memfd (page, TRUE);
  fds[1] = cudaipc_test_memfd (page, TRUE);
  expect_reject (dev, fds, sizes, 2, 2 * page + 1, CUDAIPC_ERROR_INVALID);

  cudaipc_device_unref (dev);
}

GST_END_TEST;

GST_START_TEST (test_fd_closed)
{
  const guint64 page = cudaipc_test_page ();
  CudaIpcDevice *dev = cudaipc_test_host_device ();
  int fds[2];
  guint64 sizes[2] = { page, page };

  fds[0] = cudaipc_test_memfd (page, TRUE);
  fds[1] = cudaipc_test_memfd (page, TRUE);
  close (fds[1]);
  fail_unless (fd_is_closed (fds[1]));
  expect_reject (dev, fds, sizes, 2, page, CUDAIPC_ERROR_INVALID);

  cudaipc_device_unref (dev);
}

GST_END_TEST;

GST_START_TEST (test_fd_minus_one)
{
  const guint64 page = cudaipc_test_page ();
  CudaIpcDevice *dev = cudaipc_test_host_device ();
  GError *err = NULL;
  int fds[2];
  guint64 sizes[2] = { page, page };
  int keep;

  fds[0] = cudaipc_test_memfd (page, TRUE);
  fds[1] = -1;
  keep = fds[0];
  fail_if (cudaipc_descriptor_new_from_fds (dev, fds, sizes, 2, page, &err));
  fail_unless (g_error_matches (err, CUDAIPC_ERROR, CUDAIPC_ERROR_INVALID));
  fail_unless (strstr (err->message, "fd -1 is not open") != NULL,
      "message: %s", err->message);
  fail_unless (fd_is_closed (keep));
  g_clear_error (&err);

  cudaipc_device_unref (dev);
}

GST_END_TEST;

GST_START_TEST (test_fd_pipe)
{
  const guint64 page = cudaipc_test_page ();
  CudaIpcDevice *dev = cudaipc_test_host_device ();
  int p[2];
  int fds[2];
  guint64 sizes[2] = { page, page };

  fail_unless (pipe2 (p, O_CLOEXEC) == 0);
  fds[0] = cudaipc_test_memfd (page, TRUE);
  fds[1] = p[0];
  expect_reject (dev, fds, sizes, 2, page, CUDAIPC_ERROR_INVALID);
  close (p[1]);

  cudaipc_device_unref (dev);
}

GST_END_TEST;

GST_START_TEST (test_fd_socket)
{
  const guint64 page = cudaipc_test_page ();
  CudaIpcDevice *dev = cudaipc_test_host_device ();
  int sv[2];
  int fds[1];
  guint64 sizes[1] = { page };

  fail_unless (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0);
  fds[0] = sv[0];
  expect_reject (dev, fds, sizes, 1, page, CUDAIPC_ERROR_INVALID);
  close (sv[1]);

  cudaipc_device_unref (dev);
}

GST_END_TEST;

GST_START_TEST (test_fd_directory)
{
  const guint64 page = cudaipc_test_page ();
  CudaIpcDevice *dev = cudaipc_test_host_device ();
  int fds[1];
  guint64 sizes[1] = { page };

  fds[0] = open ("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  fail_unless (fds[0] >= 0);
  expect_reject (dev, fds, sizes, 1, page, CUDAIPC_ERROR_INVALID);

  cudaipc_device_unref (dev);
}

GST_END_TEST;

GST_START_TEST (test_fd_unsealed)
{
  const guint64 page = cudaipc_test_page ();
  CudaIpcDevice *dev = cudaipc_test_host_device ();
  int fds[1];
  guint64 sizes[1] = { page };

  /* Large enough, but the peer could still shrink it under our mapping. */
  fds[0] = cudaipc_test_memfd (page, FALSE);
  expect_reject (dev, fds, sizes, 1, page, CUDAIPC_ERROR_INVALID);

  /* Sealed against growing only is not enough either. */
  fds[0] = cudaipc_test_memfd (page, FALSE);
  fail_unless (fcntl (fds[0], F_ADD_SEALS, F_SEAL_GROW) == 0);
  expect_reject (dev, fds, sizes, 1, page, CUDAIPC_ERROR_INVALID);

  /* A memfd created without MFD_ALLOW_SEALING cannot be sealed at all. */
  fds[0] = memfd_create ("cudaipc-test", MFD_CLOEXEC);
  fail_unless (fds[0] >= 0);
  fail_unless (ftruncate (fds[0], (off_t) page) == 0);
  expect_reject (dev, fds, sizes, 1, page, CUDAIPC_ERROR_INVALID);

  cudaipc_device_unref (dev);
}

GST_END_TEST;

/* A slot every consumer maps must be one that no consumer can write: the
 * producer seals it with F_SEAL_FUTURE_WRITE once its own mapping is
 * made, and a consumer refuses a slot without the seal rather than
 * trust the others it was sent to. */
GST_START_TEST (test_fd_writable)
{
  const guint64 page = cudaipc_test_page ();
  CudaIpcDevice *dev = cudaipc_test_host_device ();
  int fds[2];
  guint64 sizes[2] = { page, page };

  /* sealed as before the seal against writes existed */
  fds[0] = cudaipc_test_memfd (page, FALSE);
  fail_unless (fcntl (fds[0], F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW |
          F_SEAL_SEAL) == 0);
  expect_reject_saying (dev, fds, sizes, 1, page, CUDAIPC_ERROR_INVALID,
      "not sealed against writes by its consumers");

  /* one good allocation does not make up for another */
  fds[0] = cudaipc_test_memfd (page, TRUE);
  fds[1] = cudaipc_test_memfd (page, FALSE);
  fail_unless (fcntl (fds[1], F_ADD_SEALS, F_SEAL_SHRINK) == 0);
  expect_reject_saying (dev, fds, sizes, 2, 2 * page, CUDAIPC_ERROR_INVALID,
      "allocation 1: fd");

  cudaipc_device_unref (dev);
}

GST_END_TEST;

GST_START_TEST (test_fd_too_small)
{
  const guint64 page = cudaipc_test_page ();
  CudaIpcDevice *dev = cudaipc_test_host_device ();
  int fds[2];
  guint64 sizes[2] = { page, 2 * page };

  fds[0] = cudaipc_test_memfd (page, TRUE);
  fds[1] = cudaipc_test_memfd (page, TRUE);
  expect_reject (dev, fds, sizes, 2, 3 * page, CUDAIPC_ERROR_INVALID);

  cudaipc_device_unref (dev);
}

GST_END_TEST;

GST_START_TEST (test_valid)
{
  const guint64 page = cudaipc_test_page ();
  CudaIpcDevice *dev = cudaipc_test_host_device ();
  GError *err = NULL;
  CudaIpcDescriptor *desc;
  int fds[3];
  int copy[3];
  guint64 sizes[3] = { page, 2 * page, page };
  const guint64 size = 3 * page + 1;

  /* The last file is larger than its allocation, which is fine. */
  for (guint i = 0; i < 3; i++)
    copy[i] = fds[i] = cudaipc_test_memfd (i == 2 ? 2 * page : sizes[i], TRUE);

  desc = cudaipc_descriptor_new_from_fds (dev, fds, sizes, 3, size, &err);
  fail_unless (desc != NULL, "refused: %s", err ? err->message : "?");
  fail_unless (err == NULL);

  /* Ownership moved: the caller's array no longer names the fds. */
  for (guint i = 0; i < 3; i++)
    fail_unless_equals_int (fds[i], -1);
  /* The sizes were copied. */
  sizes[0] = 0;

  fail_unless_equals_int (cudaipc_descriptor_get_n_fds (desc), 3);
  fail_unless_equals_uint64 (cudaipc_descriptor_get_size (desc), size);
  fail_unless_equals_uint64 (cudaipc_descriptor_get_total (desc), 4 * page);
  fail_unless_equals_int (cudaipc_descriptor_get_backend (desc),
      CUDAIPC_BACKEND_HOST);
  for (guint i = 0; i < 3; i++) {
    fail_unless_equals_int (cudaipc_descriptor_get_fds (desc)[i], copy[i]);
    fail_unless (fcntl (copy[i], F_GETFD) != -1);
  }
  fail_unless_equals_uint64 (cudaipc_descriptor_get_sizes (desc)[0], page);
  fail_unless_equals_uint64 (cudaipc_descriptor_get_sizes (desc)[1], 2 * page);
  fail_unless_equals_uint64 (cudaipc_descriptor_get_sizes (desc)[2], page);

  cudaipc_descriptor_free (desc);
  for (guint i = 0; i < 3; i++)
    fail_unless (fd_is_closed (copy[i]));

  /* One allocation whose size equals the buffer's, the smallest case. */
  fds[0] = cudaipc_test_memfd (page, TRUE);
  sizes[0] = page;
  desc = cudaipc_descriptor_new_from_fds (dev, fds, sizes, 1, 1, &err);
  fail_unless (desc != NULL, "refused: %s", err ? err->message : "?");
  cudaipc_descriptor_free (desc);
  cudaipc_descriptor_free (NULL);

  cudaipc_device_unref (dev);
}

GST_END_TEST;

GST_START_TEST (test_max_allocs_accepted)
{
  const guint64 page = cudaipc_test_page ();
  CudaIpcDevice *dev = cudaipc_test_host_device ();
  GError *err = NULL;
  CudaIpcDescriptor *desc;
  int fds[CUDAIPC_MAX_ALLOCS];
  guint64 sizes[CUDAIPC_MAX_ALLOCS];

  for (guint i = 0; i < CUDAIPC_MAX_ALLOCS; i++) {
    fds[i] = cudaipc_test_memfd (page, TRUE);
    sizes[i] = page;
  }
  desc = cudaipc_descriptor_new_from_fds (dev, fds, sizes,
      CUDAIPC_MAX_ALLOCS, CUDAIPC_MAX_ALLOCS * page, &err);
  fail_unless (desc != NULL, "refused: %s", err ? err->message : "?");
  fail_unless_equals_int (cudaipc_descriptor_get_n_fds (desc),
      CUDAIPC_MAX_ALLOCS);
  cudaipc_descriptor_free (desc);

  cudaipc_device_unref (dev);
}

GST_END_TEST;

static Suite *
descriptor_suite (void)
{
  Suite *s = suite_create ("descriptor");
  TCase *tc = cudaipc_test_case (s, "general", 60);

  tcase_add_test (tc, test_count_zero);
  tcase_add_test (tc, test_count_over_limit);
  tcase_add_test (tc, test_alloc_size_zero);
  tcase_add_test (tc, test_alloc_not_granular);
  tcase_add_test (tc, test_total_over_limit);
  tcase_add_test (tc, test_size_zero);
  tcase_add_test (tc, test_size_over_sum);
  tcase_add_test (tc, test_fd_closed);
  tcase_add_test (tc, test_fd_minus_one);
  tcase_add_test (tc, test_fd_pipe);
  tcase_add_test (tc, test_fd_socket);
  tcase_add_test (tc, test_fd_directory);
  tcase_add_test (tc, test_fd_unsealed);
  tcase_add_test (tc, test_fd_writable);
  tcase_add_test (tc, test_fd_too_small);
  tcase_add_test (tc, test_valid);
  tcase_add_test (tc, test_max_allocs_accepted);

  return s;
}

const CudaIpcTestMain cudaipc_test_main = {
  .name = "descriptor",
  .suite = descriptor_suite,
};
