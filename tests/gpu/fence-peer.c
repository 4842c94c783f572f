/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The second process of the gpu suite's fence test. Usage:
 * gpu-fence-peer SOCKET
 *
 * Connects to SOCKET and answers the HELLO asking for the fence page where
 * the producer offers it, else for interprocess events; takes a RING of
 * one slot, which must then carry the fence page (mapped with
 * cudaipc_fence_page_open), and its SLOT, which must otherwise carry an
 * event handle (opened with cudaipc_fence_open); imports the slot, then
 * says it is ready with a RELEASE (generation, 0, 0). On the FRAME that
 * follows it notes whether the copy was still pending when the frame
 * arrived (the slot's fence word below the frame's number, or the event
 * not complete) and whether the slot's first and last bytes already held
 * the frame, waits (on the CPU for the fence word, cudaipc_fence_wait for
 * the event), reads the whole frame back and checks it against the
 * pattern of key (3, 9). It answers with a BYE: reason
 * NORMAL and text "ok pending_at_frame=P early_match=E wait_us=W bytes=N"
 * when every byte matched, reason PROTOCOL and the failure otherwise. Then
 * it waits for the server's BYE and exits 0 (1 on a failure it could not
 * report).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>
#include <unistd.h>

#include "ring/block.h"
#include "wire/connection.h"
#include "peer-main.h"
#include "ring/descriptor.h"
#include "device/device.h"
#include "ring/fence.h"
#include "ring/fence-page.h"
#include "test-pattern.h"

#define FENCE_KEY 3
#define FENCE_GEN 9
/* bytes read at each end of the slot before the wait */
#define PEEK 65536

static gint
recv_type (CudaIpcConn * conn, CudaIpcMsg * msg, CudaIpcMsgType type,
    gchar ** result)
{
  gint ret;

  if ((ret = cudaipc_conn_wait (conn, 60000)) != 1 ||
      (ret = cudaipc_conn_recv (conn, msg)) < 0) {
    *result = g_strdup_printf ("waiting for %s: %s",
        cudaipc_msg_type_name (type), ret == 0 ? "timed out" :
        g_strerror (-ret));
    return -1;
  }
  if (msg->type != type) {
    *result = g_strdup_printf ("expected %s, got %s",
        cudaipc_msg_type_name (type), cudaipc_msg_type_name (msg->type));
    cudaipc_msg_clear (msg);
    return -1;
  }
  return 0;
}

/* Whether @len bytes at @offset of the slot already hold the frame. */
static gboolean
peek_matches (CudaIpcDevice * dev, CudaIpcBlock * block, gsize offset,
    gsize len, const guint8 * expect)
{
  guint8 *got = g_malloc (len);
  gboolean same;

  same = cudaipc_device_read (dev, got, cudaipc_block_get_ptr (block) +
      offset, len, NULL) && memcmp (got, expect + offset, len) == 0;
  g_free (got);
  return same;
}

static gchar *
run (CudaIpcConn * conn, CudaIpcDevice * dev)
{
  CudaIpcBlock *block = NULL;
  CudaIpcFence *fence = NULL;
  CudaIpcFencePage *page = NULL;
  gboolean use_page;
  CudaIpcDescriptor *desc;
  CudaIpcMsg msg;
  guint8 uuid[CUDAIPC_UUID_LEN];
  guint8 *host = NULL, *expect = NULL;
  gchar *result = NULL;
  GError *err = NULL;
  gboolean pushed = FALSE, done = FALSE, early;
  guint32 generation;
  guint64 size, seq;
  gint64 t0, t1;
  gssize bad;

  if (recv_type (conn, &msg, CUDAIPC_MSG_HELLO, &result) < 0)
    return result;
  cudaipc_device_get_uuid (dev, uuid);
  if (msg.u.hello.backend != CUDAIPC_BACKEND_CUDA ||
      memcmp (uuid, msg.u.hello.uuid, CUDAIPC_UUID_LEN) != 0 ||
      !(msg.u.hello.caps & (CUDAIPC_CAP_EVENTS | CUDAIPC_CAP_FENCE))) {
    cudaipc_msg_clear (&msg);
    return g_strdup ("expected a cuda HELLO on this GPU, offering the fence "
        "page or events");
  }
  use_page = (msg.u.hello.caps & CUDAIPC_CAP_FENCE) != 0;
  cudaipc_msg_clear (&msg);

  cudaipc_msg_init (&msg, CUDAIPC_MSG_HELLO);
  msg.u.hello.version = CUDAIPC_PROTOCOL_VERSION;
  msg.u.hello.backend = CUDAIPC_BACKEND_CUDA;
  memcpy (msg.u.hello.uuid, uuid, CUDAIPC_UUID_LEN);
  msg.u.hello.caps = use_page ? CUDAIPC_CAP_FENCE : CUDAIPC_CAP_EVENTS;
  msg.u.hello.pid = getpid ();
  msg.u.hello.name = "gpu-fence-peer";
  if (cudaipc_conn_send (conn, &msg) < 0)
    return g_strdup ("send HELLO failed");

  if (recv_type (conn, &msg, CUDAIPC_MSG_RING, &result) < 0)
    return result;
  generation = msg.u.ring.generation;
  if (use_page) {
    if (!(msg.u.ring.flags & CUDAIPC_RING_HAS_FENCE)) {
      cudaipc_msg_clear (&msg);
      return g_strdup ("the RING carries no fence page");
    }
    page = cudaipc_fence_page_open (msg.fds[0], &err);
    msg.fds[0] = -1;
    msg.n_fds = 0;
  }
  cudaipc_msg_clear (&msg);
  if (use_page && page == NULL) {
    result = g_strdup_printf ("fence page: %s", err->message);
    g_clear_error (&err);
    return result;
  }

  if (recv_type (conn, &msg, CUDAIPC_MSG_SLOT, &result) < 0)
    goto out;
  if (!use_page && !(msg.u.slot.flags & CUDAIPC_SLOT_HAS_EVENT)) {
    cudaipc_msg_clear (&msg);
    result = g_strdup ("the SLOT carries no event handle");
    goto out;
  }
  desc = cudaipc_descriptor_new_from_fds (dev, msg.fds,
      msg.u.slot.alloc_sizes, msg.n_fds, msg.u.slot.size, &err);
  /* from_fds took the fds, whatever it answered */
  msg.n_fds = 0;
  if (desc) {
    block = cudaipc_block_import (dev, desc, &err);
    cudaipc_descriptor_free (desc);
  }
  if (block && !use_page)
    fence = cudaipc_fence_open (dev, msg.u.slot.event_handle, &err);
  cudaipc_msg_clear (&msg);
  if (!block || (!use_page && !fence)) {
    result = g_strdup_printf ("%s: %s", block ? "open event" : "import",
        err->message);
    goto out;
  }

  /* ready */
  cudaipc_msg_init (&msg, CUDAIPC_MSG_RELEASE);
  msg.u.release.generation = generation;
  if (cudaipc_conn_send (conn, &msg) < 0) {
    result = g_strdup ("send RELEASE failed");
    goto out;
  }

  if (recv_type (conn, &msg, CUDAIPC_MSG_FRAME, &result) < 0)
    goto out;
  size = msg.u.frame.size;
  seq = msg.u.frame.seq;
  cudaipc_msg_clear (&msg);
  if (size < 2 * PEEK || size > cudaipc_block_get_size (block)) {
    result = g_strdup_printf ("a FRAME of %" G_GUINT64_FORMAT " bytes", size);
    goto out;
  }

  /* the fence's calls want the context current, as cuipcsrc keeps it */
  if (use_page) {
    done = cudaipc_fence_page_peek (page, 0) >= seq;
  } else if (!(pushed = cudaipc_device_push (dev, &err)) ||
      !cudaipc_fence_query (fence, &done, &err)) {
    result = g_strdup_printf ("query: %s", err->message);
    goto out;
  }
  expect = g_malloc (size);
  cudaipc_test_fill_pattern (expect, size, FENCE_KEY, FENCE_GEN);
  early = peek_matches (dev, block, 0, PEEK, expect) &&
      peek_matches (dev, block, size - PEEK, PEEK, expect);

  t0 = g_get_monotonic_time ();
  if (use_page ? !cudaipc_fence_page_wait (page, 0, seq,
          60 * G_USEC_PER_SEC, &err) : !cudaipc_fence_wait (fence, &err)) {
    result = g_strdup_printf ("wait: %s", err->message);
    goto out;
  }
  t1 = g_get_monotonic_time ();

  host = g_malloc (size);
  if (!cudaipc_device_read (dev, host, cudaipc_block_get_ptr (block), size,
          &err)) {
    result = g_strdup_printf ("read: %s", err->message);
    goto out;
  }
  bad = cudaipc_test_check_pattern (host, size, FENCE_KEY, FENCE_GEN);
  if (bad >= 0)
    result = g_strdup_printf ("after the wait the frame differs at byte %"
        G_GSSIZE_FORMAT " of %" G_GUINT64_FORMAT, bad, size);
  else
    result = g_strdup_printf ("ok pending_at_frame=%d early_match=%d "
        "wait_us=%" G_GINT64_FORMAT " bytes=%" G_GUINT64_FORMAT " page=%d",
        !done, early, t1 - t0, size, use_page);

out:
  if (pushed)
    cudaipc_device_pop (dev);
  cudaipc_fence_free (fence);
  cudaipc_fence_page_free (page);
  cudaipc_block_free (block);
  g_free (host);
  g_free (expect);
  g_clear_error (&err);
  return result;
}

int
main (int argc, char **argv)
{
  return cudaipc_peer_main (argc, argv, "gpu-fence-peer", run);
}
