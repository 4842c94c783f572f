/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The server's life cycle, its ring and fences, what the producer thread
 * and other threads call, and the counters; the I/O thread is in
 * server-io.c, the clients' messages in server-client.c
 * (server-private.h). server.h has the contract.
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

/* AUTO (cuda backend) and FENCE: the fence page. Where AUTO cannot make
 * it, frames are synchronised on the host. */
static gboolean
make_fence_page (CudaIpcServer * s, GError ** error)
{
  g_autoptr (GError) err = NULL;

  if (s->ordering == CUDAIPC_ORDERING_FENCE ||
      (s->ordering == CUDAIPC_ORDERING_AUTO &&
          cudaipc_device_get_backend (s->dev) == CUDAIPC_BACKEND_CUDA))
    s->fence_page = cudaipc_fence_page_new (s->dev, &err);
  else
    return TRUE;
  if (s->fence_page)
    return TRUE;
  if (s->ordering == CUDAIPC_ORDERING_FENCE) {
    g_set_error (error, CUDAIPC_ERROR, err->code, "No fence page: %s",
        err->message);
    return FALSE;
  }
  GST_WARNING ("%s: no fence page, so every frame's copy is synchronised on "
      "the host before it is published: %s", s->name, err->message);
  return TRUE;
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

  if (!make_fence_page (s, error))
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
  cudaipc_device_unref (s->dev);
  g_free (s->socket_name);
  g_free (s->name);
  g_free (s->caps_str);
  g_free (s->segment_str);
  g_ptr_array_unref (s->holders);
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

gboolean
cudaipc_server_set_caps (CudaIpcServer * s, const gchar * caps,
    guint64 frame_size, GError ** error)
{
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
  /* clients without a ring get these caps with the ring */
  if (s->ring) {
    for (GList * l = s->clients; l; l = l->next) {
      Client *c = l->data;

      if (client_is_ready (c))
        cudaipc_server_client_send_caps_locked (s, c);
    }
  }
  g_mutex_unlock (&s->lock);
  return TRUE;
}

static guint
count_ready_locked (CudaIpcServer * s)
{
  guint n = 0;

  for (GList * l = s->clients; l; l = l->next) {
    if (client_is_ready (l->data))
      n++;
  }
  return n;
}

/* What ends a wait other than success; the lock is held. Returns OK to go
 * on waiting. @cancel (may be NULL) set: FLUSHING. Only a wait that
 * @sees_wake takes wake() (WOKEN). */
static CudaIpcServerStatus
check_wait_locked (CudaIpcServer * s, gint64 deadline_us, const gint * cancel,
    gboolean sees_wake)
{
  if (deadline_us >= 0 && g_get_monotonic_time () >= deadline_us)
    return CUDAIPC_SERVER_TIMEOUT;
  if (s->flushing || (cancel && g_atomic_int_get (cancel)))
    return CUDAIPC_SERVER_FLUSHING;
  if (sees_wake && s->woken) {
    s->woken = FALSE;
    return CUDAIPC_SERVER_WOKEN;
  }
  return CUDAIPC_SERVER_OK;
}

static void
wait_locked (CudaIpcServer * s, gint64 deadline_us)
{
  if (deadline_us < 0)
    g_cond_wait (&s->cond, &s->lock);
  else
    g_cond_wait_until (&s->cond, &s->lock, deadline_us);
}

CudaIpcServerStatus
cudaipc_server_wait_for_client (CudaIpcServer * s, gint64 deadline_us)
{
  CudaIpcServerStatus status;

  g_return_val_if_fail (s != NULL, CUDAIPC_SERVER_ERROR);

  g_mutex_lock (&s->lock);
  while (count_ready_locked (s) == 0) {
    status = check_wait_locked (s, deadline_us, NULL, TRUE);
    if (status != CUDAIPC_SERVER_OK) {
      g_mutex_unlock (&s->lock);
      return status;
    }
    wait_locked (s, deadline_us);
  }
  g_mutex_unlock (&s->lock);
  return CUDAIPC_SERVER_OK;
}

/* cuda backend: one fence per slot index, once. A slot without one is
 * synchronised on the host before it is published (publish_fenced()). */
static void
make_fences_locked (CudaIpcServer * s)
{
  guint n_failed = 0;

  if (s->fences_made || s->ordering != CUDAIPC_ORDERING_EVENTS ||
      cudaipc_device_get_backend (s->dev) != CUDAIPC_BACKEND_CUDA)
    return;
  s->fences_made = TRUE;
  for (guint i = 0; i < s->n_slots; i++) {
    g_autoptr (GError) err = NULL;

    s->fences[i] = cudaipc_fence_new (s->dev, &err);
    if (s->fences[i] == NULL && n_failed++ == 0)
      GST_INFO ("%s: slot %u has no interprocess event, so its frames are "
          "synchronised on the host before they are published: %s", s->name,
          i, err->message);
  }
  if (n_failed > 0)
    GST_INFO ("%s: %u of %u slots have no interprocess event", s->name,
        n_failed, s->n_slots);
}

/* A new ring gets a fence page of its own: a word of the old ring's slot
 * N may still be read by a consumer behind on its frames while the new
 * ring's slot N is written. The copies into the old ring have landed
 * (before_replace), and consumers keep their own mappings of its page.
 * Where a new page cannot be made, frames are synchronised on the host
 * from now on. */
static void
renew_fence_page_locked (CudaIpcServer * s)
{
  g_autoptr (GError) err = NULL;
  CudaIpcFencePage *page;

  if (s->fence_page == NULL)
    return;
  page = cudaipc_fence_page_new (s->dev, &err);
  if (page == NULL)
    GST_WARNING ("%s: no fence page for the new ring, so its frames are "
        "synchronised on the host before they are published: %s", s->name,
        err->message);
  cudaipc_fence_page_free (s->fence_page);
  s->fence_page = page;
}

/* Builds a new ring when there is none, @size does not fit, or the ring
 * was retired. */
static gboolean
ensure_ring_locked (CudaIpcServer * s, guint64 size, GError ** error)
{
  CudaIpcRing *ring;
  guint64 want;

  if (s->ring && !s->retire_ring &&
      cudaipc_ring_get_slot_size (s->ring) >= size)
    return TRUE;
  if (s->ring && s->before_replace &&
      !s->before_replace (s->retire_ring ? "a consumer was dropped while it "
          "held slots: its frames must not change" : "a frame does not fit "
          "the slots", s->before_replace_data, error))
    return FALSE;

  want = MAX (size, s->min_slot_size);
  if (s->ring && s->retire_ring)
    want = MAX (want, cudaipc_ring_get_slot_size (s->ring));
  want = MAX (want, 1);
  ring = cudaipc_ring_new (s->dev, s->n_slots, want, 0, s->generation + 1,
      error);
  if (ring == NULL)
    return FALSE;

  s->generation++;
  GST_INFO ("%s: new ring, generation %u: %u slots of %" G_GUINT64_FORMAT
      " bytes for frames of %" G_GUINT64_FORMAT " bytes%s", s->name,
      s->generation, s->n_slots, cudaipc_ring_get_slot_size (ring), size,
      s->retire_ring ? " (the last one retired: a dropped consumer held "
      "slots of it)" : "");
  if (s->retire_ring)
    s->rings_retired++;
  s->retire_ring = FALSE;

  /* what each consumer still holds of the old ring it releases later, as
   * releases of an old generation; more of those than that is a protocol
   * error (a flood) */
  for (GList * l = s->clients; s->ring && l; l = l->next) {
    Client *c = l->data;

    c->stale_allowed += cudaipc_ring_lease_count (s->ring, &c->lease);
  }
  /* consumers keep their own imports of the old one */
  if (s->ring)
    renew_fence_page_locked (s);
  cudaipc_ring_unref (s->ring);
  s->ring = ring;
  make_fences_locked (s);

  for (GList * l = s->clients; l; l = l->next) {
    Client *c = l->data;

    if (client_is_ready (c))
      cudaipc_server_client_send_ring_locked (s, c);
  }
  return TRUE;
}

/* How often a producer waiting for a slot looks for stuck clients. */
#define STUCK_CHECK_US (50 * G_TIME_SPAN_MILLISECOND)

/* Drops a stuck client, the one most to blame: every slot is held, and a
 * stuck client is one that stopped reading or releasing. It holds two
 * frames or more, has held an older one for client_timeout since a newer
 * one came, and released nothing for client_timeout. Of those, the one
 * holding the most slots goes (then the one with the oldest frame), and
 * only one per call: the caller looks for a free slot before dropping
 * another. So a consumer that holds its newest frames, no more than its
 * max-held (the ring less one by default), while one that never releases
 * holds every slot, stays: once that one is gone a slot is free. A
 * consumer keeps its newest frame as long as it likes (a sink showing its
 * last frame does), and a slow one that keeps releasing (what it cannot
 * take, beyond its max-held) is never dropped.
 * TRUE if one was dropped (its slots are free again). */
static gboolean
drop_stuck_client_locked (CudaIpcServer * s, gint64 now)
{
  Client *worst = NULL;
  guint worst_held = 0;
  gint64 worst_oldest = G_MAXINT64;

  for (GList * l = s->clients; l; l = l->next) {
    Client *c = l->data;
    gint64 oldest = G_MAXINT64, next = G_MAXINT64;
    guint held;

    if (!client_is_ready (c))
      continue;
    held = cudaipc_ring_lease_count (s->ring, &c->lease);
    if (held < 2)
      continue;
    /* the oldest frame it holds was superseded no later than the second
     * oldest was published: that is when it should have let go of it */
    for (guint i = 0; i < cudaipc_ring_get_n_slots (s->ring); i++) {
      gint64 t;

      if (!cudaipc_ring_lease_holds (s->ring, &c->lease, i))
        continue;
      t = s->published_at[i];
      if (t < oldest) {
        next = oldest;
        oldest = t;
      } else if (t < next) {
        next = t;
      }
    }
    if (now - next < s->client_timeout ||
        now - c->last_release < s->client_timeout)
      continue;
    if (held > worst_held || (held == worst_held && oldest < worst_oldest)) {
      worst = c;
      worst_held = held;
      worst_oldest = oldest;
    }
  }
  if (worst == NULL)
    return FALSE;

  cudaipc_server_client_drop_locked (s, worst, CUDAIPC_BYE_TOO_SLOW,
      "it stopped releasing frames while every slot was held",
      g_strdup_printf ("stuck: held %u frames, the oldest for %d ms, and "
          "released none for %d ms", worst_held,
          (gint) ((now - worst_oldest) / 1000),
          (gint) ((now - worst->last_release) / 1000)),
      g_strdup_printf ("Dropped consumer '%s' (pid %d): it held %u frames, "
          "the oldest for %d ms, and released none for %d ms while every "
          "slot was held", worst->name, worst->pid, worst_held,
          (gint) ((now - worst_oldest) / 1000),
          (gint) ((now - worst->last_release) / 1000)));
  return TRUE;
}

CudaIpcServerStatus
cudaipc_server_take_slot_locked (CudaIpcServer * s, guint64 size,
    gint64 deadline_us, gboolean in_place, const gint * cancel,
    guint * slot_out, GError ** error)
{
  CudaIpcServerStatus status;
  gint slot;

  for (;;) {
    gint64 now;

    /* a pool upstream kept from before a restart lends nothing more */
    if (s->stopped)
      return in_place ? CUDAIPC_SERVER_NO_RING : CUDAIPC_SERVER_FLUSHING;
    /* again after every wait: a consumer dropped meanwhile may have
     * retired the ring */
    if (in_place) {
      if (s->ring == NULL || s->retire_ring ||
          cudaipc_ring_get_slot_size (s->ring) < size)
        return CUDAIPC_SERVER_NO_RING;
    } else if (!ensure_ring_locked (s, size, error)) {
      return CUDAIPC_SERVER_ERROR;
    }
    slot = cudaipc_ring_acquire (s->ring);
    if (slot >= 0)
      break;
    now = g_get_monotonic_time ();

    if (s->client_timeout > 0 && drop_stuck_client_locked (s, now))
      continue;
    /* in place, a setting changed is the caller's to see (it waits in
     * slices), and the frame is not lost yet: the copy path may still
     * find a slot */
    status = check_wait_locked (s, deadline_us, cancel, !in_place);
    if (status == CUDAIPC_SERVER_TIMEOUT && !in_place)
      s->frames_dropped++;
    if (status != CUDAIPC_SERVER_OK)
      return status;
    GST_LOG ("%s: every slot is held, waiting", s->name);
    /* look for stuck clients again now and then while waiting */
    if (s->client_timeout > 0 && (deadline_us < 0 ||
            deadline_us > now + STUCK_CHECK_US))
      wait_locked (s, now + STUCK_CHECK_US);
    else
      wait_locked (s, deadline_us);
  }

  *slot_out = (guint) slot;
  return CUDAIPC_SERVER_OK;
}

CudaIpcServerStatus
cudaipc_server_acquire (CudaIpcServer * s, guint64 size, gint64 deadline_us,
    guint * slot_out, CudaIpcBlock ** block_out, GError ** error)
{
  CudaIpcServerStatus status;

  g_return_val_if_fail (s != NULL, CUDAIPC_SERVER_ERROR);
  g_return_val_if_fail (!s->stopped, CUDAIPC_SERVER_ERROR);
  g_return_val_if_fail (slot_out != NULL, CUDAIPC_SERVER_ERROR);
  g_return_val_if_fail (block_out != NULL, CUDAIPC_SERVER_ERROR);

  g_mutex_lock (&s->lock);
  status = cudaipc_server_take_slot_locked (s, size, deadline_us, FALSE,
      NULL, slot_out, error);
  if (status == CUDAIPC_SERVER_OK)
    *block_out = cudaipc_ring_get_block (s->ring, *slot_out);
  g_mutex_unlock (&s->lock);
  return status;
}

CudaIpcFence *
cudaipc_server_get_fence (CudaIpcServer * s, guint slot)
{
  CudaIpcFence *fence;

  g_return_val_if_fail (s != NULL, NULL);
  g_return_val_if_fail (slot < CUDAIPC_MAX_SLOTS, NULL);

  g_mutex_lock (&s->lock);
  fence = s->fences[slot];
  g_mutex_unlock (&s->lock);
  return fence;
}

CudaIpcFencePage *
cudaipc_server_get_fence_page (CudaIpcServer * s)
{
  g_return_val_if_fail (s != NULL, NULL);
  return s->fence_page;
}

guint64
cudaipc_server_get_next_seq (CudaIpcServer * s)
{
  guint64 seq;

  g_return_val_if_fail (s != NULL, 0);

  g_mutex_lock (&s->lock);
  seq = s->seq + 1;
  g_mutex_unlock (&s->lock);
  return seq;
}

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
  cudaipc_ring_publish (s->ring, slot,
      (CudaIpcLease * const *) s->holders->pdata, s->holders->len);
  s->frames_published++;

  frame->publish_time = g_get_monotonic_time () * 1000;
  cudaipc_msg_init (&msg, CUDAIPC_MSG_FRAME);
  msg.u.frame = *frame;
  for (GList * l = s->clients; l; l = l->next) {
    Client *c = l->data;

    if (client_is_ready (c) && cudaipc_server_client_send_locked (s, c, &msg))
      c->sent++;
  }
  return n_clients;
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
  n = count_ready_locked (s);
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
