/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The main of every gst-check suite and the fixture of every test case
 * (test-main.h).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <gst/check/gstcheck.h>

#include "test-main.h"
#include "test-util.h"

/* CK_FORK=no: every test runs in this process */
static gboolean in_process;
/* how long a test may run before SIGALRM ends the process (CK_FORK=no) */
static guint alarm_s;

/* the running test's fds */
static gboolean fds_on;
static guint fds_before;
static guint fds_kept;
static gboolean fds_checked;

static void
alarm_hit (int sig)
{
  static const char msg[] = "test: a test ran past its time-out with "
      "CK_FORK=no: the process stops here\n";

  (void) sig;
  (void) !write (STDERR_FILENO, msg, sizeof msg - 1);
  _exit (124);
}

static void
case_setup (void)
{
  if (in_process) {
    /* here, not in main(): check installs a SIGALRM handler of its own
     * when the suite starts, which kills the process group */
    signal (SIGALRM, alarm_hit);
    alarm (alarm_s);
    return;
  }
  fds_on = TRUE;
  fds_kept = 0;
  fds_checked = FALSE;
  fds_before = cudaipc_test_count_fds ();
}

static void
case_teardown (void)
{
  if (in_process)
    alarm (0);
  if (fds_on && !fds_checked)
    cudaipc_test_fds_check ();
  fds_on = FALSE;
}

/* A test case of @suite named @name, each test of which may run for
 * @timeout_s seconds, in the fixture (test-main.h). */
TCase *
cudaipc_test_case (Suite * suite, const gchar * name, guint timeout_s)
{
  const gchar *mult = g_getenv ("CK_TIMEOUT_MULTIPLIER");
  TCase *tc = tcase_create (name);

  tcase_set_timeout (tc, timeout_s);
  alarm_s = MAX (alarm_s, timeout_s * MAX (1, mult ? atoi (mult) : 1));
  tcase_add_checked_fixture (tc, case_setup, case_teardown);
  suite_add_tcase (suite, tc);
  return tc;
}

/* The fds open now are where the test ends: what it opened so far, and
 * still holds, stays open on purpose (a driver that keeps descriptors of
 * its own once it initialised). */
void
cudaipc_test_fds_recount (void)
{
  if (fds_on) {
    fds_before = cudaipc_test_count_fds ();
    fds_kept = 0;
  }
}

/* @n of the fds the test opened stay open past its end on purpose. */
void
cudaipc_test_fds_keep (guint n)
{
  if (fds_on)
    fds_kept += n;
}

/* Prints what each fd of this process is, for a test that fails its count. */
static void
print_fds (void)
{
  GDir *dir = g_dir_open ("/proc/self/fd", 0, NULL);
  const gchar *name;

  while (dir && (name = g_dir_read_name (dir)) != NULL) {
    g_autofree gchar *path = g_build_filename ("/proc/self/fd", name, NULL);
    g_autofree gchar *target = g_file_read_link (path, NULL);

    g_printerr ("  fd %s: %s\n", name, target ? target : "?");
  }
  if (dir)
    g_dir_close (dir);
}

/* Fails the test unless as many fds are open now as at its start (with
 * what it keeps); the fixture does not check again at the end. */
void
cudaipc_test_fds_check (void)
{
  guint now;

  if (!fds_on)
    return;
  fds_checked = TRUE;
  now = cudaipc_test_count_fds ();
  /* a thread that ends after the test's last call (GStreamer's pooled
   * threads drop their references as they finish) closes what it held a
   * moment later: up to a second for the count to come down; a leak stays */
  for (guint i = 0; i < 100 && now > fds_before + fds_kept; i++) {
    g_usleep (10 * 1000);
    now = cudaipc_test_count_fds ();
  }
  if (now != fds_before + fds_kept)
    print_fds ();
  fail_unless (now == fds_before + fds_kept,
      "%u fds open at the end of the test, %u at its start (%u kept on "
      "purpose): a test path leaked or closed one", now, fds_before,
      fds_kept);
}

int
main (int argc, char **argv)
{
  const CudaIpcTestMain *m = &cudaipc_test_main;
  g_autofree gchar *file = NULL;
  gint ret;

  if (m->early && (ret = m->early (argc, argv)) >= 0)
    return ret;
  gst_check_init (&argc, &argv);
  in_process = g_strcmp0 (g_getenv ("CK_FORK"), "no") == 0;
  if (m->prepare && (ret = m->prepare ()) != 0)
    return ret;
  /* GST_CHECK_XML writes <file>heck.xml */
  file = g_strdup_printf ("%s.c", m->name);
  ret = gst_check_run_suite (m->suite (), m->name, file);
  if (m->finish)
    m->finish ();
  return ret;
}
