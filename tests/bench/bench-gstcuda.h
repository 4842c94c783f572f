/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The benchmark's one use of gstreamer-cuda-1.0 (optional, 1.22+): telling
 * whether a memory is a GstCudaMemory and on which device. Its own file
 * because the library's headers include the toolkit's cuda.h, whose
 * declarations clash with the project's gst/device/cuda-types.h. Built only when
 * meson finds the library and cuda.h (HAVE_GST_CUDA).
 */
#pragma once

#include <gst/gst.h>

G_BEGIN_DECLS
/* TRUE when @mem is a GstCudaMemory; then *@device is its context's CUDA
 * device ordinal. Call from any thread. */
    gboolean bench_cuda_memory_device (GstMemory * mem, gint * device);

G_END_DECLS
