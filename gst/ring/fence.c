/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Interprocess CUDA events for the slots of a ring (fence.h has the
 * contract).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include "ring/fence.h"

/* cudaipc_fence_wait_timeout(): how long to poll busily (microseconds) */
#define FENCE_SPIN_US 20
#include "device/cuda-loader.h"
#include "common/error.h"

struct _CudaIpcFence
{
  CudaIpcDevice *dev;
  CUevent event;
  gboolean exported;            /* made by new(): @handle is ours */
  guint8 handle[CUDAIPC_FENCE_HANDLE_SIZE];
};

static gboolean
check_backend (CudaIpcDevice * dev, GError ** error)
{
  if (cudaipc_device_get_backend (dev) == CUDAIPC_BACKEND_CUDA)
    return TRUE;
  g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_NOT_SUPPORTED,
      "the %s backend has no interprocess events",
      cudaipc_backend_name (cudaipc_device_get_backend (dev)));
  return FALSE;
}

CudaIpcFence *
cudaipc_fence_new (CudaIpcDevice * dev, GError ** error)
{
  const CudaIpcCudaFuncs *cu;
  CUipcEventHandle handle;
  CUevent event = NULL;
  CudaIpcFence *fence;
  gboolean ok;

  g_return_val_if_fail (dev != NULL, NULL);

  if (!check_backend (dev, error) || !cudaipc_device_push (dev, error))
    return NULL;
  cu = cudaipc_cuda ();
  ok = cudaipc_cuda_check (cu->EventCreate (&event,
          CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING),
      "cuEventCreate (interprocess)", error);
  if (ok) {
    memset (&handle, 0, sizeof (handle));
    ok = cudaipc_cuda_check (cu->IpcGetEventHandle (&handle, event),
        "cuIpcGetEventHandle", error);
    if (!ok)
      cu->EventDestroy (event);
  }
  cudaipc_device_pop (dev);
  if (!ok)
    return NULL;

  fence = g_new0 (CudaIpcFence, 1);
  fence->dev = cudaipc_device_ref (dev);
  fence->event = event;
  fence->exported = TRUE;
  memcpy (fence->handle, handle.reserved, CUDAIPC_FENCE_HANDLE_SIZE);
  return fence;
}

const guint8 *
cudaipc_fence_get_handle (CudaIpcFence * fence)
{
  g_return_val_if_fail (fence != NULL, NULL);
  return fence->exported ? fence->handle : NULL;
}

gboolean
cudaipc_fence_record (CudaIpcFence * fence, CUstream stream, GError ** error)
{
  g_return_val_if_fail (fence != NULL, FALSE);
  return cudaipc_cuda_check (cudaipc_cuda ()->EventRecord (fence->event,
          stream), "cuEventRecord", error);
}

gboolean
cudaipc_fence_query (CudaIpcFence * fence, gboolean * done, GError ** error)
{
  CUresult res;

  g_return_val_if_fail (fence != NULL, FALSE);
  g_return_val_if_fail (done != NULL, FALSE);

  res = cudaipc_cuda ()->EventQuery (fence->event);
  if (res == CUDA_ERROR_NOT_READY) {
    *done = FALSE;
    return TRUE;
  }
  if (!cudaipc_cuda_check (res, "cuEventQuery", error))
    return FALSE;
  *done = TRUE;
  return TRUE;
}

CudaIpcFence *
cudaipc_fence_open (CudaIpcDevice * dev,
    const guint8 handle[CUDAIPC_FENCE_HANDLE_SIZE], GError ** error)
{
  CUipcEventHandle h;
  CUevent event = NULL;
  CudaIpcFence *fence;
  gboolean ok;

  g_return_val_if_fail (dev != NULL, NULL);
  g_return_val_if_fail (handle != NULL, NULL);

  if (!check_backend (dev, error) || !cudaipc_device_push (dev, error))
    return NULL;
  memcpy (h.reserved, handle, CUDAIPC_FENCE_HANDLE_SIZE);
  ok = cudaipc_cuda_check (cudaipc_cuda ()->IpcOpenEventHandle (&event, h),
      "cuIpcOpenEventHandle", error);
  cudaipc_device_pop (dev);
  if (!ok)
    return NULL;

  fence = g_new0 (CudaIpcFence, 1);
  fence->dev = cudaipc_device_ref (dev);
  fence->event = event;
  return fence;
}

gboolean
cudaipc_fence_wait (CudaIpcFence * fence, GError ** error)
{
  g_return_val_if_fail (fence != NULL, FALSE);
  return cudaipc_cuda_check (cudaipc_cuda ()->EventSynchronize (fence->event),
      "cuEventSynchronize", error);
}

gboolean
cudaipc_fence_wait_timeout (CudaIpcFence * fence, gint64 timeout_us,
    guint * calls, GError ** error)
{
  const CudaIpcCudaFuncs *cu = cudaipc_cuda ();
  gint64 start = 0, now;
  CUresult res;

  g_return_val_if_fail (fence != NULL, FALSE);

  for (;;) {
    res = cu->EventQuery (fence->event);
    (*calls)++;
    if (res != CUDA_ERROR_NOT_READY)
      break;
    now = g_get_monotonic_time ();
    if (start == 0)
      start = now;
    if (now - start > timeout_us) {
      g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_TIMEOUT,
          "the producer's copy did not complete within %" G_GINT64_FORMAT
          " ms", timeout_us / 1000);
      return FALSE;
    }
    /* A copy that is done by the time the FRAME arrives answers the first
     * query. Poll busily for a short while for one just finishing, then
     * sleep between queries (each sleep costs 50 us or more of timer slack,
     * but the process does not burn a core waiting on the GPU). */
    if (now - start < FENCE_SPIN_US)
      continue;
    g_usleep (20);
  }
  return cudaipc_cuda_check (res, "cuEventQuery", error);
}

void
cudaipc_fence_free (CudaIpcFence * fence)
{
  if (fence == NULL)
    return;
  /* a pending record is no reason to wait: the driver frees the event
   * once it completes */
  if (cudaipc_device_push (fence->dev, NULL)) {
    cudaipc_cuda ()->EventDestroy (fence->event);
    cudaipc_device_pop (fence->dev);
  }
  cudaipc_device_unref (fence->dev);
  g_free (fence);
}
