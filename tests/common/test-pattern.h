/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Shared by the tests and their helper processes: the byte pattern both
 * sides of a hand-over agree on, and the skip rule.
 *
 * A gpu test runs with CK_FORK=no (CUDA state does not survive fork) and
 * spawns gpu-peer (a separate program) for the second process. Without a
 * usable CUDA driver and device it exits 77, which meson reports as a skip.
 */
#pragma once

#include <string.h>
#include <glib.h>

#define CUDAIPC_TEST_SKIP 77
/* A 4K NV12 frame: 3840x2160 luma plus half-height chroma. */
#define CUDAIPC_TEST_4K_NV12 (3840 * 2160 * 3 / 2)

/* Deterministic bytes for key (@slot, @gen) (a slot and generation, or a
 * frame number and 0): every 8-byte word differs, so a shifted, stale or
 * partial copy is caught. */
static inline void
cudaipc_test_fill_pattern (guint8 * data, gsize size, guint slot, guint gen)
{
  guint64 seed = 0x9E3779B97F4A7C15ull * (slot + 1) + gen;
  gsize i;

  for (i = 0; i + 8 <= size; i += 8) {
    guint64 v = seed ^ (i * 0xBF58476D1CE4E5B9ull);
    memcpy (data + i, &v, 8);
  }
  for (; i < size; i++)
    data[i] = (guint8) (seed >> (i % 8));
}

/* Folds @size bytes into the running 64-bit checksum @h (FNV-1a over
 * 8-byte words, then the last bytes one by one): the checksum of a stream
 * of frames is the checksum of each frame's bytes in turn, starting from
 * CUDAIPC_TEST_HASH_INIT. */
#define CUDAIPC_TEST_HASH_INIT 0xCBF29CE484222325ull
static inline guint64
cudaipc_test_hash (guint64 h, const guint8 * data, gsize size)
{
  gsize i;

  for (i = 0; i + 8 <= size; i += 8) {
    guint64 w;

    memcpy (&w, data + i, 8);
    h = (h ^ w) * 0x100000001B3ull;
  }
  for (; i < size; i++)
    h = (h ^ data[i]) * 0x100000001B3ull;
  return h;
}

/* Returns the offset of the first byte of @data that differs from the
 * pattern of (@slot, @gen), or -1 when all @size bytes match. */
static inline gssize
cudaipc_test_check_pattern (const guint8 * data, gsize size, guint slot,
    guint gen)
{
  guint64 seed = 0x9E3779B97F4A7C15ull * (slot + 1) + gen;
  gsize i;

  for (i = 0; i + 8 <= size; i += 8) {
    guint64 v = seed ^ (i * 0xBF58476D1CE4E5B9ull);
    if (memcmp (data + i, &v, 8) != 0)
      return (gssize) i;
  }
  for (; i < size; i++)
    if (data[i] != (guint8) (seed >> (i % 8)))
      return (gssize) i;
  return -1;
}
