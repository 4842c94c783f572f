/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * backend=auto: the GPU where one is usable, else shared host memory.
 *
 * A producer decides when it opens its device, as it starts: never when
 * the setting is made nor when an element is made, because deciding
 * initialises CUDA (cuInit), and a process that forks afterwards (the
 * parent of gst-check's tests, a program that spawns its workers) would
 * leave CUDA broken in the child. "Usable" is what the cuda backend
 * itself checks when it opens: libcuda.so.1 loads, cuInit succeeds, the
 * device ordinal exists and it has VMM with POSIX fd handles. What
 * fails after that on a GPU that has all this (no room for another
 * context, a failing driver call) is an error of that GPU: host memory
 * would hide it from a user who has a GPU and meant to use it.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/gst.h>

#include "device/device.h"
#include "common/error.h"
#include "common/debug.h"

#define GST_CAT_DEFAULT cudaipc_device_debug

/* What says that CUDA is not there for us, rather than failing. */
static gboolean
cuda_is_missing (const GError * err)
{
  return g_error_matches (err, CUDAIPC_ERROR, CUDAIPC_ERROR_NO_DRIVER) ||
      g_error_matches (err, CUDAIPC_ERROR, CUDAIPC_ERROR_NO_DEVICE) ||
      g_error_matches (err, CUDAIPC_ERROR, CUDAIPC_ERROR_NOT_SUPPORTED);
}

CudaIpcDevice *
cudaipc_device_new_auto (gint ordinal, gchar ** why, GError ** error)
{
  g_autoptr (GError) err = NULL;
  CudaIpcDevice *dev;

  if (why)
    *why = NULL;
  dev = cudaipc_device_new (CUDAIPC_BACKEND_CUDA, ordinal, &err);
  if (dev != NULL)
    return dev;
  if (!cuda_is_missing (err)) {
    g_propagate_error (error, g_steal_pointer (&err));
    return NULL;
  }
  GST_INFO ("backend auto: no usable CUDA device %d (%s), host memory",
      ordinal, err->message);
  dev = cudaipc_device_new (CUDAIPC_BACKEND_HOST, ordinal, error);
  if (dev != NULL && why)
    *why = g_strdup (err->message);
  return dev;
}
