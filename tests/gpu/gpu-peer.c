/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The gpu suite's second process. Usage: gpu-peer SOCKET
 *
 * Connects to SOCKET, answers the HELLO, takes a RING and its SLOT messages,
 * validates and imports each slot once (timing import + map), reads every
 * slot back to host memory and compares it with the agreed pattern. It
 * answers with a BYE: reason NORMAL and text "ok import_map_us=<avg>
 * slots=<n>" when every byte matched, reason PROTOCOL and the failure
 * otherwise. Then it waits for the server's BYE and exits 0 (1 on a failure
 * it could not report).
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
#include "ring/ring.h"
#include "test-pattern.h"

static gchar *
run (CudaIpcConn * conn, CudaIpcDevice * dev)
{
  CudaIpcBlock *blocks[CUDAIPC_MAX_SLOTS] = { NULL };
  CudaIpcMsg msg;
  guint n_slots = 0, imported = 0;
  guint32 generation = 0;
  gdouble import_us = 0;
  gchar *result = NULL;
  guint8 *host = NULL, *expect = NULL;
  GError *err = NULL;
  gint ret;

  /* The producer speaks first. */
  if ((ret = cudaipc_conn_recv (conn, &msg)) < 0)
    return g_strdup_printf ("recv HELLO: %s", g_strerror (-ret));
  if (msg.type != CUDAIPC_MSG_HELLO ||
      msg.u.hello.backend != CUDAIPC_BACKEND_CUDA) {
    cudaipc_msg_clear (&msg);
    return g_strdup ("expected a cuda HELLO first");
  }
  {
    guint8 uuid[CUDAIPC_UUID_LEN];
    cudaipc_device_get_uuid (dev, uuid);
    if (memcmp (uuid, msg.u.hello.uuid, CUDAIPC_UUID_LEN) != 0) {
      cudaipc_msg_clear (&msg);
      return g_strdup ("the producer is on another GPU");
    }
  }
  cudaipc_msg_clear (&msg);

  cudaipc_msg_init (&msg, CUDAIPC_MSG_HELLO);
  msg.u.hello.version = CUDAIPC_PROTOCOL_VERSION;
  msg.u.hello.backend = CUDAIPC_BACKEND_CUDA;
  cudaipc_device_get_uuid (dev, msg.u.hello.uuid);
  msg.u.hello.pid = getpid ();
  msg.u.hello.name = "gpu-peer";
  if ((ret = cudaipc_conn_send (conn, &msg)) < 0)
    return g_strdup_printf ("send HELLO: %s", g_strerror (-ret));

  while (imported < n_slots || n_slots == 0) {
    CudaIpcDescriptor *desc;
    gint64 t0;

    if ((ret = cudaipc_conn_recv (conn, &msg)) < 0) {
      result = g_strdup_printf ("recv: %s", g_strerror (-ret));
      goto out;
    }
    if (msg.type == CUDAIPC_MSG_RING) {
      n_slots = msg.u.ring.n_slots;
      generation = msg.u.ring.generation;
      cudaipc_msg_clear (&msg);
      continue;
    }
    if (msg.type != CUDAIPC_MSG_SLOT || msg.u.slot.index >= n_slots ||
        msg.u.slot.generation != generation || blocks[msg.u.slot.index]) {
      result = g_strdup_printf ("unexpected %s",
          cudaipc_msg_type_name (msg.type));
      cudaipc_msg_clear (&msg);
      goto out;
    }
    t0 = g_get_monotonic_time ();
    desc = cudaipc_descriptor_new_from_fds (dev, msg.fds,
        msg.u.slot.alloc_sizes, msg.n_fds, msg.u.slot.size, &err);
    /* from_fds took the fds, whatever it answered */
    msg.n_fds = 0;
    if (desc) {
      blocks[msg.u.slot.index] = cudaipc_block_import (dev, desc, &err);
      cudaipc_descriptor_free (desc);
    }
    import_us += g_get_monotonic_time () - t0;
    if (!blocks[msg.u.slot.index]) {
      result = g_strdup_printf ("import slot %u: %s", msg.u.slot.index,
          err->message);
      cudaipc_msg_clear (&msg);
      goto out;
    }
    imported++;
    cudaipc_msg_clear (&msg);
  }

  for (guint i = 0; i < n_slots; i++) {
    gsize size = cudaipc_block_get_size (blocks[i]);

    host = g_realloc (host, size);
    expect = g_realloc (expect, size);
    cudaipc_test_fill_pattern (expect, size, i, generation);
    if (!cudaipc_device_read (dev, host, cudaipc_block_get_ptr (blocks[i]),
            size, &err)) {
      result = g_strdup_printf ("read slot %u: %s", i, err->message);
      goto out;
    }
    if (memcmp (host, expect, size) != 0) {
      gsize at = 0;
      while (host[at] == expect[at])
        at++;
      result = g_strdup_printf ("slot %u differs at byte %" G_GSIZE_FORMAT,
          i, at);
      goto out;
    }
  }
  result = g_strdup_printf ("ok import_map_us=%.1f slots=%u",
      import_us / MAX (n_slots, 1), n_slots);

out:
  for (guint i = 0; i < CUDAIPC_MAX_SLOTS; i++)
    cudaipc_block_free (blocks[i]);
  g_free (host);
  g_free (expect);
  g_clear_error (&err);
  return result;
}

int
main (int argc, char **argv)
{
  return cudaipc_peer_main (argc, argv, "gpu-peer", run);
}
