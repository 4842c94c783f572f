/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The publication path of the server, in one place: a slot written by
 * the producer goes out with publish() (host backend, or copies complete
 * on the host) or publish_fenced() (a copy maybe still in flight, ordered
 * by the fence page or the slot's event, or synchronised first under the
 * lock), a slot upstream wrote into with publish_in_place(); each ends in
 * publish_locked(), which gives the slot to every ready client and sends
 * them the FRAME. abort() gives a slot back unpublished
 * (server-private.h has the map, server.h the contract).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "producer/server-private.h"

#define GST_CAT_DEFAULT cudaipc_server_debug

/* Why a frame in @slot needs the host synchronisation, or NULL. */
static const gchar *
needs_sync_locked (CudaIpcServer * s, guint slot)
{
  if (s->ordering == CUDAIPC_ORDERING_HOST)
    return "ordering=host";
  if (s->fence_page) {
    for (GList * l = s->clients; l; l = l->next) {
      Client *c = l->data;

      if (client_is_ready (c) && !(c->caps & CUDAIPC_CAP_FENCE))
        return "a consumer does not read the fence page";
    }
    return NULL;
  }
  if (s->fences[slot] == NULL)
    return s->ordering == CUDAIPC_ORDERING_EVENTS ?
        "the slot has no interprocess event" : "the producer has no fence "
        "page";
  for (GList * l = s->clients; l; l = l->next) {
    Client *c = l->data;

    if (client_is_ready (c) && !(c->caps & CUDAIPC_CAP_EVENTS))
      return "a consumer does not wait on interprocess events";
  }
  return NULL;
}

guint
cudaipc_server_publish (CudaIpcServer * s, guint slot, CudaIpcFrameMsg * frame)
{
  guint n_clients = 0;

  cudaipc_server_publish_fenced (s, slot, frame, NULL, NULL, &n_clients, NULL);
  return n_clients;
}

gboolean
cudaipc_server_publish_fenced (CudaIpcServer * s, guint slot,
    CudaIpcFrameMsg * frame, CudaIpcServerSyncFunc sync, gpointer user_data,
    guint * n_clients, GError ** error)
{
  guint n_holders;

  g_return_val_if_fail (s != NULL, FALSE);
  g_return_val_if_fail (frame != NULL, FALSE);

  if (n_clients)
    *n_clients = 0;
  g_mutex_lock (&s->lock);
  if (s->ring == NULL || slot >= cudaipc_ring_get_n_slots (s->ring) ||
      cudaipc_ring_get_state (s->ring, slot) != CUDAIPC_SLOT_WRITING) {
    g_mutex_unlock (&s->lock);
    g_critical ("cudaipc_server_publish: slot %u was not acquired", slot);
    return FALSE;
  }

  if (sync) {
    const gchar *why = needs_sync_locked (s, slot);

    if (why && !sync (why, user_data, error)) {
      cudaipc_ring_abort (s->ring, slot);
      s->seq++;
      g_mutex_unlock (&s->lock);
      return FALSE;
    }
  }

  n_holders = cudaipc_server_publish_locked (s, slot, frame, NULL);
  g_mutex_unlock (&s->lock);

  if (n_clients)
    *n_clients = n_holders;
  return TRUE;
}

guint
cudaipc_server_publish_locked (CudaIpcServer * s, guint slot,
    CudaIpcFrameMsg * frame, CudaIpcLease * local)
{
  CudaIpcMsg msg;
  guint n_clients;
  gssize len;

  frame->generation = s->generation;
  frame->slot = slot;
  frame->seq = ++s->seq;
  frame->caps_id = s->caps_id;

  g_ptr_array_set_size (s->holders, 0);
  for (GList * l = s->clients; l; l = l->next) {
    Client *c = l->data;

    if (client_is_ready (c))
      g_ptr_array_add (s->holders, &c->lease);
  }
  n_clients = s->holders->len;
  if (local)
    g_ptr_array_add (s->holders, local);
  s->published_at[slot] = g_get_monotonic_time ();
  s->published_seq[slot] = frame->seq;
  cudaipc_ring_publish (s->ring, slot,
      (CudaIpcLease * const *) s->holders->pdata, s->holders->len);
  s->frames_published++;

  frame->publish_time = g_get_monotonic_time () * 1000;
  cudaipc_msg_init (&msg, CUDAIPC_MSG_FRAME);
  msg.u.frame = *frame;
  /* built once, sent to each with its own header sequence */
  if (s->tx_buf == NULL)
    s->tx_buf = g_malloc (CUDAIPC_MAX_MESSAGE);
  len = cudaipc_msg_build (&msg, 0, s->tx_buf, CUDAIPC_MAX_MESSAGE);
  /* the channels' consumers that sleep are woken together, after the
   * loop: one call for each user's, not one for each */
  for (GList * l = s->wakes; l; l = l->next)
    cudaipc_wake_hold (l->data);
  for (GList * l = s->clients; l; l = l->next) {
    Client *c = l->data;

    if (!client_is_ready (c))
      continue;
    if (len < 0) {
      /* a frame the protocol cannot carry goes nowhere: each client is
       * told as send_locked() tells it */
      if (cudaipc_server_client_send_locked (s, c, &msg))
        c->sent++;
    } else if (cudaipc_server_client_send_built_locked (s, c,
            CUDAIPC_MSG_FRAME, s->tx_buf, len)) {
      c->sent++;
    }
  }
  for (GList * l = s->wakes; l; l = l->next)
    (void) cudaipc_wake_flush (l->data);
  return n_clients;
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

void
cudaipc_server_abort (CudaIpcServer * s, guint slot)
{
  g_return_if_fail (s != NULL);

  g_mutex_lock (&s->lock);
  if (s->ring)
    cudaipc_ring_abort (s->ring, slot);
  /* a fence word may have been signalled with this number */
  s->seq++;
  g_mutex_unlock (&s->lock);
}

