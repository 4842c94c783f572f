/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libs suite: devices and blocks on the host backend, and the cuda
 * backend's device opening: the device where there is one, the CUDA
 * loader's error where no driver is installed, and a device that cannot
 * exist refused on every machine.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <gst/check/gstcheck.h>

#include "ring/block.h"
#include "device/cuda-loader.h"
#include "ring/descriptor.h"
#include "device/device.h"
#include "common/error.h"
#include "test-main.h"
#include "test-util.h"
#include "test-writes.h"

GST_START_TEST (test_backend_names)
{
  CudaIpcBackend b;

  fail_unless_equals_string (cudaipc_backend_name (CUDAIPC_BACKEND_HOST),
      "host");
  fail_unless_equals_string (cudaipc_backend_name (CUDAIPC_BACKEND_CUDA),
      "cuda");
  fail_unless (cudaipc_backend_from_name ("cuda", &b));
  fail_unless_equals_int (b, CUDAIPC_BACKEND_CUDA);
  fail_unless (cudaipc_backend_from_name ("host", &b));
  fail_unless_equals_int (b, CUDAIPC_BACKEND_HOST);
  fail_if (cudaipc_backend_from_name ("gpu", &b));
  fail_if (cudaipc_backend_from_name (NULL, &b));
}

GST_END_TEST;

GST_START_TEST (test_host_device)
{
  CudaIpcDevice *dev = cudaipc_test_host_device ();
  guint8 uuid[CUDAIPC_UUID_LEN], zero[CUDAIPC_UUID_LEN] = { 0 };
  guint64 g = cudaipc_device_get_granularity (dev);
  guint64 free_bytes = 0, total = 0;

  fail_unless_equals_int (cudaipc_device_get_backend (dev),
      CUDAIPC_BACKEND_HOST);
  fail_unless_equals_uint64 (g, (guint64) sysconf (_SC_PAGESIZE));
  cudaipc_device_get_uuid (dev, uuid);
  fail_unless (memcmp (uuid, zero, sizeof (uuid)) == 0);
  {
    guint8 u[CUDAIPC_UUID_LEN];
    gchar text[CUDAIPC_UUID_STRING_LEN];

    for (guint i = 0; i < CUDAIPC_UUID_LEN; i++)
      u[i] = (guint8) (0xa0 + i);
    cudaipc_uuid_format (u, text);
    fail_unless_equals_string (text,
        "GPU-a0a1a2a3-a4a5-a6a7-a8a9-aaabacadaeaf");
  }
  fail_unless (cudaipc_device_get_context (dev) == NULL);
  fail_unless_equals_uint64 (cudaipc_device_round_up (dev, 1), g);
  fail_unless_equals_uint64 (cudaipc_device_round_up (dev, g), g);
  fail_unless_equals_uint64 (cudaipc_device_round_up (dev, g + 1), 2 * g);
  fail_unless_equals_uint64 (cudaipc_device_round_up (dev, 0), 0);
  fail_unless_equals_uint64 (cudaipc_device_round_up (dev, G_MAXUINT64), 0);
  fail_unless (cudaipc_device_mem_info (dev, &free_bytes, &total, NULL));
  fail_unless (total > 0 && free_bytes <= total);
  fail_unless (cudaipc_device_push (dev, NULL));
  cudaipc_device_pop (dev);
  {
    /* no GPU to look for: outputs untouched */
    gint ordinal = 5;
    gboolean can = TRUE;

    fail_if (cudaipc_device_find_peer (dev, uuid, &ordinal, &can));
    fail_unless_equals_int (ordinal, 5);
    fail_unless (can);
  }
  cudaipc_device_unref (dev);
}

GST_END_TEST;

/* Runs its checks on every machine: device 0 of the cuda backend opens
 * where there is a driver and a GPU, and says clearly why not elsewhere;
 * an ordinal that cannot exist is refused on any machine, driver or not. */
GST_START_TEST (test_cuda_device_or_clear_error)
{
  GError *err = NULL;
  CudaIpcDevice *dev;
  gboolean opened = FALSE;

  /* On a machine with a driver and a GPU the device opens; everywhere else
   * the failure is a clear error, never a crash. */
  dev = cudaipc_device_new (CUDAIPC_BACKEND_CUDA, 0, &err);
  if (dev) {
    guint64 g = cudaipc_device_get_granularity (dev);

    opened = TRUE;
    fail_unless (err == NULL);
    fail_unless_equals_int (cudaipc_device_get_backend (dev),
        CUDAIPC_BACKEND_CUDA);
    fail_unless (g > 0 && (g & (g - 1)) == 0, "granularity %"
        G_GUINT64_FORMAT, g);
    fail_unless (cudaipc_device_get_context (dev) != NULL);
    cudaipc_device_unref (dev);
  } else {
    fail_unless (err != NULL);
    fail_unless (err->domain == CUDAIPC_ERROR);
    fail_unless (err->code == CUDAIPC_ERROR_NO_DRIVER ||
        err->code == CUDAIPC_ERROR_NO_DEVICE ||
        err->code == CUDAIPC_ERROR_NOT_SUPPORTED, "code %d", err->code);
    if (err->code == CUDAIPC_ERROR_NO_DRIVER) {
      fail_unless (strstr (err->message, "libcuda.so.1") ||
          strstr (err->message, "cuInit"), "unclear: %s", err->message);
      /* the loader answers the same, again, from its cache */
      g_clear_error (&err);
      fail_if (cudaipc_cuda_load (&err));
      fail_unless (g_error_matches (err, CUDAIPC_ERROR,
              CUDAIPC_ERROR_NO_DRIVER));
    }
    g_clear_error (&err);
  }

  /* an ordinal no machine has: refused on every machine, driver or not;
   * where the driver loaded, the error says how many devices there are */
  dev = cudaipc_device_new (CUDAIPC_BACKEND_CUDA, 4096, &err);
  fail_unless (dev == NULL);
  fail_unless (g_error_matches (err, CUDAIPC_ERROR, CUDAIPC_ERROR_NO_DRIVER)
      || g_error_matches (err, CUDAIPC_ERROR, CUDAIPC_ERROR_NO_DEVICE));
  GST_INFO ("device 4096: %s", err->message);
  if (opened || err->code == CUDAIPC_ERROR_NO_DEVICE) {
    fail_unless (g_error_matches (err, CUDAIPC_ERROR,
            CUDAIPC_ERROR_NO_DEVICE), "%s", err->message);
    fail_unless (strstr (err->message, "no CUDA device 4096: this process "
            "sees ") != NULL, "unclear: %s", err->message);
  } else {
    fail_unless (strstr (err->message, "libcuda.so.1") ||
        strstr (err->message, "cuInit"), "unclear: %s", err->message);
  }
  g_clear_error (&err);
}

GST_END_TEST;

GST_START_TEST (test_block_split_and_import)
{
  CudaIpcDevice *dev = cudaipc_test_host_device ();
  guint64 g = cudaipc_device_get_granularity (dev);
  const CudaIpcDescriptor *own;
  CudaIpcDescriptor *desc;
  CudaIpcBlock *block, *imported;
  GError *err = NULL;
  int fds[CUDAIPC_MAX_ALLOCS];
  guint8 *pattern;
  guint64 size = 5 * g - 100;
  guint n;

  /* 5 pages in allocations of at most 2: 2 + 2 + 1 */
  block = cudaipc_block_new (dev, size, 2 * g, &err);
  fail_unless (block != NULL, "%s", err ? err->message : "");
  own = cudaipc_block_get_descriptor (block);
  n = cudaipc_descriptor_get_n_fds (own);
  fail_unless_equals_int (n, 3);
  fail_unless_equals_uint64 (cudaipc_descriptor_get_sizes (own)[0], 2 * g);
  fail_unless_equals_uint64 (cudaipc_descriptor_get_sizes (own)[1], 2 * g);
  fail_unless_equals_uint64 (cudaipc_descriptor_get_sizes (own)[2], g);
  fail_unless_equals_uint64 (cudaipc_descriptor_get_size (own), size);
  fail_unless_equals_uint64 (cudaipc_block_get_size (block), size);
  fail_unless (cudaipc_block_get_device (block) == dev);
  for (guint i = 0; i < n; i++)
    fail_unless (fcntl (cudaipc_descriptor_get_fds (own)[i], F_GETFD) &
        FD_CLOEXEC);

  /* bytes written across the allocation boundaries read back in order */
  pattern = g_malloc (size);
  for (guint64 i = 0; i < size; i++)
    pattern[i] = (guint8) (i * 7 + i / g);
  fail_unless (cudaipc_device_write (dev, cudaipc_block_get_ptr (block),
          pattern, size, NULL));

  for (guint i = 0; i < n; i++)
    fds[i] = fcntl (cudaipc_descriptor_get_fds (own)[i], F_DUPFD_CLOEXEC, 0);
  desc = cudaipc_descriptor_new_from_fds (dev, fds,
      cudaipc_descriptor_get_sizes (own), n, size, &err);
  fail_unless (desc != NULL, "%s", err ? err->message : "");
  imported = cudaipc_block_import (dev, desc, &err);
  fail_unless (imported != NULL, "%s", err ? err->message : "");
  /* the mapping pins the memory: the descriptor may go first */
  cudaipc_descriptor_free (desc);
  fail_unless (cudaipc_block_get_descriptor (imported) == NULL);
  fail_unless (cudaipc_block_get_ptr (imported) !=
      cudaipc_block_get_ptr (block));
  fail_unless (memcmp ((void *) cudaipc_block_get_ptr (imported), pattern,
          size) == 0);

  /* a later write by the producer is seen through the import */
  pattern[g] ^= 0xff;
  fail_unless (cudaipc_device_write (dev, cudaipc_block_get_ptr (block),
          pattern, size, NULL));
  fail_unless (memcmp ((void *) cudaipc_block_get_ptr (imported), pattern,
          size) == 0);

  cudaipc_block_free (imported);
  cudaipc_block_free (block);
  cudaipc_device_unref (dev);
  g_free (pattern);
}

GST_END_TEST;

/* A producer's block, host backend: what it exports (the fds every
 * consumer is sent) is sealed against writes once the producer's own
 * mapping is made, so that no consumer changes a frame that others
 * read, while the producer still writes through that one mapping. */
GST_START_TEST (test_block_exports_read_only)
{
  const int want = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_FUTURE_WRITE |
      F_SEAL_SEAL;
  CudaIpcDevice *dev = cudaipc_test_host_device ();
  guint64 g = cudaipc_device_get_granularity (dev);
  const CudaIpcDescriptor *own;
  CudaIpcBlock *block;
  GError *err = NULL;
  guint8 *p;
  guint n;

  block = cudaipc_block_new (dev, 3 * g, 2 * g, &err);
  fail_unless (block != NULL, "%s", err ? err->message : "");
  own = cudaipc_block_get_descriptor (block);
  n = cudaipc_descriptor_get_n_fds (own);
  fail_unless_equals_int (n, 2);
  p = (guint8 *) cudaipc_block_get_ptr (block);
  memset (p, 0x11, 3 * g);

  for (guint i = 0; i < n; i++) {
    int fd = cudaipc_descriptor_get_fds (own)[i];
    int seals = fcntl (fd, F_GET_SEALS);
    g_autofree gchar *what = g_strdup_printf ("a consumer's writes to "
        "allocation %u", i);

    cudaipc_test_assert_unwritable (fd, cudaipc_descriptor_get_sizes (own)[i],
        what);
    fail_unless ((seals & want) == want, "allocation %u: seals 0x%x", i, seals);
  }
  for (guint64 i = 0; i < 3 * g; i++)
    fail_unless (p[i] == 0x11, "byte %" G_GUINT64_FORMAT " is 0x%x", i, p[i]);

  /* the producer's mapping, made before the seal, still writes */
  memset (p, 0x22, 3 * g);
  fail_unless (cudaipc_device_write (dev, (guintptr) p + g, p, g, NULL));
  for (guint64 i = 0; i < 3 * g; i++)
    fail_unless (p[i] == 0x22);

  cudaipc_block_free (block);
  cudaipc_device_unref (dev);
}

GST_END_TEST;

/* A kernel without F_SEAL_FUTURE_WRITE (before Linux 5.1): no host slot
 * can be made that its consumers could only read, so none is made, and
 * the error says why. */
GST_START_TEST (test_block_kernel_without_the_seal)
{
  CudaIpcDevice *dev = cudaipc_test_host_device ();
  GError *err = NULL;

  if (g_strcmp0 (g_getenv ("CK_FORK"), "no") == 0 ||
      !cudaipc_test_without_future_write_seal ()) {
    g_print ("SKIP: no seccomp filter in a process of this test's own\n");
    cudaipc_device_unref (dev);
    return;
  }
  fail_unless (cudaipc_block_new (dev, 3 * cudaipc_test_page (),
          cudaipc_test_page (), &err) == NULL);
  fail_unless (g_error_matches (err, CUDAIPC_ERROR,
          CUDAIPC_ERROR_NOT_SUPPORTED), "%s", err->message);
  fail_unless (strstr (err->message, "F_SEAL_FUTURE_WRITE, Linux 5.1 or "
          "newer") != NULL, "%s", err->message);
  g_print ("block: %s\n", err->message);
  g_error_free (err);
  cudaipc_device_unref (dev);
}

GST_END_TEST;

GST_START_TEST (test_block_limits)
{
  CudaIpcDevice *dev = cudaipc_test_host_device ();
  guint64 g = cudaipc_device_get_granularity (dev);
  GError *err = NULL;

  fail_unless (cudaipc_block_new (dev, 0, 0, &err) == NULL);
  fail_unless (g_error_matches (err, CUDAIPC_ERROR, CUDAIPC_ERROR_LIMIT));
  g_clear_error (&err);

  fail_unless (cudaipc_block_new (dev, CUDAIPC_MAX_SLOT_SIZE + 1, 0,
          &err) == NULL);
  fail_unless (g_error_matches (err, CUDAIPC_ERROR, CUDAIPC_ERROR_LIMIT));
  g_clear_error (&err);

  /* 17 allocations of one page */
  fail_unless (cudaipc_block_new (dev, (CUDAIPC_MAX_ALLOCS + 1) * g, g,
          &err) == NULL);
  fail_unless (g_error_matches (err, CUDAIPC_ERROR, CUDAIPC_ERROR_LIMIT));
  g_clear_error (&err);

  cudaipc_device_unref (dev);
}

GST_END_TEST;

GST_START_TEST (test_block_many_cycles)
{
  CudaIpcDevice *dev = cudaipc_test_host_device ();

  for (guint i = 0; i < 200; i++) {
    CudaIpcBlock *block = cudaipc_block_new (dev, (i % 7 + 1) * 65536,
        65536, NULL);
    fail_unless (block != NULL);
    cudaipc_block_free (block);
  }
  cudaipc_device_unref (dev);
}

GST_END_TEST;

static Suite *
block_suite (void)
{
  Suite *s = suite_create ("block");
  TCase *tc = cudaipc_test_case (s, "general", 60);

  tcase_add_test (tc, test_backend_names);
  tcase_add_test (tc, test_host_device);
  tcase_add_test (tc, test_cuda_device_or_clear_error);
  tcase_add_test (tc, test_block_split_and_import);
  tcase_add_test (tc, test_block_exports_read_only);
  tcase_add_test (tc, test_block_kernel_without_the_seal);
  tcase_add_test (tc, test_block_limits);
  tcase_add_test (tc, test_block_many_cycles);
  return s;
}

const CudaIpcTestMain cudaipc_test_main = {
  .name = "block",
  .suite = block_suite,
};
