/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Helpers shared by the test suites.
 *
 * cudaipc_test_count_fds() counts this process's open fds; a socket test
 * takes the count in its setup and asserts it is unchanged at the end
 * (CUDAIPC_ASSERT_NO_FD_LEAK), so any fd a test path forgets shows up.
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
