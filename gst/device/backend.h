/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The memory backend seam (internal). device.c and block.c drive a backend
 * through this table; backend-cuda.c (CUDA VMM) and backend-host.c (memfd)
 * implement it. The steps mirror the VMM life cycle so both backends share
 * the ring, descriptor and block logic:
 *   producer: create (+export) -> reserve -> map... -> set_access -> seal...
 *   consumer: import...        -> reserve -> map... -> set_access
 *   teardown: unmap... -> release... -> free_range
 * Every call is made with the device's context current where it has one.
 */
#pragma once

#include <glib.h>
#include "device/device.h"

G_BEGIN_DECLS

typedef struct _CudaIpcBackendOps CudaIpcBackendOps;

struct _CudaIpcDevice
{
  gint refcount;
  const CudaIpcBackendOps *ops;
  CudaIpcBackend backend;
  gint ordinal;
  guint64 granularity;
  guint8 uuid[CUDAIPC_UUID_LEN];
  gchar *name;
  CUdevice cu_device;
  /* atomic once open() set it: use_context() may replace it while another
   * thread pushes it (a ring freed there) */
  CUcontext context;
  /* a context lent by use_context(): its owner, released after close() */
  gpointer context_owner;
  GDestroyNotify context_owner_release;
};

struct _CudaIpcBackendOps
{
  gboolean (*open) (CudaIpcDevice * dev, GError ** error);
  void (*close) (CudaIpcDevice * dev);
  gboolean (*push) (CudaIpcDevice * dev, GError ** error);
  void (*pop) (CudaIpcDevice * dev);

  /* One physical allocation of @size bytes, exported as a CLOEXEC fd. */
  gboolean (*create) (CudaIpcDevice * dev, guint64 size, guint64 * handle,
      int *fd, GError ** error);
  /* After the producer's own mapping of every allocation is made, before
   * any fd goes out: from now on no process can write the allocation
   * through @fd or a mapping made later (host: F_SEAL_FUTURE_WRITE); the
   * producer's mapping stays writable. NULL where the backend cannot
   * (cuda: an importer may always map a VMM allocation read-write). */
  gboolean (*seal) (CudaIpcDevice * dev, int fd, GError ** error);
  /* Imports an exported fd (the caller keeps the fd). */
  gboolean (*import) (CudaIpcDevice * dev, int fd, guint64 size,
      guint64 * handle, GError ** error);
  void (*release) (CudaIpcDevice * dev, guint64 handle);
  gboolean (*reserve) (CudaIpcDevice * dev, guint64 size, guintptr * va,
      GError ** error);
  void (*free_range) (CudaIpcDevice * dev, guintptr va, guint64 size);
  gboolean (*map) (CudaIpcDevice * dev, guintptr va, guint64 size,
      guint64 handle, int fd, gboolean writable, GError ** error);
  void (*unmap) (CudaIpcDevice * dev, guintptr va, guint64 size);
  gboolean (*set_access) (CudaIpcDevice * dev, guintptr va, guint64 size,
      gboolean writable, GError ** error);

  gboolean (*write) (CudaIpcDevice * dev, guintptr dst, const void *src,
      gsize size, GError ** error);
  gboolean (*read) (CudaIpcDevice * dev, void *dst, guintptr src,
      gsize size, GError ** error);
  gboolean (*mem_info) (CudaIpcDevice * dev, guint64 * free_bytes,
      guint64 * total_bytes, GError ** error);
  /* May be NULL (no devices of another kind to look for). */
  gboolean (*find_peer) (CudaIpcDevice * dev,
      const guint8 uuid[CUDAIPC_UUID_LEN], gint * ordinal,
      gboolean * can_access);
};

extern const CudaIpcBackendOps cudaipc_backend_host;
extern const CudaIpcBackendOps cudaipc_backend_cuda;

G_END_DECLS
