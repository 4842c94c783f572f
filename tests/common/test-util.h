/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Helpers shared by the test suites.
 *
 * cudaipc_test_count_fds() counts this process's open fds; a socket test
 * takes the count in its setup and asserts it is unchanged at the end
 * (CUDAIPC_ASSERT_NO_FD_LEAK), so any fd a test path forgets shows up.
 * cudaipc_test_stats_uint64() reads one counter of an element's stats.
 * cudaipc_test_tmpdir() makes a private temporary folder (its path is
 * the caller's to free); cudaipc_test_rmtree() removes it with what the
 * test left in it.
 */
#pragma once

#include <dirent.h>
#include <glib/gstdio.h>
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

/* A new folder of this user's alone under the temporary folder, named
 * after @tag; fails the test where it cannot be made. */
static inline gchar *
cudaipc_test_tmpdir (const gchar * tag)
{
  g_autofree gchar *tmpl = g_strdup_printf ("cudaipc-%s-XXXXXX", tag);
  GError *err = NULL;
  gchar *dir = g_dir_make_tmp (tmpl, &err);

  fail_unless (dir != NULL, "g_dir_make_tmp: %s", err ? err->message : "");
  return dir;
}

/* Removes @path and, if it is a folder, everything in it (links are
 * removed, never followed). */
static inline void
cudaipc_test_rmtree (const gchar * path)
{
  GDir *dir;
  const gchar *name;

  if (!g_file_test (path, G_FILE_TEST_IS_DIR) ||
      g_file_test (path, G_FILE_TEST_IS_SYMLINK)) {
    g_unlink (path);
    return;
  }
  dir = g_dir_open (path, 0, NULL);
  while (dir && (name = g_dir_read_name (dir)) != NULL) {
    g_autofree gchar *child = g_build_filename (path, name, NULL);

    cudaipc_test_rmtree (child);
  }
  if (dir)
    g_dir_close (dir);
  g_rmdir (path);
}
