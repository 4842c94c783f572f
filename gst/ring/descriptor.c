/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ring/descriptor.h"
#include "common/error.h"
#include "common/fdutil.h"

#ifndef F_SEAL_FUTURE_WRITE
#define F_SEAL_FUTURE_WRITE 0x0010      /* Linux 5.1 */
#endif

struct _CudaIpcDescriptor
{
  CudaIpcBackend backend;
  guint n_fds;
  int fds[CUDAIPC_MAX_ALLOCS];
  guint64 sizes[CUDAIPC_MAX_ALLOCS];
  guint64 size;
  guint64 total;
};

static CudaIpcDescriptor *
descriptor_wrap (CudaIpcBackend backend, int *fds, const guint64 * sizes,
    guint n_fds, guint64 size, guint64 total)
{
  CudaIpcDescriptor *desc = g_new0 (CudaIpcDescriptor, 1);

  desc->backend = backend;
  desc->n_fds = n_fds;
  desc->size = size;
  desc->total = total;
  for (guint i = 0; i < n_fds; i++) {
    desc->fds[i] = cudaipc_steal_fd (&fds[i]);
    desc->sizes[i] = sizes[i];
  }
  for (guint i = n_fds; i < CUDAIPC_MAX_ALLOCS; i++)
    desc->fds[i] = -1;

  return desc;
}

static const gchar *
file_kind (mode_t mode)
{
  if (S_ISREG (mode))
    return "a regular file";
  if (S_ISDIR (mode))
    return "a directory";
  if (S_ISSOCK (mode))
    return "a socket";
  if (S_ISFIFO (mode))
    return "a pipe";
  if (S_ISCHR (mode))
    return "a character device";
  if (S_ISBLK (mode))
    return "a block device";
  if (S_ISLNK (mode))
    return "a symbolic link";
  return "an anonymous file";
}

static gboolean
check_fd_open (guint i, int fd, GError ** error)
{
  if (fd < 0 || fcntl (fd, F_GETFD) == -1) {
    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_INVALID,
        "allocation %u: fd %d is not open", i, fd);
    return FALSE;
  }
  return TRUE;
}

static gboolean
check_fd_stat (guint i, int fd, struct stat *st, GError ** error)
{
  if (fstat (fd, st) < 0) {
    int err = errno;

    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_INVALID,
        "allocation %u: fstat of fd %d failed: %s", i, fd, g_strerror (err));
    return FALSE;
  }
  return TRUE;
}

/* A host allocation is a memfd sealed against shrinking: a file the peer
 * could still truncate would turn our reads past its new end into SIGBUS.
 * The seals are checked before the size, so that the size we see can no
 * longer shrink afterwards. It is also sealed against writes by anyone
 * but the producer (F_SEAL_FUTURE_WRITE): every consumer of the producer
 * is sent the same file, and a slot one of them could write is a frame
 * it could change under all the others. */
static gboolean
check_host_fd (guint i, int fd, guint64 alloc_size, GError ** error)
{
  struct stat st;
  int seals;

  if (!check_fd_open (i, fd, error) || !check_fd_stat (i, fd, &st, error))
    return FALSE;

  if (!S_ISREG (st.st_mode)) {
    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_INVALID,
        "allocation %u: fd %d is %s, not a sealed memfd", i, fd,
        file_kind (st.st_mode));
    return FALSE;
  }

  seals = fcntl (fd, F_GET_SEALS);
  if (seals == -1) {
    int err = errno;

    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_INVALID,
        "allocation %u: fd %d does not support seals (%s), "
        "a sealed memfd is expected", i, fd, g_strerror (err));
    return FALSE;
  }
  if (!(seals & F_SEAL_SHRINK)) {
    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_INVALID,
        "allocation %u: fd %d is not sealed against shrinking "
        "(seals 0x%x, F_SEAL_SHRINK 0x%x required)", i, fd, (guint) seals,
        (guint) F_SEAL_SHRINK);
    return FALSE;
  }
  if (!(seals & F_SEAL_FUTURE_WRITE)) {
    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_INVALID,
        "allocation %u: fd %d is not sealed against writes by its consumers "
        "(seals 0x%x, F_SEAL_FUTURE_WRITE 0x%x required): any consumer "
        "could change the frames every other consumer reads", i, fd,
        (guint) seals, (guint) F_SEAL_FUTURE_WRITE);
    return FALSE;
  }

  if (st.st_size < 0 || (guint64) st.st_size < alloc_size) {
    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_INVALID,
        "allocation %u: fd %d is %" G_GINT64_FORMAT " bytes, smaller than "
        "its allocation size %" G_GUINT64_FORMAT, i, fd,
        (gint64) st.st_size, alloc_size);
    return FALSE;
  }

  return TRUE;
}

/* The driver exports an allocation as an fd of its own (not a file one
 * could read or a channel one could talk on). Its exact type is the
 * driver's business, so only the kinds it never is are refused. */
static gboolean
check_cuda_fd (guint i, int fd, GError ** error)
{
  struct stat st;

  if (!check_fd_open (i, fd, error) || !check_fd_stat (i, fd, &st, error))
    return FALSE;

  if (S_ISREG (st.st_mode) || S_ISDIR (st.st_mode) || S_ISSOCK (st.st_mode)
      || S_ISFIFO (st.st_mode)) {
    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_INVALID,
        "allocation %u: fd %d is %s, not a CUDA memory handle", i, fd,
        file_kind (st.st_mode));
    return FALSE;
  }

  return TRUE;
}

static gboolean
check_descriptor (CudaIpcDevice * dev, const int *fds, const guint64 * sizes,
    guint n_fds, guint64 size, guint64 * total_out, GError ** error)
{
  CudaIpcBackend backend = cudaipc_device_get_backend (dev);
  guint64 granularity = cudaipc_device_get_granularity (dev);
  guint64 total = 0;

  if (n_fds == 0) {
    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_INVALID,
        "descriptor has 0 allocations, at least 1 is required");
    return FALSE;
  }
  if (n_fds > CUDAIPC_MAX_ALLOCS) {
    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_LIMIT,
        "descriptor has %u allocations, more than the limit %u", n_fds,
        (guint) CUDAIPC_MAX_ALLOCS);
    return FALSE;
  }

  for (guint i = 0; i < n_fds; i++) {
    if (sizes[i] == 0) {
      g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_INVALID,
          "allocation %u has size 0", i);
      return FALSE;
    }
    if (granularity > 1 && sizes[i] % granularity != 0) {
      g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_INVALID,
          "allocation %u size %" G_GUINT64_FORMAT " is not a multiple of "
          "the granularity %" G_GUINT64_FORMAT, i, sizes[i], granularity);
      return FALSE;
    }
  }

  /* Compared before adding, so the sum can never wrap. */
  for (guint i = 0; i < n_fds; i++) {
    if (sizes[i] > CUDAIPC_MAX_SLOT_SIZE - total) {
      g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_LIMIT,
          "allocation %u size %" G_GUINT64_FORMAT " takes the total of the "
          "allocation sizes past the limit %" G_GUINT64_FORMAT, i, sizes[i],
          CUDAIPC_MAX_SLOT_SIZE);
      return FALSE;
    }
    total += sizes[i];
  }

  if (size == 0) {
    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_INVALID,
        "buffer size 0, it must be at least 1");
    return FALSE;
  }
  if (size > total) {
    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_INVALID,
        "buffer size %" G_GUINT64_FORMAT " is larger than the sum of the "
        "allocation sizes %" G_GUINT64_FORMAT, size, total);
    return FALSE;
  }

  for (guint i = 0; i < n_fds; i++) {
    gboolean ok;

    switch (backend) {
      case CUDAIPC_BACKEND_HOST:
        ok = check_host_fd (i, fds[i], sizes[i], error);
        break;
      case CUDAIPC_BACKEND_CUDA:
        ok = check_cuda_fd (i, fds[i], error);
        break;
      default:
        g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_INVALID,
            "unknown backend %d", (gint) backend);
        ok = FALSE;
        break;
    }
    if (!ok)
      return FALSE;
  }

  *total_out = total;
  return TRUE;
}

CudaIpcDescriptor *
cudaipc_descriptor_new_from_fds (CudaIpcDevice * dev, int *fds,
    const guint64 * sizes, guint n_fds, guint64 size, GError ** error)
{
  guint64 total = 0;
  gboolean bad_args;

  /* Even a programmer error must not leak what we were given. */
  bad_args = dev == NULL || (n_fds > 0 && (fds == NULL || sizes == NULL));
  if (G_UNLIKELY (bad_args)) {
    if (fds != NULL)
      cudaipc_close_fds (fds, n_fds);
    g_return_val_if_fail (dev != NULL, NULL);
    g_return_val_if_fail (fds != NULL, NULL);
    g_return_val_if_fail (sizes != NULL, NULL);
  }

  if (!check_descriptor (dev, fds, sizes, n_fds, size, &total, error)) {
    if (fds != NULL)
      cudaipc_close_fds (fds, n_fds);
    return NULL;
  }

  return descriptor_wrap (cudaipc_device_get_backend (dev), fds, sizes,
      n_fds, size, total);
}

CudaIpcDescriptor *
cudaipc_descriptor_new_owned (CudaIpcBackend backend, int *fds,
    const guint64 * sizes, guint n_fds, guint64 size)
{
  guint64 total = 0;

  g_return_val_if_fail (fds != NULL, NULL);
  g_return_val_if_fail (sizes != NULL, NULL);
  g_return_val_if_fail (n_fds >= 1 && n_fds <= CUDAIPC_MAX_ALLOCS, NULL);

  for (guint i = 0; i < n_fds; i++)
    total += sizes[i];
  g_return_val_if_fail (size <= total, NULL);

  return descriptor_wrap (backend, fds, sizes, n_fds, size, total);
}

void
cudaipc_descriptor_free (CudaIpcDescriptor * desc)
{
  if (desc == NULL)
    return;

  cudaipc_close_fds (desc->fds, desc->n_fds);
  g_free (desc);
}

guint
cudaipc_descriptor_get_n_fds (const CudaIpcDescriptor * desc)
{
  g_return_val_if_fail (desc != NULL, 0);

  return desc->n_fds;
}

const int *
cudaipc_descriptor_get_fds (const CudaIpcDescriptor * desc)
{
  g_return_val_if_fail (desc != NULL, NULL);

  return desc->fds;
}

const guint64 *
cudaipc_descriptor_get_sizes (const CudaIpcDescriptor * desc)
{
  g_return_val_if_fail (desc != NULL, NULL);

  return desc->sizes;
}

guint64
cudaipc_descriptor_get_size (const CudaIpcDescriptor * desc)
{
  g_return_val_if_fail (desc != NULL, 0);

  return desc->size;
}

guint64
cudaipc_descriptor_get_total (const CudaIpcDescriptor * desc)
{
  g_return_val_if_fail (desc != NULL, 0);

  return desc->total;
}

CudaIpcBackend
cudaipc_descriptor_get_backend (const CudaIpcDescriptor * desc)
{
  g_return_val_if_fail (desc != NULL, CUDAIPC_BACKEND_HOST);

  return desc->backend;
}
