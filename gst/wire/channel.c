/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The announce channel (channel.h has the contract).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE             /* memfd_create, F_ADD_SEALS */
#endif

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <gst/gst.h>

#include "common/error.h"
#include "common/fdutil.h"
#include "ring/shared-page.h"
#include "wire/channel.h"
#include "wire/wake.h"

#define HEADER_SIZE 4096
#define HEAD_OFFSET 0
#define TAIL_OFFSET 64
#define SLEEPING_OFFSET 128
#define RECORD_HEADER 8

#define KIND_MESSAGE 1u
#define KIND_MARK 2u
#define KIND_WRAP 3u

#define ALIGN8(n) (((n) + 7) & ~(gsize) 7)

struct _CudaIpcChannel
{
  guint8 *map;
  gsize map_size;
  guint8 *data;
  guint capacity;
  int memfd;
  CudaIpcWake *wake;            /* producer: wakes the consumer */
  int wake_fd;                  /* consumer: its end of the wake */
  guint64 *head, *tail;         /* in the page */
  guint32 *sleeping;
  guint64 mine;                 /* producer: head; consumer: tail */
  guint64 seen;                 /* producer: the last tail read */
};

static gboolean
capacity_ok (guint capacity)
{
  return capacity >= CUDAIPC_CHANNEL_MIN_CAPACITY &&
      capacity <= CUDAIPC_CHANNEL_MAX_CAPACITY &&
      (capacity & (capacity - 1)) == 0;
}

static gboolean
map_page (CudaIpcChannel * ch, GError ** error)
{
  ch->map_size = HEADER_SIZE + (gsize) ch->capacity;
  ch->map = mmap (NULL, ch->map_size, PROT_READ | PROT_WRITE, MAP_SHARED,
      ch->memfd, 0);
  if (ch->map == MAP_FAILED) {
    int e = errno;

    ch->map = NULL;
    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_IO,
        "mapping the announce channel: %s", g_strerror (e));
    return FALSE;
  }
  ch->head = (guint64 *) (ch->map + HEAD_OFFSET);
  ch->tail = (guint64 *) (ch->map + TAIL_OFFSET);
  ch->sleeping = (guint32 *) (ch->map + SLEEPING_OFFSET);
  ch->data = ch->map + HEADER_SIZE;
  return TRUE;
}

CudaIpcChannel *
cudaipc_channel_new (guint capacity, CudaIpcWake * wake, GError ** error)
{
  CudaIpcChannel *ch;

  g_return_val_if_fail (capacity_ok (capacity), NULL);
  g_return_val_if_fail (wake != NULL, NULL);

  ch = g_new0 (CudaIpcChannel, 1);
  ch->capacity = capacity;
  ch->wake = cudaipc_wake_ref (wake);
  ch->wake_fd = -1;
  ch->memfd = memfd_create ("cudaipc-channel", MFD_CLOEXEC |
      MFD_ALLOW_SEALING);
  if (ch->memfd < 0 || ftruncate (ch->memfd,
          (off_t) (HEADER_SIZE + (gsize) capacity)) < 0 ||
      fcntl (ch->memfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW |
          F_SEAL_SEAL) < 0) {
    int e = errno;

    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_IO,
        "making the announce channel: %s", g_strerror (e));
    cudaipc_channel_free (ch);
    return NULL;
  }
  if (!map_page (ch, error)) {
    cudaipc_channel_free (ch);
    return NULL;
  }
  return ch;
}

int
cudaipc_channel_get_memfd (CudaIpcChannel * ch)
{
  return ch->memfd;
}

int
cudaipc_channel_get_wake_fd (CudaIpcChannel * ch)
{
  return ch->wake ? cudaipc_wake_get_fd (ch->wake) : ch->wake_fd;
}

guint
cudaipc_channel_get_capacity (CudaIpcChannel * ch)
{
  return ch->capacity;
}

static void
put_header (CudaIpcChannel * ch, gsize off, guint32 len, guint32 kind)
{
  GST_WRITE_UINT32_LE (ch->data + off, len);
  GST_WRITE_UINT32_LE (ch->data + off + 4, kind);
}

gint
cudaipc_channel_write (CudaIpcChannel * ch, const guint8 * msg, gsize len)
{
  guint64 tail = __atomic_load_n (ch->tail, __ATOMIC_ACQUIRE);
  gsize need = RECORD_HEADER + ALIGN8 (msg ? len : 0);
  gsize off = (gsize) (ch->mine & (ch->capacity - 1));
  gsize to_end = ch->capacity - off;
  gsize total = need + (to_end < need ? to_end : 0);

  g_return_val_if_fail (len <= CUDAIPC_CHANNEL_MAX_RECORD, -EMSGSIZE);

  /* the consumer's tail moves forward, never past what was written */
  if (tail < ch->seen || tail > ch->mine)
    return -EPROTO;
  ch->seen = tail;
  if (ch->mine - tail + total > ch->capacity)
    return -EAGAIN;
  if (to_end < need) {
    /* the record goes whole at the start: the end is skipped */
    put_header (ch, off, 0, KIND_WRAP);
    ch->mine += to_end;
    off = 0;
  }
  put_header (ch, off, msg ? (guint32) len : 0, msg ? KIND_MESSAGE :
      KIND_MARK);
  if (msg)
    memcpy (ch->data + off + RECORD_HEADER, msg, len);
  ch->mine += need;
  __atomic_store_n (ch->head, ch->mine, __ATOMIC_SEQ_CST);
  /* a wake-up that cannot go (another consumer of the same user shut
   * the shared end) is no fault of this consumer's */
  if (__atomic_load_n (ch->sleeping, __ATOMIC_SEQ_CST))
    (void) cudaipc_wake_request (ch->wake);
  return 0;
}

/* Consumer */

/* The wake is only ever waited on, never read or written: it must be a
 * datagram socket, whose readiness a queued datagram makes. */
static gboolean
is_datagram_socket (int fd)
{
  struct stat st;
  int type = 0;
  socklen_t len = sizeof (type);

  return fstat (fd, &st) == 0 && S_ISSOCK (st.st_mode) &&
      getsockopt (fd, SOL_SOCKET, SO_TYPE, &type, &len) == 0 &&
      type == SOCK_DGRAM;
}

CudaIpcChannel *
cudaipc_channel_open (int memfd, int wake_fd, guint capacity, GError ** error)
{
  CudaIpcChannel *ch;

  if (!capacity_ok (capacity)) {
    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_INVALID,
        "the announce channel's capacity %u is not a power of two from "
        "%u to %u", capacity, CUDAIPC_CHANNEL_MIN_CAPACITY,
        CUDAIPC_CHANNEL_MAX_CAPACITY);
    goto fail;
  }
  if (!cudaipc_shared_page_check (memfd, "announce channel",
          HEADER_SIZE + (gsize) capacity, FALSE, error))
    goto fail;
  if (!is_datagram_socket (wake_fd)) {
    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_INVALID,
        "the announce channel's second fd is not a datagram socket");
    goto fail;
  }
  ch = g_new0 (CudaIpcChannel, 1);
  ch->memfd = memfd;
  ch->wake_fd = wake_fd;
  ch->capacity = capacity;
  if (!map_page (ch, error)) {
    cudaipc_channel_free (ch);
    return NULL;
  }
  /* the producer's counters start where it says, as long as they agree */
  ch->mine = __atomic_load_n (ch->tail, __ATOMIC_ACQUIRE);
  return ch;

fail:
  cudaipc_close_fd (&memfd);
  cudaipc_close_fd (&wake_fd);
  return NULL;
}

gint
cudaipc_channel_read (CudaIpcChannel * ch, guint8 * buf, gsize size,
    gsize * len)
{
  for (;;) {
    guint64 head = __atomic_load_n (ch->head, __ATOMIC_ACQUIRE);
    guint64 avail = head - ch->mine;
    gsize off = (gsize) (ch->mine & (ch->capacity - 1));
    gsize to_end = ch->capacity - off;
    guint32 rlen, kind;
    gsize need;

    if (head == ch->mine)
      return CUDAIPC_CHANNEL_EMPTY;
    /* a head behind ours wraps to a huge distance, caught here too */
    if (avail > ch->capacity || avail < RECORD_HEADER)
      return -EPROTO;
    rlen = GST_READ_UINT32_LE (ch->data + off);
    kind = GST_READ_UINT32_LE (ch->data + off + 4);
    if (kind == KIND_WRAP) {
      if (to_end > avail || off == 0)
        return -EPROTO;
      ch->mine += to_end;
      continue;
    }
    if (kind != KIND_MESSAGE && kind != KIND_MARK)
      return -EPROTO;
    if (kind == KIND_MARK)
      rlen = 0;
    need = RECORD_HEADER + ALIGN8 ((gsize) rlen);
    if (rlen > CUDAIPC_CHANNEL_MAX_RECORD || rlen > size || need > to_end ||
        need > avail)
      return -EPROTO;
    if (kind == KIND_MESSAGE)
      memcpy (buf, ch->data + off + RECORD_HEADER, rlen);
    ch->mine += need;
    __atomic_store_n (ch->tail, ch->mine, __ATOMIC_RELEASE);
    *len = rlen;
    return kind == KIND_MESSAGE ? CUDAIPC_CHANNEL_MESSAGE : CUDAIPC_CHANNEL_MARK;
  }
}

gboolean
cudaipc_channel_pending (CudaIpcChannel * ch)
{
  return __atomic_load_n (ch->head, __ATOMIC_ACQUIRE) != ch->mine;
}

gboolean
cudaipc_channel_begin_wait (CudaIpcChannel * ch, guint spin_us)
{
  if (cudaipc_channel_pending (ch))
    return TRUE;
  if (spin_us > 0) {
    gint64 until = g_get_monotonic_time () + spin_us;

    do {
      if (cudaipc_channel_pending (ch))
        return TRUE;
    } while (g_get_monotonic_time () < until);
  }
  __atomic_store_n (ch->sleeping, 1, __ATOMIC_SEQ_CST);
  if (__atomic_load_n (ch->head, __ATOMIC_SEQ_CST) != ch->mine) {
    __atomic_store_n (ch->sleeping, 0, __ATOMIC_RELAXED);
    return TRUE;
  }
  return FALSE;
}

void
cudaipc_channel_end_wait (CudaIpcChannel * ch)
{
  /* the wake is never read: the producer drains it */
  __atomic_store_n (ch->sleeping, 0, __ATOMIC_RELAXED);
}

void
cudaipc_channel_free (CudaIpcChannel * ch)
{
  if (ch == NULL)
    return;
  if (ch->map)
    munmap (ch->map, ch->map_size);
  cudaipc_close_fd (&ch->memfd);
  cudaipc_close_fd (&ch->wake_fd);
  cudaipc_wake_unref (ch->wake);
  g_free (ch);
}
