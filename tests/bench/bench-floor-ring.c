/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The floor's second row, (0r): the same bare hand-over as (0)
 * (bench-floor.c: the slots, their fds sent once, one copy a frame), but
 * frames announced through shared memory instead of a socket message, to
 * measure what such a ring could save before the elements carry one.
 *
 * One sealed memfd, made by the producer and sent to each consumer with
 * the slots (the socket stays for set-up and for noticing a peer's end):
 *
 *   head      frames announced (a futex word); written by the producer
 *   sleepers  consumers asleep on head, or about to be
 *   wake      a futex word the producer sleeps on while it waits for a
 *             slot, with the flag saying it does
 *   entries   one 32-byte message per slot, written before head moves
 *   done[c]   frames consumer c has released, in order
 *
 * Per frame the producer copies, writes the slot's entry, moves head, and
 * calls FUTEX_WAKE once for all consumers only where one sleeps; a
 * consumer reads the entry, stores done, and wakes the producer only
 * where it waits. A consumer that finds nothing new spins for --spin-us
 * (0: not at all) before it sleeps. The sides' store-then-load pairs
 * (head then sleepers, sleepers then head; done then the waiting flag,
 * the flag then done) are sequentially consistent, so no wake-up is lost.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE             /* memfd_create, F_ADD_SEALS */
#endif

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "bench-floor.h"
#include "ring/shared-page.h"

#define LINE 64

typedef struct
{
  guint32 head;
  guint8 pad0[LINE - 4];
  guint32 sleepers;
  guint8 pad1[LINE - 4];
  guint32 wake, waiting;
  guint8 pad2[LINE - 8];
  FloorMsg entries[FLOOR_MAX_SLOTS];
  struct
  {
    guint64 done;
    guint8 pad[LINE - 8];
  } consumers[FLOOR_MAX_CLIENTS];
} RingPage;

struct _FloorRing
{
  RingPage *page;
  int fd;
  guint n_slots, n_consumers, index;
  guint64 next;                 /* consumer: the next frame to read */
  guint64 all_done;             /* producer: the least done[] seen */
};

static long
futex (guint32 * word, int op, guint32 val, const struct timespec *timeout)
{
  return syscall (SYS_futex, word, op, val, timeout, NULL, 0);
}

static void
ms_to_timespec (gint ms, struct timespec *ts)
{
  ts->tv_sec = ms / 1000;
  ts->tv_nsec = (long) (ms % 1000) * 1000000L;
}

gsize
floor_ring_size (void)
{
  return (sizeof (RingPage) + 4095) & ~(gsize) 4095;
}

/* Maps @r's page; FALSE with a message (@who: whose). */
static gboolean
map_page (FloorRing * r, const gchar * who)
{
  r->page = mmap (NULL, floor_ring_size (), PROT_READ | PROT_WRITE,
      MAP_SHARED, r->fd, 0);
  if (r->page != MAP_FAILED)
    return TRUE;
  g_printerr ("%s: cannot map the page: %s\n", who, g_strerror (errno));
  r->page = NULL;
  return FALSE;
}

FloorRing *
floor_ring_new (guint n_slots, guint n_consumers)
{
  FloorRing *r = g_new0 (FloorRing, 1);
  gsize size = floor_ring_size ();

  r->n_slots = n_slots;
  r->n_consumers = n_consumers;
  r->fd = memfd_create ("floor-ring", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (r->fd < 0 || ftruncate (r->fd, (off_t) size) < 0 ||
      fcntl (r->fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)
      < 0) {
    g_printerr ("floor-ring: cannot make the page: %s\n", g_strerror (errno));
    floor_ring_free (r);
    return NULL;
  }
  if (!map_page (r, "floor-ring")) {
    floor_ring_free (r);
    return NULL;
  }
  return r;
}

int
floor_ring_get_fd (FloorRing * r)
{
  return r->fd;
}

FloorRing *
floor_ring_open (int fd, guint n_slots, guint index)
{
  FloorRing *r;
  GError *err = NULL;

  if (n_slots == 0 || n_slots > FLOOR_MAX_SLOTS || index >= FLOOR_MAX_CLIENTS) {
    g_printerr ("floor-ring consumer: %u slots, consumer %u\n", n_slots,
        index);
    close (fd);
    return NULL;
  }
  /* the producer must not be able to cut the page under the mapping */
  if (!cudaipc_shared_page_check (fd, "floor ring page", floor_ring_size (),
          FALSE, &err)) {
    g_printerr ("floor-ring consumer: %s\n", err->message);
    g_clear_error (&err);
    close (fd);
    return NULL;
  }
  r = g_new0 (FloorRing, 1);
  r->fd = fd;
  r->n_slots = n_slots;
  r->index = index;
  if (!map_page (r, "floor-ring consumer")) {
    floor_ring_free (r);
    return NULL;
  }
  return r;
}

void
floor_ring_free (FloorRing * r)
{
  if (r == NULL)
    return;
  if (r->page)
    munmap (r->page, floor_ring_size ());
  if (r->fd >= 0)
    close (r->fd);
  g_free (r);
}

/* Producer */

/* The least frame count every consumer has released. */
static guint64
least_done (FloorRing * r)
{
  guint64 least = G_MAXUINT64;

  for (guint c = 0; c < r->n_consumers; c++) {
    guint64 d = __atomic_load_n (&r->page->consumers[c].done,
        __ATOMIC_ACQUIRE);

    least = MIN (least, d);
  }
  return least;
}

gboolean
floor_ring_wait_free (FloorRing * r, guint64 i, gint timeout_ms)
{
  RingPage *p = r->page;
  gint64 deadline = bench_now_ns () + (gint64) timeout_ms * 1000000;

  /* frame i goes into the slot of frame i - n_slots, free once every
   * consumer released that one; done[] is read again only when needed */
  while (i >= r->n_slots && r->all_done < i - r->n_slots + 1) {
    guint32 seen;
    struct timespec ts;

    r->all_done = least_done (r);
    if (r->all_done >= i - r->n_slots + 1)
      break;
    seen = __atomic_load_n (&p->wake, __ATOMIC_SEQ_CST);
    __atomic_store_n (&p->waiting, 1, __ATOMIC_SEQ_CST);
    r->all_done = least_done (r);
    if (r->all_done < i - r->n_slots + 1) {
      if (bench_now_ns () > deadline) {
        __atomic_store_n (&p->waiting, 0, __ATOMIC_SEQ_CST);
        g_printerr ("floor-ring: no slot came free in %d ms\n", timeout_ms);
        return FALSE;
      }
      ms_to_timespec (10, &ts);
      futex (&p->wake, FUTEX_WAIT, seen, &ts);
    }
    __atomic_store_n (&p->waiting, 0, __ATOMIC_SEQ_CST);
  }
  return TRUE;
}

void
floor_ring_announce (FloorRing * r, const FloorMsg * m)
{
  RingPage *p = r->page;

  p->entries[m->slot] = *m;
  __atomic_store_n (&p->head, (guint32) (m->index + 1), __ATOMIC_SEQ_CST);
  if (__atomic_load_n (&p->sleepers, __ATOMIC_SEQ_CST) > 0)
    futex (&p->head, FUTEX_WAKE, INT_MAX, NULL);
}

/* Consumer */

gint
floor_ring_next (FloorRing * r, FloorMsg * m, gint spin_us, gint idle_ms)
{
  RingPage *p = r->page;
  guint32 want = (guint32) r->next;
  gint64 spin_until = spin_us > 0 ? bench_now_ns () + spin_us * 1000 : 0;
  gint64 idle_until = bench_now_ns () + (gint64) idle_ms * 1000000;

  for (;;) {
    guint32 head = __atomic_load_n (&p->head, __ATOMIC_ACQUIRE);
    struct timespec ts;

    if (head != want)
      break;
    if (spin_until && bench_now_ns () < spin_until)
      continue;
    __atomic_add_fetch (&p->sleepers, 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n (&p->head, __ATOMIC_SEQ_CST) == want) {
      ms_to_timespec (100, &ts);
      futex (&p->head, FUTEX_WAIT, want, &ts);
    }
    __atomic_sub_fetch (&p->sleepers, 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n (&p->head, __ATOMIC_ACQUIRE) == want &&
        bench_now_ns () > idle_until)
      return 0;
  }
  /* the entry is copied, then checked: the producer is not trusted to
   * leave it alone */
  *m = p->entries[r->next % r->n_slots];
  if (m->index != r->next || m->slot != r->next % r->n_slots ||
      m->type != FLOOR_FRAME)
    return -1;
  r->next++;
  return 1;
}

void
floor_ring_release (FloorRing * r)
{
  RingPage *p = r->page;

  __atomic_store_n (&p->consumers[r->index].done, r->next, __ATOMIC_SEQ_CST);
  if (__atomic_load_n (&p->waiting, __ATOMIC_SEQ_CST)) {
    __atomic_add_fetch (&p->wake, 1, __ATOMIC_SEQ_CST);
    futex (&p->wake, FUTEX_WAKE, 1, NULL);
  }
}
