/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include "buffers/memory.h"
#include "common/error.h"
#include "common/debug.h"

#define GST_CAT_DEFAULT cudaipc_memory_debug

struct _CudaIpcSharedBlock
{
  gint refcount;
  CudaIpcBlock *block;
};

typedef struct
{
  GstMemory mem;
  CudaIpcSharedBlock *sb;
  gsize base;                   /* offset of the memory's byte 0 in the block */
  CudaIpcReleaseFunc release;   /* root memories only */
  gpointer release_data;
  GDestroyNotify release_destroy;
  GMutex lock;
  guint8 *host_copy;            /* cuda backend, plain maps */
} CudaIpcMemory;

typedef struct
{
  GstAllocator parent;
} CudaIpcAllocator;

typedef struct
{
  GstAllocatorClass parent_class;
} CudaIpcAllocatorClass;

GType cudaipc_allocator_get_type (void);
G_DEFINE_TYPE (CudaIpcAllocator, cudaipc_allocator, GST_TYPE_ALLOCATOR);

CudaIpcSharedBlock *
cudaipc_shared_block_new (CudaIpcBlock * block)
{
  CudaIpcSharedBlock *sb = g_new0 (CudaIpcSharedBlock, 1);

  sb->refcount = 1;
  sb->block = block;
  return sb;
}

CudaIpcSharedBlock *
cudaipc_shared_block_ref (CudaIpcSharedBlock * sb)
{
  g_atomic_int_inc (&sb->refcount);
  return sb;
}

void
cudaipc_shared_block_unref (CudaIpcSharedBlock * sb)
{
  if (!sb || !g_atomic_int_dec_and_test (&sb->refcount))
    return;
  cudaipc_block_free (sb->block);
  g_free (sb);
}

CudaIpcBlock *
cudaipc_shared_block_get_block (CudaIpcSharedBlock * sb)
{
  return sb->block;
}

static CudaIpcMemory *
memory_alloc (GstAllocator * allocator, GstMemory * parent,
    CudaIpcSharedBlock * sb, gsize base, gsize maxsize, gsize offset,
    gsize size)
{
  CudaIpcMemory *mem = g_new0 (CudaIpcMemory, 1);

  gst_memory_init (GST_MEMORY_CAST (mem), GST_MEMORY_FLAG_READONLY, allocator,
      parent, maxsize, 0, offset, size);
  mem->sb = cudaipc_shared_block_ref (sb);
  mem->base = base;
  g_mutex_init (&mem->lock);
  return mem;
}

GstMemory *
cudaipc_memory_new (CudaIpcSharedBlock * sb, gsize offset, gsize size,
    CudaIpcReleaseFunc release, gpointer release_data,
    GDestroyNotify release_destroy, GError ** error)
{
  guint64 block_size = cudaipc_block_get_size (sb->block);
  CudaIpcMemory *mem;

  if (size == 0 || offset > block_size || size > block_size - offset) {
    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_INVALID,
        "a frame of %" G_GSIZE_FORMAT " bytes at offset %" G_GSIZE_FORMAT
        " lies outside its slot of %" G_GUINT64_FORMAT " bytes", size,
        offset, block_size);
    return NULL;
  }
  mem = memory_alloc (cudaipc_allocator_get (), NULL, sb, offset, size, 0,
      size);
  mem->release = release;
  mem->release_data = release_data;
  mem->release_destroy = release_destroy;
  return GST_MEMORY_CAST (mem);
}

gboolean
cudaipc_is_memory (GstMemory * mem)
{
  return mem && mem->allocator &&
      g_type_is_a (G_OBJECT_TYPE (mem->allocator),
      cudaipc_allocator_get_type ());
}

guintptr
cudaipc_memory_get_device_ptr (GstMemory * mem)
{
  CudaIpcMemory *cmem = (CudaIpcMemory *) mem;

  g_return_val_if_fail (cudaipc_is_memory (mem), 0);
  return cudaipc_block_get_ptr (cmem->sb->block) + cmem->base + mem->offset;
}

CudaIpcDevice *
cudaipc_memory_get_device (GstMemory * mem)
{
  g_return_val_if_fail (cudaipc_is_memory (mem), NULL);
  return cudaipc_block_get_device (((CudaIpcMemory *) mem)->sb->block);
}

static gpointer
mem_map_full (GstMemory * gmem, GstMapInfo * info, gsize maxsize)
{
  CudaIpcMemory *mem = (CudaIpcMemory *) gmem;
  CudaIpcBlock *block = mem->sb->block;
  CudaIpcDevice *dev = cudaipc_block_get_device (block);
  guintptr ptr = cudaipc_block_get_ptr (block) + mem->base;
  gpointer ret;

  if (info->flags & GST_MAP_WRITE) {
    GST_WARNING ("frames shared by cuipcsrc are read-only");
    return NULL;
  }
  if ((info->flags & CUDAIPC_MAP_CUDA) ||
      cudaipc_device_get_backend (dev) == CUDAIPC_BACKEND_HOST)
    return (gpointer) ptr;

  g_mutex_lock (&mem->lock);
  if (!mem->host_copy) {
    GError *err = NULL;
    guint8 *copy = g_malloc (gmem->maxsize);

    if (cudaipc_device_read (dev, copy, ptr, gmem->maxsize, &err)) {
      mem->host_copy = copy;
    } else {
      GST_ERROR ("copying a frame to host memory failed: %s", err->message);
      g_clear_error (&err);
      g_free (copy);
    }
  }
  ret = mem->host_copy;
  g_mutex_unlock (&mem->lock);
  return ret;
}

static void
mem_unmap_full (GstMemory * gmem, GstMapInfo * info)
{
}

static GstMemory *
mem_share (GstMemory * gmem, gssize offset, gssize size)
{
  CudaIpcMemory *mem = (CudaIpcMemory *) gmem;
  GstMemory *parent = gmem->parent ? gmem->parent : gmem;

  if (size == -1)
    size = gmem->size - offset;
  return GST_MEMORY_CAST (memory_alloc (gmem->allocator, parent, mem->sb,
          mem->base, gmem->maxsize, gmem->offset + offset, size));
}

static GstMemory *
mem_copy (GstMemory * gmem, gssize offset, gssize size)
{
  GstMemory *copy;
  GstMapInfo src, dst;

  if (size == -1)
    size = gmem->size > (gsize) offset ? gmem->size - offset : 0;
  copy = gst_allocator_alloc (NULL, size, NULL);
  if (!gst_memory_map (gmem, &src, GST_MAP_READ)) {
    gst_memory_unref (copy);
    return NULL;
  }
  gst_memory_map (copy, &dst, GST_MAP_WRITE);
  memcpy (dst.data, src.data + offset, size);
  gst_memory_unmap (copy, &dst);
  gst_memory_unmap (gmem, &src);
  return copy;
}

static gboolean
mem_is_span (GstMemory * mem1, GstMemory * mem2, gsize * offset)
{
  return FALSE;
}

static GstMemory *
allocator_alloc (GstAllocator * allocator, gsize size,
    GstAllocationParams * params)
{
  /* Memories come from imported slots only. */
  return NULL;
}

static void
allocator_free (GstAllocator * allocator, GstMemory * gmem)
{
  CudaIpcMemory *mem = (CudaIpcMemory *) gmem;

  if (mem->release)
    mem->release (mem->release_data);
  if (mem->release_destroy)
    mem->release_destroy (mem->release_data);
  cudaipc_shared_block_unref (mem->sb);
  g_free (mem->host_copy);
  g_mutex_clear (&mem->lock);
  g_free (mem);
}

static void
cudaipc_allocator_class_init (CudaIpcAllocatorClass * klass)
{
  GstAllocatorClass *alloc_class = GST_ALLOCATOR_CLASS (klass);

  alloc_class->alloc = allocator_alloc;
  alloc_class->free = allocator_free;
  cudaipc_debug_init ();
}

static void
cudaipc_allocator_init (CudaIpcAllocator * self)
{
  GstAllocator *alloc = GST_ALLOCATOR_CAST (self);

  alloc->mem_type = CUDAIPC_MEMORY_TYPE;
  alloc->mem_map_full = mem_map_full;
  alloc->mem_unmap_full = mem_unmap_full;
  alloc->mem_share = mem_share;
  alloc->mem_copy = mem_copy;
  alloc->mem_is_span = mem_is_span;
  GST_OBJECT_FLAG_SET (self, GST_ALLOCATOR_FLAG_CUSTOM_ALLOC);
}

GstAllocator *
cudaipc_allocator_get (void)
{
  static GstAllocator *allocator;

  if (g_once_init_enter (&allocator)) {
    GstAllocator *a = g_object_new (cudaipc_allocator_get_type (), NULL);
    gst_object_ref_sink (a);
    GST_OBJECT_FLAG_SET (a, GST_OBJECT_FLAG_MAY_BE_LEAKED);
    g_once_init_leave (&allocator, a);
  }
  return allocator;
}
