/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * pinning-consumer: a consumer that plays stuck, keeps every fd it is sent
 * and connects again, for the fault tests (docs/design.md, Trust model:
 * pinned rings). Usage:
 *
 *   pinning-consumer SOCKET SECONDS
 *
 * For SECONDS it connects, says HELLO, keeps every RING's and SLOT's fds
 * (so that every ring it was sent stays allocated) and releases no frame,
 * until the producer drops it; then it connects again at once. A BYE
 * before any RING is a refusal: it tries again 100 ms later.
 *
 * Prints "pinning-consumer connections=C rings=R refused=F" and, where it
 * was refused, "refusal: TEXT" (the last); exits 0, 1 where it never
 * connected.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>
#include <unistd.h>

#include <glib.h>

#include "wire/connection.h"

#define MAX_KEPT 1024

static int kept[MAX_KEPT];
static guint n_kept;

static void
keep (CudaIpcMsg * msg)
{
  for (guint i = 0; i < msg->n_fds; i++) {
    if (n_kept < MAX_KEPT)
      kept[n_kept++] = msg->fds[i];
    else
      close (msg->fds[i]);
  }
  msg->n_fds = 0;
}

/* One connection until the producer ends it: TRUE where it was a refusal
 * (a BYE before any RING, its text in @refusal). */
static gboolean
one_connection (CudaIpcConn * conn, guint * rings, gchar ** refusal)
{
  gboolean got_ring = FALSE;
  CudaIpcMsg msg;
  gint ret;

  while (cudaipc_conn_wait (conn, 5000) > 0) {
    ret = cudaipc_conn_recv (conn, &msg);
    if (ret < 0)
      break;
    if (msg.type == CUDAIPC_MSG_HELLO) {
      CudaIpcMsg hello;

      cudaipc_msg_init (&hello, CUDAIPC_MSG_HELLO);
      hello.u.hello.version = CUDAIPC_PROTOCOL_VERSION;
      hello.u.hello.backend = msg.u.hello.backend;
      memcpy (hello.u.hello.uuid, msg.u.hello.uuid, CUDAIPC_UUID_LEN);
      hello.u.hello.pid = getpid ();
      hello.u.hello.name = "pinning-consumer";
      cudaipc_conn_send (conn, &hello);
    } else if (msg.type == CUDAIPC_MSG_RING) {
      got_ring = TRUE;
      (*rings)++;
      keep (&msg);
    } else if (msg.type == CUDAIPC_MSG_SLOT) {
      keep (&msg);
    } else if (msg.type == CUDAIPC_MSG_BYE) {
      gboolean refused = !got_ring;

      if (refused) {
        g_free (*refusal);
        *refusal = g_strdup (msg.u.bye.text);
      }
      cudaipc_msg_clear (&msg);
      return refused;
    }
    /* FRAME: never released */
    cudaipc_msg_clear (&msg);
  }
  return FALSE;
}

int
main (int argc, char **argv)
{
  guint connections = 0, rings = 0, refused = 0;
  g_autofree gchar *refusal = NULL;
  gint64 end;

  if (argc != 3) {
    g_printerr ("usage: %s SOCKET SECONDS\n", argv[0]);
    return 2;
  }
  end = g_get_monotonic_time () + g_ascii_strtoll (argv[2], NULL, 10) *
      G_USEC_PER_SEC;
  while (g_get_monotonic_time () < end) {
    CudaIpcConn *conn;
    int fd = -1;

    if (cudaipc_socket_connect (argv[1], &fd) != 0) {
      g_usleep (50000);
      continue;
    }
    conn = cudaipc_conn_new (fd);
    connections++;
    if (one_connection (conn, &rings, &refusal)) {
      refused++;
      g_usleep (100000);
    }
    cudaipc_conn_free (conn);
  }
  g_print ("pinning-consumer connections=%u rings=%u refused=%u\n",
      connections, rings, refused);
  if (refusal)
    g_print ("refusal: %s\n", refusal);
  for (guint i = 0; i < n_kept; i++)
    close (kept[i]);
  return connections > 0 ? 0 : 1;
}
