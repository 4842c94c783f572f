/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The bus check of the test and benchmark programs that run pipelines of
 * their own (ipc-node, cudaipc-bench, scale-node): no gst-check needed.
 *
 * cudaipc_test_bus_ok() pops the next ERROR or EOS from @pipeline's bus,
 * waiting up to @timeout: FALSE for an error, which it prints ("error
 * from <element>: <message> (<debug>)"); TRUE otherwise, with *@eos set
 * when it popped an EOS (@eos may be NULL).
 */
#pragma once

#include <gst/gst.h>

static inline gboolean
cudaipc_test_bus_ok (GstElement * pipeline, GstClockTime timeout,
    gboolean * eos)
{
  GstBus *bus = gst_element_get_bus (pipeline);
  GstMessage *msg = gst_bus_timed_pop_filtered (bus, timeout,
      GST_MESSAGE_ERROR | GST_MESSAGE_EOS);
  gboolean ok = TRUE;

  if (msg && GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR) {
    GError *err = NULL;
    gchar *dbg = NULL;

    gst_message_parse_error (msg, &err, &dbg);
    g_printerr ("error from %s: %s (%s)\n", GST_OBJECT_NAME (msg->src),
        err->message, dbg ? dbg : "");
    g_clear_error (&err);
    g_free (dbg);
    ok = FALSE;
  } else if (msg && eos) {
    *eos = TRUE;
  }
  if (msg)
    gst_message_unref (msg);
  gst_object_unref (bus);
  return ok;
}
