/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/cuda/gstcudacontext.h>
#include <gst/cuda/gstcudamemory.h>

#include "bench-gstcuda.h"

gboolean
bench_cuda_memory_device (GstMemory * mem, gint * device)
{
  GstCudaMemory *cmem;

  if (mem == NULL || !gst_is_cuda_memory (mem))
    return FALSE;
  cmem = GST_CUDA_MEMORY_CAST (mem);
  *device = -1;
  if (cmem->context)
    g_object_get (cmem->context, "cuda-device-id", device, NULL);
  return TRUE;
}
