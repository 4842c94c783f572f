/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The client's settings, counts and state as other threads read them
 * (client.h): max-held, leaky and peer access, in effect at once; the
 * stats; the refusal of events to warn of; whether it is connected.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "consumer/client-private.h"

void
cudaipc_client_set_leaky (CudaIpcClient * client, CudaIpcLeaky leaky)
{
  g_return_if_fail (client != NULL);
  g_atomic_int_set (&client->leaky, leaky);
}

void
cudaipc_client_set_max_held (CudaIpcClient * client, gint max_held)
{
  g_return_if_fail (client != NULL);
  g_atomic_int_set (&client->max_held, MAX (max_held, CUDAIPC_MAX_HELD_AUTO));
}

void
cudaipc_client_set_peer_access (CudaIpcClient * client, gboolean allow)
{
  g_return_if_fail (client != NULL);
  g_atomic_int_set (&client->peer_access, allow ? 1 : 0);
}

void
cudaipc_client_set_announce (CudaIpcClient * client, CudaIpcAnnounce announce,
    guint spin_us)
{
  g_return_if_fail (client != NULL);
  g_atomic_int_set (&client->announce, announce);
  g_atomic_int_set (&client->spin_us, MIN (spin_us, CUDAIPC_MAX_SPIN_US));
}

void
cudaipc_client_get_stats (CudaIpcClient * client, CudaIpcClientStats * stats)
{
  Session *s;

  g_return_if_fail (client != NULL && stats != NULL);
  s = client->session;
  g_mutex_lock (&s->lock);
  stats->received = s->received;
  stats->dropped = s->dropped;
  stats->discarded = s->discarded;
  stats->released = s->released;
  stats->held = s->held;
  stats->generation = s->generation;
  stats->imports = s->imports;
  stats->driver_calls = s->driver_calls;
  stats->copy_waits = s->copy_waits;
  stats->copy_wait_ns = s->copy_wait_ns;
  stats->events_refused = s->events_refused;
  g_mutex_unlock (&s->lock);
  stats->peer = g_atomic_int_get (&client->peer) != 0;
}

void
cudaipc_client_reset_stats (CudaIpcClient * client)
{
  Session *s;

  g_return_if_fail (client != NULL);
  s = client->session;
  g_mutex_lock (&s->lock);
  s->received = s->dropped = s->released = s->discarded = 0;
  s->dropped_told = 0;
  s->driver_calls = 0;
  s->copy_waits = s->copy_wait_ns = 0;
  s->events_refused = 0;
  g_mutex_unlock (&s->lock);
}

gchar *
cudaipc_client_take_event_refusal (CudaIpcClient * client)
{
  gchar *text;

  g_return_val_if_fail (client != NULL, NULL);
  g_mutex_lock (&client->session->lock);
  text = g_steal_pointer (&client->session->event_refusal);
  g_mutex_unlock (&client->session->lock);
  return text;
}

gboolean
cudaipc_client_is_connected (CudaIpcClient * client)
{
  gboolean connected;

  g_return_val_if_fail (client != NULL, FALSE);
  g_mutex_lock (&client->reader_lock);
  connected = client->conn != NULL || !g_queue_is_empty (&client->pending);
  g_mutex_unlock (&client->reader_lock);
  return connected;
}

CudaIpcBackend
cudaipc_client_get_backend (CudaIpcClient * client)
{
  g_return_val_if_fail (client != NULL, CUDAIPC_BACKEND_HOST);
  return client->backend;
}
