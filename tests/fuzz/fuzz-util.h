/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Helpers for the fuzz targets (no GStreamer check framework: libFuzzer
 * or the replay driver calls LLVMFuzzerTestOneInput directly).
 */
#pragma once

#include <dirent.h>
#include <glib.h>

static inline guint
fuzz_count_fds (void)
{
  guint n = 0;
  DIR *dir = opendir ("/proc/self/fd");
  struct dirent *ent;

  if (!dir)
    return 0;
  while ((ent = readdir (dir)) != NULL)
    if (ent->d_name[0] != '.')
      n++;
  closedir (dir);
  return n;
}
