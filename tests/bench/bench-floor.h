/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the floor's two rows share: (0) announces frames with a socket
 * message (bench-floor.c), (0r) through a ring in shared memory
 * (bench-floor-ring.c); both copy into the same slots.
 */
#pragma once

#include "bench.h"

G_BEGIN_DECLS

#define FLOOR_MAGIC 0x30464c52u /* "RLF0": a slot and its fds */
#define FLOOR_RING_MAGIC 0x72464c52u    /* "RLFr": (0r)'s page, one fd */
#define FLOOR_FRAME 1u
#define FLOOR_RELEASE 2u
#define FLOOR_LAST 1u
#define FLOOR_MAX_SLOTS 64
#define FLOOR_MAX_CLIENTS 64

/* FRAME producer -> consumer, RELEASE back */
typedef struct
{
  guint32 type, slot;
  guint64 index, stamp;
  guint32 flags, pad;
} FloorMsg;

G_STATIC_ASSERT (sizeof (FloorMsg) == 32);

typedef struct _FloorRing FloorRing;

/* the page's size, rounded up to whole pages */
gsize floor_ring_size (void);

/* Producer: a zeroed, sealed page for @n_consumers; NULL with a message. */
FloorRing *floor_ring_new (guint n_slots, guint n_consumers);
int floor_ring_get_fd (FloorRing * r);
/* Producer: waits until frame @i's slot is free (every consumer released
 * frame @i - n_slots); FALSE after @timeout_ms. */
gboolean floor_ring_wait_free (FloorRing * r, guint64 i, gint timeout_ms);
/* Producer: @m (its index, the next frame's) into its slot's entry, then
 * the head moved and the sleepers woken. */
void floor_ring_announce (FloorRing * r, const FloorMsg * m);

/* Consumer: maps the page of @fd (taken) as consumer @index; NULL with a
 * message where it is not a sealed memfd of the expected size. */
FloorRing *floor_ring_open (int fd, guint n_slots, guint index);
/* Consumer: the next frame into @m: 1, 0 after @idle_ms with none, -1 for
 * an entry that is not the frame expected. Spins @spin_us first. */
gint floor_ring_next (FloorRing * r, FloorMsg * m, gint spin_us,
    gint idle_ms);
/* Consumer: the frame last read is released. */
void floor_ring_release (FloorRing * r);

void floor_ring_free (FloorRing * r);

G_END_DECLS
