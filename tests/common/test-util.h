/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Helpers and fixtures shared by the test suites, so that each test keeps
 * only what it checks.
 *
 * cudaipc_test_count_fds() counts this process's open fds: the fixture of
 * test-main.h compares the counts before and after every test; a test
 * compares them itself only in its middle, or in the gpu suite (CK_FORK=no)
 * where the fixture does not (CUDAIPC_ASSERT_NO_FD_LEAK).
 * cudaipc_test_stats_uint64() reads one counter of an element's stats.
 * cudaipc_test_tmpdir() makes a private temporary folder (its path is
 * the caller's to free); cudaipc_test_rmtree() removes it with what the
 * test left in it.
 *
 * Fixtures (each fails the test where its set-up cannot be made):
 *   cudaipc_test_host_device ()      a device of the host backend
 *   cudaipc_test_page ()             the page size: the host backend's
 *                                    granularity
 *   cudaipc_test_memfd ()            a memfd of a given size, sealed the
 *                                    way the host backend seals, or not
 *   cudaipc_test_socket_path ()      a socket path in a private temporary
 *                                    folder; cudaipc_test_path_beside ()
 *                                    another one there;
 *                                    cudaipc_test_socket_remove () removes
 *                                    the socket with its folder
 *   cudaipc_test_send_raw ()         a datagram with fds in SCM_RIGHTS,
 *                                    written on the socket directly, as a
 *                                    peer that is not CudaIpcConn would
 *                                    (cudaipc_test_send_raw_split () puts
 *                                    the fds in two control messages)
 *   cudaipc_test_send_ok ()          cudaipc_conn_send () that must succeed
 *
 * The fixture every test runs in (fds checked before and after, the
 * time-out) is test-main.h's.
 */
#pragma once

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <glib/gstdio.h>
#include <glib.h>
#include <gst/check/gstcheck.h>

#include "wire/connection.h"
#include "device/device.h"

static inline guint
cudaipc_test_count_fds (void)
{
  guint n = 0;
  DIR *dir = opendir ("/proc/self/fd");
  struct dirent *ent;

  g_assert_nonnull (dir);
  while ((ent = readdir (dir)) != NULL) {
    if (ent->d_name[0] != '.')
      n++;
  }
  closedir (dir);
  /* the directory's own fd */
  return n - 1;
}

#define CUDAIPC_ASSERT_NO_FD_LEAK(before) \
  fail_unless_equals_int (cudaipc_test_count_fds (), (before))

/* Memory bounds measured as RSS are meaningless under AddressSanitizer,
 * which keeps freed memory in its quarantine (256 MB by default): there a
 * test only checks that memory stays far from the unbounded growth it
 * guards against (gigabytes), with this many KiB of slack. */
#if defined(__SANITIZE_ADDRESS__)
#define CUDAIPC_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CUDAIPC_TEST_ASAN 1
#endif
#endif
#ifdef CUDAIPC_TEST_ASAN
#define CUDAIPC_TEST_RSS_SLACK_KIB (256 * 1024)
#else
#define CUDAIPC_TEST_RSS_SLACK_KIB 0
#endif

/* Line @field ("VmRSS", "VmHWM") of /proc/@pid/status, in KiB (@pid 0:
 * this process); 0 where the process or the line is gone. */
static inline guint64
cudaipc_test_status_kib (GPid pid, const gchar * field)
{
  g_autofree gchar *path = pid ? g_strdup_printf ("/proc/%d/status",
      (int) pid) : g_strdup ("/proc/self/status");
  g_autofree gchar *status = NULL, *key = g_strdup_printf ("\n%s:", field);
  const gchar *at;

  if (!g_file_get_contents (path, &status, NULL, NULL) ||
      (at = strstr (status, key)) == NULL)
    return 0;
  return g_ascii_strtoull (at + strlen (key), NULL, 10);
}

/* This process's resident memory in KiB; fails the test where it cannot
 * be read. */
static inline guint64
cudaipc_test_rss_kib (void)
{
  guint64 kib = cudaipc_test_status_kib (0, "VmRSS");

  fail_unless (kib > 0, "no VmRSS in /proc/self/status");
  return kib;
}

/* Field @name (guint64) of @element's "stats" structure; fails the test
 * where the element has no such counter. */
static inline guint64
cudaipc_test_stats_uint64 (gpointer element, const gchar * name)
{
  GstStructure *stats = NULL;
  guint64 v = 0;

  g_object_get (element, "stats", &stats, NULL);
  fail_unless (stats != NULL);
  fail_unless (gst_structure_get_uint64 (stats, name, &v), "no %s in %"
      GST_PTR_FORMAT, name, stats);
  gst_structure_free (stats);
  return v;
}

/* A new folder of this user's alone under the temporary folder, named
 * after @tag; fails the test where it cannot be made. */
static inline gchar *
cudaipc_test_tmpdir (const gchar * tag)
{
  g_autofree gchar *tmpl = g_strdup_printf ("cudaipc-%s-XXXXXX", tag);
  GError *err = NULL;
  gchar *dir = g_dir_make_tmp (tmpl, &err);

  fail_unless (dir != NULL, "g_dir_make_tmp: %s", err ? err->message : "");
  return dir;
}

/* Removes @path and, if it is a folder, everything in it (links are
 * removed, never followed). */
static inline void
cudaipc_test_rmtree (const gchar * path)
{
  GDir *dir;
  const gchar *name;

  if (!g_file_test (path, G_FILE_TEST_IS_DIR) ||
      g_file_test (path, G_FILE_TEST_IS_SYMLINK)) {
    g_unlink (path);
    return;
  }
  dir = g_dir_open (path, 0, NULL);
  while (dir && (name = g_dir_read_name (dir)) != NULL) {
    g_autofree gchar *child = g_build_filename (path, name, NULL);

    cudaipc_test_rmtree (child);
  }
  if (dir)
    g_dir_close (dir);
  g_rmdir (path);
}

/* A device of the host backend (memfd shared memory), which every machine
 * has. */
static inline CudaIpcDevice *
cudaipc_test_host_device (void)
{
  GError *err = NULL;
  CudaIpcDevice *dev = cudaipc_device_new (CUDAIPC_BACKEND_HOST, 0, &err);

  fail_unless (dev != NULL, "host device: %s", err ? err->message : "?");
  return dev;
}

/* The page size, which is the host backend's allocation granularity: the
 * unit of every size a host descriptor or ring takes. */
static inline guint64
cudaipc_test_page (void)
{
  return (guint64) sysconf (_SC_PAGESIZE);
}

/* A memfd of @size bytes. With @seal it is sealed the way the host backend
 * seals its allocations (no shrinking, growing, writes through any fd or
 * new mapping, or further seals), which the descriptor checks ask of a
 * peer's fd; without, it can still be written, resized or sealed by the
 * test. */
static inline int
cudaipc_test_memfd (guint64 size, gboolean seal)
{
  int fd = memfd_create ("cudaipc-test", MFD_CLOEXEC | MFD_ALLOW_SEALING);

  fail_unless (fd >= 0, "memfd_create: %s", g_strerror (errno));
  fail_unless (ftruncate (fd, (off_t) size) == 0, "ftruncate: %s",
      g_strerror (errno));
  if (seal)
    fail_unless (fcntl (fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW |
            F_SEAL_FUTURE_WRITE | F_SEAL_SEAL) == 0, "seal: %s",
        g_strerror (errno));
  return fd;
}

/* A path @name in a new folder of this user's alone (cudaipc_test_tmpdir
 * (@tag)), for a socket: a path of its own per test, so that tests running
 * side by side never meet, and nobody else can connect. Nothing is made at
 * the path itself. cudaipc_test_socket_remove() takes it back. */
static inline gchar *
cudaipc_test_socket_path (const gchar * tag, const gchar * name)
{
  g_autofree gchar *dir = cudaipc_test_tmpdir (tag);

  return g_build_filename (dir, name, NULL);
}

/* Another path @name in the folder of @path (a second socket, a link). */
static inline gchar *
cudaipc_test_path_beside (const gchar * path, const gchar * name)
{
  g_autofree gchar *dir = g_path_get_dirname (path);

  return g_build_filename (dir, name, NULL);
}

/* Removes the file at *@path, if any, and its folder, then frees *@path and
 * sets it to NULL. Returns 0 where the folder held nothing else, -1 where
 * it did; the folder goes with what is in it either way, so a test that
 * must leave nothing behind asserts 0 and a failed one leaves no litter. */
static inline gint
cudaipc_test_socket_remove (gchar ** path)
{
  g_autofree gchar *dir = NULL;
  gint ret;

  if (*path == NULL)
    return 0;
  dir = g_path_get_dirname (*path);
  g_unlink (*path);
  ret = g_rmdir (dir);
  if (ret != 0)
    cudaipc_test_rmtree (dir);
  g_clear_pointer (path, g_free);
  return ret;
}

/* The most fds cudaipc_test_send_raw() attaches: more than a receiver
 * takes (CUDAIPC_MAX_MSG_FDS), so that a test can overflow it. */
#define CUDAIPC_TEST_MAX_RAW_FDS 64

/* Sends @len bytes of @data on the socket @sock as one datagram with the
 * @n_fds fds of @fds attached, written with sendmsg() directly: what a
 * peer that does not go through CudaIpcConn sends (a broken or hostile
 * one, or a message no CudaIpcConn would build). With @split between 1 and
 * @n_fds - 1 the first @split fds go in one SCM_RIGHTS control message and
 * the rest in a second; with 0, all in one. Fails the test unless the
 * whole datagram was sent. The fds stay the caller's. */
static inline void
cudaipc_test_send_raw_split (int sock, const void *data, gsize len,
    const int *fds, guint n_fds, guint split)
{
  union
  {
    struct cmsghdr align;
    guint8 buf[2 * CMSG_SPACE (sizeof (int) * CUDAIPC_TEST_MAX_RAW_FDS)];
  } control;
  struct msghdr mh = { 0 };
  struct iovec iov = { (void *) data, len };
  guint counts[2] = { n_fds, 0 };

  fail_unless (n_fds <= CUDAIPC_TEST_MAX_RAW_FDS, "%u fds", n_fds);
  fail_unless (split == 0 || split < n_fds, "split %u of %u fds", split,
      n_fds);
  if (split > 0) {
    counts[0] = split;
    counts[1] = n_fds - split;
  }
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  if (n_fds > 0) {
    struct cmsghdr *cmsg;
    const int *next = fds;

    memset (&control, 0, sizeof (control));
    mh.msg_control = control.buf;
    mh.msg_controllen = CMSG_SPACE (sizeof (int) * counts[0]);
    if (counts[1] > 0)
      mh.msg_controllen += CMSG_SPACE (sizeof (int) * counts[1]);
    cmsg = CMSG_FIRSTHDR (&mh);
    for (guint i = 0; i < G_N_ELEMENTS (counts) && counts[i] > 0; i++) {
      fail_unless (cmsg != NULL);
      cmsg->cmsg_level = SOL_SOCKET;
      cmsg->cmsg_type = SCM_RIGHTS;
      cmsg->cmsg_len = CMSG_LEN (sizeof (int) * counts[i]);
      memcpy (CMSG_DATA (cmsg), next, sizeof (int) * counts[i]);
      next += counts[i];
      cmsg = CMSG_NXTHDR (&mh, cmsg);
    }
  }
  fail_unless_equals_int (sendmsg (sock, &mh, MSG_NOSIGNAL), len);
}

/* cudaipc_test_send_raw_split() with every fd in one control message. */
static inline void
cudaipc_test_send_raw (int sock, const void *data, gsize len,
    const int *fds, guint n_fds)
{
  cudaipc_test_send_raw_split (sock, data, len, fds, n_fds, 0);
}

/* Sends @msg on @conn; fails the test, naming the message and the errno,
 * where it does not go. */
static inline void
cudaipc_test_send_ok (CudaIpcConn * conn, const CudaIpcMsg * msg)
{
  gint ret = cudaipc_conn_send (conn, msg);

  fail_unless (ret >= 0, "send %s: %s", cudaipc_msg_type_name (msg->type),
      g_strerror (-ret));
}

/* A copy of the "cudaipcsink-client" structure of the consumer named
 * @client in @sink's stats (its client-stats), or NULL. */
static inline GstStructure *
cudaipc_test_client_stats (gpointer sink, const gchar * client)
{
  GstStructure *stats = NULL, *found = NULL;
  const GValue *arr;

  g_object_get (sink, "stats", &stats, NULL);
  fail_unless (stats != NULL);
  arr = gst_structure_get_value (stats, "client-stats");
  for (guint i = 0; arr && i < gst_value_array_get_size (arr); i++) {
    const GstStructure *cs =
        gst_value_get_structure (gst_value_array_get_value (arr, i));

    if (found == NULL && (client == NULL ||
            g_strcmp0 (gst_structure_get_string (cs, "name"), client) == 0))
      found = gst_structure_copy (cs);
  }
  gst_structure_free (stats);
  return found;
}
