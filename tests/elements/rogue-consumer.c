/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rogue-consumer: a consumer that tries to write what it was sent to read,
 * for the fault tests. Usage:
 *
 *   rogue-consumer SOCKET
 *
 * It speaks the protocol by hand: HELLO both ways (asking for the fence
 * page where the producer offers it), then for each RING it keeps the
 * fence page's fd and, on the host backend, every slot's fds (on the cuda
 * backend an importer may always write what it imports: docs/design.md,
 * Trust model), and tries every way a write could go on each (test-writes.h),
 * filling with 0xee what it reaches. It tries again at
 * every FRAME, while the frame is in its slot, then releases the frame at
 * once, as an honest consumer that keeps up would.
 *
 * Prints "rogue-consumer frames=N fence_pages=F slots=S tries=T wrote=W
 * refused=R sealed=E" (tries: one a way and an fd; sealed: the refusals
 * with the seal's errno) and exits 0 once the producer said BYE or
 * closed, 1 where it could not connect.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>
#include <unistd.h>

#include <glib.h>

#include "wire/connection.h"
#include "device/device.h"
#include "test-writes.h"

#define MAX_KEPT 256

static int kept_fds[MAX_KEPT];
static guint64 kept_sizes[MAX_KEPT];
static guint n_kept;
static guint64 tries, wrote, refused, sealed;

static void
try_fd (int fd, guint64 size)
{
  CudaIpcTestWrite r[CUDAIPC_TEST_N_WRITES];

  cudaipc_test_try_writes (fd, size, 0xee, r);
  for (guint i = 0; i < CUDAIPC_TEST_N_WRITES; i++) {
    int want = i == CUDAIPC_TEST_WRITE_MPROTECT ? EACCES : EPERM;

    tries++;
    if (r[i].wrote) {
      wrote++;
    } else {
      refused++;
      sealed += r[i].error == want;
    }
  }
}

static void
keep (int fd, guint64 size)
{
  try_fd (fd, size);
  if (n_kept < MAX_KEPT) {
    kept_fds[n_kept] = fd;
    kept_sizes[n_kept++] = size;
  } else {
    close (fd);
  }
}

int
main (int argc, char **argv)
{
  guint64 frames = 0, fence_pages = 0, slots = 0;
  guint32 backend, offered;
  guint8 uuid[CUDAIPC_UUID_LEN];
  CudaIpcConn *conn;
  CudaIpcMsg msg;
  gint64 deadline;
  int fd = -1, ret;

  if (argc != 2) {
    g_printerr ("usage: %s SOCKET\n", argv[0]);
    return 2;
  }
  for (gint i = 0; i < 200; i++) {
    if (cudaipc_socket_connect (argv[1], &fd) == 0)
      break;
    g_usleep (50000);
  }
  if (fd < 0)
    return 1;
  conn = cudaipc_conn_new (fd);
  if (cudaipc_conn_recv (conn, &msg) < 0 || msg.type != CUDAIPC_MSG_HELLO)
    return 1;
  backend = msg.u.hello.backend;
  memcpy (uuid, msg.u.hello.uuid, sizeof (uuid));
  offered = msg.u.hello.caps;
  cudaipc_msg_clear (&msg);

  cudaipc_msg_init (&msg, CUDAIPC_MSG_HELLO);
  msg.u.hello.version = CUDAIPC_PROTOCOL_VERSION;
  msg.u.hello.backend = backend;
  memcpy (msg.u.hello.uuid, uuid, sizeof (uuid));
  msg.u.hello.caps = offered & CUDAIPC_CAP_FENCE;
  msg.u.hello.pid = getpid ();
  msg.u.hello.name = "rogue-consumer";
  cudaipc_conn_send (conn, &msg);

  deadline = g_get_monotonic_time () + 60 * G_USEC_PER_SEC;
  while (g_get_monotonic_time () < deadline) {
    if (cudaipc_conn_wait (conn, 100) <= 0)
      continue;
    ret = cudaipc_conn_recv (conn, &msg);
    if (ret == -EPIPE || ret == -ECONNRESET)
      break;
    if (ret < 0)
      continue;
    if (msg.type == CUDAIPC_MSG_BYE) {
      cudaipc_msg_clear (&msg);
      break;
    }
    switch (msg.type) {
      case CUDAIPC_MSG_RING:
        if (msg.n_fds == 1) {
          fence_pages++;
          keep (msg.fds[0], CUDAIPC_FENCE_PAGE_SIZE);
          msg.n_fds = 0;
        }
        break;
      case CUDAIPC_MSG_SLOT:
        slots++;
        if (backend != CUDAIPC_BACKEND_HOST)
          break;
        for (guint i = 0; i < msg.n_fds; i++)
          keep (msg.fds[i], msg.u.slot.alloc_sizes[i]);
        msg.n_fds = 0;
        break;
      case CUDAIPC_MSG_FRAME:{
        CudaIpcMsg rel;

        frames++;
        for (guint i = 0; i < n_kept; i++)
          try_fd (kept_fds[i], kept_sizes[i]);
        cudaipc_msg_init (&rel, CUDAIPC_MSG_RELEASE);
        rel.u.release.generation = msg.u.frame.generation;
        rel.u.release.slot = msg.u.frame.slot;
        rel.u.release.seq = msg.u.frame.seq;
        cudaipc_conn_send (conn, &rel);
        break;
      }
      default:
        break;
    }
    cudaipc_msg_clear (&msg);
  }

  g_print ("rogue-consumer frames=%" G_GUINT64_FORMAT " fence_pages=%"
      G_GUINT64_FORMAT " slots=%" G_GUINT64_FORMAT " tries=%" G_GUINT64_FORMAT
      " wrote=%" G_GUINT64_FORMAT " refused=%" G_GUINT64_FORMAT " sealed=%"
      G_GUINT64_FORMAT "\n", frames, fence_pages, slots, tries, wrote,
      refused, sealed);
  for (guint i = 0; i < n_kept; i++)
    close (kept_fds[i]);
  cudaipc_conn_free (conn);
  return 0;
}
