/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The main every gst-check suite shares (test-main.c, compiled into each
 * test program by tests/meson.build), and the fixture every test runs in.
 *
 * A test file defines its suite and names it, at file scope:
 *
 *   static Suite *
 *   props_suite (void)
 *   {
 *     Suite *s = suite_create ("props");
 *     TCase *tc = cudaipc_test_case (s, "general", 60);
 *
 *     tcase_add_checked_fixture (tc, setup, teardown);
 *     tcase_add_test (tc, test_properties);
 *     return s;
 *   }
 *
 *   const CudaIpcTestMain cudaipc_test_main = {
 *     .name = "props",
 *     .suite = props_suite,
 *   };
 *
 * main() calls gst_check_init(), then the file's prepare hook, if any,
 * then runs the suite with gst_check_run_suite(), then the finish hook.
 *
 * Every test case comes from cudaipc_test_case(), which sets its time-out
 * and installs the fixture, first, so that it wraps the case's own
 * fixtures:
 *
 *  - fds: this process's open fds are counted before each test (before
 *    the case's own set-up) and again after it (after the case's own
 *    tear-down); the test fails unless the two counts are equal, so that
 *    an fd a test path forgets, or closes twice, shows up. A test that
 *    opens something on purpose that stays open (the CUDA driver's own
 *    descriptors, from its first use on) says so with
 *    cudaipc_test_fds_recount() or cudaipc_test_fds_keep(); one that must
 *    be checked before its end (while it still holds a device whose
 *    driver keeps fds of its own) calls cudaipc_test_fds_check() there,
 *    which then stands for the check at the end.
 *  - time-out: tcase_set_timeout(); where the tests run in this process
 *    (CK_FORK=no, as in the gpu suite), where check cannot stop a test,
 *    SIGALRM ends the process once a test runs past it, with a message,
 *    instead of leaving meson to wait.
 *
 * With CK_FORK=no every test runs in this one process, where what one test
 * opens lazily and keeps (the CUDA driver's descriptors, opened on its
 * first use) is still open in the next: the fixture does not check fds
 * there, and cudaipc_test_fds_*() do nothing. A test of the gpu suite
 * counts fds itself, at points where the driver is known to be warm.
 */
#pragma once

#include <gst/check/gstcheck.h>

typedef struct
{
  /* the suite's name in check's summary */
  const gchar *name;
  /* makes the suite, its cases from cudaipc_test_case() */
  Suite *(*suite) (void);
  /* optional, called with the command line before gst_check_init(): an
   * exit status to end with (a program that is also its own helper
   * process), or -1 to run the suite */
  gint (*early) (gint argc, gchar ** argv);
  /* optional, after gst_check_init(): 0 to run the suite, or an exit
   * status to end with instead (CUDAIPC_TEST_SKIP where what the suite
   * needs is missing) */
  gint (*prepare) (void);
  /* optional, after the suite ran */
  void (*finish) (void);
} CudaIpcTestMain;

/* defined by each test file */
extern const CudaIpcTestMain cudaipc_test_main;

TCase *cudaipc_test_case (Suite * suite, const gchar * name,
    guint timeout_s);

void cudaipc_test_fds_recount (void);
void cudaipc_test_fds_keep (guint n);
void cudaipc_test_fds_check (void);
