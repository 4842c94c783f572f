/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>

#include "ring/ring.h"
#include "common/error.h"

#define SLOT_BIT(slot) (G_GUINT64_CONSTANT (1) << (slot))

typedef struct
{
  CudaIpcBlock *block;
  CudaIpcSlotState state;
  guint holders;
  /* Value of the ring's publish counter when the slot was last published;
   * 0 for never, which makes an unused slot the oldest. */
  guint64 published;
} CudaIpcSlot;

struct _CudaIpcRing
{
  gint refcount;                /* atomic */
  CudaIpcDevice *dev;
  guint n_slots;
  guint64 slot_size;
  guint32 generation;
  guint64 publish_count;
  CudaIpcReuse reuse;
  CudaIpcSlot slots[CUDAIPC_MAX_SLOTS];
};

CudaIpcRing *
cudaipc_ring_new (CudaIpcDevice * dev, guint n_slots, guint64 slot_size,
    guint64 max_alloc, guint32 generation, GError ** error)
{
  g_autoptr (CudaIpcRing) ring = NULL;
  guint64 rounded;

  g_return_val_if_fail (dev != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (n_slots < 1 || n_slots > CUDAIPC_MAX_SLOTS) {
    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_LIMIT,
        "ring of %u slots is outside 1..%u", n_slots,
        (guint) CUDAIPC_MAX_SLOTS);
    return NULL;
  }

  rounded = slot_size > 0 ? cudaipc_device_round_up (dev, slot_size) : 0;
  if (rounded == 0) {
    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_LIMIT,
        "slot size %" G_GUINT64_FORMAT " cannot be rounded up to the "
        "granularity %" G_GUINT64_FORMAT, slot_size,
        cudaipc_device_get_granularity (dev));
    return NULL;
  }
  if (rounded > CUDAIPC_MAX_SLOT_SIZE) {
    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_LIMIT,
        "slot size %" G_GUINT64_FORMAT " (rounded up to %" G_GUINT64_FORMAT
        ") is larger than the limit %" G_GUINT64_FORMAT, slot_size, rounded,
        CUDAIPC_MAX_SLOT_SIZE);
    return NULL;
  }

  ring = g_new0 (CudaIpcRing, 1);
  ring->refcount = 1;
  ring->dev = cudaipc_device_ref (dev);
  ring->slot_size = rounded;
  ring->generation = generation;
  ring->reuse = cudaipc_device_get_backend (dev) == CUDAIPC_BACKEND_HOST ?
      CUDAIPC_REUSE_NEWEST : CUDAIPC_REUSE_OLDEST;

  /* n_slots counts the blocks made so far, so that freeing the ring on a
   * failure part-way frees exactly those. */
  for (guint i = 0; i < n_slots; i++) {
    CudaIpcBlock *block = cudaipc_block_new (dev, rounded, max_alloc, error);

    if (block == NULL) {
      g_prefix_error (error, "ring slot %u of %u: ", i, n_slots);
      return NULL;
    }
    ring->slots[i].block = block;
    ring->slots[i].state = CUDAIPC_SLOT_FREE;
    ring->n_slots = i + 1;
  }

  return g_steal_pointer (&ring);
}

CudaIpcRing *
cudaipc_ring_ref (CudaIpcRing * ring)
{
  g_return_val_if_fail (ring != NULL, NULL);
  g_atomic_int_inc (&ring->refcount);
  return ring;
}

void
cudaipc_ring_unref (CudaIpcRing * ring)
{
  if (ring == NULL || !g_atomic_int_dec_and_test (&ring->refcount))
    return;

  for (guint i = 0; i < ring->n_slots; i++)
    cudaipc_block_free (ring->slots[i].block);
  cudaipc_device_unref (ring->dev);
  g_free (ring);
}

guint
cudaipc_ring_get_n_slots (const CudaIpcRing * ring)
{
  g_return_val_if_fail (ring != NULL, 0);

  return ring->n_slots;
}

guint64
cudaipc_ring_get_slot_size (const CudaIpcRing * ring)
{
  g_return_val_if_fail (ring != NULL, 0);

  return ring->slot_size;
}

guint32
cudaipc_ring_get_generation (const CudaIpcRing * ring)
{
  g_return_val_if_fail (ring != NULL, 0);

  return ring->generation;
}

CudaIpcDevice *
cudaipc_ring_get_device (const CudaIpcRing * ring)
{
  g_return_val_if_fail (ring != NULL, NULL);

  return ring->dev;
}

CudaIpcBlock *
cudaipc_ring_get_block (const CudaIpcRing * ring, guint slot)
{
  g_return_val_if_fail (ring != NULL, NULL);
  g_return_val_if_fail (slot < ring->n_slots, NULL);

  return ring->slots[slot].block;
}

gint
cudaipc_ring_acquire (CudaIpcRing * ring)
{
  gint best = -1;

  g_return_val_if_fail (ring != NULL, -EINVAL);

  /* Strictly older (newer) wins, so ties go to the lowest index. */
  for (guint i = 0; i < ring->n_slots; i++) {
    const CudaIpcSlot *s = &ring->slots[i];

    if (s->state != CUDAIPC_SLOT_FREE)
      continue;
    if (best < 0 ||
        (ring->reuse == CUDAIPC_REUSE_OLDEST ?
            s->published < ring->slots[best].published :
            s->published > ring->slots[best].published))
      best = (gint) i;
  }

  if (best < 0)
    return -EAGAIN;

  ring->slots[best].state = CUDAIPC_SLOT_WRITING;
  return best;
}

void
cudaipc_ring_set_reuse (CudaIpcRing * ring, CudaIpcReuse reuse)
{
  g_return_if_fail (ring != NULL);
  ring->reuse = reuse;
}

CudaIpcReuse
cudaipc_ring_get_reuse (const CudaIpcRing * ring)
{
  return ring->reuse;
}

void
cudaipc_ring_abort (CudaIpcRing * ring, guint slot)
{
  g_return_if_fail (ring != NULL);
  g_return_if_fail (slot < ring->n_slots);
  g_return_if_fail (ring->slots[slot].state == CUDAIPC_SLOT_WRITING);

  /* Not published: the slot keeps its age (with OLDEST, the next one
   * picked). */
  ring->slots[slot].state = CUDAIPC_SLOT_FREE;
}

gint
cudaipc_ring_publish (CudaIpcRing * ring, guint slot,
    CudaIpcLease * const *holders, guint n_holders)
{
  CudaIpcSlot *s;

  g_return_val_if_fail (ring != NULL, -EINVAL);
  g_return_val_if_fail (slot < ring->n_slots, -EINVAL);
  g_return_val_if_fail (n_holders == 0 || holders != NULL, -EINVAL);

  s = &ring->slots[slot];
  if (s->state != CUDAIPC_SLOT_WRITING)
    return -EINVAL;

  s->published = ++ring->publish_count;
  s->holders = 0;

  for (guint i = 0; i < n_holders; i++) {
    CudaIpcLease *lease = holders[i];

    if (G_UNLIKELY (lease == NULL)) {
      g_critical ("%s: holder %u is NULL", G_STRFUNC, i);
      continue;
    }
    if (lease->generation != ring->generation) {
      lease->held = 0;
      lease->generation = ring->generation;
    }
    /* A lease listed twice still holds the slot once, or the slot would
     * wait for a release that never comes. */
    if (lease->held & SLOT_BIT (slot))
      continue;
    lease->held |= SLOT_BIT (slot);
    s->holders++;
  }

  s->state = s->holders > 0 ? CUDAIPC_SLOT_PUBLISHED : CUDAIPC_SLOT_FREE;
  return 0;
}

static void
ring_drop_hold (CudaIpcRing * ring, CudaIpcLease * lease, guint slot)
{
  CudaIpcSlot *s = &ring->slots[slot];

  lease->held &= ~SLOT_BIT (slot);
  /* Only a lease shared between two rings of one generation gets here. */
  if (G_UNLIKELY (s->state != CUDAIPC_SLOT_PUBLISHED || s->holders == 0)) {
    g_critical ("%s: lease holds slot %u, which is not published", G_STRFUNC,
        slot);
    return;
  }
  if (--s->holders == 0)
    s->state = CUDAIPC_SLOT_FREE;
}

gint
cudaipc_ring_release (CudaIpcRing * ring, CudaIpcLease * lease, guint slot,
    guint32 generation)
{
  g_return_val_if_fail (ring != NULL, -EINVAL);
  g_return_val_if_fail (lease != NULL, -EINVAL);

  if (slot >= ring->n_slots)
    return -ERANGE;
  if (generation != ring->generation || lease->generation != ring->generation)
    return -ESTALE;
  if (!(lease->held & SLOT_BIT (slot)))
    return -ENOENT;

  ring_drop_hold (ring, lease, slot);
  return 0;
}

guint
cudaipc_ring_release_all (CudaIpcRing * ring, CudaIpcLease * lease)
{
  guint n = 0;

  g_return_val_if_fail (ring != NULL, 0);
  g_return_val_if_fail (lease != NULL, 0);

  if (lease->generation != ring->generation) {
    lease->held = 0;
    lease->generation = ring->generation;
    return 0;
  }

  for (guint i = 0; i < ring->n_slots; i++) {
    if (lease->held & SLOT_BIT (i)) {
      ring_drop_hold (ring, lease, i);
      n++;
    }
  }
  /* Bits past n_slots cannot be set by this ring; clear them anyway. */
  lease->held = 0;

  return n;
}

gboolean
cudaipc_ring_lease_holds (const CudaIpcRing * ring,
    const CudaIpcLease * lease, guint slot)
{
  g_return_val_if_fail (ring != NULL, FALSE);
  g_return_val_if_fail (lease != NULL, FALSE);

  if (lease->generation != ring->generation || slot >= ring->n_slots)
    return FALSE;

  return (lease->held & SLOT_BIT (slot)) != 0;
}

guint
cudaipc_ring_lease_count (const CudaIpcRing * ring, const CudaIpcLease * lease)
{
  guint64 mask;

  g_return_val_if_fail (ring != NULL, 0);
  g_return_val_if_fail (lease != NULL, 0);

  if (lease->generation != ring->generation)
    return 0;

  mask = ring->n_slots >= 64 ? G_MAXUINT64 : SLOT_BIT (ring->n_slots) - 1;
  return (guint) __builtin_popcountll (lease->held & mask);
}

CudaIpcSlotState
cudaipc_ring_get_state (const CudaIpcRing * ring, guint slot)
{
  g_return_val_if_fail (ring != NULL, CUDAIPC_SLOT_FREE);
  g_return_val_if_fail (slot < ring->n_slots, CUDAIPC_SLOT_FREE);

  return ring->slots[slot].state;
}

guint
cudaipc_ring_get_holders (const CudaIpcRing * ring, guint slot)
{
  g_return_val_if_fail (ring != NULL, 0);
  g_return_val_if_fail (slot < ring->n_slots, 0);

  return ring->slots[slot].holders;
}

guint
cudaipc_ring_get_n_free (const CudaIpcRing * ring)
{
  guint n = 0;

  g_return_val_if_fail (ring != NULL, 0);

  for (guint i = 0; i < ring->n_slots; i++) {
    if (ring->slots[i].state == CUDAIPC_SLOT_FREE)
      n++;
  }
  return n;
}
