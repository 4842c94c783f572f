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

GstClockTime
cudaipc_timing_to_monotonic (GstElement * element, const GstSegment * segment,
    GstClockTime pts)
{
  GstClockTime rt = GST_CLOCK_TIME_NONE, base, now;
  GstClock *clock;
  gint64 mono, result;

  if (!GST_CLOCK_TIME_IS_VALID (pts) || segment->format != GST_FORMAT_TIME)
    return GST_CLOCK_TIME_NONE;
  rt = gst_segment_to_running_time (segment, GST_FORMAT_TIME, pts);
  if (!GST_CLOCK_TIME_IS_VALID (rt))
    return GST_CLOCK_TIME_NONE;

  clock = gst_element_get_clock (element);
  if (clock == NULL)
    return GST_CLOCK_TIME_NONE;
  base = gst_element_get_base_time (element);
  now = gst_clock_get_time (clock);
  mono = g_get_monotonic_time () * 1000;
  gst_object_unref (clock);

  result = (gint64) (rt + base) + (mono - (gint64) now);
  return result >= 0 ? (GstClockTime) result : GST_CLOCK_TIME_NONE;
}

gboolean
cudaipc_timing_running_time (GstElement * element, GstClockTime clock_time,
    gint64 * running)
{
  GstClock *clock;
  GstClockTime base_time, clock_now;
  gint64 mono_now;

  clock_time = cudaipc_timing_sane (clock_time);
  if (!GST_CLOCK_TIME_IS_VALID (clock_time))
    return FALSE;
  clock = gst_element_get_clock (element);
  if (clock == NULL)
    return FALSE;
  base_time = gst_element_get_base_time (element);
  clock_now = gst_clock_get_time (clock);
  mono_now = g_get_monotonic_time () * 1000;
  gst_object_unref (clock);

  *running = (gint64) clock_time - (mono_now - (gint64) clock_now) -
      (gint64) base_time;
  return TRUE;
}

GstClockTime
cudaipc_timing_from_monotonic (GstElement * element, GstClockTime clock_time,
    GstClockTime earliest, GstClockTime pts, GstClockTime dts,
    GstClockTime * out_pts, GstClockTime * out_dts)
{
  gint64 running;
  GstClockTime placed;

  *out_pts = GST_CLOCK_TIME_NONE;
  *out_dts = GST_CLOCK_TIME_NONE;
  pts = cudaipc_timing_sane (pts);
  dts = cudaipc_timing_sane (dts);
  if (!cudaipc_timing_running_time (element, clock_time, &running))
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
    const GstSegment * segment, GstClockTime clock_time, GstClockTime pts,
    gint64 * offset)
{
  gint64 here;
  guint64 there;

  pts = cudaipc_timing_sane (pts);
  if (!GST_CLOCK_TIME_IS_VALID (pts) || segment->format != GST_FORMAT_TIME)
    return FALSE;
  /* signed: a frame from before this pipeline started is no exception */
  if (!cudaipc_timing_running_time (element, clock_time, &here) ||
      gst_segment_to_running_time_full (segment, GST_FORMAT_TIME, pts,
          &there) != 1 ||
      !GST_CLOCK_TIME_IS_VALID (cudaipc_timing_sane (there)))
    return FALSE;
  GST_DEBUG_OBJECT (element, "the producer's running time %" GST_TIME_FORMAT
      " is %" G_GINT64_FORMAT " ns here", GST_TIME_ARGS (there), here);
  *offset = here - (gint64) there;
  return TRUE;
}
