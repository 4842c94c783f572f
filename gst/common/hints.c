/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The hints of user errors, once for every front door (hints.h).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "common/hints.h"

const CudaIpcSettingNames cudaipc_setting_names_element = {
  .socket_path = "socket-path",
  .connect_timeout = "connect-timeout",
  .reconnect_timeout = "reconnect-timeout",
  .connect_forever = "0",
  .reconnect_forever = "0",
};

const CudaIpcSettingNames cudaipc_setting_names_c = {
  .socket_path = "the socket path",
  .connect_timeout = "connect_timeout_ms",
  .reconnect_timeout = "reconnect_timeout_ms",
  .connect_forever = "0",
  .reconnect_forever = "0",
};

const CudaIpcSettingNames cudaipc_setting_names_python = {
  .socket_path = "socket_path",
  .connect_timeout = "connect_timeout",
  .reconnect_timeout = "reconnect_timeout",
  .connect_forever = "None",
  .reconnect_forever = "None",
};

const CudaIpcSettingNames *
cudaipc_setting_names_lookup (const gchar * name)
{
  if (g_strcmp0 (name, "element") == 0)
    return &cudaipc_setting_names_element;
  if (g_strcmp0 (name, "c") == 0)
    return &cudaipc_setting_names_c;
  if (g_strcmp0 (name, "python") == 0)
    return &cudaipc_setting_names_python;
  return NULL;
}

gchar *
cudaipc_hint_no_producer (const CudaIpcSettingNames * names, gboolean again)
{
  const gchar *setting = again ? names->reconnect_timeout :
      names->connect_timeout;
  const gchar *forever = again ? names->reconnect_forever :
      names->connect_forever;

  return g_strdup_printf ("start the producer, check %s, or raise %s (%s "
      "waits for as long as it takes)", names->socket_path, setting, forever);
}

gchar *
cudaipc_hint_stayed_away (const CudaIpcSettingNames * names,
    const gchar * path, guint timeout_ms)
{
  return g_strdup_printf ("The producer on %s stayed away for %u %s after it "
      "was lost: start it again, or raise %s to wait longer (%s waits for "
      "ever)", path, timeout_ms % 1000 ? timeout_ms : timeout_ms / 1000,
      timeout_ms % 1000 ? "ms" : "s", names->reconnect_timeout,
      names->reconnect_forever);
}

/* Negotiation */

#define CUDA_MEMORY "memory:CUDAMemory"
/* structures of downstream's caps named at most */
#define MAX_NAMED 4

static gboolean
in_cuda_memory (const GstCaps * caps, guint i)
{
  GstCapsFeatures *f = gst_caps_get_features (caps, i);

  return f != NULL && gst_caps_features_contains (f, CUDA_MEMORY);
}

/* A field worth naming, as ", name=value": a range of sizes or rates
 * says nothing a user would act on. */
static gboolean
append_field (GQuark field, const GValue * value, gpointer user_data)
{
  const gchar *name = g_quark_to_string (field);
  GString *s = user_data;
  gchar *text;

  if (!g_str_equal (name, "format") && !g_str_equal (name, "width") &&
      !g_str_equal (name, "height") && !g_str_equal (name, "framerate"))
    return TRUE;
  if (GST_VALUE_HOLDS_INT_RANGE (value) ||
      GST_VALUE_HOLDS_FRACTION_RANGE (value))
    return TRUE;
  g_string_append_printf (s, ", %s=", name);
  if (GST_VALUE_HOLDS_LIST (value)) {
    /* "{ I420, YV12 }", without the type of each */
    g_string_append (s, "{ ");
    for (guint i = 0; i < gst_value_list_get_size (value); i++) {
      text = gst_value_serialize (gst_value_list_get_value (value, i));
      g_string_append_printf (s, "%s%s", i > 0 ? ", " : "", text);
      g_free (text);
    }
    g_string_append (s, " }");
    return TRUE;
  }
  text = gst_value_serialize (value);
  g_string_append (s, text ? text : "?");
  g_free (text);
  return TRUE;
}

/* @caps with only their format, size and rate: "video/x-raw(memory:
 * CUDAMemory), format=NV12, width=1920, height=1080, framerate=30/1". */
static gchar *
caps_short (const GstCaps * caps)
{
  guint n = gst_caps_get_size (caps);
  GString *s;

  if (gst_caps_is_any (caps))
    return g_strdup ("anything");
  if (n == 0)
    return g_strdup ("nothing");
  s = g_string_new (NULL);
  for (guint i = 0; i < MIN (n, MAX_NAMED); i++) {
    const GstStructure *st = gst_caps_get_structure (caps, i);
    GstCapsFeatures *f = gst_caps_get_features (caps, i);

    if (i > 0)
      g_string_append (s, "; ");
    g_string_append (s, gst_structure_get_name (st));
    if (f != NULL && !gst_caps_features_is_any (f) &&
        !gst_caps_features_is_equal (f,
            GST_CAPS_FEATURES_MEMORY_SYSTEM_MEMORY)) {
      gchar *fs = gst_caps_features_to_string (f);

      g_string_append_printf (s, "(%s)", fs);
      g_free (fs);
    }
    gst_structure_foreach (st, append_field, s);
  }
  if (n > MAX_NAMED)
    g_string_append_printf (s, "; and %u more", n - MAX_NAMED);
  return g_string_free (s, FALSE);
}

/* What to put after the consumer: the frames' memory decides between
 * GStreamer's CUDA elements and its system memory ones. */
static const gchar *
what_between (const GstCaps * caps, const GstCaps * accepted)
{
  gboolean takes_cuda = FALSE, takes_system = FALSE;

  for (guint i = 0; accepted && i < gst_caps_get_size (accepted); i++) {
    if (in_cuda_memory (accepted, i))
      takes_cuda = TRUE;
    else
      takes_system = TRUE;
  }
  if (accepted == NULL || gst_caps_is_any (accepted) ||
      gst_caps_is_empty (accepted))
    takes_cuda = takes_system = TRUE;

  if (in_cuda_memory (caps, 0)) {
    if (takes_cuda)
      return "cudaconvert (cudascale for another size) after the "
          "consumer, to convert in GPU memory";
    return "cudadownload after the consumer, to bring the frames to "
        "system memory, and videoconvert after it for another format";
  }
  if (takes_system)
    return "videoconvert (videoscale for another size) after the consumer";
  return "cudaupload after the consumer, to bring the frames to GPU "
      "memory, and cudaconvert after it for another format";
}

gchar *
cudaipc_hint_not_negotiated (const GstCaps * caps, const GstCaps * accepted)
{
  g_autofree gchar *ours = caps_short (caps);
  g_autofree gchar *theirs = accepted ? caps_short (accepted) :
      g_strdup ("nothing it would say");

  return g_strdup_printf ("Downstream does not accept the producer's caps "
      "%s; it takes %s: put %s", ours, theirs, what_between (caps,
          accepted));
}
