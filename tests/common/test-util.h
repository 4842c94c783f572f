/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Helpers shared by the test suites.
 *
 * cudaipc_test_count_fds() counts this process's open fds; a socket test
 * takes the count in its setup and asserts it is unchanged at the end
 * (CUDAIPC_ASSERT_NO_FD_LEAK), so any fd a test path forgets shows up.
 * cudaipc_test_stats_uint64() reads one counter of an element's stats.
 */
#pragma once

#include <dirent.h>
#include <glib.h>
#include <gst/check/gstcheck.h>

static inline guint
cudaipc_test_count_fds (void)
{
  guint n = 0;
  DIR *dir = opendir ("/proc/self/fd");
  struct dirent *ent;

  g_assert_nonnull (dir);
  while ((ent = readdir (dir)) != NULL) {
    if (ent->d_name[0] != '.')
      n++;
  }
  closedir (dir);
  /* the directory's own fd */
  return n - 1;
}

#define CUDAIPC_ASSERT_NO_FD_LEAK(before) \
  fail_unless_equals_int (cudaipc_test_count_fds (), (before))

/* Field @name (guint64) of @element's "stats" structure; fails the test
 * where the element has no such counter. */
static inline guint64
cudaipc_test_stats_uint64 (gpointer element, const gchar * name)
{
  GstStructure *stats = NULL;
  guint64 v = 0;

  g_object_get (element, "stats", &stats, NULL);
  fail_unless (stats != NULL);
  fail_unless (gst_structure_get_uint64 (stats, name, &v), "no %s in %"
      GST_PTR_FORMAT, name, stats);
  gst_structure_free (stats);
  return v;
}
