/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The consumer's transport (client.h has the contract; client-private.h
 * says who calls what): the session that owns the connection and its
 * send lock, the waits that cancel() ends, receiving one message, and the
 * two messages the consumer sends after its HELLO, RELEASE and BYE. It
 * calls none of the client's other files.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <poll.h>
#include <time.h>
#include <unistd.h>

#include "consumer/client-private.h"

#define GST_CAT_DEFAULT cudaipc_client_debug

/* Messages read and dropped before closing with a BYE. */
#define CLOSE_DRAIN_MSGS 256
/* a wait for a message at least this long slept (a poll that finds the
 * message there returns within a microsecond or two) */
#define SLEPT_US 5

/* Session */

Session *
cudaipc_session_new (void)
{
  Session *s = g_new0 (Session, 1);

  s->refcount = 1;
  g_mutex_init (&s->lock);
  return s;
}

Session *
cudaipc_session_ref (Session * s)
{
  g_atomic_int_inc (&s->refcount);
  return s;
}

void
cudaipc_session_unref (Session * s)
{
  if (!s || !g_atomic_int_dec_and_test (&s->refcount))
    return;
  /* the client closed the connection before dropping its reference */
  g_warn_if_fail (s->conn == NULL);
  cudaipc_conn_free (s->conn);
  cudaipc_release_page_free (s->page);
  g_mutex_clear (&s->lock);
  g_free (s->event_refusal);
  g_free (s);
}

gint
cudaipc_session_send_release_locked (Session * s, guint32 generation,
    guint32 slot, guint64 seq)
{
  CudaIpcMsg msg;
  gint ret;

  /* a frame of the current ring goes back through the page where there is
   * one, and with a message as well only where the producer waits for it */
  if (s->page && generation == s->generation &&
      !cudaipc_release_page_release (s->page, slot, seq)) {
    s->released++;
    return 0;
  }
  cudaipc_msg_init (&msg, CUDAIPC_MSG_RELEASE);
  msg.u.release.generation = generation;
  msg.u.release.slot = slot;
  msg.u.release.seq = seq;
  ret = cudaipc_conn_send (s->conn, &msg);
  if (ret == 0)
    s->released++;
  return ret;
}

void
cudaipc_session_hang_up_locked (Session * s, CudaIpcByeReason reason,
    const gchar * text)
{
  if (s->conn == NULL)
    return;
  if (text != NULL) {
    gint ret = cudaipc_client_send_bye (s->conn, reason, text);

    if (ret < 0)
      GST_DEBUG ("could not send BYE: %s", g_strerror (-ret));
    /* a socket closed with unread messages resets the connection, and
     * the producer would read that instead of the BYE: read (and close
     * the fds of) what is already there, a bounded number */
    if (cudaipc_conn_set_nonblocking (s->conn, TRUE) == 0) {
      for (guint i = 0; i < CLOSE_DRAIN_MSGS; i++) {
        CudaIpcMsg msg;

        if (cudaipc_conn_recv (s->conn, &msg) != 0)
          break;
        cudaipc_msg_clear (&msg);
      }
    }
  }
  cudaipc_conn_free (s->conn);
  s->conn = NULL;
  g_clear_pointer (&s->page, cudaipc_release_page_free);
}

gint
cudaipc_client_send_bye (CudaIpcConn * conn, CudaIpcByeReason reason,
    const gchar * text)
{
  CudaIpcMsg msg;

  cudaipc_msg_init (&msg, CUDAIPC_MSG_BYE);
  msg.u.bye.reason = reason;
  msg.u.bye.text = text;
  return cudaipc_conn_send (conn, &msg);
}

/* Waiting and receiving */

gint
cudaipc_client_wait_readable (CudaIpcClient * client, int fd, gint64 deadline)
{
  for (;;) {
    struct pollfd pfd[2] = {
      {client->wake_fd, POLLIN, 0},
      {fd, POLLIN, 0},
    };
    struct timespec ts, *timeout = NULL;
    int n;

    if (g_atomic_int_get (&client->cancelled))
      return -ECANCELED;
    if (deadline > 0) {
      gint64 left = deadline - g_get_monotonic_time ();

      if (left <= 0)
        return 0;
      /* to the microsecond: a sleep of a few tens of them (between
       * reads of a fence word) must not last a whole millisecond; the
       * thread's timer slack may still end it later, which the fence
       * wait lowers for its sleeps (client-copy.c) */
      ts.tv_sec = left / G_USEC_PER_SEC;
      ts.tv_nsec = (left % G_USEC_PER_SEC) * 1000;
      timeout = &ts;
    }

    n = ppoll (pfd, fd >= 0 ? 2 : 1, timeout, NULL);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return -errno;
    }
    /* only a wake-up whose cancel() still holds cancels */
    if ((pfd[0].revents & POLLIN) && g_atomic_int_get (&client->cancelled))
      return -ECANCELED;
    if (fd >= 0 && pfd[1].revents != 0) {
      if (pfd[1].revents & POLLNVAL)
        return -EBADF;
      /* POLLHUP and POLLERR too: recv says what happened */
      return 1;
    }
    if (pfd[0].revents & POLLIN) {
      guint64 value;

      /* stale: uncancel() ran between the write and now */
      while (read (client->wake_fd, &value, sizeof (value)) > 0) {
      }
    }
  }
}

gint
cudaipc_client_recv_msg (CudaIpcClient * client, CudaIpcConn * conn,
    CudaIpcMsg * msg, gint64 deadline)
{
  gboolean cancelled;
  gint ret;

  cudaipc_msg_init (msg, 0);
  if (deadline < 0)
    return cudaipc_conn_recv (conn, msg);
  cancelled = g_atomic_int_get (&client->cancelled);
  /* a message already there (frames flat out, the producer ahead) needs
   * no poll first; but where the last wait slept, the consumer is the
   * one ahead, and a read first would find nothing. A channel's record
   * is seen by begin_wait() without a call, and its socket has something
   * only when the poll says so */
  if (!cancelled && !client->recv_slept &&
      !cudaipc_conn_has_rx_channel (conn)) {
    ret = cudaipc_conn_try_recv (conn, msg);
    if (ret != -EAGAIN)
      return ret;
  }
  if (!cancelled && cudaipc_conn_begin_wait (conn, TRUE)) {
    ret = 1;
  } else {
    gint64 start = g_get_monotonic_time ();

    ret = cudaipc_client_wait_readable (client,
        cudaipc_conn_get_wait_fd (conn), deadline);
    cudaipc_conn_end_wait (conn);
    client->recv_slept = g_get_monotonic_time () - start >= SLEPT_US;
  }
  if (ret == 0)
    return -ETIMEDOUT;
  if (ret < 0)
    return ret;
  return cudaipc_conn_recv (conn, msg);
}
