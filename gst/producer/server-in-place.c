/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Slots lent to upstream to write frames into (server.h, Writing in
 * place). A ticket holds a reference on the server and on the ring its
 * slot belongs to, so the memory stays mapped while upstream has it,
 * whatever happens to the ring or the server meanwhile.
 */
#include "producer/server-private.h"

struct _CudaIpcSlotTicket
{
  CudaIpcServer *server;        /* a reference */
  CudaIpcRing *ring;            /* a reference */
  guint slot;
  gboolean published;           /* under the server's lock */
};

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

gboolean
cudaipc_server_publish_in_place (CudaIpcServer * s, CudaIpcSlotTicket * t,
    CudaIpcFrameMsg * frame, guint * n_clients)
{
  guint n;

  g_return_val_if_fail (s != NULL, FALSE);
  g_return_val_if_fail (t != NULL, FALSE);
  g_return_val_if_fail (frame != NULL, FALSE);

  if (n_clients)
    *n_clients = 0;
  if (t->server != s)
    return FALSE;
  g_mutex_lock (&s->lock);
  if (s->stopped || t->published || t->ring != s->ring ||
      cudaipc_ring_get_state (s->ring, t->slot) != CUDAIPC_SLOT_WRITING) {
    g_mutex_unlock (&s->lock);
    return FALSE;
  }
  /* upstream's writes are done (on the cuda backend the caller waited for
   * them and for this producer's own fence writes): the fence page's word,
   * set on the CPU, goes before the FRAME that names it */
  if (s->fence_page)
    cudaipc_fence_page_store (s->fence_page, t->slot, s->seq + 1);
  t->published = TRUE;
  n = cudaipc_server_publish_locked (s, t->slot, frame, &s->local);
  g_mutex_unlock (&s->lock);

  if (n_clients)
    *n_clients = n;
  return TRUE;
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
