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
#include <sys/eventfd.h>
#include <sys/mman.h>

#include <gst/gst.h>

#include "common/error.h"
#include "common/fdutil.h"
#include "ring/shared-page.h"
#include "wire/channel.h"

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
  int memfd, eventfd;
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
cudaipc_channel_new (guint capacity, GError ** error)
{
  CudaIpcChannel *ch;

  g_return_val_if_fail (capacity_ok (capacity), NULL);

  ch = g_new0 (CudaIpcChannel, 1);
  ch->capacity = capacity;
  ch->eventfd = -1;
  ch->memfd = memfd_create ("cudaipc-channel", MFD_CLOEXEC |
      MFD_ALLOW_SEALING);
  if (ch->memfd < 0 || ftruncate (ch->memfd,
          (off_t) (HEADER_SIZE + (gsize) capacity)) < 0 ||
      fcntl (ch->memfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW |
          F_SEAL_SEAL) < 0 ||
      (ch->eventfd = eventfd (0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0) {
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
cudaipc_channel_get_eventfd (CudaIpcChannel * ch)
{
  return ch->eventfd;
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
  if (__atomic_load_n (ch->sleeping, __ATOMIC_SEQ_CST)) {
    guint64 one = 1;

    /* EAGAIN only at a count near 2^64: the consumer is awake anyway */
    if (write (ch->eventfd, &one, sizeof (one)) < 0 && errno != EAGAIN)
      return -errno;
  }
  return 0;
}

/* Consumer */

static gboolean
is_eventfd (int fd)
{
  g_autofree gchar *path = g_strdup_printf ("/proc/self/fd/%d", fd);
  gchar target[64];
  ssize_t n = readlink (path, target, sizeof (target) - 1);

  /* without /proc, the fd is only ever polled and read without blocking:
   * another kind of file harms nothing but this connection */
  if (n < 0)
    return errno == ENOENT;
  target[n] = '\0';
  return g_str_equal (target, "anon_inode:[eventfd]");
}

CudaIpcChannel *
cudaipc_channel_open (int memfd, int eventfd, guint capacity, GError ** error)
{
  CudaIpcChannel *ch;
  int flags;

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
  if (!is_eventfd (eventfd)) {
    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_INVALID,
        "the announce channel's second fd is not an eventfd");
    goto fail;
  }
  /* read without blocking: a spurious wake-up finds it empty */
  flags = fcntl (eventfd, F_GETFL);
  if (flags < 0 || fcntl (eventfd, F_SETFL, flags | O_NONBLOCK) < 0) {
    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_INVALID,
        "the announce channel's eventfd: %s", g_strerror (errno));
    goto fail;
  }
  ch = g_new0 (CudaIpcChannel, 1);
  ch->memfd = memfd;
  ch->eventfd = eventfd;
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
  cudaipc_close_fd (&eventfd);
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
  guint64 value;

  __atomic_store_n (ch->sleeping, 0, __ATOMIC_RELAXED);
  /* one read takes the whole count (not EFD_SEMAPHORE); EAGAIN where the
   * wait ended for the socket, a timeout or a cancel */
  if (read (ch->eventfd, &value, sizeof (value)) < 0) {
  }
}

void
cudaipc_channel_free (CudaIpcChannel * ch)
{
  if (ch == NULL)
    return;
  if (ch->map)
    munmap (ch->map, ch->map_size);
  cudaipc_close_fd (&ch->memfd);
  cudaipc_close_fd (&ch->eventfd);
  g_free (ch);
}
