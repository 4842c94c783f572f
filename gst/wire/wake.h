/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The announce channel's wake-up (docs/protocol.md, CHANNEL): how a
 * producer wakes the consumers that sleep on their channels.
 *
 * A pair of connected datagram sockets. The producer keeps one end to
 * send on and gives the other to each consumer it serves with this wake;
 * a consumer waits on its end edge-triggered (an epoll with EPOLLET) and
 * never reads it, so one datagram wakes every consumer waiting on the
 * end at that moment, and the producer drains the queue itself when its
 * sends no longer fit. Every send and receive of the producer's is
 * MSG_DONTWAIT, which holds whatever a consumer sets on its copy of the
 * end (O_NONBLOCK belongs to the file that all the copies share): no
 * consumer can make the producer block. The producer's own end is shut
 * for reading, so no consumer can send it anything.
 *
 * Sharing one wake among consumers makes one system call a frame wake
 * them all; a consumer can then disturb the others (a datagram of its own
 * wakes them for nothing, a shutdown leaves them asleep), so the producer
 * shares a wake only among the connections of one user, which could
 * signal each other's processes anyway (server-client.c).
 *
 * Batching: between hold() and flush(), requests are remembered and one
 * datagram goes at the flush, so that a frame told to many consumers
 * costs one. Not thread-safe: the producer uses it under its server
 * lock.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct _CudaIpcWake CudaIpcWake;

/* A new wake for the connections of @uid; NULL with @error. */
CudaIpcWake *cudaipc_wake_new (guint uid, GError ** error);
CudaIpcWake *cudaipc_wake_ref (CudaIpcWake * w);
void cudaipc_wake_unref (CudaIpcWake * w);
/* How many references it has: the server drops a wake no channel uses. */
gint cudaipc_wake_get_refcount (CudaIpcWake * w);
guint cudaipc_wake_get_uid (CudaIpcWake * w);
/* The end the consumers get, borrowed (to send). */
int cudaipc_wake_get_fd (CudaIpcWake * w);

/* A consumer sleeps: wake it now, or at the flush while held. 0, or a
 * negative errno where the datagram could not go (the consumers' end was
 * shut by one of them: nothing to do for the others). */
gint cudaipc_wake_request (CudaIpcWake * w);
void cudaipc_wake_hold (CudaIpcWake * w);
/* Ends a hold: one datagram where any request came during it. */
gint cudaipc_wake_flush (CudaIpcWake * w);

/* Datagrams sent and drains made, for tests and stats. */
guint64 cudaipc_wake_get_sent (CudaIpcWake * w);
guint64 cudaipc_wake_get_drains (CudaIpcWake * w);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (CudaIpcWake, cudaipc_wake_unref)

G_END_DECLS
