/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The producer's ring on the host backend: slot states, leases,
 * generations, round-robin order, multi-allocation slots and an import of
 * a slot through a validated descriptor.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <gst/check/gstcheck.h>

#include "ring/block.h"
#include "ring/descriptor.h"
#include "common/error.h"
#include "common/fdutil.h"
#include "ring/ring.h"
#include "test-main.h"
#include "test-util.h"

#define GEN 7

static CudaIpcRing *
make_ring (CudaIpcDevice * dev, guint n_slots, guint32 generation)
{
  GError *err = NULL;
  CudaIpcRing *ring = cudaipc_ring_new (dev, n_slots, cudaipc_test_page (), 0,
      generation, &err);

  fail_unless (ring != NULL, "ring: %s", err ? err->message : "?");
  return ring;
}

/* Acquires and publishes to @n leases; returns the slot. */
static guint
publish_one (CudaIpcRing * ring, CudaIpcLease ** leases, guint n)
{
  gint slot = cudaipc_ring_acquire (ring);

  fail_unless (slot >= 0, "acquire: %d", slot);
  fail_unless_equals_int (cudaipc_ring_publish (ring, slot, leases, n), 0);
  return (guint) slot;
}

GST_START_TEST (test_acquire_all)
{
  const guint64 page = cudaipc_test_page ();
  CudaIpcDevice *dev = cudaipc_test_host_device ();
  CudaIpcRing *ring = make_ring (dev, 4, GEN);

  fail_unless_equals_int (cudaipc_ring_get_n_slots (ring), 4);
  fail_unless_equals_uint64 (cudaipc_ring_get_slot_size (ring), page);
  fail_unless_equals_int (cudaipc_ring_get_generation (ring), GEN);
  fail_unless (cudaipc_ring_get_device (ring) == dev);
  fail_unless_equals_int (cudaipc_ring_get_n_free (ring), 4);

  for (guint i = 0; i < 4; i++) {
    fail_unless_equals_int (cudaipc_ring_get_state (ring, i),
        CUDAIPC_SLOT_FREE);
    fail_unless_equals_int (cudaipc_ring_acquire (ring), i);
    fail_unless_equals_int (cudaipc_ring_get_state (ring, i),
        CUDAIPC_SLOT_WRITING);
    fail_unless (cudaipc_ring_get_block (ring, i) != NULL);
  }
  fail_unless_equals_int (cudaipc_ring_get_n_free (ring), 0);
  fail_unless_equals_int (cudaipc_ring_acquire (ring), -EAGAIN);
  fail_unless_equals_int (cudaipc_ring_acquire (ring), -EAGAIN);

  /* An aborted slot is free again and the next one picked. */
  cudaipc_ring_abort (ring, 2);
  fail_unless_equals_int (cudaipc_ring_get_state (ring, 2), CUDAIPC_SLOT_FREE);
  fail_unless_equals_int (cudaipc_ring_acquire (ring), 2);

  cudaipc_ring_unref (ring);
  cudaipc_ring_unref (NULL);
  cudaipc_device_unref (dev);
}

GST_END_TEST;

GST_START_TEST (test_publish_two_leases)
{
  CudaIpcDevice *dev = cudaipc_test_host_device ();
  CudaIpcRing *ring = make_ring (dev, 4, GEN);
  CudaIpcLease a = { 0 }, b = { 0 };
  CudaIpcLease *both[2] = { &a, &b };
  guint slot;

  slot = publish_one (ring, both, 2);
  fail_unless_equals_int (slot, 0);
  fail_unless_equals_int (cudaipc_ring_get_state (ring, slot),
      CUDAIPC_SLOT_PUBLISHED);
  fail_unless_equals_int (cudaipc_ring_get_holders (ring, slot), 2);
  fail_unless_equals_int (a.generation, GEN);
  fail_unless (cudaipc_ring_lease_holds (ring, &a, slot));
  fail_unless (cudaipc_ring_lease_holds (ring, &b, slot));
  fail_unless_equals_int (cudaipc_ring_lease_count (ring, &a), 1);
  fail_unless_equals_int (cudaipc_ring_get_n_free (ring), 3);

  fail_unless_equals_int (cudaipc_ring_release (ring, &a, slot, GEN), 0);
  fail_unless (!cudaipc_ring_lease_holds (ring, &a, slot));
  fail_unless_equals_int (cudaipc_ring_get_state (ring, slot),
      CUDAIPC_SLOT_PUBLISHED);
  fail_unless_equals_int (cudaipc_ring_get_holders (ring, slot), 1);
  fail_unless_equals_int (cudaipc_ring_get_n_free (ring), 3);
  /* Every free slot can be taken, but not the one b still reads. */
  for (guint i = 0; i < 3; i++)
    fail_unless (cudaipc_ring_acquire (ring) != (gint) slot);
  fail_unless_equals_int (cudaipc_ring_acquire (ring), -EAGAIN);

  /* A second release by a is refused and changes nothing. */
  fail_unless_equals_int (cudaipc_ring_release (ring, &a, slot, GEN), -ENOENT);
  fail_unless_equals_int (cudaipc_ring_get_holders (ring, slot), 1);

  fail_unless_equals_int (cudaipc_ring_release (ring, &b, slot, GEN), 0);
  fail_unless_equals_int (cudaipc_ring_get_state (ring, slot),
      CUDAIPC_SLOT_FREE);
  fail_unless_equals_int (cudaipc_ring_get_holders (ring, slot), 0);
  fail_unless_equals_int (cudaipc_ring_acquire (ring), slot);

  cudaipc_ring_unref (ring);
  cudaipc_device_unref (dev);
}

GST_END_TEST;

GST_START_TEST (test_release_errors)
{
  CudaIpcDevice *dev = cudaipc_test_host_device ();
  CudaIpcRing *ring = make_ring (dev, 4, GEN);
  CudaIpcLease a = { 0 }, other = { 0 };
  CudaIpcLease *pa = &a, *po = &other;
  guint s0, s1;

  s0 = publish_one (ring, &pa, 1);
  s1 = publish_one (ring, &po, 1);

  /* A slot the lease does not hold, published to someone else... */
  fail_unless_equals_int (cudaipc_ring_release (ring, &a, s1, GEN), -ENOENT);
  /* ...or free. */
  fail_unless_equals_int (cudaipc_ring_release (ring, &a, 3, GEN), -ENOENT);
  fail_unless_equals_int (cudaipc_ring_release (ring, &a, 99, GEN), -ERANGE);
  fail_unless_equals_int (cudaipc_ring_release (ring, &a, 4, GEN), -ERANGE);
  fail_unless_equals_int (cudaipc_ring_release (ring, &a, s0, GEN + 1),
      -ESTALE);
  fail_unless_equals_int (cudaipc_ring_release (ring, &a, s0, GEN - 1),
      -ESTALE);

  /* None of it touched the counts. */
  fail_unless (cudaipc_ring_lease_holds (ring, &a, s0));
  fail_unless_equals_int (cudaipc_ring_lease_count (ring, &a), 1);
  fail_unless_equals_int (cudaipc_ring_lease_count (ring, &other), 1);
  fail_unless_equals_int (cudaipc_ring_get_holders (ring, s0), 1);
  fail_unless_equals_int (cudaipc_ring_get_holders (ring, s1), 1);
  fail_unless_equals_int (cudaipc_ring_get_state (ring, s0),
      CUDAIPC_SLOT_PUBLISHED);
  fail_unless_equals_int (cudaipc_ring_get_state (ring, s1),
      CUDAIPC_SLOT_PUBLISHED);
  fail_unless_equals_int (cudaipc_ring_get_n_free (ring), 2);

  fail_unless_equals_int (cudaipc_ring_release (ring, &a, s0, GEN), 0);
  fail_unless_equals_int (cudaipc_ring_release (ring, &other, s1, GEN), 0);
  fail_unless_equals_int (cudaipc_ring_get_n_free (ring), 4);

  cudaipc_ring_unref (ring);
  cudaipc_device_unref (dev);
}

GST_END_TEST;

GST_START_TEST (test_release_all)
{
  CudaIpcDevice *dev = cudaipc_test_host_device ();
  CudaIpcRing *ring = make_ring (dev, 4, GEN);
  CudaIpcLease a = { 0 }, b = { 0 };
  CudaIpcLease *pa = &a, *both[2] = { &a, &b };

  publish_one (ring, &pa, 1);
  publish_one (ring, both, 2);
  publish_one (ring, &pa, 1);
  fail_unless_equals_int (cudaipc_ring_lease_count (ring, &a), 3);
  fail_unless_equals_int (cudaipc_ring_get_n_free (ring), 1);

  fail_unless_equals_int (cudaipc_ring_release_all (ring, &a), 3);
  fail_unless_equals_int (cudaipc_ring_lease_count (ring, &a), 0);
  fail_unless_equals_uint64 (a.held, 0);
  /* Slot 1 still has b. */
  fail_unless_equals_int (cudaipc_ring_get_n_free (ring), 3);
  fail_unless_equals_int (cudaipc_ring_get_state (ring, 1),
      CUDAIPC_SLOT_PUBLISHED);
  fail_unless_equals_int (cudaipc_ring_release_all (ring, &a), 0);

  fail_unless_equals_int (cudaipc_ring_release_all (ring, &b), 1);
  fail_unless_equals_int (cudaipc_ring_get_n_free (ring), 4);

  cudaipc_ring_unref (ring);
  cudaipc_device_unref (dev);
}

GST_END_TEST;

/* OLDEST, the cuda backend's default, on a host ring */
GST_START_TEST (test_round_robin)
{
  CudaIpcDevice *dev = cudaipc_test_host_device ();
  CudaIpcRing *ring = make_ring (dev, 4, GEN);
  CudaIpcLease a = { 0 };
  CudaIpcLease *pa = &a;
  guint slot;

  cudaipc_ring_set_reuse (ring, CUDAIPC_REUSE_OLDEST);

  for (guint i = 0; i < 10; i++)
    fail_unless_equals_int (publish_one (ring, NULL, 0), i % 4);
  fail_unless_equals_int (cudaipc_ring_get_n_free (ring), 4);

  /* Next is 2; a keeps it, and the cycle goes round it. */
  slot = publish_one (ring, &pa, 1);
  fail_unless_equals_int (slot, 2);
  for (guint i = 0; i < 6; i++) {
    static const guint order[] = { 3, 0, 1, 3, 0, 1 };
    fail_unless_equals_int (publish_one (ring, NULL, 0), order[i]);
  }

  /* Released, it is now the oldest. */
  fail_unless_equals_int (cudaipc_ring_release (ring, &a, slot, GEN), 0);
  fail_unless_equals_int (publish_one (ring, NULL, 0), 2);
  fail_unless_equals_int (publish_one (ring, NULL, 0), 3);

  cudaipc_ring_unref (ring);
  cudaipc_device_unref (dev);
}

GST_END_TEST;

GST_START_TEST (test_generation)
{
  CudaIpcDevice *dev = cudaipc_test_host_device ();
  CudaIpcRing *ring = make_ring (dev, 4, GEN);
  CudaIpcLease a = { 0 };
  CudaIpcLease *pa = &a;
  guint slot;

  slot = publish_one (ring, &pa, 1);
  publish_one (ring, &pa, 1);
  fail_unless_equals_int (cudaipc_ring_lease_count (ring, &a), 2);
  cudaipc_ring_unref (ring);

  /* The rebuilt ring: the old lease holds nothing in it. */
  ring = make_ring (dev, 4, GEN + 1);
  fail_unless (!cudaipc_ring_lease_holds (ring, &a, slot));
  fail_unless_equals_int (cudaipc_ring_lease_count (ring, &a), 0);
  fail_unless_equals_int (cudaipc_ring_release (ring, &a, slot, GEN), -ESTALE);
  /* Naming the new generation does not help a lease of the old one. */
  fail_unless_equals_int (cudaipc_ring_release (ring, &a, slot, GEN + 1),
      -ESTALE);
  fail_unless_equals_int (cudaipc_ring_get_n_free (ring), 4);

  /* Published to in the new ring, the lease is reset first. */
  slot = publish_one (ring, &pa, 1);
  fail_unless_equals_int (a.generation, GEN + 1);
  fail_unless_equals_int (cudaipc_ring_lease_count (ring, &a), 1);
  fail_unless_equals_int (cudaipc_ring_release (ring, &a, slot, GEN), -ESTALE);
  fail_unless_equals_int (cudaipc_ring_release (ring, &a, slot, GEN + 1), 0);

  /* release_all of an old lease resets it and releases nothing. */
  publish_one (ring, &pa, 1);
  cudaipc_ring_unref (ring);
  ring = make_ring (dev, 4, GEN + 2);
  fail_unless_equals_int (cudaipc_ring_release_all (ring, &a), 0);
  fail_unless_equals_int (a.generation, GEN + 2);
  fail_unless_equals_uint64 (a.held, 0);
  fail_unless_equals_int (cudaipc_ring_get_n_free (ring), 4);

  cudaipc_ring_unref (ring);
  cudaipc_device_unref (dev);
}

GST_END_TEST;

GST_START_TEST (test_publish_not_writing)
{
  CudaIpcDevice *dev = cudaipc_test_host_device ();
  CudaIpcRing *ring = make_ring (dev, 4, GEN);
  CudaIpcLease a = { 0 };
  CudaIpcLease *pa = &a;
  guint slot;

  /* FREE */
  fail_unless_equals_int (cudaipc_ring_publish (ring, 0, &pa, 1), -EINVAL);
  fail_unless_equals_uint64 (a.held, 0);
  fail_unless_equals_int (cudaipc_ring_get_state (ring, 0), CUDAIPC_SLOT_FREE);

  /* PUBLISHED */
  slot = publish_one (ring, &pa, 1);
  fail_unless_equals_int (cudaipc_ring_publish (ring, slot, &pa, 1), -EINVAL);
  fail_unless_equals_int (cudaipc_ring_get_holders (ring, slot), 1);

  /* The same lease listed twice holds the slot once. */
  {
    CudaIpcLease *twice[2] = { &a, &a };
    gint s = cudaipc_ring_acquire (ring);

    fail_unless (s >= 0);
    fail_unless_equals_int (cudaipc_ring_publish (ring, s, twice, 2), 0);
    fail_unless_equals_int (cudaipc_ring_get_holders (ring, s), 1);
    fail_unless_equals_int (cudaipc_ring_release (ring, &a, s, GEN), 0);
    fail_unless_equals_int (cudaipc_ring_get_state (ring, s),
        CUDAIPC_SLOT_FREE);
  }

  cudaipc_ring_unref (ring);
  cudaipc_device_unref (dev);
}

GST_END_TEST;

static void
expect_ring_refused (CudaIpcDevice * dev, guint n_slots, guint64 slot_size)
{
  GError *err = NULL;

  fail_if (cudaipc_ring_new (dev, n_slots, slot_size, 0, GEN, &err));
  fail_unless (g_error_matches (err, CUDAIPC_ERROR, CUDAIPC_ERROR_LIMIT),
      "%u slots of %" G_GUINT64_FORMAT ": %s", n_slots, slot_size,
      err ? err->message : "accepted");
  GST_INFO ("refused as expected: %s", err->message);
  g_clear_error (&err);
}

GST_START_TEST (test_limits)
{
  const guint64 page = cudaipc_test_page ();
  CudaIpcDevice *dev = cudaipc_test_host_device ();
  CudaIpcRing *ring;
  CudaIpcLease a = { 0 };
  CudaIpcLease *pa = &a;
  gint slot;

  expect_ring_refused (dev, 0, page);
  expect_ring_refused (dev, CUDAIPC_MAX_SLOTS + 1, page);
  expect_ring_refused (dev, 4, 0);
  expect_ring_refused (dev, 4, G_MAXUINT64);
  expect_ring_refused (dev, 4, CUDAIPC_MAX_SLOT_SIZE + 1);

  /* A slot size is rounded up to the granularity. */
  ring = cudaipc_ring_new (dev, 1, 1, 0, GEN, NULL);
  fail_unless (ring != NULL);
  fail_unless_equals_uint64 (cudaipc_ring_get_slot_size (ring), page);
  cudaipc_ring_unref (ring);

  /* The largest ring: the lease's top bit works. */
  ring = make_ring (dev, CUDAIPC_MAX_SLOTS, GEN);
  for (guint i = 0; i < CUDAIPC_MAX_SLOTS - 1; i++)
    fail_unless_equals_int (cudaipc_ring_acquire (ring), i);
  slot = cudaipc_ring_acquire (ring);
  fail_unless_equals_int (slot, CUDAIPC_MAX_SLOTS - 1);
  fail_unless_equals_int (cudaipc_ring_publish (ring, slot, &pa, 1), 0);
  fail_unless (cudaipc_ring_lease_holds (ring, &a, slot));
  fail_unless_equals_int (cudaipc_ring_lease_count (ring, &a), 1);
  fail_unless_equals_int (cudaipc_ring_release_all (ring, &a), 1);
  fail_unless_equals_int (cudaipc_ring_get_n_free (ring), 1);
  cudaipc_ring_unref (ring);

  cudaipc_device_unref (dev);
}

GST_END_TEST;

GST_START_TEST (test_multi_alloc_slot)
{
  const guint64 page = cudaipc_test_page ();
  CudaIpcDevice *dev = cudaipc_test_host_device ();
  GError *err = NULL;
  CudaIpcRing *ring;
  const CudaIpcDescriptor *desc;
  const guint64 size = 5 * page;
  guint64 sum = 0;

  ring = cudaipc_ring_new (dev, 2, size, 2 * page, GEN, &err);
  fail_unless (ring != NULL, "ring: %s", err ? err->message : "?");
  fail_unless_equals_uint64 (cudaipc_ring_get_slot_size (ring), size);

  desc = cudaipc_block_get_descriptor (cudaipc_ring_get_block (ring, 1));
  fail_unless (desc != NULL);
  fail_unless_equals_int (cudaipc_descriptor_get_n_fds (desc), 3);
  for (guint i = 0; i < 3; i++) {
    guint64 s = cudaipc_descriptor_get_sizes (desc)[i];

    fail_unless (s > 0 && s <= 2 * page && s % page == 0);
    fail_unless (cudaipc_descriptor_get_fds (desc)[i] >= 0);
    sum += s;
  }
  fail_unless (sum >= size);
  fail_unless_equals_uint64 (cudaipc_descriptor_get_total (desc), sum);
  fail_unless (cudaipc_descriptor_get_size (desc) <= sum);
  fail_unless (cudaipc_descriptor_get_size (desc) >= size);
  fail_unless (cudaipc_block_get_size (cudaipc_ring_get_block (ring,
              1)) >= size);

  cudaipc_ring_unref (ring);
  cudaipc_device_unref (dev);
}

GST_END_TEST;

/* What a consumer does with a slot: dup the fds as if received, validate,
 * import, read what the producer wrote. */
GST_START_TEST (test_import_roundtrip)
{
  const guint64 page = cudaipc_test_page ();
  CudaIpcDevice *dev = cudaipc_test_host_device ();
  GError *err = NULL;
  CudaIpcRing *ring;
  CudaIpcBlock *src, *dst;
  const CudaIpcDescriptor *theirs;
  CudaIpcDescriptor *ours;
  const guint64 size = 5 * page;
  int fds[CUDAIPC_MAX_ALLOCS];
  guint n;
  guint8 *pattern, *back;
  gint slot;

  ring = cudaipc_ring_new (dev, 3, size, 2 * page, GEN, &err);
  fail_unless (ring != NULL, "ring: %s", err ? err->message : "?");
  slot = cudaipc_ring_acquire (ring);
  fail_unless_equals_int (slot, 0);
  src = cudaipc_ring_get_block (ring, slot);

  pattern = g_malloc (size);
  for (guint64 i = 0; i < size; i++)
    pattern[i] = (guint8) ((i * 131 + 7) ^ (i >> 12));
  memcpy ((void *) cudaipc_block_get_ptr (src), pattern, size);

  theirs = cudaipc_block_get_descriptor (src);
  n = cudaipc_descriptor_get_n_fds (theirs);
  fail_unless_equals_int (n, 3);
  for (guint i = 0; i < n; i++) {
    fds[i] = fcntl (cudaipc_descriptor_get_fds (theirs)[i], F_DUPFD_CLOEXEC, 0);
    fail_unless (fds[i] >= 0);
  }
  ours = cudaipc_descriptor_new_from_fds (dev, fds,
      cudaipc_descriptor_get_sizes (theirs), n,
      cudaipc_descriptor_get_size (theirs), &err);
  fail_unless (ours != NULL, "refused: %s", err ? err->message : "?");

  dst = cudaipc_block_import (dev, ours, &err);
  fail_unless (dst != NULL, "import: %s", err ? err->message : "?");
  /* The mapping pins the memory: the fds may go now. */
  cudaipc_descriptor_free (ours);
  fail_unless (cudaipc_block_get_descriptor (dst) == NULL);
  fail_unless (cudaipc_block_get_size (dst) >= size);
  fail_unless (cudaipc_block_get_ptr (dst) != cudaipc_block_get_ptr (src));

  back = g_malloc0 (size);
  fail_unless (cudaipc_device_read (dev, back, cudaipc_block_get_ptr (dst),
          size, &err), "read: %s", err ? err->message : "?");
  fail_unless (memcmp (back, pattern, size) == 0);

  /* A later write by the producer shows through the same mapping. */
  ((guint8 *) cudaipc_block_get_ptr (src))[size - 1] ^= 0xff;
  fail_unless_equals_int (((const guint8 *) cudaipc_block_get_ptr (dst))[size
          - 1], pattern[size - 1] ^ 0xff);

  g_free (back);
  g_free (pattern);
  cudaipc_block_free (dst);
  cudaipc_ring_abort (ring, slot);
  cudaipc_ring_unref (ring);
  cudaipc_device_unref (dev);
}

GST_END_TEST;

GST_START_TEST (test_create_free_cycles)
{
  const guint64 page = cudaipc_test_page ();
  CudaIpcDevice *dev = cudaipc_test_host_device ();

  for (guint i = 0; i < 100; i++) {
    GError *err = NULL;
    CudaIpcRing *ring = cudaipc_ring_new (dev, 4, 3 * page, 2 * page,
        i, &err);

    fail_unless (ring != NULL, "cycle %u: %s", i, err ? err->message : "?");
    cudaipc_ring_unref (ring);
  }

  cudaipc_device_unref (dev);
}

GST_END_TEST;

/* NEWEST, the host backend's default: the slot written last comes back
 * first, never one a lease holds */
GST_START_TEST (test_newest_first)
{
  CudaIpcDevice *dev = cudaipc_test_host_device ();
  CudaIpcRing *ring = make_ring (dev, 4, GEN);
  CudaIpcLease a = { 0 }, b = { 0 };
  CudaIpcLease *pa = &a, *pb = &b;

  fail_unless_equals_int (cudaipc_ring_get_reuse (ring), CUDAIPC_REUSE_NEWEST);
  for (guint i = 0; i < 5; i++)
    fail_unless_equals_int (publish_one (ring, NULL, 0), 0);

  /* a holds 0: the next never-used slot, then that one again */
  fail_unless_equals_int (publish_one (ring, &pa, 1), 0);
  fail_unless_equals_int (publish_one (ring, NULL, 0), 1);
  fail_unless_equals_int (publish_one (ring, NULL, 0), 1);
  /* b holds 1 too: 2 is next */
  fail_unless_equals_int (publish_one (ring, &pb, 1), 1);
  fail_unless_equals_int (publish_one (ring, NULL, 0), 2);

  /* released, 0 is older than 2, which stays first */
  fail_unless_equals_int (cudaipc_ring_release (ring, &a, 0, GEN), 0);
  fail_unless_equals_int (publish_one (ring, NULL, 0), 2);
  /* 1 released after 2 was published last: 2 still first, then 1 once 2
   * is held */
  fail_unless_equals_int (cudaipc_ring_release (ring, &b, 1, GEN), 0);
  fail_unless_equals_int (publish_one (ring, &pa, 1), 2);
  fail_unless_equals_int (publish_one (ring, NULL, 0), 1);
  fail_unless_equals_int (cudaipc_ring_release_all (ring, &a), 1);

  cudaipc_ring_unref (ring);
  cudaipc_device_unref (dev);
}

GST_END_TEST;

static Suite *
ring_suite (void)
{
  Suite *s = suite_create ("ring");
  TCase *tc = cudaipc_test_case (s, "general", 60);

  tcase_add_test (tc, test_acquire_all);
  tcase_add_test (tc, test_publish_two_leases);
  tcase_add_test (tc, test_release_errors);
  tcase_add_test (tc, test_release_all);
  tcase_add_test (tc, test_round_robin);
  tcase_add_test (tc, test_newest_first);
  tcase_add_test (tc, test_generation);
  tcase_add_test (tc, test_publish_not_writing);
  tcase_add_test (tc, test_limits);
  tcase_add_test (tc, test_multi_alloc_slot);
  tcase_add_test (tc, test_import_roundtrip);
  tcase_add_test (tc, test_create_free_cycles);

  return s;
}

const CudaIpcTestMain cudaipc_test_main = {
  .name = "ring",
  .suite = ring_suite,
};
