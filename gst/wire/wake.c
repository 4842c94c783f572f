/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The announce channel's wake-up (wake.h has the contract).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE             /* recvmmsg */
#endif

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>

#include "common/error.h"
#include "common/fdutil.h"
#include "wire/wake.h"

/* datagrams taken out of the queue a call, while draining */
#define DRAIN_BATCH 64
/* calls a drain makes at most: a consumer that fills the queue as fast as
 * the producer drains it gets no more of the producer's time than this */
#define DRAIN_CALLS 16

struct _CudaIpcWake
{
  gint refcount;                /* atomic */
  guint uid;
  int tx;                       /* ours: sends, shut for reading */
  int rx;                       /* the consumers': we only drain it */
  gboolean held;
  gboolean pending;
  guint64 sent, drains;
};

CudaIpcWake *
cudaipc_wake_new (guint uid, GError ** error)
{
  CudaIpcWake *w;
  int sv[2] = { -1, -1 };

  /* shut so that nothing a consumer sends on its end can reach ours */
  if (socketpair (AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0,
          sv) < 0 || shutdown (sv[0], SHUT_RD) < 0 ||
      shutdown (sv[1], SHUT_WR) < 0) {
    int e = errno;

    cudaipc_close_fds (sv, 2);
    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_IO,
        "making the announce channel's wake-up: %s", g_strerror (e));
    return NULL;
  }
  w = g_new0 (CudaIpcWake, 1);
  w->refcount = 1;
  w->uid = uid;
  w->tx = sv[0];
  w->rx = sv[1];
  return w;
}

CudaIpcWake *
cudaipc_wake_ref (CudaIpcWake * w)
{
  g_atomic_int_inc (&w->refcount);
  return w;
}

void
cudaipc_wake_unref (CudaIpcWake * w)
{
  if (w == NULL || !g_atomic_int_dec_and_test (&w->refcount))
    return;
  cudaipc_close_fd (&w->tx);
  cudaipc_close_fd (&w->rx);
  g_free (w);
}

gint
cudaipc_wake_get_refcount (CudaIpcWake * w)
{
  return g_atomic_int_get (&w->refcount);
}

guint
cudaipc_wake_get_uid (CudaIpcWake * w)
{
  return w->uid;
}

int
cudaipc_wake_get_fd (CudaIpcWake * w)
{
  return w->rx;
}

/* Empties the consumers' end: nobody else reads it. */
static void
drain (CudaIpcWake * w)
{
  struct mmsghdr msgs[DRAIN_BATCH];
  guint8 bytes[DRAIN_BATCH];
  struct iovec iov[DRAIN_BATCH];

  w->drains++;
  memset (msgs, 0, sizeof (msgs));
  for (guint i = 0; i < DRAIN_BATCH; i++) {
    iov[i].iov_base = &bytes[i];
    iov[i].iov_len = 1;
    msgs[i].msg_hdr.msg_iov = &iov[i];
    msgs[i].msg_hdr.msg_iovlen = 1;
  }
  for (guint calls = 0; calls < DRAIN_CALLS; calls++) {
    int n = recvmmsg (w->rx, msgs, DRAIN_BATCH, MSG_DONTWAIT, NULL);

    if (n < DRAIN_BATCH)
      break;
  }
}

static gint
send_one (CudaIpcWake * w)
{
  static const guint8 one = 1;

  for (guint tries = 0; tries < 2; tries++) {
    if (send (w->tx, &one, 1, MSG_DONTWAIT | MSG_NOSIGNAL) == 1) {
      w->sent++;
      return 0;
    }
    if (errno == EINTR)
      continue;
    if (errno != EAGAIN && errno != ENOBUFS)
      return -errno;
    /* the queue is full of datagrams no consumer read: they woke whom
     * they could, and a fresh one after them still will */
    drain (w);
  }
  return -EAGAIN;
}

gint
cudaipc_wake_request (CudaIpcWake * w)
{
  if (w->held) {
    w->pending = TRUE;
    return 0;
  }
  return send_one (w);
}

void
cudaipc_wake_hold (CudaIpcWake * w)
{
  w->held = TRUE;
}

gint
cudaipc_wake_flush (CudaIpcWake * w)
{
  gboolean pending = w->pending;

  w->held = FALSE;
  w->pending = FALSE;
  return pending ? send_one (w) : 0;
}

guint64
cudaipc_wake_get_sent (CudaIpcWake * w)
{
  return w->sent;
}

guint64
cudaipc_wake_get_drains (CudaIpcWake * w)
{
  return w->drains;
}
