/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Timestamps across the two processes (docs/design.md, Timestamps). Both
 * share CLOCK_MONOTONIC, so a FRAME carries, besides the producer's PTS,
 * its clock_time: the PTS as a CLOCK_MONOTONIC time. The producer computes
 *
 *   clock_time = running_time (PTS) + base_time + (monotonic_now - clock_now)
 *
 * and a consumer turns it back into its own running time:
 *
 *   running_time = clock_time - base_time - (monotonic_now - clock_now)
 *
 * Any thread; the element's clock, base time and segment are read as they
 * are at the call. Where the caller keeps a CudaIpcClockReading (one per
 * stream, used by one thread at a time), the two clocks are read against
 * each other only now and then instead of at every call.
 */
#pragma once

#include <gst/gst.h>

G_BEGIN_DECLS

/* How far CLOCK_MONOTONIC is ahead of an element's clock, as last read.
 * Read again where the element has another clock, and
 * CUDAIPC_CLOCK_READING_US after the last reading: the system clock
 * (most pipelines') is CLOCK_MONOTONIC itself, and another clock (a
 * network clock, an audio device's) that drifts 100 ppm from it moves
 * 10 us in that time. Zero-filled to start; cleared with
 * cudaipc_clock_reading_clear(), which drops its clock. */
#define CUDAIPC_CLOCK_READING_US (100 * G_TIME_SPAN_MILLISECOND)

typedef struct
{
  GstClock *clock;              /* the clock read (a reference), or NULL */
  gint64 monotonic_minus_clock; /* ns */
  gint64 read_at;               /* g_get_monotonic_time() of the reading */
} CudaIpcClockReading;

void cudaipc_clock_reading_clear (CudaIpcClockReading * reading);

/* The producer: @pts of @element's stream in @segment as a CLOCK_MONOTONIC
 * time, or GST_CLOCK_TIME_NONE (no valid PTS, not a time segment, no clock
 * yet). */
GstClockTime cudaipc_timing_to_monotonic (GstElement * element,
    CudaIpcClockReading * reading, const GstSegment * segment,
    GstClockTime pts);

/* The consumer: the running time in @element's pipeline of the
 * CLOCK_MONOTONIC time @clock_time (untrusted), negative for a moment
 * before the pipeline started. FALSE, @running untouched, without a clock
 * or a valid @clock_time. Without @reading (NULL) each call reads the
 * two clocks anew: two calls for one moment may differ by a microsecond
 * or so. */
gboolean cudaipc_timing_running_time (GstElement * element,
    CudaIpcClockReading * reading, GstClockTime clock_time, gint64 * running);

/* The consumer: a frame of the producer's @pts, @dts and @clock_time (all
 * as they came, untrusted) stamped in @element's running time, no earlier
 * than @earliest (NONE: 0): @out_pts the running time of @clock_time, or
 * @earliest where that is later (a frame from before this pipeline
 * started, or one stamped at or behind the frame before it); @out_dts as
 * far before @out_pts as the producer's DTS was before its PTS, at least
 * 0. Returns how much later than its own running time the frame was
 * placed: 0 for most frames. Both GST_CLOCK_TIME_NONE, and 0 returned,
 * without a clock or a valid @clock_time. */
GstClockTime cudaipc_timing_from_monotonic (GstElement * element,
    CudaIpcClockReading * reading, GstClockTime clock_time,
    GstClockTime earliest, GstClockTime pts, GstClockTime dts,
    GstClockTime * out_pts, GstClockTime * out_dts);

/* The consumer, passthrough: how far the running time of a frame of @pts
 * in @segment (the producer's) is to be moved so that, in @element's
 * pipeline, it is the moment the frame's @clock_time stands for: the two
 * pipelines' base times apart, as far as one reading of each process's
 * clocks tells (gst_segment_offset_running_time() applies it). A sink that
 * syncs then plays the producer's timestamps in time. FALSE, @offset
 * untouched, where that cannot be told yet (no clock, no valid time, not
 * a time segment, @pts outside @segment). */
gboolean cudaipc_timing_segment_offset (GstElement * element,
    CudaIpcClockReading * reading, const GstSegment * segment,
    GstClockTime clock_time, GstClockTime pts, gint64 * offset);

/* A time a peer sent, kept far from where signed arithmetic on it could
 * overflow: GST_CLOCK_TIME_NONE when 2^62 ns or more. */
GstClockTime cudaipc_timing_sane (guint64 t);

G_END_DECLS
