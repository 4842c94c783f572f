/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Loads libcuda.so.1 once per process into a table of entry points.
 * Versioned symbols (_v2) are preferred where the driver exports both, as
 * the driver's own header maps the plain names to them.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>
#include <gmodule.h>

#include "device/cuda-loader.h"
#include "common/error.h"

#define CUDA_LIBNAME "libcuda.so.1"

static CudaIpcCudaFuncs funcs;
static gchar *load_error;
static gboolean loaded;

static gboolean
resolve (GModule * module, const gchar * name, const gchar * name_v2,
    gpointer * out)
{
  if (name_v2 && g_module_symbol (module, name_v2, out) && *out)
    return TRUE;
  if (g_module_symbol (module, name, out) && *out)
    return TRUE;
  g_free (load_error);
  load_error = g_strdup_printf ("the CUDA driver %s lacks %s: it is too "
      "old (CUDA 11.0 or newer is needed)", CUDA_LIBNAME, name);
  return FALSE;
}

#define LOAD(field, name) \
  if (!resolve (module, name, NULL, (gpointer *) &funcs.field)) goto fail
#define LOAD2(field, name) \
  if (!resolve (module, name, name "_v2", (gpointer *) &funcs.field)) goto fail

static gpointer
load_once (gpointer data)
{
  GModule *module;
  CUresult res;

  module = g_module_open (CUDA_LIBNAME, G_MODULE_BIND_LAZY);
  if (!module) {
    load_error = g_strdup_printf ("no CUDA driver: cannot open %s (%s); "
        "install the NVIDIA driver or use backend=host", CUDA_LIBNAME,
        g_module_error ());
    return NULL;
  }

  LOAD (Init, "cuInit");
  LOAD (DriverGetVersion, "cuDriverGetVersion");
  LOAD (GetErrorName, "cuGetErrorName");
  LOAD (GetErrorString, "cuGetErrorString");
  LOAD (DeviceGet, "cuDeviceGet");
  LOAD (DeviceGetCount, "cuDeviceGetCount");
  LOAD (DeviceGetName, "cuDeviceGetName");
  LOAD2 (DeviceGetUuid, "cuDeviceGetUuid");
  LOAD (DeviceGetAttribute, "cuDeviceGetAttribute");
  LOAD (DeviceCanAccessPeer, "cuDeviceCanAccessPeer");
  LOAD (DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
  LOAD2 (DevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease");
  LOAD2 (CtxPushCurrent, "cuCtxPushCurrent");
  LOAD2 (CtxPopCurrent, "cuCtxPopCurrent");
  LOAD2 (MemGetInfo, "cuMemGetInfo");
  LOAD (MemGetAllocationGranularity, "cuMemGetAllocationGranularity");
  LOAD (MemCreate, "cuMemCreate");
  LOAD (MemRelease, "cuMemRelease");
  LOAD (MemAddressReserve, "cuMemAddressReserve");
  LOAD (MemAddressFree, "cuMemAddressFree");
  LOAD (MemMap, "cuMemMap");
  LOAD (MemUnmap, "cuMemUnmap");
  LOAD (MemSetAccess, "cuMemSetAccess");
  LOAD (MemExportToShareableHandle, "cuMemExportToShareableHandle");
  LOAD (MemImportFromShareableHandle, "cuMemImportFromShareableHandle");
  LOAD2 (MemcpyHtoD, "cuMemcpyHtoD");
  LOAD2 (MemcpyDtoH, "cuMemcpyDtoH");
  LOAD2 (MemcpyDtoD, "cuMemcpyDtoD");
  LOAD2 (Memcpy2D, "cuMemcpy2D");
  LOAD2 (Memcpy2DAsync, "cuMemcpy2DAsync");
  LOAD2 (MemcpyHtoDAsync, "cuMemcpyHtoDAsync");
  LOAD2 (MemcpyDtoDAsync, "cuMemcpyDtoDAsync");
  LOAD2 (MemsetD8, "cuMemsetD8");
  LOAD (StreamCreate, "cuStreamCreate");
  LOAD2 (StreamDestroy, "cuStreamDestroy");
  LOAD (StreamSynchronize, "cuStreamSynchronize");
  LOAD (CtxSynchronize, "cuCtxSynchronize");
  LOAD (StreamWaitEvent, "cuStreamWaitEvent");
  LOAD (EventCreate, "cuEventCreate");
  LOAD2 (EventDestroy, "cuEventDestroy");
  LOAD (EventRecord, "cuEventRecord");
  LOAD (EventSynchronize, "cuEventSynchronize");
  LOAD (EventQuery, "cuEventQuery");
  LOAD (IpcGetEventHandle, "cuIpcGetEventHandle");
  LOAD (IpcOpenEventHandle, "cuIpcOpenEventHandle");
  LOAD2 (MemHostRegister, "cuMemHostRegister");
  LOAD (MemHostUnregister, "cuMemHostUnregister");
  LOAD2 (MemHostGetDevicePointer, "cuMemHostGetDevicePointer");
  /* optional: the stream memory operations' _v2 entry points came with
   * CUDA 11.7; without them only devices set up for the first ones have
   * them */
  funcs.stream_mem_ops_attribute =
      CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS;
  if (!resolve (module, "cuStreamWriteValue64_v2", NULL,
          (gpointer *) & funcs.StreamWriteValue64)) {
    funcs.stream_mem_ops_attribute =
        CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS_V1;
    if (!resolve (module, "cuStreamWriteValue64", NULL,
            (gpointer *) & funcs.StreamWriteValue64))
      funcs.StreamWriteValue64 = NULL;
    g_clear_pointer (&load_error, g_free);
  }

  res = funcs.Init (0);
  if (res != CUDA_SUCCESS) {
    const char *name = NULL;
    funcs.GetErrorName (res, &name);
    load_error = g_strdup_printf ("the CUDA driver did not initialise: "
        "cuInit returned %s (%d); is a GPU visible to this process?",
        name ? name : "unknown", res);
    goto fail;
  }

  /* The module stays open for the life of the process. */
  g_module_make_resident (module);
  loaded = TRUE;
  return NULL;

fail:
  memset (&funcs, 0, sizeof (funcs));
  g_module_close (module);
  return NULL;
}

gboolean
cudaipc_cuda_load (GError ** error)
{
  static GOnce once = G_ONCE_INIT;

  g_once (&once, load_once, NULL);
  if (!loaded) {
    g_set_error_literal (error, CUDAIPC_ERROR, CUDAIPC_ERROR_NO_DRIVER,
        load_error ? load_error : "no CUDA driver");
    return FALSE;
  }
  return TRUE;
}

const CudaIpcCudaFuncs *
cudaipc_cuda (void)
{
  return &funcs;
}

gchar *
cudaipc_cuda_error (CUresult res)
{
  const char *name = NULL, *text = NULL;

  if (funcs.GetErrorName)
    funcs.GetErrorName (res, &name);
  if (funcs.GetErrorString)
    funcs.GetErrorString (res, &text);
  return g_strdup_printf ("%s (%d): %s", name ? name : "CUDA_ERROR", res,
      text ? text : "unknown error");
}

gboolean
cudaipc_cuda_check (CUresult res, const gchar * what, GError ** error)
{
  g_autofree gchar *text = NULL;

  if (res == CUDA_SUCCESS)
    return TRUE;
  text = cudaipc_cuda_error (res);
  g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_CUDA, "%s failed: %s",
      what, text);
  return FALSE;
}
