/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Rings pinned by consumers the producer dropped (server-private.h). A
 * consumer dropped as stuck while it holds slots makes the producer
 * retire the ring, and the ring's memory lives on for as long as that
 * consumer keeps its fds or mappings, which the producer cannot see. One
 * that plays stuck, keeps every fd and connects again would have the
 * producer build ring after ring, each pinned. So each such drop is
 * charged to the consumer's user, and a user charged with
 * CUDAIPC_MAX_PINNED_RINGS is refused at accept until a charge goes: when
 * the dropped process is seen to have exited (its pid, where it is in our
 * PID namespace), else PINNED_HOLD_US after the drop.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <signal.h>

#include "producer/server-private.h"

/* Rings one user's dropped consumers may pin before it is refused. */
#define CUDAIPC_MAX_PINNED_RINGS 2
/* How long a charge holds where the dropped process cannot be watched
 * (another PID namespace: SO_PEERCRED gave no pid). */
#define PINNED_HOLD_US (300 * G_USEC_PER_SEC)

typedef struct
{
  guint uid;
  gint pid;                     /* 0: not in our PID namespace */
  gchar *name;                  /* the consumer's */
  guint64 bytes;                /* the ring's */
  gint64 at;                    /* monotonic us of the drop */
} Pinned;

static void
pinned_free (gpointer data)
{
  Pinned *p = data;

  g_free (p->name);
  g_free (p);
}

void
cudaipc_server_pin_locked (CudaIpcServer * s, Client * c)
{
  Pinned *p;

  if (s->ring == NULL)
    return;
  p = g_new0 (Pinned, 1);
  p->uid = c->uid;
  p->pid = c->pid;
  p->name = g_strdup (c->name);
  p->bytes = cudaipc_ring_get_slot_size (s->ring) *
      cudaipc_ring_get_n_slots (s->ring);
  p->at = g_get_monotonic_time ();
  g_queue_push_tail (&s->pinned, p);
  GST_INFO ("%s: ring generation %u (%" G_GUINT64_FORMAT " bytes) retired "
      "while consumer '%s' (pid %d, user %u) holds slots of it", s->name,
      cudaipc_ring_get_generation (s->ring), p->bytes, p->name, p->pid,
      p->uid);
}

/* A charge goes once its process is gone, or its time is up where the
 * process cannot be watched. */
static gboolean
let_go (const Pinned * p, gint64 now)
{
  if (p->pid > 0)
    return kill (p->pid, 0) < 0 && errno == ESRCH;
  return now - p->at >= PINNED_HOLD_US;
}

gchar *
cudaipc_server_pinned_refusal_locked (CudaIpcServer * s, Client * c)
{
  gint64 now = g_get_monotonic_time ();
  const Pinned *last = NULL;
  g_autofree gchar *size = NULL;
  guint64 bytes = 0;
  guint n = 0;
  GList *l = s->pinned.head;

  while (l) {
    GList *next = l->next;
    Pinned *p = l->data;

    if (let_go (p, now)) {
      GST_INFO ("%s: consumer '%s' (pid %d, user %u) let go of a retired "
          "ring", s->name, p->name, p->pid, p->uid);
      pinned_free (p);
      g_queue_delete_link (&s->pinned, l);
    } else if (p->uid == c->uid) {
      n++;
      bytes += p->bytes;
      last = p;
    }
    l = next;
  }
  if (n < CUDAIPC_MAX_PINNED_RINGS)
    return NULL;
  size = g_format_size_full (bytes, G_FORMAT_SIZE_IEC_UNITS);
  return g_strdup_printf ("consumers of user %u were dropped as stuck while "
      "holding frames, and still pin %u retired ring(s) of this producer "
      "(%s; the last: '%s', pid %d); it may connect again once those "
      "processes have exited%s", c->uid, n, size, last->name, last->pid,
      last->pid > 0 ? "" : " (here: 5 minutes after the drop, their pids "
      "being out of sight)");
}

void
cudaipc_server_pinned_clear (CudaIpcServer * s)
{
  g_queue_clear_full (&s->pinned, pinned_free);
}
