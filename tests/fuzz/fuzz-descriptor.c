/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Fuzz target: descriptor validation and import on the host backend.
 *
 * Input: byte 0 is the fd count (0..20); then per fd one kind byte (sealed
 * memfd, unsealed memfd, pipe, /dev/null, closed fd) and a u32 with the
 * memfd's real size in pages; then per fd a u64 declared allocation size;
 * then a u64 buffer size. What from_fds accepts is imported, read end to
 * end and freed. Every fd given must be closed afterwards, whatever the
 * outcome, and nothing may crash.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ring/block.h"
#include "ring/descriptor.h"
#include "device/device.h"
#include "fuzz-util.h"

int LLVMFuzzerTestOneInput (const guint8 * data, size_t size);

static guint64
take_u64 (const guint8 ** p, const guint8 * end)
{
  guint64 v = 0;

  if (end - *p >= 8) {
    memcpy (&v, *p, 8);
    *p += 8;
  } else {
    *p = end;
  }
  return GUINT64_FROM_LE (v);
}

static int
make_fd (guint kind, guint32 pages, guint64 page)
{
  int fd = -1, p[2];

  switch (kind % 5) {
    case 0:
    case 1:
      fd = memfd_create ("fuzz", MFD_CLOEXEC | MFD_ALLOW_SEALING);
      if (fd >= 0 && ftruncate (fd, (off_t) ((pages % 64) * page)) == 0 &&
          kind % 5 == 0)
        fcntl (fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW |
            F_SEAL_FUTURE_WRITE | F_SEAL_SEAL);
      return fd;
    case 2:
      if (pipe2 (p, O_CLOEXEC) < 0)
        return -1;
      close (p[1]);
      return p[0];
    case 3:
      return open ("/dev/null", O_RDONLY | O_CLOEXEC);
    default:
      /* a number that is not an open fd */
      return 100000 + (int) (pages % 1000);
  }
}

int
LLVMFuzzerTestOneInput (const guint8 * data, size_t size)
{
  static CudaIpcDevice *dev;
  const guint8 *p = data, *end = data + size;
  int fds[20];
  guint64 sizes[20];
  guint n, before;
  guint64 page, total;
  CudaIpcDescriptor *desc;

  if (!dev)
    dev = cudaipc_device_new (CUDAIPC_BACKEND_HOST, 0, NULL);
  page = cudaipc_device_get_granularity (dev);
  if (size < 1)
    return 0;
  n = *p++ % 21;
  before = fuzz_count_fds ();
  for (guint i = 0; i < n; i++) {
    guint kind = p < end ? *p++ : 0;
    guint32 pages = 0;

    if (end - p >= 4) {
      memcpy (&pages, p, 4);
      p += 4;
    }
    fds[i] = make_fd (kind, GUINT32_FROM_LE (pages), page);
  }
  for (guint i = 0; i < n; i++)
    sizes[i] = take_u64 (&p, end);
  total = take_u64 (&p, end);

  desc = cudaipc_descriptor_new_from_fds (dev, fds, sizes, n, total, NULL);
  if (desc) {
    CudaIpcBlock *block = cudaipc_block_import (dev, desc, NULL);

    if (block) {
      volatile guint8 sum = 0;
      const guint8 *mem = (const guint8 *) cudaipc_block_get_ptr (block);

      for (guint64 i = 0; i < cudaipc_block_get_size (block); i += page)
        sum ^= mem[i];
      (void) sum;
      cudaipc_block_free (block);
    }
    cudaipc_descriptor_free (desc);
  }
  if (fuzz_count_fds () != before)
    abort ();
  return 0;
}
