/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The server's life cycle, its caps and events, what any thread may call,
 * and the counters; the ring is in server-ring.c, publication in
 * server-publish.c (server-private.h has the map). server.h has the
 * contract.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "producer/server-private.h"
#include "common/error.h"
#include "common/fdutil.h"
#include "media/media.h"

#define GST_CAT_DEFAULT cudaipc_server_debug

/* Life cycle */

void
cudaipc_server_config_init (CudaIpcServerConfig * config)
{
  g_return_if_fail (config != NULL);

  memset (config, 0, sizeof (*config));
  config->mode = 0660;
  config->n_slots = 4;
  config->handshake_timeout_ms = CUDAIPC_SERVER_HANDSHAKE_TIMEOUT_MS;
  config->client_timeout_ms = 500;
  config->max_pending = CUDAIPC_SERVER_MAX_PENDING;
  config->max_pending_per_user = CUDAIPC_SERVER_MAX_PENDING_PER_USER;
}

CudaIpcServer *
cudaipc_server_new (CudaIpcDevice * dev, const CudaIpcServerConfig * config,
    const CudaIpcServerCallbacks * callbacks, gpointer user_data,
    GError ** error)
{
  g_autoptr (CudaIpcServer) s = NULL;
  const gchar *socket_name;
  GError *thread_error = NULL;
  gint ret;

  g_return_val_if_fail (dev != NULL, NULL);
  g_return_val_if_fail (config != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  cudaipc_debug_init ();

  socket_name = config->socket_name;
  if (socket_name == NULL || socket_name[0] == '\0') {
    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_INVALID,
        "No socket name to listen on");
    return NULL;
  }
  if (config->n_slots < 1 || config->n_slots > CUDAIPC_MAX_SLOTS) {
    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_LIMIT,
        "ring of %u slots is outside 1..%u", config->n_slots,
        (guint) CUDAIPC_MAX_SLOTS);
    return NULL;
  }

  s = g_new0 (CudaIpcServer, 1);
  s->refcount = 1;
  s->dev = cudaipc_device_ref (dev);
  s->socket_name = g_strdup (socket_name);
  /* HELLO names are bounded */
  s->name = g_strndup (config->name ? config->name : "", CUDAIPC_MAX_NAME - 1);
  s->n_slots = config->n_slots;
  /* consumers give frames back through a page of shared memory, not a
   * message each (ring/release-page.h); CUDAIPC_RELEASE_PAGE=0 keeps the
   * messages, to compare the two */
  s->release_pages = g_strcmp0 (g_getenv ("CUDAIPC_RELEASE_PAGE"), "0") != 0;
  if (callbacks)
    s->callbacks = *callbacks;
  s->user_data = user_data;
  s->listen_fd = -1;
  s->wake_fd = -1;
  g_mutex_init (&s->lock);
  g_cond_init (&s->cond);
  s->handshake_timeout = G_TIME_SPAN_MILLISECOND *
      (gint64) config->handshake_timeout_ms;
  s->client_timeout = G_TIME_SPAN_MILLISECOND *
      (gint64) config->client_timeout_ms;
  s->max_pending = config->max_pending;
  s->max_pending_per_user = config->max_pending_per_user;
  s->before_replace = config->before_replace;
  s->before_replace_data = config->before_replace_data;
  s->ordering = config->ordering;
  s->holders = g_ptr_array_new ();
  s->peer_uids = g_array_new (FALSE, FALSE, sizeof (guint));
  s->peer_gids = g_array_new (FALSE, FALSE, sizeof (guint));
  if (config->n_uids)
    g_array_append_vals (s->peer_uids, config->uids, config->n_uids);
  if (config->gids) {
    if (config->n_gids)
      g_array_append_vals (s->peer_gids, config->gids, config->n_gids);
  } else {
    guint gid = getegid ();

    g_array_append_val (s->peer_gids, gid);
  }

  ret = cudaipc_socket_listen_owned (socket_name, config->mode,
      &s->listen_fd, &s->socket_file);
  if (ret < 0) {
    s->listen_fd = -1;          /* not ours: stop() must not remove it */
    if (ret == -EADDRINUSE)
      g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_BUSY,
          "another producer is live on %s", socket_name);
    else if (ret == -EEXIST)
      g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_IO,
          "Cannot listen on %s: it exists and is not a socket", socket_name);
    else if (ret == -ELOOP)
      g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_IO,
          "Cannot listen on %s: it is a symbolic link to a file that does "
          "not exist; remove the link or choose another path", socket_name);
    else if (ret == -ENAMETOOLONG)
      g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_INVALID,
          "Cannot listen on %s: the name is %" G_GSIZE_FORMAT " bytes, and "
          "a Unix socket's may have %" G_GSIZE_FORMAT ": choose a shorter "
          "path, or an abstract name (@name)", socket_name,
          strlen (socket_name), cudaipc_socket_max_name ());
    else
      g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_IO,
          "Cannot listen on %s: %s", socket_name, g_strerror (-ret));
    return NULL;
  }
  /* a peer that gives up between poll() and accept() must not block us */
  if (fcntl (s->listen_fd, F_SETFL,
          fcntl (s->listen_fd, F_GETFL) | O_NONBLOCK) < 0) {
    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_IO,
        "Cannot listen on %s: %s", socket_name, g_strerror (errno));
    return NULL;
  }

  s->wake_fd = eventfd (0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (s->wake_fd < 0) {
    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_IO,
        "Cannot create an eventfd: %s", g_strerror (errno));
    return NULL;
  }

  if (!cudaipc_server_make_fence_page (s, error))
    return NULL;

  s->thread = g_thread_try_new ("cudaipc-server", cudaipc_server_io_thread, s,
      &thread_error);
  if (s->thread == NULL) {
    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_IO,
        "Cannot start the I/O thread: %s", thread_error->message);
    g_error_free (thread_error);
    return NULL;
  }

  GST_INFO ("%s: listening on %s", s->name, s->socket_name);
  return g_steal_pointer (&s);
}

void
cudaipc_server_stop (CudaIpcServer * s)
{
  g_return_if_fail (s != NULL);

  if (s->stopped)
    return;

  if (s->thread) {
    g_mutex_lock (&s->lock);
    s->quit = TRUE;
    g_mutex_unlock (&s->lock);
    cudaipc_server_wake_io (s);
    /* it says BYE to every client and gives the last notices */
    g_thread_join (s->thread);
    s->thread = NULL;
  }

  g_mutex_lock (&s->lock);
  s->stopped = TRUE;
  /* an in-place acquire() waiting for a slot gives up */
  g_cond_broadcast (&s->cond);
  g_clear_pointer (&s->ring, cudaipc_ring_unref);
  for (guint i = 0; i < G_N_ELEMENTS (s->fences); i++)
    g_clear_pointer (&s->fences[i], cudaipc_fence_free);
  /* the producer's stream wrote the last words before stop() (the sink's
   * copier waits for its copies first) */
  g_clear_pointer (&s->fence_page, cudaipc_fence_page_free);
  g_mutex_unlock (&s->lock);

  cudaipc_close_fd (&s->wake_fd);
  if (s->listen_fd >= 0) {
    gint ret;

    cudaipc_close_fd (&s->listen_fd);
    /* only the socket it bound: not another producer's that replaced it,
     * nor any other file put there meanwhile */
    ret = cudaipc_socket_unlink_owned (s->socket_name, &s->socket_file);
    if (ret == -ESTALE)
      GST_WARNING ("%s: %s is no longer the socket this producer bound: "
          "left as it is", s->name, s->socket_name);
  }
}

void
cudaipc_server_free (CudaIpcServer * s)
{
  if (s == NULL)
    return;

  cudaipc_server_stop (s);
  cudaipc_server_unref (s);
}

CudaIpcServer *
cudaipc_server_ref (CudaIpcServer * s)
{
  g_return_val_if_fail (s != NULL, NULL);
  g_atomic_int_inc (&s->refcount);
  return s;
}

void
cudaipc_server_unref (CudaIpcServer * s)
{
  if (s == NULL || !g_atomic_int_dec_and_test (&s->refcount))
    return;

  /* stopped by free(), which the owner calls before its last reference */
  g_warn_if_fail (s->stopped);
  /* the I/O thread freed every client before it ended */
  g_warn_if_fail (s->clients == NULL);
  g_list_free_full (s->wakes, (GDestroyNotify) cudaipc_wake_unref);
  cudaipc_device_unref (s->dev);
  g_free (s->socket_name);
  g_free (s->name);
  g_free (s->caps_str);
  g_free (s->segment_str);
  g_ptr_array_unref (s->holders);
  g_free (s->tx_buf);
  cudaipc_server_pinned_clear (s);
  g_array_unref (s->peer_uids);
  g_array_unref (s->peer_gids);
  g_mutex_clear (&s->lock);
  g_cond_clear (&s->cond);
  g_free (s);
}

void
cudaipc_server_set_client_timeout (CudaIpcServer * s, guint timeout_ms)
{
  g_return_if_fail (s != NULL);

  g_mutex_lock (&s->lock);
  s->client_timeout = G_TIME_SPAN_MILLISECOND * (gint64) timeout_ms;
  g_cond_broadcast (&s->cond);
  g_mutex_unlock (&s->lock);
}

/* The producer thread */

void
cudaipc_server_set_live (CudaIpcServer * s, gboolean live)
{
  g_return_if_fail (s != NULL);

  live = ! !live;
  g_mutex_lock (&s->lock);
  if (s->live != live) {
    s->live = live;
    s->live_changed = s->ring != NULL;
  }
  g_mutex_unlock (&s->lock);
}

/* Whether set_caps() makes the ring for frames of @frame_size; the lock
 * is held. Not once stopped, nor for caps without a frame size; nor the
 * first ring of EVENTS ordering on the cuda backend: the slots' events
 * are made with it, in the device's context, and an event records only
 * on a stream of its own context, while the first frame may still move
 * the producer's copies into upstream's context (copier.h). That ring is
 * the first acquire()'s, after the move. */
static gboolean
ring_at_caps_locked (CudaIpcServer * s, guint64 frame_size)
{
  if (s->stopped || frame_size == 0)
    return FALSE;
  return s->fences_made || s->ordering != CUDAIPC_ORDERING_EVENTS ||
      cudaipc_device_get_backend (s->dev) != CUDAIPC_BACKEND_CUDA;
}

gboolean
cudaipc_server_set_caps (CudaIpcServer * s, const gchar * caps,
    guint64 frame_size, GError ** error)
{
  guint32 generation;
  gsize len;

  g_return_val_if_fail (s != NULL, FALSE);
  g_return_val_if_fail (caps != NULL, FALSE);

  len = strlen (caps);
  if (len >= CUDAIPC_MAX_STRING) {
    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_LIMIT,
        "Caps too long to share (%" G_GSIZE_FORMAT " bytes, the limit is "
        "%d)", len, CUDAIPC_MAX_STRING - 1);
    return FALSE;
  }

  g_mutex_lock (&s->lock);
  g_free (s->caps_str);
  s->caps_str = g_strdup (caps);
  s->caps_id++;
  s->min_slot_size = frame_size;
  generation = s->generation;
  /* the ring for these caps now, not at the first frame: the first buffer
   * upstream takes from the in-place pool is then a slot of it. A new
   * ring goes to the ready clients with these caps; the caps stay where
   * it cannot be made, and the next acquire() tries again. */
  if (ring_at_caps_locked (s, frame_size) &&
      !cudaipc_server_ensure_ring_locked (s, frame_size, error)) {
    g_prefix_error (error, "Cannot allocate a ring of %u slots for frames "
        "of %" G_GUINT64_FORMAT " bytes: ", s->n_slots, frame_size);
    g_mutex_unlock (&s->lock);
    return FALSE;
  }
  /* the ring in use fits them: they go on their own (clients without a
   * ring get them with the ring) */
  if (s->ring && s->generation == generation) {
    for (GList * l = s->clients; l; l = l->next) {
      Client *c = l->data;

      if (client_is_ready (c))
        cudaipc_server_client_send_caps_locked (s, c);
    }
  }
  g_mutex_unlock (&s->lock);
  return TRUE;
}
gboolean
cudaipc_server_send_event (CudaIpcServer * s, GstEvent * event,
    GstClockTime running_time, GError ** error)
{
  g_autofree gchar *str = NULL;
  CudaIpcMsg msg;
  gsize len;

  g_return_val_if_fail (s != NULL, FALSE);
  g_return_val_if_fail (GST_IS_EVENT (event), FALSE);

  str = cudaipc_media_serialize_event (event);
  len = strlen (str);
  if (len >= CUDAIPC_MAX_STRING) {
    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_LIMIT,
        "%" G_GSIZE_FORMAT " bytes serialized, the limit is %d", len,
        CUDAIPC_MAX_STRING - 1);
    return FALSE;
  }

  cudaipc_msg_init (&msg, CUDAIPC_MSG_EVENT);
  msg.u.event.event_type = GST_EVENT_TYPE (event);
  msg.u.event.running_time = running_time;
  msg.u.event.structure = str;

  GST_DEBUG ("%s: forwarding %s: %s", s->name, GST_EVENT_TYPE_NAME (event),
      str);

  g_mutex_lock (&s->lock);
  if (GST_EVENT_TYPE (event) == GST_EVENT_SEGMENT) {
    g_free (s->segment_str);
    s->segment_str = g_strdup (str);
  } else if (GST_EVENT_TYPE (event) == GST_EVENT_EOS) {
    s->eos = TRUE;
  }
  cudaipc_server_client_send_to_ready_locked (s, &msg);
  g_mutex_unlock (&s->lock);
  return TRUE;
}

void
cudaipc_server_clear_eos (CudaIpcServer * s)
{
  g_return_if_fail (s != NULL);

  g_mutex_lock (&s->lock);
  s->eos = FALSE;
  g_mutex_unlock (&s->lock);
}

/* Any thread */

void
cudaipc_server_set_flushing (CudaIpcServer * s, gboolean flushing)
{
  g_return_if_fail (s != NULL);

  g_mutex_lock (&s->lock);
  s->flushing = flushing;
  /* plain frames on their way are flushed with the rest */
  if (flushing)
    s->plain_lent = 0;
  g_cond_broadcast (&s->cond);
  g_mutex_unlock (&s->lock);
}

void
cudaipc_server_kick (CudaIpcServer * s)
{
  g_return_if_fail (s != NULL);

  g_mutex_lock (&s->lock);
  g_cond_broadcast (&s->cond);
  g_mutex_unlock (&s->lock);
}

void
cudaipc_server_wake (CudaIpcServer * s)
{
  g_return_if_fail (s != NULL);

  g_mutex_lock (&s->lock);
  s->woken = TRUE;
  g_cond_broadcast (&s->cond);
  g_mutex_unlock (&s->lock);
}

guint
cudaipc_server_get_n_clients (CudaIpcServer * s)
{
  guint n;

  g_return_val_if_fail (s != NULL, 0);

  g_mutex_lock (&s->lock);
  n = cudaipc_server_count_ready_locked (s);
  g_mutex_unlock (&s->lock);
  return n;
}

guint32
cudaipc_server_get_generation (CudaIpcServer * s)
{
  guint32 generation;

  g_return_val_if_fail (s != NULL, 0);

  g_mutex_lock (&s->lock);
  generation = s->generation;
  g_mutex_unlock (&s->lock);
  return generation;
}

void
cudaipc_server_get_stats (CudaIpcServer * s, CudaIpcServerStats * st)
{
  g_return_if_fail (st != NULL);

  memset (st, 0, sizeof (*st));
  st->clients = g_array_new (FALSE, TRUE, sizeof (CudaIpcServerClientStats));
  if (s == NULL)
    return;

  g_mutex_lock (&s->lock);
  cudaipc_server_collect_releases_locked (s);
  for (GList * l = s->clients; l; l = l->next) {
    Client *c = l->data;
    CudaIpcServerClientStats cs;

    if (!client_is_ready (c))
      continue;
    cs.name = g_strdup (c->name);
    cs.pid = c->pid;
    cs.frames_sent = c->sent;
    cs.frames_released = c->released;
    cs.held = s->ring ? cudaipc_ring_lease_count (s->ring, &c->lease) : 0;
    cs.events = (c->caps & CUDAIPC_CAP_EVENTS) != 0;
    cs.fence = (c->caps & CUDAIPC_CAP_FENCE) != 0;
    g_array_append_val (st->clients, cs);
  }
  st->frames_published = s->frames_published;
  st->frames_dropped = s->frames_dropped;
  st->n_clients = st->clients->len;
  st->generation = s->generation;
  st->rings_retired = s->rings_retired;
  g_mutex_unlock (&s->lock);
}

void
cudaipc_server_stats_clear (CudaIpcServerStats * st)
{
  if (st == NULL || st->clients == NULL)
    return;
  for (guint i = 0; i < st->clients->len; i++)
    g_free (g_array_index (st->clients, CudaIpcServerClientStats, i).name);
  g_clear_pointer (&st->clients, g_array_unref);
}

