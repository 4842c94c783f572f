/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libs suite: the ticker (gst/common/ticker.h). It calls its function on its own
 * thread, not before the first interval, and never once free() returned.
 * Intervals are not timed here (a loaded machine stretches them); only
 * that calls come and stop.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/check/gstcheck.h>

#include "common/ticker.h"
#include "test-main.h"

typedef struct
{
  gint calls;                   /* atomic */
  GThread *thread;              /* the caller's, never the ticker's */
  gint on_caller;               /* atomic: a call on the caller's thread */
} Counter;

static void
tick (gpointer data)
{
  Counter *c = data;

  if (g_thread_self () == c->thread)
    g_atomic_int_set (&c->on_caller, 1);
  g_atomic_int_inc (&c->calls);
}

GST_START_TEST (test_ticks_and_stops)
{
  Counter c = { 0, g_thread_self (), 0 };
  CudaIpcTicker *t = cudaipc_ticker_new ("test-ticker", 5, tick, &c);
  gint64 deadline = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;
  gint at_free;

  fail_unless (t != NULL);
  while (g_atomic_int_get (&c.calls) < 3 &&
      g_get_monotonic_time () < deadline)
    g_usleep (1000);
  fail_unless (g_atomic_int_get (&c.calls) >= 3, "no ticks");
  cudaipc_ticker_free (t);
  at_free = g_atomic_int_get (&c.calls);
  g_usleep (50 * 1000);
  fail_unless_equals_int (g_atomic_int_get (&c.calls), at_free);
  fail_if (g_atomic_int_get (&c.on_caller));
}

GST_END_TEST;

GST_START_TEST (test_freed_before_first_tick)
{
  Counter c = { 0, g_thread_self (), 0 };
  CudaIpcTicker *t = cudaipc_ticker_new ("test-ticker", 60 * 1000, tick, &c);

  /* free() wakes the waiting thread: it does not wait out the interval */
  gint64 t0 = g_get_monotonic_time ();
  cudaipc_ticker_free (t);
  fail_unless (g_get_monotonic_time () - t0 < 10 * G_USEC_PER_SEC);
  fail_unless_equals_int (g_atomic_int_get (&c.calls), 0);
  cudaipc_ticker_free (NULL);
}

GST_END_TEST;

static Suite *
ticker_suite (void)
{
  Suite *s = suite_create ("ticker");
  TCase *tc = cudaipc_test_case (s, "general", 30);

  tcase_add_test (tc, test_ticks_and_stops);
  tcase_add_test (tc, test_freed_before_first_tick);
  return s;
}

const CudaIpcTestMain cudaipc_test_main = {
  .name = "ticker",
  .suite = ticker_suite,
};
