/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The announce channel: one producer-to-consumer direction of a
 * connection carried through shared memory instead of the socket, for a
 * consumer that asks for it (CUDAIPC_CAP_CHANNEL; docs/protocol.md,
 * Announce channel). The producer makes it and sends its two fds with a
 * CHANNEL message (the page and the consumer's end of a wake, wake.h);
 * from then on every message it sends that connection
 * is a record in the channel, and one with fds (or too long for a record)
 * goes on the socket behind a record that marks it, so the order of the
 * messages is the order of the records.
 *
 * The page (a sealed memfd, mapped by both): a header page, then
 * @capacity bytes of records (a power of two).
 *
 *   head      bytes written, by the producer (offset 0)
 *   tail      bytes read, by the consumer (offset 64)
 *   sleeping  non-zero while the consumer waits, or is about to (offset
 *             128)
 *
 * A record: a 32-bit length and a 32-bit kind (message, mark, or wrap:
 * the rest of the space up to its end is skipped), then the message's
 * bytes, padded to 8. The producer moves head after the record; a
 * consumer that sleeps is woken through the wake, which the producer
 * asks for only where it finds sleeping set after moving head (both
 * sides' store-then-load pairs are sequentially consistent, so no
 * wake-up is lost; a spurious one costs the consumer a look at head).
 * The consumer waits on its end of the wake edge-triggered and never
 * reads it, so nothing the producer does to that socket can block it.
 *
 * Neither side trusts the other's word: each keeps its own counter and
 * checks the other's against it (a tail beyond head, or behind the last
 * seen; a head more than the capacity ahead; a record that does not fit)
 * and a record's bytes are copied out before they are parsed. The page is
 * sealed against shrinking and growing, so neither can cut it under the
 * other's mapping.
 *
 * Not thread-safe: the producer writes under its server lock, the
 * consumer reads with its right to read.
 */
#pragma once

#include <glib.h>

#include "wire/wake.h"

G_BEGIN_DECLS

typedef struct _CudaIpcChannel CudaIpcChannel;

/* Bytes of records: the default a producer makes, and the limits a
 * consumer accepts. */
#define CUDAIPC_CHANNEL_CAPACITY (128 * 1024)
#define CUDAIPC_CHANNEL_MIN_CAPACITY (4 * 1024)
#define CUDAIPC_CHANNEL_MAX_CAPACITY (4 * 1024 * 1024)
/* The longest message that goes as a record; a longer one is marked and
 * goes on the socket. */
#define CUDAIPC_CHANNEL_MAX_RECORD (16 * 1024)

/* What a read gives. */
typedef enum
{
  CUDAIPC_CHANNEL_EMPTY = 0,
  CUDAIPC_CHANNEL_MESSAGE = 1,
  CUDAIPC_CHANNEL_MARK = 2,     /* the next message is on the socket */
} CudaIpcChannelRead;

/* Producer: a new channel of @capacity bytes (a power of two within the
 * limits) that wakes its consumer through @wake (a reference is taken;
 * several channels may share one); NULL with @error. */
CudaIpcChannel *cudaipc_channel_new (guint capacity, CudaIpcWake * wake,
    GError ** error);
/* The page's memfd and the wake's consumer end, borrowed (the producer's
 * to send; the consumer's to wait on). */
int cudaipc_channel_get_memfd (CudaIpcChannel * ch);
int cudaipc_channel_get_wake_fd (CudaIpcChannel * ch);
guint cudaipc_channel_get_capacity (CudaIpcChannel * ch);
/* Producer: @len bytes of @msg as a record (a MARK where @msg is NULL).
 * 0, -EAGAIN where the records do not fit (the consumer is behind),
 * -EPROTO where the consumer's tail is not one it could have written. */
gint cudaipc_channel_write (CudaIpcChannel * ch, const guint8 * msg,
    gsize len);

/* Consumer: maps the page of @memfd of @capacity bytes of records, with
 * @wake_fd, a datagram socket to wait on (both taken, closed on failure),
 * after checking them; NULL with @error (CUDAIPC_ERROR_INVALID). */
CudaIpcChannel *cudaipc_channel_open (int memfd, int wake_fd, guint capacity,
    GError ** error);
/* Consumer: the next record: a MESSAGE copied into @buf (at most @size
 * bytes, its length in @len), a MARK, or EMPTY; -EPROTO where the
 * producer's head or the record is not one a producer could have
 * written. */
gint cudaipc_channel_read (CudaIpcChannel * ch, guint8 * buf, gsize size,
    gsize * len);
/* Consumer: whether a record is there. */
gboolean cudaipc_channel_pending (CudaIpcChannel * ch);
/* Consumer: before waiting on the wake: reads busily for up to
 * @spin_us, then says it sleeps; TRUE where a record came meanwhile (no
 * wait then, and not sleeping). */
gboolean cudaipc_channel_begin_wait (CudaIpcChannel * ch, guint spin_us);
/* Consumer: after the wait: not sleeping (the wake is not read). */
void cudaipc_channel_end_wait (CudaIpcChannel * ch);

void cudaipc_channel_free (CudaIpcChannel * ch);

G_END_DECLS
