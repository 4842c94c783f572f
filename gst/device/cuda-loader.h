/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Run-time loader for the CUDA driver (libcuda.so.1).
 *
 * cudaipc_cuda_load() opens the driver once per process (thread-safe, the
 * result is cached, later calls are cheap), resolves every entry point into
 * the table returned by cudaipc_cuda(), and calls cuInit(0). It never links
 * libcuda and never needs the toolkit. Callers must not fork() after a
 * successful load: CUDA state does not survive fork; spawn a helper instead.
 *
 * cudaipc_cuda_error() turns a CUresult into text (name and description)
 * at the boundary where a GError is made; cudaipc_cuda_check() makes that
 * GError.
 */
#pragma once

#include <glib.h>
#include "device/cuda-types.h"

G_BEGIN_DECLS

typedef struct
{
  CUresult (*Init) (unsigned int flags);
  CUresult (*DriverGetVersion) (int *version);
  CUresult (*GetErrorName) (CUresult error, const char **str);
  CUresult (*GetErrorString) (CUresult error, const char **str);

  CUresult (*DeviceGet) (CUdevice * device, int ordinal);
  CUresult (*DeviceGetCount) (int *count);
  CUresult (*DeviceGetName) (char *name, int len, CUdevice dev);
  CUresult (*DeviceGetUuid) (CUuuid * uuid, CUdevice dev);
  CUresult (*DeviceGetAttribute) (int *pi, int attrib, CUdevice dev);
  CUresult (*DeviceCanAccessPeer) (int *can, CUdevice dev, CUdevice peer);
  CUresult (*DevicePrimaryCtxRetain) (CUcontext * pctx, CUdevice dev);
  CUresult (*DevicePrimaryCtxRelease) (CUdevice dev);
  CUresult (*CtxPushCurrent) (CUcontext ctx);
  CUresult (*CtxPopCurrent) (CUcontext * pctx);
  CUresult (*MemGetInfo) (size_t * free, size_t * total);

  CUresult (*MemGetAllocationGranularity) (size_t * granularity,
      const CUmemAllocationProp * prop, int option);
  CUresult (*MemCreate) (CUmemGenericAllocationHandle * handle, size_t size,
      const CUmemAllocationProp * prop, unsigned long long flags);
  CUresult (*MemRelease) (CUmemGenericAllocationHandle handle);
  CUresult (*MemAddressReserve) (CUdeviceptr * ptr, size_t size,
      size_t alignment, CUdeviceptr addr, unsigned long long flags);
  CUresult (*MemAddressFree) (CUdeviceptr ptr, size_t size);
  CUresult (*MemMap) (CUdeviceptr ptr, size_t size, size_t offset,
      CUmemGenericAllocationHandle handle, unsigned long long flags);
  CUresult (*MemUnmap) (CUdeviceptr ptr, size_t size);
  CUresult (*MemSetAccess) (CUdeviceptr ptr, size_t size,
      const CUmemAccessDesc * desc, size_t count);
  CUresult (*MemExportToShareableHandle) (void *shareable,
      CUmemGenericAllocationHandle handle, int handle_type,
      unsigned long long flags);
  CUresult (*MemImportFromShareableHandle) (CUmemGenericAllocationHandle *
      handle, void *os_handle, int handle_type);

  CUresult (*MemcpyHtoD) (CUdeviceptr dst, const void *src, size_t n);
  CUresult (*MemcpyDtoH) (void *dst, CUdeviceptr src, size_t n);
  CUresult (*MemcpyDtoD) (CUdeviceptr dst, CUdeviceptr src, size_t n);
  CUresult (*Memcpy2D) (const CUDA_MEMCPY2D * copy);
  CUresult (*Memcpy2DAsync) (const CUDA_MEMCPY2D * copy, CUstream stream);
  CUresult (*MemcpyHtoDAsync) (CUdeviceptr dst, const void *src, size_t n,
      CUstream stream);
  CUresult (*MemcpyDtoDAsync) (CUdeviceptr dst, CUdeviceptr src, size_t n,
      CUstream stream);
  CUresult (*MemsetD8) (CUdeviceptr dst, unsigned char value, size_t n);

  CUresult (*StreamCreate) (CUstream * stream, unsigned int flags);
  CUresult (*StreamDestroy) (CUstream stream);
  CUresult (*StreamSynchronize) (CUstream stream);
  CUresult (*CtxSynchronize) (void);
  CUresult (*StreamWaitEvent) (CUstream stream, CUevent event,
      unsigned int flags);
  CUresult (*EventCreate) (CUevent * event, unsigned int flags);
  CUresult (*EventDestroy) (CUevent event);
  CUresult (*EventRecord) (CUevent event, CUstream stream);
  CUresult (*EventSynchronize) (CUevent event);
  CUresult (*EventQuery) (CUevent event);
  CUresult (*IpcGetEventHandle) (CUipcEventHandle * handle, CUevent event);
  CUresult (*IpcOpenEventHandle) (CUevent * event, CUipcEventHandle handle);
  CUresult (*MemHostRegister) (void *p, size_t size, unsigned int flags);
  CUresult (*MemHostUnregister) (void *p);
  CUresult (*MemHostGetDevicePointer) (CUdeviceptr * dptr, void *p,
      unsigned int flags);
  /* NULL where the driver has neither cuStreamWriteValue64_v2 nor
   * cuStreamWriteValue64: no fence page then (fence-page.h) */
  CUresult (*StreamWriteValue64) (CUstream stream, CUdeviceptr addr,
      guint64 value, unsigned int flags);
  /* the device attribute that says whether StreamWriteValue64 works:
   * CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS for the _v2 entry
   * point, its _V1 for the first one */
  int stream_mem_ops_attribute;
} CudaIpcCudaFuncs;

gboolean cudaipc_cuda_load (GError ** error);
const CudaIpcCudaFuncs *cudaipc_cuda (void);
gchar *cudaipc_cuda_error (CUresult res);
/* TRUE for CUDA_SUCCESS; else FALSE and a CUDAIPC_ERROR_CUDA error
 * "@what failed: <name and text of @res>". */
gboolean cudaipc_cuda_check (CUresult res, const gchar * what,
    GError ** error);

G_END_DECLS
