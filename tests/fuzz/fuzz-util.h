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

/* A peer's text must never make GStreamer or GLib complain: a critical or
 * a warning logged while a fuzz input is read is a finding. abort() (not
 * G_BREAKPOINT's trap) so that libFuzzer keeps the input. */
static void
fuzz_abort_on_log (const gchar * domain, GLogLevelFlags level,
    const gchar * message, gpointer user_data)
{
  g_printerr ("%s: %s\n", domain ? domain : "(none)", message);
  abort ();
}

static inline void
fuzz_abort_on_criticals (void)
{
  static const gchar *const domains[] = { "GStreamer", "GLib",
    "GLib-GObject", NULL
  };
  guint i;

  for (i = 0; domains[i]; i++)
    g_log_set_handler (domains[i], G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING,
        fuzz_abort_on_log, NULL);
}
