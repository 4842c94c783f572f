/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Timestamps across the two processes; timing.h has the contract.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "media/timing.h"

GstClockTime
cudaipc_timing_sane (guint64 t)
{
  return t < (G_GUINT64_CONSTANT (1) << 62) ? t : GST_CLOCK_TIME_NONE;
}

void
cudaipc_clock_reading_clear (CudaIpcClockReading * reading)
{
  gst_clear_object (&reading->clock);
  reading->monotonic_minus_clock = 0;
  reading->read_at = 0;
}

/* @element's base time, and how far CLOCK_MONOTONIC is ahead of its
 * clock: from @reading where that is of the same clock and recent, else
 * read now (and kept in @reading). FALSE without a clock. */
static gboolean
read_clocks (GstElement * element, CudaIpcClockReading * reading,
    GstClockTime * base_time, gint64 * monotonic_minus_clock)
{
  GstClock *clock;
  GstClockTime clock_now;
  gint64 now = g_get_monotonic_time ();

  GST_OBJECT_LOCK (element);
  clock = element->clock;
  *base_time = element->base_time;
  if (clock != NULL && reading != NULL && clock == reading->clock &&
      now >= reading->read_at &&
      now - reading->read_at < CUDAIPC_CLOCK_READING_US) {
    *monotonic_minus_clock = reading->monotonic_minus_clock;
    GST_OBJECT_UNLOCK (element);
    return TRUE;
  }
  if (clock != NULL)
    gst_object_ref (clock);
  GST_OBJECT_UNLOCK (element);
  if (clock == NULL)
    return FALSE;

  clock_now = gst_clock_get_time (clock);
  now = g_get_monotonic_time ();
  *monotonic_minus_clock = now * 1000 - (gint64) clock_now;
  if (reading != NULL) {
    gst_object_replace ((GstObject **) & reading->clock, GST_OBJECT (clock));
    reading->monotonic_minus_clock = *monotonic_minus_clock;
    reading->read_at = now;
  }
  gst_object_unref (clock);
  return TRUE;
}

GstClockTime
cudaipc_timing_to_monotonic (GstElement * element,
    CudaIpcClockReading * reading, const GstSegment * segment,
    GstClockTime pts)
{
  GstClockTime rt, base;
  gint64 ahead, result;

  if (!GST_CLOCK_TIME_IS_VALID (pts) || segment->format != GST_FORMAT_TIME)
    return GST_CLOCK_TIME_NONE;
  rt = gst_segment_to_running_time (segment, GST_FORMAT_TIME, pts);
  if (!GST_CLOCK_TIME_IS_VALID (rt))
    return GST_CLOCK_TIME_NONE;
  if (!read_clocks (element, reading, &base, &ahead))
    return GST_CLOCK_TIME_NONE;

  result = (gint64) (rt + base) + ahead;
  return result >= 0 ? (GstClockTime) result : GST_CLOCK_TIME_NONE;
}

gboolean
cudaipc_timing_running_time (GstElement * element,
    CudaIpcClockReading * reading, GstClockTime clock_time, gint64 * running)
{
  GstClockTime base_time;
  gint64 ahead;

  clock_time = cudaipc_timing_sane (clock_time);
  if (!GST_CLOCK_TIME_IS_VALID (clock_time))
    return FALSE;
  if (!read_clocks (element, reading, &base_time, &ahead))
    return FALSE;

  *running = (gint64) clock_time - ahead - (gint64) base_time;
  return TRUE;
}

GstClockTime
cudaipc_timing_from_monotonic (GstElement * element,
    CudaIpcClockReading * reading, GstClockTime clock_time,
    GstClockTime earliest, GstClockTime pts, GstClockTime dts,
    GstClockTime * out_pts, GstClockTime * out_dts)
{
  gint64 running;
  GstClockTime placed;

  *out_pts = GST_CLOCK_TIME_NONE;
  *out_dts = GST_CLOCK_TIME_NONE;
  pts = cudaipc_timing_sane (pts);
  dts = cudaipc_timing_sane (dts);
  if (!cudaipc_timing_running_time (element, reading, clock_time, &running))
    return 0;

  if (!GST_CLOCK_TIME_IS_VALID (earliest))
    earliest = 0;
  placed = running > (gint64) earliest ? (GstClockTime) running : earliest;
  *out_pts = placed;
  if (GST_CLOCK_TIME_IS_VALID (pts) && GST_CLOCK_TIME_IS_VALID (dts)) {
    gint64 d = (gint64) placed + ((gint64) dts - (gint64) pts);

    *out_dts = d > 0 ? (GstClockTime) d : 0;
  }
  return (GstClockTime) ((gint64) placed - running);
}

gboolean
cudaipc_timing_segment_offset (GstElement * element,
    CudaIpcClockReading * reading, const GstSegment * segment,
    GstClockTime clock_time, GstClockTime pts, gint64 * offset)
{
  gint64 here;
  guint64 there;

  pts = cudaipc_timing_sane (pts);
  if (!GST_CLOCK_TIME_IS_VALID (pts) || segment->format != GST_FORMAT_TIME)
    return FALSE;
  /* signed: a frame from before this pipeline started is no exception */
  if (!cudaipc_timing_running_time (element, reading, clock_time, &here) ||
      gst_segment_to_running_time_full (segment, GST_FORMAT_TIME, pts,
          &there) != 1 ||
      !GST_CLOCK_TIME_IS_VALID (cudaipc_timing_sane (there)))
    return FALSE;
  GST_DEBUG_OBJECT (element, "the producer's running time %" GST_TIME_FORMAT
      " is %" G_GINT64_FORMAT " ns here", GST_TIME_ARGS (there), here);
  *offset = here - (gint64) there;
  return TRUE;
}
