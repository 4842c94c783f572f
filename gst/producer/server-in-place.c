/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Slots lent to upstream to write frames into (server.h, Writing in
 * place). A ticket holds a reference on the server and on the ring its
 * slot belongs to, so the memory stays mapped while upstream has it,
 * whatever happens to the ring or the server meanwhile. Such a slot is
 * published by server-publish.c.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "producer/server-private.h"

CudaIpcServerStatus
cudaipc_server_acquire_in_place (CudaIpcServer * s, guint64 size,
    gint64 deadline_us, const gint * cancel, CudaIpcSlotTicket ** ticket,
    GError ** error)
{
  CudaIpcServerStatus status;
  CudaIpcSlotTicket *t;
  guint slot;

  g_return_val_if_fail (s != NULL, CUDAIPC_SERVER_ERROR);
  g_return_val_if_fail (ticket != NULL, CUDAIPC_SERVER_ERROR);

  *ticket = NULL;
  g_mutex_lock (&s->lock);
  status = cudaipc_server_take_slot_locked (s, size, deadline_us, TRUE,
      cancel, &slot, error);
  if (status != CUDAIPC_SERVER_OK) {
    /* upstream writes this frame into plain memory: render() copies it
     * into a slot, which the pool leaves free for it meanwhile */
    if (status == CUDAIPC_SERVER_NO_RING && !s->stopped)
      s->plain_lent++;
    g_mutex_unlock (&s->lock);
    return status;
  }
  t = g_new0 (CudaIpcSlotTicket, 1);
  t->server = cudaipc_server_ref (s);
  t->ring = cudaipc_ring_ref (s->ring);
  t->slot = slot;
  g_mutex_unlock (&s->lock);

  GST_LOG ("%s: slot %u of generation %u lent for writing in place", s->name,
      slot, cudaipc_ring_get_generation (t->ring));
  *ticket = t;
  return CUDAIPC_SERVER_OK;
}

CudaIpcBlock *
cudaipc_slot_ticket_get_block (const CudaIpcSlotTicket * t)
{
  g_return_val_if_fail (t != NULL, NULL);
  return cudaipc_ring_get_block (t->ring, t->slot);
}

guint
cudaipc_slot_ticket_get_slot (const CudaIpcSlotTicket * t)
{
  g_return_val_if_fail (t != NULL, 0);
  return t->slot;
}

CudaIpcRing *
cudaipc_slot_ticket_get_ring (const CudaIpcSlotTicket * t)
{
  g_return_val_if_fail (t != NULL, NULL);
  return t->ring;
}

void
cudaipc_slot_ticket_free (CudaIpcSlotTicket * t)
{
  CudaIpcServer *s;

  if (t == NULL)
    return;

  s = t->server;
  g_mutex_lock (&s->lock);
  /* a replaced ring's slots are no longer the server's to count */
  if (!s->stopped && t->ring == s->ring) {
    if (!t->published)
      cudaipc_ring_abort (s->ring, t->slot);
    else
      cudaipc_ring_release (s->ring, &s->local, t->slot,
          cudaipc_ring_get_generation (s->ring));
    g_cond_broadcast (&s->cond);
  }
  g_mutex_unlock (&s->lock);

  cudaipc_ring_unref (t->ring);
  cudaipc_server_unref (s);
  g_free (t);
}
