/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * gpu suite: the library on a real CUDA device. A ring exported here is
 * imported by gpu-peer, a second process, and read back bit-exact; bad
 * descriptors are refused before anything is mapped; rebuilding a ring
 * many times leaks no device memory and no fds.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib/gstdio.h>
#include <gst/check/gstcheck.h>

#include "ring/block.h"
#include "wire/connection.h"
#include "ring/descriptor.h"
#include "device/device.h"
#include "common/error.h"
#include "ring/ring.h"
#include "test-main.h"
#include "test-pattern.h"
#include "test-util.h"

static CudaIpcDevice *device;

static void
fill_slot (CudaIpcRing * ring, guint slot)
{
  CudaIpcBlock *block = cudaipc_ring_get_block (ring, slot);
  gsize size = cudaipc_block_get_size (block);
  guint8 *data = g_malloc (size);
  GError *err = NULL;

  cudaipc_test_fill_pattern (data, size, slot,
      cudaipc_ring_get_generation (ring));
  fail_unless (cudaipc_device_write (device, cudaipc_block_get_ptr (block),
          data, size, &err), "write: %s", err ? err->message : "");
  g_free (data);
}

static GPid
spawn_peer (const gchar * socket_path)
{
  const gchar *peer = g_getenv ("CUDAIPC_GPU_PEER");
  gchar *argv[] = { (gchar *) peer, (gchar *) socket_path, NULL };
  GError *err = NULL;
  GPid pid = 0;

  fail_unless (peer != NULL, "CUDAIPC_GPU_PEER is not set");
  fail_unless (g_spawn_async (NULL, argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD,
          NULL, NULL, &pid, &err), "spawn %s: %s", peer,
      err ? err->message : "");
  return pid;
}

GST_START_TEST (test_ring_shared_with_second_process)
{
  guint fds_before = cudaipc_test_count_fds ();
  gchar *path = cudaipc_test_socket_path ("gpu", "ring.sock");
  CudaIpcRing *ring;
  CudaIpcConn *conn;
  CudaIpcMsg msg;
  GError *err = NULL;
  int lfd = -1, cfd = -1, status = 0;
  gint64 t0, t1;
  GPid pid;

  t0 = g_get_monotonic_time ();
  ring = cudaipc_ring_new (device, 4, CUDAIPC_TEST_4K_NV12, 0, 7, &err);
  t1 = g_get_monotonic_time ();
  fail_unless (ring != NULL, "ring: %s", err ? err->message : "");
  g_print ("gpu: ring of 4 x %u bytes (slot %" G_GUINT64_FORMAT
      ") created, mapped and exported in %.1f us per slot\n",
      CUDAIPC_TEST_4K_NV12, cudaipc_ring_get_slot_size (ring),
      (t1 - t0) / 4.0);
  for (guint i = 0; i < 4; i++)
    fill_slot (ring, i);

  fail_unless_equals_int (cudaipc_socket_listen (path, 0600, &lfd), 0);
  pid = spawn_peer (path);
  fail_unless_equals_int (cudaipc_socket_accept (lfd, &cfd), 0);
  conn = cudaipc_conn_new (cfd);

  cudaipc_msg_init (&msg, CUDAIPC_MSG_HELLO);
  msg.u.hello.version = CUDAIPC_PROTOCOL_VERSION;
  msg.u.hello.backend = CUDAIPC_BACKEND_CUDA;
  cudaipc_device_get_uuid (device, msg.u.hello.uuid);
  msg.u.hello.name = "gpu-test";
  cudaipc_test_send_ok (conn, &msg);

  fail_unless_equals_int (cudaipc_conn_recv (conn, &msg), 0);
  fail_unless_equals_int (msg.type, CUDAIPC_MSG_HELLO);
  fail_unless_equals_int (msg.u.hello.backend, CUDAIPC_BACKEND_CUDA);
  cudaipc_msg_clear (&msg);

  cudaipc_msg_init (&msg, CUDAIPC_MSG_RING);
  msg.u.ring.generation = 7;
  msg.u.ring.n_slots = 4;
  msg.u.ring.slot_size = cudaipc_ring_get_slot_size (ring);
  cudaipc_test_send_ok (conn, &msg);

  for (guint i = 0; i < 4; i++) {
    const CudaIpcDescriptor *desc =
        cudaipc_block_get_descriptor (cudaipc_ring_get_block (ring, i));
    guint n = cudaipc_descriptor_get_n_fds (desc);

    cudaipc_msg_init (&msg, CUDAIPC_MSG_SLOT);
    msg.u.slot.generation = 7;
    msg.u.slot.index = i;
    msg.u.slot.size = cudaipc_descriptor_get_size (desc);
    msg.u.slot.n_allocs = n;
    memcpy (msg.u.slot.alloc_sizes, cudaipc_descriptor_get_sizes (desc),
        n * sizeof (guint64));
    memcpy (msg.fds, cudaipc_descriptor_get_fds (desc), n * sizeof (int));
    msg.n_fds = n;
    cudaipc_test_send_ok (conn, &msg);
  }

  fail_unless_equals_int (cudaipc_conn_recv (conn, &msg), 0);
  fail_unless_equals_int (msg.type, CUDAIPC_MSG_BYE);
  g_print ("gpu: second process says: %s\n", msg.u.bye.text);
  fail_unless (g_str_has_prefix (msg.u.bye.text, "ok"), "peer: %s",
      msg.u.bye.text);
  cudaipc_msg_clear (&msg);

  cudaipc_msg_init (&msg, CUDAIPC_MSG_BYE);
  msg.u.bye.text = "done";
  cudaipc_test_send_ok (conn, &msg);
  fail_unless (waitpid (pid, &status, 0) == pid);
  g_spawn_close_pid (pid);
  fail_unless (WIFEXITED (status) && WEXITSTATUS (status) == 0,
      "peer exit status %d", status);

  cudaipc_conn_free (conn);
  close (lfd);
  cudaipc_socket_unlink (path);
  cudaipc_ring_unref (ring);
  cudaipc_test_socket_remove (&path);
  CUDAIPC_ASSERT_NO_FD_LEAK (fds_before);
}

GST_END_TEST;

static void
expect_refused (int fd, guint64 alloc_size, guint64 size, gint code)
{
  guint fds_before = cudaipc_test_count_fds ();
  CudaIpcDescriptor *desc;
  GError *err = NULL;
  int fds[1] = { fd };

  desc = cudaipc_descriptor_new_from_fds (device, fds, &alloc_size, 1, size,
      &err);
  fail_unless (desc == NULL);
  fail_unless (g_error_matches (err, CUDAIPC_ERROR, code), "got %s",
      err ? err->message : "no error");
  g_print ("gpu: refused as expected: %s\n", err->message);
  g_clear_error (&err);
  fail_unless (fcntl (fd, F_GETFD) == -1, "fd %d left open", fd);
  /* the fd given was closed: one fewer than before */
  fail_unless_equals_int (cudaipc_test_count_fds (), fds_before - 1);
}

GST_START_TEST (test_descriptor_refused_before_mapping)
{
  guint64 gran = cudaipc_device_get_granularity (device);
  CudaIpcBlock *block;
  const CudaIpcDescriptor *own;
  GError *err = NULL;
  struct stat st;
  gchar *link, *target;
  int exported;

  block = cudaipc_block_new (device, 2 * gran, 0, &err);
  fail_unless (block != NULL, "block: %s", err ? err->message : "");
  own = cudaipc_block_get_descriptor (block);
  exported = cudaipc_descriptor_get_fds (own)[0];
  fail_unless (fstat (exported, &st) == 0);
  link = g_strdup_printf ("/proc/self/fd/%d", exported);
  target = g_file_read_link (link, NULL);
  g_print ("gpu: granularity %" G_GUINT64_FORMAT ", an exported allocation "
      "fd is %s (mode 0%o)\n", gran, target ? target : "?",
      st.st_mode & S_IFMT);
  fail_unless (fcntl (exported, F_GETFD) & FD_CLOEXEC);

  /* an allocation size that is not a multiple of the granularity */
  expect_refused (fcntl (exported, F_DUPFD_CLOEXEC, 0), gran + 4096,
      gran, CUDAIPC_ERROR_INVALID);
  /* size beyond the sum of the sizes */
  expect_refused (fcntl (exported, F_DUPFD_CLOEXEC, 0), 2 * gran,
      2 * gran + 1, CUDAIPC_ERROR_INVALID);
  /* a regular file is no exported allocation */
  expect_refused (open ("/proc/self/exe", O_RDONLY | O_CLOEXEC), 2 * gran,
      2 * gran, CUDAIPC_ERROR_INVALID);

  g_free (link);
  g_free (target);
  cudaipc_block_free (block);
}

GST_END_TEST;

static void
import_every_slot (CudaIpcRing * ring)
{
  for (guint i = 0; i < cudaipc_ring_get_n_slots (ring); i++) {
    const CudaIpcDescriptor *own =
        cudaipc_block_get_descriptor (cudaipc_ring_get_block (ring, i));
    guint n = cudaipc_descriptor_get_n_fds (own);
    int fds[CUDAIPC_MAX_ALLOCS];
    CudaIpcDescriptor *desc;
    CudaIpcBlock *block;
    GError *err = NULL;

    for (guint k = 0; k < n; k++)
      fds[k] = fcntl (cudaipc_descriptor_get_fds (own)[k], F_DUPFD_CLOEXEC,
          0);
    desc = cudaipc_descriptor_new_from_fds (device, fds,
        cudaipc_descriptor_get_sizes (own), n,
        cudaipc_descriptor_get_size (own), &err);
    fail_unless (desc != NULL, "from_fds: %s", err ? err->message : "");
    block = cudaipc_block_import (device, desc, &err);
    fail_unless (block != NULL, "import: %s", err ? err->message : "");
    cudaipc_descriptor_free (desc);
    cudaipc_block_free (block);
  }
}

GST_START_TEST (test_ring_rebuilt_100_times)
{
  guint64 free_before = 0, free_after = 0, total = 0;
  guint fds_before;
  GError *err = NULL;
  CudaIpcRing *ring;

  /* one round first, so the driver's one-time allocations are made */
  ring = cudaipc_ring_new (device, 4, CUDAIPC_TEST_4K_NV12, 0, 0, &err);
  fail_unless (ring != NULL, "ring: %s", err ? err->message : "");
  import_every_slot (ring);
  cudaipc_ring_unref (ring);

  fds_before = cudaipc_test_count_fds ();
  fail_unless (cudaipc_device_mem_info (device, &free_before, &total, NULL));
  for (guint gen = 1; gen <= 100; gen++) {
    ring = cudaipc_ring_new (device, 4, CUDAIPC_TEST_4K_NV12 + gen * 4096,
        0, gen, &err);
    fail_unless (ring != NULL, "ring %u: %s", gen, err ? err->message : "");
    import_every_slot (ring);
    cudaipc_ring_unref (ring);
  }
  fail_unless (cudaipc_device_mem_info (device, &free_after, &total, NULL));
  g_print ("gpu: free device memory %" G_GUINT64_FORMAT " before, %"
      G_GUINT64_FORMAT " after 100 rebuilds; fds %u before, %u after\n",
      free_before, free_after, fds_before, cudaipc_test_count_fds ());
  fail_unless_equals_uint64 (free_after, free_before);
  CUDAIPC_ASSERT_NO_FD_LEAK (fds_before);
}

GST_END_TEST;

/* The device checks of a consumer on another GPU, on one GPU: its own UUID
 * is itself (usable in place), a UUID no device has is not found; the
 * host backend never finds one. */
GST_START_TEST (test_find_peer_device)
{
  guint8 uuid[CUDAIPC_UUID_LEN];
  gboolean can_access = FALSE;
  gint ordinal = -1;
  CudaIpcDevice *host;

  cudaipc_device_get_uuid (device, uuid);
  fail_unless (cudaipc_device_find_peer (device, uuid, &ordinal,
          &can_access));
  fail_unless_equals_int (ordinal, 0);
  fail_unless (can_access);

  uuid[0] ^= 0xff;
  uuid[15] ^= 0x5a;
  ordinal = 7;
  fail_if (cudaipc_device_find_peer (device, uuid, &ordinal, &can_access));
  fail_unless_equals_int (ordinal, 7);

  host = cudaipc_device_new (CUDAIPC_BACKEND_HOST, 0, NULL);
  fail_unless (host != NULL);
  cudaipc_device_get_uuid (device, uuid);
  fail_if (cudaipc_device_find_peer (host, uuid, &ordinal, &can_access));
  cudaipc_device_unref (host);
}

GST_END_TEST;

static Suite *
gpu_ring_suite (void)
{
  Suite *s = suite_create ("gpu-ring");
  TCase *tc = cudaipc_test_case (s, "general", 120);

  tcase_add_test (tc, test_ring_shared_with_second_process);
  tcase_add_test (tc, test_descriptor_refused_before_mapping);
  tcase_add_test (tc, test_ring_rebuilt_100_times);
  tcase_add_test (tc, test_find_peer_device);
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
  .name = "gpu-ring",
  .suite = gpu_ring_suite,
  .prepare = open_device,
  .finish = close_device,
};
