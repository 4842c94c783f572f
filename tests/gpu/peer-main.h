/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The shared frame of the gpu suite's second processes (gpu-peer,
 * gpu-fence-peer): open CUDA device 0, connect to the socket given on the
 * command line, run the peer's own part, report its result in a BYE
 * (reason NORMAL when it starts with "ok", PROTOCOL otherwise), then wait
 * for the test's BYE before closing. Exit status 0 once the result was
 * sent, 1 on a failure it could not report, 2 on bad usage.
 */
#pragma once

#include <glib.h>

#include "wire/connection.h"
#include "device/device.h"

typedef gchar *(*CudaIpcPeerFunc) (CudaIpcConn * conn, CudaIpcDevice * dev);

static int
cudaipc_peer_main (int argc, char **argv, const gchar * name,
    CudaIpcPeerFunc run)
{
  CudaIpcConn *conn;
  CudaIpcDevice *dev;
  CudaIpcMsg msg;
  GError *err = NULL;
  gchar *result;
  int fd = -1, ret;

  if (argc != 2) {
    g_printerr ("usage: %s SOCKET\n", argv[0]);
    return 2;
  }
  dev = cudaipc_device_new (CUDAIPC_BACKEND_CUDA, 0, &err);
  if (!dev) {
    g_printerr ("%s: %s\n", name, err->message);
    g_clear_error (&err);
    return 1;
  }
  if ((ret = cudaipc_socket_connect (argv[1], &fd)) < 0) {
    g_printerr ("%s: connect %s: %s\n", name, argv[1], g_strerror (-ret));
    cudaipc_device_unref (dev);
    return 1;
  }
  conn = cudaipc_conn_new (fd);

  result = run (conn, dev);
  cudaipc_msg_init (&msg, CUDAIPC_MSG_BYE);
  msg.u.bye.reason = g_str_has_prefix (result, "ok") ? CUDAIPC_BYE_NORMAL :
      CUDAIPC_BYE_PROTOCOL;
  msg.u.bye.text = result;
  ret = cudaipc_conn_send (conn, &msg) < 0 ? 1 : 0;
  g_free (result);

  /* wait for the test to finish with us before closing */
  cudaipc_msg_init (&msg, CUDAIPC_MSG_BYE);
  while (cudaipc_conn_wait (conn, 60000) == 1 &&
      cudaipc_conn_recv (conn, &msg) == 0) {
    gboolean bye = msg.type == CUDAIPC_MSG_BYE;

    cudaipc_msg_clear (&msg);
    if (bye)
      break;
  }
  cudaipc_conn_free (conn);
  cudaipc_device_unref (dev);
  return ret;
}
