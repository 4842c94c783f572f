/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include "device/backend.h"
#include "ring/block.h"
#include "common/error.h"
#include "common/fdutil.h"

struct _CudaIpcBlock
{
  CudaIpcDevice *dev;
  guintptr ptr;
  guint64 size;
  guint64 total;
  guint n_allocs;
  guint n_mapped;
  guint64 sizes[CUDAIPC_MAX_ALLOCS];
  guint64 handles[CUDAIPC_MAX_ALLOCS];
  gboolean has_handle[CUDAIPC_MAX_ALLOCS];
  gboolean reserved;
  CudaIpcDescriptor *desc;      /* producer blocks: the exported fds */
};

/* Undoes whatever part of the set-up was done, in reverse order: unmap,
 * release, free the range. The device's context is current. */
static void
block_teardown (CudaIpcBlock * block)
{
  const CudaIpcBackendOps *ops = block->dev->ops;
  guint64 offset = 0;

  for (guint i = 0; i < block->n_mapped; i++) {
    ops->unmap (block->dev, block->ptr + offset, block->sizes[i]);
    offset += block->sizes[i];
  }
  block->n_mapped = 0;
  for (guint i = 0; i < block->n_allocs; i++) {
    if (block->has_handle[i])
      ops->release (block->dev, block->handles[i]);
    block->has_handle[i] = FALSE;
  }
  if (block->reserved)
    ops->free_range (block->dev, block->ptr, block->total);
  block->reserved = FALSE;
}

/* Reserves one range for every allocation and maps them in address order.
 * @fds are the allocations' fds (the host backend maps them). */
static gboolean
block_map_all (CudaIpcBlock * block, const int *fds, gboolean writable,
    GError ** error)
{
  const CudaIpcBackendOps *ops = block->dev->ops;
  guint64 offset = 0;

  if (!ops->reserve (block->dev, block->total, &block->ptr, error))
    return FALSE;
  block->reserved = TRUE;
  for (guint i = 0; i < block->n_allocs; i++) {
    if (!ops->map (block->dev, block->ptr + offset, block->sizes[i],
            block->handles[i], fds[i], writable, error))
      return FALSE;
    block->n_mapped++;
    offset += block->sizes[i];
  }
  return ops->set_access (block->dev, block->ptr, block->total, writable,
      error);
}

CudaIpcBlock *
cudaipc_block_new (CudaIpcDevice * dev, guint64 size, guint64 max_alloc,
    GError ** error)
{
  CudaIpcBlock *block;
  int fds[CUDAIPC_MAX_ALLOCS];
  guint64 rounded, chunk, left;
  guint n;

  g_return_val_if_fail (dev != NULL, NULL);

  rounded = cudaipc_device_round_up (dev, size);
  if (rounded == 0 || rounded > CUDAIPC_MAX_SLOT_SIZE) {
    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_LIMIT,
        "a buffer of %" G_GUINT64_FORMAT " bytes is outside 1..%"
        G_GUINT64_FORMAT, size, CUDAIPC_MAX_SLOT_SIZE);
    return NULL;
  }
  chunk = max_alloc ? cudaipc_device_round_up (dev, max_alloc) : rounded;
  if (chunk == 0 || chunk > rounded)
    chunk = rounded;
  n = (guint) ((rounded + chunk - 1) / chunk);
  if (n > CUDAIPC_MAX_ALLOCS) {
    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_LIMIT,
        "a buffer of %" G_GUINT64_FORMAT " bytes in allocations of %"
        G_GUINT64_FORMAT " needs %u allocations, more than %u", rounded,
        chunk, n, CUDAIPC_MAX_ALLOCS);
    return NULL;
  }

  block = g_new0 (CudaIpcBlock, 1);
  block->dev = cudaipc_device_ref (dev);
  block->size = size;
  block->total = rounded;
  block->n_allocs = n;
  for (guint i = 0; i < CUDAIPC_MAX_ALLOCS; i++)
    fds[i] = -1;
  left = rounded;
  for (guint i = 0; i < n; i++) {
    block->sizes[i] = MIN (chunk, left);
    left -= block->sizes[i];
  }

  if (!dev->ops->push (dev, error)) {
    cudaipc_block_free (block);
    return NULL;
  }
  for (guint i = 0; i < n; i++) {
    if (!dev->ops->create (dev, block->sizes[i], &block->handles[i], &fds[i],
            error))
      goto fail;
    block->has_handle[i] = TRUE;
  }
  if (!block_map_all (block, fds, TRUE, error))
    goto fail;
  /* the mappings above are the producer's only writable ones: every slot
   * pool, copy and write goes through them */
  for (guint i = 0; i < n && dev->ops->seal; i++) {
    if (!dev->ops->seal (dev, fds[i], error))
      goto fail;
  }
  dev->ops->pop (dev);

  block->desc = cudaipc_descriptor_new_owned (dev->backend, fds, block->sizes,
      n, size);
  return block;

fail:
  block_teardown (block);
  dev->ops->pop (dev);
  cudaipc_close_fds (fds, n);
  cudaipc_block_free (block);
  return NULL;
}

CudaIpcBlock *
cudaipc_block_import (CudaIpcDevice * dev, const CudaIpcDescriptor * desc,
    GError ** error)
{
  CudaIpcBlock *block;
  const int *fds;
  const guint64 *sizes;

  g_return_val_if_fail (dev != NULL, NULL);
  g_return_val_if_fail (desc != NULL, NULL);

  if (cudaipc_descriptor_get_backend (desc) != dev->backend) {
    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_INVALID,
        "a %s descriptor cannot be imported on a %s device",
        cudaipc_backend_name (cudaipc_descriptor_get_backend (desc)),
        cudaipc_backend_name (dev->backend));
    return NULL;
  }

  block = g_new0 (CudaIpcBlock, 1);
  block->dev = cudaipc_device_ref (dev);
  block->size = cudaipc_descriptor_get_size (desc);
  block->total = cudaipc_descriptor_get_total (desc);
  block->n_allocs = cudaipc_descriptor_get_n_fds (desc);
  fds = cudaipc_descriptor_get_fds (desc);
  sizes = cudaipc_descriptor_get_sizes (desc);
  memcpy (block->sizes, sizes, block->n_allocs * sizeof (guint64));

  if (!dev->ops->push (dev, error)) {
    cudaipc_block_free (block);
    return NULL;
  }
  for (guint i = 0; i < block->n_allocs; i++) {
    if (!dev->ops->import (dev, fds[i], sizes[i], &block->handles[i], error))
      goto fail;
    block->has_handle[i] = TRUE;
  }
  if (!block_map_all (block, fds, FALSE, error))
    goto fail;
  dev->ops->pop (dev);
  return block;

fail:
  block_teardown (block);
  dev->ops->pop (dev);
  cudaipc_block_free (block);
  return NULL;
}

void
cudaipc_block_free (CudaIpcBlock * block)
{
  if (!block)
    return;
  if (block->n_mapped || block->reserved || block->n_allocs) {
    if (block->dev->ops->push (block->dev, NULL)) {
      block_teardown (block);
      block->dev->ops->pop (block->dev);
    }
  }
  cudaipc_descriptor_free (block->desc);
  cudaipc_device_unref (block->dev);
  g_free (block);
}

guintptr
cudaipc_block_get_ptr (const CudaIpcBlock * block)
{
  return block->ptr;
}

guint64
cudaipc_block_get_size (const CudaIpcBlock * block)
{
  return block->size;
}

const CudaIpcDescriptor *
cudaipc_block_get_descriptor (const CudaIpcBlock * block)
{
  return block->desc;
}

CudaIpcDevice *
cudaipc_block_get_device (const CudaIpcBlock * block)
{
  return block->dev;
}
