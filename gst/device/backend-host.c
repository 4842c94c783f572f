/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The host backend: slots are sealed memfds mapped with mmap. It follows the
 * VMM steps of the CUDA backend (reserve a range, map allocations into it in
 * address order) so the ring and import logic run unchanged on CI.
 *
 * Seals: shrink and grow at creation keep a peer from truncating a mapped
 * file under us. Once the producer has mapped the allocation (read-write,
 * its only mapping), seal() adds F_SEAL_FUTURE_WRITE and F_SEAL_SEAL:
 * every consumer is sent the same file, and without it any of them could
 * write the frames all the others read (a new writable mapping, write(2),
 * a punched hole, the file reopened through /proc all fail with EPERM
 * then). The producer writes through the mapping it made before, which
 * the seal leaves writable.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "device/backend.h"
#include "common/error.h"
#include "common/fdutil.h"

#ifndef F_SEAL_FUTURE_WRITE
#define F_SEAL_FUTURE_WRITE 0x0010      /* Linux 5.1 */
#endif

static gboolean
set_errno_error (GError ** error, const gchar * what)
{
  int err = errno;
  g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_IO, "%s: %s", what,
      g_strerror (err));
  return FALSE;
}

static gboolean
host_open (CudaIpcDevice * dev, GError ** error)
{
  long page = sysconf (_SC_PAGESIZE);

  dev->granularity = page > 0 ? (guint64) page : 4096;
  memset (dev->uuid, 0, sizeof (dev->uuid));
  dev->name = g_strdup ("host memory");
  return TRUE;
}

static void
host_close (CudaIpcDevice * dev)
{
}

static gboolean
host_push (CudaIpcDevice * dev, GError ** error)
{
  return TRUE;
}

static void
host_pop (CudaIpcDevice * dev)
{
}

static gboolean
host_create (CudaIpcDevice * dev, guint64 size, guint64 * handle, int *fd_out,
    GError ** error)
{
  cudaipc_autofd int fd = -1;

  fd = memfd_create ("cudaipc-slot", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0)
    return set_errno_error (error, "memfd_create");
  if (ftruncate (fd, (off_t) size) < 0)
    return set_errno_error (error, "ftruncate");
  /* F_SEAL_SEAL only in seal(), after the producer's mapping */
  if (fcntl (fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) < 0)
    return set_errno_error (error, "sealing the slot memfd");
  *handle = 0;
  *fd_out = cudaipc_steal_fd (&fd);
  return TRUE;
}

static gboolean
host_seal (CudaIpcDevice * dev, int fd, GError ** error)
{
  int err;

  if (fcntl (fd, F_ADD_SEALS, F_SEAL_FUTURE_WRITE | F_SEAL_SEAL) == 0)
    return TRUE;
  err = errno;
  /* EINVAL: a seal this kernel does not know */
  g_set_error (error, CUDAIPC_ERROR, err == EINVAL ?
      CUDAIPC_ERROR_NOT_SUPPORTED : CUDAIPC_ERROR_IO,
      "sealing a slot against writes by its consumers (F_SEAL_FUTURE_WRITE, "
      "Linux 5.1 or newer): %s", g_strerror (err));
  return FALSE;
}

static gboolean
host_import (CudaIpcDevice * dev, int fd, guint64 size, guint64 * handle,
    GError ** error)
{
  /* The descriptor checked kind, size and seals; mmap does the rest. */
  *handle = 0;
  return TRUE;
}

static void
host_release (CudaIpcDevice * dev, guint64 handle)
{
}

static gboolean
host_reserve (CudaIpcDevice * dev, guint64 size, guintptr * va,
    GError ** error)
{
  void *p = mmap (NULL, size, PROT_NONE,
      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

  if (p == MAP_FAILED)
    return set_errno_error (error, "reserving an address range");
  *va = (guintptr) p;
  return TRUE;
}

static void
host_free_range (CudaIpcDevice * dev, guintptr va, guint64 size)
{
  munmap ((void *) va, size);
}

static gboolean
host_map (CudaIpcDevice * dev, guintptr va, guint64 size, guint64 handle,
    int fd, gboolean writable, GError ** error)
{
  int prot = PROT_READ | (writable ? PROT_WRITE : 0);
  void *p = mmap ((void *) va, size, prot, MAP_SHARED | MAP_FIXED, fd, 0);

  if (p == MAP_FAILED)
    return set_errno_error (error, "mapping a slot allocation");
  return TRUE;
}

static void
host_unmap (CudaIpcDevice * dev, guintptr va, guint64 size)
{
  /* Put the reservation back rather than leave a hole in the range. */
  mmap ((void *) va, size, PROT_NONE,
      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
}

static gboolean
host_set_access (CudaIpcDevice * dev, guintptr va, guint64 size,
    gboolean writable, GError ** error)
{
  return TRUE;
}

static gboolean
host_write (CudaIpcDevice * dev, guintptr dst, const void *src, gsize size,
    GError ** error)
{
  memcpy ((void *) dst, src, size);
  return TRUE;
}

static gboolean
host_read (CudaIpcDevice * dev, void *dst, guintptr src, gsize size,
    GError ** error)
{
  memcpy (dst, (const void *) src, size);
  return TRUE;
}

static gboolean
host_mem_info (CudaIpcDevice * dev, guint64 * free_bytes,
    guint64 * total_bytes, GError ** error)
{
  long page = sysconf (_SC_PAGESIZE);
  long avail = sysconf (_SC_AVPHYS_PAGES);
  long total = sysconf (_SC_PHYS_PAGES);

  if (page <= 0 || avail < 0 || total <= 0)
    return set_errno_error (error, "reading the memory size");
  *free_bytes = (guint64) avail * (guint64) page;
  *total_bytes = (guint64) total * (guint64) page;
  return TRUE;
}

const CudaIpcBackendOps cudaipc_backend_host = {
  .open = host_open,
  .close = host_close,
  .push = host_push,
  .pop = host_pop,
  .create = host_create,
  .seal = host_seal,
  .import = host_import,
  .release = host_release,
  .reserve = host_reserve,
  .free_range = host_free_range,
  .map = host_map,
  .unmap = host_unmap,
  .set_access = host_set_access,
  .write = host_write,
  .read = host_read,
  .mem_info = host_mem_info,
};
