/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The CUDA backend: slots are VMM allocations (cuMemCreate, pinned, on one
 * device, POSIX fd handle type), exported once with
 * cuMemExportToShareableHandle and imported with
 * cuMemImportFromShareableHandle. Fds, not legacy cuIpc memory handles, so
 * that two containers sharing a socket and a GPU but not a PID namespace
 * can share frames.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <fcntl.h>
#include <string.h>

#include "device/backend.h"
#include "device/cuda-loader.h"
#include "common/error.h"
#include "common/fdutil.h"

#define CU (cudaipc_cuda ())

static void
fill_prop (CudaIpcDevice * dev, CUmemAllocationProp * prop)
{
  memset (prop, 0, sizeof (*prop));
  prop->type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop->requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  prop->location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop->location.id = dev->cu_device;
}

static gboolean
cuda_open (CudaIpcDevice * dev, GError ** error)
{
  CUmemAllocationProp prop;
  CUuuid uuid;
  char name[256] = { 0 };
  int count = 0, vmm = 0, posix = 0;
  size_t gran = 0;
  CUresult res;

  if (!cudaipc_cuda_load (error))
    return FALSE;
  if (!cudaipc_cuda_check (CU->DeviceGetCount (&count), "cuDeviceGetCount",
          error))
    return FALSE;
  if (dev->ordinal < 0 || dev->ordinal >= count) {
    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_NO_DEVICE,
        "no CUDA device %d: this process sees %d device(s)", dev->ordinal,
        count);
    return FALSE;
  }
  if (!cudaipc_cuda_check (CU->DeviceGet (&dev->cu_device, dev->ordinal),
          "cuDeviceGet", error))
    return FALSE;
  CU->DeviceGetName (name, sizeof (name) - 1, dev->cu_device);
  dev->name = g_strdup (name[0] ? name : "CUDA device");

  if (!cudaipc_cuda_check (CU->DeviceGetAttribute (&vmm,
              CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED,
              dev->cu_device), "cuDeviceGetAttribute", error))
    return FALSE;
  CU->DeviceGetAttribute (&posix,
      CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED,
      dev->cu_device);
  if (!vmm || !posix) {
    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_NOT_SUPPORTED,
        "CUDA device %d (%s) does not support %s, which sharing frames "
        "needs", dev->ordinal, dev->name,
        !vmm ? "virtual memory management" : "POSIX fd memory handles");
    return FALSE;
  }

  if (!cudaipc_cuda_check (CU->DeviceGetUuid (&uuid, dev->cu_device),
          "cuDeviceGetUuid", error))
    return FALSE;
  memcpy (dev->uuid, uuid.bytes, sizeof (dev->uuid));

  fill_prop (dev, &prop);
  if (!cudaipc_cuda_check (CU->MemGetAllocationGranularity (&gran, &prop,
              CU_MEM_ALLOC_GRANULARITY_MINIMUM),
          "cuMemGetAllocationGranularity", error))
    return FALSE;
  if (gran == 0 || (gran & (gran - 1)) != 0) {
    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_NOT_SUPPORTED,
        "CUDA device %d reports an unusable allocation granularity %zu",
        dev->ordinal, gran);
    return FALSE;
  }
  dev->granularity = gran;

  res = CU->DevicePrimaryCtxRetain (&dev->context, dev->cu_device);
  if (res == CUDA_ERROR_OUT_OF_MEMORY) {
    g_autofree gchar *text = cudaipc_cuda_error (res);

    /* what an analytics box meets first: each process holds a context of
     * its own (about 500 MiB), and the GPU takes about a hundred */
    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_CUDA,
        "The GPU (device %d) has no room for another CUDA context "
        "(cuDevicePrimaryCtxRetain: %s): each process holds one, of about "
        "500 MiB, and a GPU takes about a hundred; run fewer processes and "
        "read more streams in each", dev->ordinal, text);
    dev->context = NULL;
    return FALSE;
  }
  if (!cudaipc_cuda_check (res, "cuDevicePrimaryCtxRetain", error))
    return FALSE;
  return TRUE;
}

static void
cuda_close (CudaIpcDevice * dev)
{
  if (dev->context) {
    CU->DevicePrimaryCtxRelease (dev->cu_device);
    dev->context = NULL;
  }
}

static gboolean
cuda_push (CudaIpcDevice * dev, GError ** error)
{
  return cudaipc_cuda_check (CU->CtxPushCurrent (g_atomic_pointer_get
          (&dev->context)), "cuCtxPushCurrent", error);
}

static void
cuda_pop (CudaIpcDevice * dev)
{
  CUcontext ctx;
  CU->CtxPopCurrent (&ctx);
}

static gboolean
cuda_create (CudaIpcDevice * dev, guint64 size, guint64 * handle,
    int *fd_out, GError ** error)
{
  CUmemAllocationProp prop;
  CUmemGenericAllocationHandle h = 0;
  int fd = -1;
  int flags;

  fill_prop (dev, &prop);
  if (!cudaipc_cuda_check (CU->MemCreate (&h, size, &prop, 0), "cuMemCreate",
          error))
    return FALSE;
  if (!cudaipc_cuda_check (CU->MemExportToShareableHandle (&fd, h,
              CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
          "cuMemExportToShareableHandle", error)) {
    CU->MemRelease (h);
    return FALSE;
  }
  /* The driver's fd may lack FD_CLOEXEC; a spawned child must not get it. */
  flags = fcntl (fd, F_GETFD);
  if (flags < 0 || fcntl (fd, F_SETFD, flags | FD_CLOEXEC) < 0) {
    int err = errno;
    cudaipc_close_fd (&fd);
    CU->MemRelease (h);
    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_IO,
        "setting FD_CLOEXEC on an exported allocation: %s", g_strerror (err));
    return FALSE;
  }
  *handle = h;
  *fd_out = fd;
  return TRUE;
}

static gboolean
cuda_import (CudaIpcDevice * dev, int fd, guint64 size, guint64 * handle,
    GError ** error)
{
  CUmemGenericAllocationHandle h = 0;

  if (!cudaipc_cuda_check (CU->MemImportFromShareableHandle (&h,
              (void *) (gintptr) fd, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
          "cuMemImportFromShareableHandle", error))
    return FALSE;
  *handle = h;
  return TRUE;
}

static void
cuda_release (CudaIpcDevice * dev, guint64 handle)
{
  CU->MemRelease (handle);
}

static gboolean
cuda_reserve (CudaIpcDevice * dev, guint64 size, guintptr * va, GError ** error)
{
  CUdeviceptr ptr = 0;

  if (!cudaipc_cuda_check (CU->MemAddressReserve (&ptr, size, 0, 0, 0),
          "cuMemAddressReserve", error))
    return FALSE;
  *va = (guintptr) ptr;
  return TRUE;
}

static void
cuda_free_range (CudaIpcDevice * dev, guintptr va, guint64 size)
{
  CU->MemAddressFree ((CUdeviceptr) va, size);
}

static gboolean
cuda_map (CudaIpcDevice * dev, guintptr va, guint64 size, guint64 handle,
    int fd, gboolean writable, GError ** error)
{
  return cudaipc_cuda_check (CU->MemMap ((CUdeviceptr) va, size, 0, handle, 0),
      "cuMemMap", error);
}

static void
cuda_unmap (CudaIpcDevice * dev, guintptr va, guint64 size)
{
  CU->MemUnmap ((CUdeviceptr) va, size);
}

static gboolean
cuda_set_access (CudaIpcDevice * dev, guintptr va, guint64 size,
    gboolean writable, GError ** error)
{
  CUmemAccessDesc desc;

  memset (&desc, 0, sizeof (desc));
  desc.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  desc.location.id = dev->cu_device;
  /* Consumers ask for a read-only mapping; where the driver refuses one
   * for device memory, they fall back to read/write and the element API
   * (no GST_MAP_WRITE on imported frames) keeps them from writing. */
  desc.flags = writable ? CU_MEM_ACCESS_FLAGS_PROT_READWRITE :
      CU_MEM_ACCESS_FLAGS_PROT_READ;
  if (!writable && CU->MemSetAccess ((CUdeviceptr) va, size, &desc, 1) ==
      CUDA_SUCCESS)
    return TRUE;
  desc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  return cudaipc_cuda_check (CU->MemSetAccess ((CUdeviceptr) va, size, &desc,
          1), "cuMemSetAccess", error);
}

static gboolean
cuda_write (CudaIpcDevice * dev, guintptr dst, const void *src, gsize size,
    GError ** error)
{
  /* from pageable memory cuMemcpyHtoD() returns once the bytes are
   * staged, before they reach @dst: the frame is complete, for a consumer
   * in another process, only once the default stream is done */
  return cudaipc_cuda_check (CU->MemcpyHtoD ((CUdeviceptr) dst, src, size),
      "cuMemcpyHtoD", error) &&
      cudaipc_cuda_check (CU->StreamSynchronize (NULL),
      "cuStreamSynchronize", error);
}

static gboolean
cuda_read (CudaIpcDevice * dev, void *dst, guintptr src, gsize size,
    GError ** error)
{
  return cudaipc_cuda_check (CU->MemcpyDtoH (dst, (CUdeviceptr) src, size),
      "cuMemcpyDtoH", error);
}

static gboolean
cuda_mem_info (CudaIpcDevice * dev, guint64 * free_bytes,
    guint64 * total_bytes, GError ** error)
{
  size_t f = 0, t = 0;

  if (!cudaipc_cuda_check (CU->MemGetInfo (&f, &t), "cuMemGetInfo", error))
    return FALSE;
  *free_bytes = f;
  *total_bytes = t;
  return TRUE;
}

static gboolean
cuda_find_peer (CudaIpcDevice * dev, const guint8 uuid[CUDAIPC_UUID_LEN],
    gint * ordinal, gboolean * can_access)
{
  int count = 0;

  if (CU->DeviceGetCount (&count) != CUDA_SUCCESS)
    return FALSE;
  for (int i = 0; i < count; i++) {
    CUdevice d;
    CUuuid u;
    int can = 0;

    if (CU->DeviceGet (&d, i) != CUDA_SUCCESS ||
        CU->DeviceGetUuid (&u, d) != CUDA_SUCCESS ||
        memcmp (u.bytes, uuid, CUDAIPC_UUID_LEN) != 0)
      continue;
    /* VMM mappings need no context-level peer enabling: the capability is
     * what cuMemSetAccess for @dev on the other device's memory needs */
    if (d != dev->cu_device &&
        CU->DeviceCanAccessPeer (&can, dev->cu_device, d) != CUDA_SUCCESS)
      can = 0;
    *ordinal = i;
    *can_access = d == dev->cu_device || can != 0;
    return TRUE;
  }
  return FALSE;
}

const CudaIpcBackendOps cudaipc_backend_cuda = {
  .open = cuda_open,
  .close = cuda_close,
  .push = cuda_push,
  .pop = cuda_pop,
  .create = cuda_create,
  .import = cuda_import,
  .release = cuda_release,
  .reserve = cuda_reserve,
  .free_range = cuda_free_range,
  .map = cuda_map,
  .unmap = cuda_unmap,
  .set_access = cuda_set_access,
  .write = cuda_write,
  .read = cuda_read,
  .mem_info = cuda_mem_info,
  .find_peer = cuda_find_peer,
};
