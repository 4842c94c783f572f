/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The server's ring and its fences: built when caps are set (else by the
 * first acquire()), replaced when new caps or a frame do not fit or a
 * consumer was dropped holding slots; waiting for a free slot or a
 * client, and dropping a stuck client meanwhile (server-private.h has the
 * map, server.h the contract).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "producer/server-private.h"
#include "common/error.h"

#define GST_CAT_DEFAULT cudaipc_server_debug

/* Waits */

/* What ends a wait other than success; the lock is held. Returns OK to go
 * on waiting. @cancel (may be NULL) set: FLUSHING. Only a wait of the
 * sink's own thread (@of_sink) ends at the sink's flushing (FLUSHING) and
 * takes wake() (WOKEN); upstream's wait for a slot to write in place ends
 * at its pool's flushing (@cancel) or the server's stop, never at the
 * sink's unlock(), which a state change makes and undoes at once. */
static CudaIpcServerStatus
check_wait_locked (CudaIpcServer * s, gint64 deadline_us, const gint * cancel,
    gboolean of_sink)
{
  if (deadline_us >= 0 && g_get_monotonic_time () >= deadline_us)
    return CUDAIPC_SERVER_TIMEOUT;
  if ((of_sink && s->flushing) || (cancel && g_atomic_int_get (cancel)))
    return CUDAIPC_SERVER_FLUSHING;
  if (of_sink && s->woken) {
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
  while (cudaipc_server_count_ready_locked (s) == 0) {
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

/* The ring and its fences */

/* AUTO (cuda backend) and FENCE: the fence page. Where AUTO cannot make
 * it, frames are synchronised on the host. */
gboolean
cudaipc_server_make_fence_page (CudaIpcServer * s, GError ** error)
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

gboolean
cudaipc_server_ensure_ring_locked (CudaIpcServer * s, guint64 size,
    GError ** error)
{
  CudaIpcRing *ring;
  guint64 want;

  if (s->ring && !s->retire_ring && !s->live_changed &&
      cudaipc_ring_get_slot_size (s->ring) >= size)
    return TRUE;
  if (s->ring && s->before_replace &&
      !s->before_replace (s->retire_ring ? "a consumer was dropped while it "
          "held slots: its frames must not change" : s->live_changed ?
          "the stream became live, or stopped being live" :
          "frames no longer fit the slots", s->before_replace_data, error))
    return FALSE;

  want = MAX (size, s->min_slot_size);
  if (s->ring && (s->retire_ring || s->live_changed))
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
  s->live_changed = FALSE;

  /* consumers keep their own imports of the old one, and release later
   * what they still hold of it */
  if (s->ring) {
    cudaipc_server_keep_stale_locked (s);
    renew_fence_page_locked (s);
  }
  cudaipc_ring_unref (s->ring);
  s->ring = ring;
  make_fences_locked (s);
  /* an in-place wait for a slot of the old ring (upstream's thread, while
   * set_caps() replaced it) looks at the new ring's free slots now */
  g_cond_broadcast (&s->cond);

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

/* A free slot, after taking what the release pages gave back; where
 * there is none, with the pages' waiting flags set (so that the next
 * release through a page wakes us) and the pages read once more. */
static gint
acquire_locked (CudaIpcServer * s)
{
  gint slot;

  cudaipc_server_collect_releases_locked (s);
  slot = cudaipc_ring_acquire (s->ring);
  if (slot < 0 && !s->pages_waiting) {
    cudaipc_server_set_pages_waiting_locked (s, TRUE);
    if (cudaipc_server_collect_releases_locked (s) > 0)
      slot = cudaipc_ring_acquire (s->ring);
  }
  return slot;
}

static CudaIpcServerStatus
take_slot_locked (CudaIpcServer * s, guint64 size, gint64 deadline_us,
    gboolean in_place, const gint * cancel, guint * slot_out, GError ** error)
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
      if (s->ring == NULL || s->retire_ring || s->live_changed ||
          cudaipc_ring_get_slot_size (s->ring) < size)
        return CUDAIPC_SERVER_NO_RING;
      /* frames upstream wrote into plain memory are on their way to
       * render(), which copies each into a slot: a slot is lent only
       * while more are free than those frames need, else upstream gets
       * plain memory again at once, never a wait on the slots they need
       * (a slot lent now would queue behind them) */
      if (s->plain_lent > 0) {
        cudaipc_server_collect_releases_locked (s);
        if (cudaipc_ring_get_n_free (s->ring) <= s->plain_lent)
          return CUDAIPC_SERVER_NO_RING;
      }
    } else if (!cudaipc_server_ensure_ring_locked (s, size, error)) {
      return CUDAIPC_SERVER_ERROR;
    }
    slot = acquire_locked (s);
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

  /* a copy took its slot: perhaps the one of a plain frame */
  if (!in_place && s->plain_lent > 0)
    s->plain_lent--;
  *slot_out = (guint) slot;
  return CUDAIPC_SERVER_OK;
}

CudaIpcServerStatus
cudaipc_server_take_slot_locked (CudaIpcServer * s, guint64 size,
    gint64 deadline_us, gboolean in_place, const gint * cancel,
    guint * slot_out, GError ** error)
{
  CudaIpcServerStatus status = take_slot_locked (s, size, deadline_us,
      in_place, cancel, slot_out, error);

  cudaipc_server_set_pages_waiting_locked (s, FALSE);
  return status;
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

