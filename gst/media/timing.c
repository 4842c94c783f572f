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

void
cudaipc_timing_from_monotonic (GstElement * element, GstClockTime clock_time,
    GstClockTime pts, GstClockTime dts, GstClockTime * out_pts,
    GstClockTime * out_dts)
{
  GstClock *clock;

  *out_pts = GST_CLOCK_TIME_NONE;
  *out_dts = GST_CLOCK_TIME_NONE;
  clock_time = cudaipc_timing_sane (clock_time);
  pts = cudaipc_timing_sane (pts);
  dts = cudaipc_timing_sane (dts);

  clock = gst_element_get_clock (element);
  if (clock != NULL && GST_CLOCK_TIME_IS_VALID (clock_time)) {
    GstClockTime base_time = gst_element_get_base_time (element);
    GstClockTime clock_now = gst_clock_get_time (clock);
    gint64 mono_now = g_get_monotonic_time () * 1000;
    gint64 running;

    running = (gint64) clock_time - (mono_now - (gint64) clock_now) -
        (gint64) base_time;
    /* frames from before this pipeline started */
    *out_pts = running > 0 ? (GstClockTime) running : 0;
    if (GST_CLOCK_TIME_IS_VALID (pts) && GST_CLOCK_TIME_IS_VALID (dts)) {
      gint64 d = running + ((gint64) dts - (gint64) pts);

      *out_dts = d > 0 ? (GstClockTime) d : 0;
    }
  }
  gst_clear_object (&clock);
}

gboolean
cudaipc_timing_offset_segment (GstElement * element, GstSegment * segment,
    GstClockTime clock_time, GstClockTime pts)
{
  GstClockTime here, dts;
  guint64 there;
  GstSegment seg = *segment;

  pts = cudaipc_timing_sane (pts);
  if (!GST_CLOCK_TIME_IS_VALID (pts))
    return FALSE;
  cudaipc_timing_from_monotonic (element, clock_time, pts,
      GST_CLOCK_TIME_NONE, &here, &dts);
  if (!GST_CLOCK_TIME_IS_VALID (here) ||
      gst_segment_to_running_time_full (&seg, GST_FORMAT_TIME, pts,
          &there) != 1 ||
      !gst_segment_offset_running_time (&seg, GST_FORMAT_TIME,
          (gint64) here - (gint64) there))
    return FALSE;
  GST_DEBUG_OBJECT (element, "the producer's running time %" GST_TIME_FORMAT
      " is %" GST_TIME_FORMAT " here", GST_TIME_ARGS (there),
      GST_TIME_ARGS (here));
  *segment = seg;
  return TRUE;
}
