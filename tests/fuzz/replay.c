/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Replays a fuzz target over files and folders of inputs, for builds without
 * libFuzzer (the CI test suite replays the seed corpus this way).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <glib.h>

int LLVMFuzzerTestOneInput (const guint8 * data, size_t size);

static guint
replay_path (const gchar * path)
{
  gchar *data;
  gsize len;
  guint n = 0;

  if (g_file_test (path, G_FILE_TEST_IS_DIR)) {
    GDir *dir = g_dir_open (path, 0, NULL);
    const gchar *name;

    while (dir && (name = g_dir_read_name (dir))) {
      gchar *child = g_build_filename (path, name, NULL);
      n += replay_path (child);
      g_free (child);
    }
    if (dir)
      g_dir_close (dir);
    return n;
  }
  if (!g_file_get_contents (path, &data, &len, NULL))
    g_error ("cannot read %s", path);
  LLVMFuzzerTestOneInput ((const guint8 *) data, len);
  g_free (data);
  return 1;
}

int
main (int argc, char **argv)
{
  guint n = 0;

  for (int i = 1; i < argc; i++)
    n += replay_path (argv[i]);
  if (n == 0) {
    g_printerr ("no inputs\n");
    return 1;
  }
  g_print ("replayed %u inputs\n", n);
  return 0;
}
