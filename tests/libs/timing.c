/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libs suite: timestamps across two processes (gst/media/timing.h). A
 * PTS turned into a CLOCK_MONOTONIC time and back is the same running
 * time; a CudaIpcClockReading keeps its reading of a clock for
 * CUDAIPC_CLOCK_READING_US and reads again at once where the element has
 * another clock. The clocks are GstTestClocks, which stand still, so that
 * a reading kept and one taken anew differ by what the test moved them.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/check/gstcheck.h>
#include <gst/check/gsttestclock.h>

#include "media/timing.h"
#include "test-main.h"

/* what CLOCK_MONOTONIC may move between two readings in one test step on
 * a loaded machine */
#define SLACK (50 * GST_MSECOND)

static GstElement *
element_with_clock (GstClock * clock, GstClockTime base_time)
{
  GstElement *e = gst_bin_new (NULL);

  gst_object_ref_sink (e);
  fail_unless (gst_element_set_clock (e, clock));
  gst_element_set_base_time (e, base_time);
  return e;
}

static gint64
running (GstElement * e, CudaIpcClockReading * reading, GstClockTime t)
{
  gint64 r = G_MININT64;

  fail_unless (cudaipc_timing_running_time (e, reading, t, &r));
  return r;
}

/* The producer's side and the consumer's, on the system clock: a PTS
 * comes back as its running time, with a reading kept or without. */
GST_START_TEST (test_round_trip)
{
  GstClock *clock = gst_system_clock_obtain ();
  GstElement *e = element_with_clock (clock, 0);
  CudaIpcClockReading reading = { 0, };
  GstSegment segment;
  GstClockTime base = gst_clock_get_time (clock), mono;

  gst_element_set_base_time (e, base);
  gst_segment_init (&segment, GST_FORMAT_TIME);
  for (guint i = 0; i < 3; i++) {
    GstClockTime pts = (i + 1) * GST_SECOND;

    mono = cudaipc_timing_to_monotonic (e, i == 1 ? NULL : &reading,
        &segment, pts);
    fail_unless (GST_CLOCK_TIME_IS_VALID (mono));
    fail_unless (ABS (running (e, &reading, mono) - (gint64) pts) <=
        10 * GST_USECOND, "frame %u", i);
    fail_unless (ABS (running (e, NULL, mono) - (gint64) pts) <=
        10 * GST_USECOND, "frame %u", i);
  }
  fail_unless (reading.clock == clock);
  cudaipc_clock_reading_clear (&reading);
  fail_unless (reading.clock == NULL);
  gst_object_unref (e);
  gst_object_unref (clock);
}

GST_END_TEST;

/* A reading is kept while it is recent and of the element's clock: a
 * clock that moved meanwhile shows only without it, or once the reading
 * is old; another clock is read at once. */
GST_START_TEST (test_reading_kept_and_renewed)
{
  GstClock *a = gst_test_clock_new_with_start_time (10 * GST_SECOND);
  GstClock *b = gst_test_clock_new_with_start_time (20 * GST_SECOND);
  GstElement *e = element_with_clock (a, 2 * GST_SECOND);
  CudaIpcClockReading reading = { 0, };
  GstClockTime t = (GstClockTime) g_get_monotonic_time () * GST_USECOND;
  gint64 start_rt, kept, fresh, other;

  /* the clock at 10 s, the base time 2 s: t is at 8 s, less what
   * CLOCK_MONOTONIC moved since t was read */
  start_rt = running (e, &reading, t);
  fail_unless (start_rt <= 8 * GST_SECOND &&
      start_rt > 8 * GST_SECOND - SLACK);
  fail_unless_equals_int (GST_OBJECT_REFCOUNT_VALUE (a), 3);

  /* a second later on the clock, at once: the reading stands */
  gst_test_clock_advance_time (GST_TEST_CLOCK (a), GST_SECOND);
  kept = running (e, &reading, t);
  fresh = running (e, NULL, t);
  if (g_get_monotonic_time () - reading.read_at < CUDAIPC_CLOCK_READING_US)
    fail_unless_equals_int64 (kept, start_rt);
  fail_unless (fresh > start_rt + GST_SECOND - SLACK &&
      fresh <= start_rt + GST_SECOND);

  /* the base time is read each time */
  gst_element_set_base_time (e, 3 * GST_SECOND);
  fail_unless_equals_int64 (running (e, &reading, t),
      kept - (gint64) GST_SECOND);
  gst_element_set_base_time (e, 2 * GST_SECOND);

  /* another clock: read at once */
  fail_unless (gst_element_set_clock (e, b));
  other = running (e, &reading, t);
  fail_unless (reading.clock == b);
  fail_unless (other > 18 * GST_SECOND - SLACK && other <= 18 * GST_SECOND);
  fail_unless_equals_int (GST_OBJECT_REFCOUNT_VALUE (a), 1);

  /* an old reading is read again */
  gst_test_clock_advance_time (GST_TEST_CLOCK (b), GST_SECOND);
  g_usleep (CUDAIPC_CLOCK_READING_US + 20 * G_TIME_SPAN_MILLISECOND);
  kept = running (e, &reading, t);
  fresh = running (e, NULL, t);
  fail_unless (ABS (kept - fresh) <= SLACK);
  fail_unless (kept > other + GST_SECOND - 2 * SLACK -
      (CUDAIPC_CLOCK_READING_US + 20 * G_TIME_SPAN_MILLISECOND) * 1000);

  cudaipc_clock_reading_clear (&reading);
  fail_unless_equals_int (GST_OBJECT_REFCOUNT_VALUE (b), 2);
  gst_object_unref (e);
  gst_object_unref (a);
  gst_object_unref (b);
}

GST_END_TEST;

/* No clock, or a time from a peer past 2^62 ns: no running time. */
GST_START_TEST (test_no_clock_no_time)
{
  GstElement *e = gst_bin_new (NULL);
  CudaIpcClockReading reading = { 0, };
  gint64 r = 42;

  gst_object_ref_sink (e);
  fail_if (cudaipc_timing_running_time (e, &reading, GST_SECOND, &r));
  fail_unless_equals_int64 (r, 42);
  fail_unless (reading.clock == NULL);
  gst_object_unref (e);

  {
    GstClock *clock = gst_system_clock_obtain ();

    e = element_with_clock (clock, 0);
    fail_if (cudaipc_timing_running_time (e, &reading,
            G_GUINT64_CONSTANT (1) << 62, &r));
    fail_unless_equals_int64 (r, 42);
    cudaipc_clock_reading_clear (&reading);
    gst_object_unref (e);
    gst_object_unref (clock);
  }
}

GST_END_TEST;

static Suite *
timing_suite (void)
{
  Suite *s = suite_create ("timing");
  TCase *tc = cudaipc_test_case (s, "general", 60);

  tcase_add_test (tc, test_round_trip);
  tcase_add_test (tc, test_reading_kept_and_renewed);
  tcase_add_test (tc, test_no_clock_no_time);
  return s;
}

const CudaIpcTestMain cudaipc_test_main = {
  .name = "timing",
  .suite = timing_suite,
};
