/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Pipelines of a gst-check test, from a description: launch() fails the
 * test where the description does not parse (or parses with an error),
 * stop() takes the pipeline to NULL and drops it.
 */
#pragma once

#include <stdarg.h>
#include <gst/check/gstcheck.h>

static inline GstElement *
cudaipc_test_launch (const gchar * format, ...) G_GNUC_PRINTF (1, 2);

static inline GstElement *
cudaipc_test_launch (const gchar * format, ...)
{
  gchar *desc;
  GError *err = NULL;
  GstElement *pipe;
  va_list args;

  va_start (args, format);
  desc = g_strdup_vprintf (format, args);
  va_end (args);
  pipe = gst_parse_launch (desc, &err);
  fail_unless (pipe != NULL && err == NULL, "%s: %s", desc,
      err ? err->message : "");
  g_free (desc);
  return pipe;
}

static inline void
cudaipc_test_stop (GstElement * pipe)
{
  gst_element_set_state (pipe, GST_STATE_NULL);
  gst_object_unref (pipe);
}
