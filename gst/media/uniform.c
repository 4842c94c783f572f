/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Values a peer sent as text that GStreamer reads but cannot write back
 * (uniform.h).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "media/uniform.h"

static gboolean value_uniform (const GValue * v);

static gboolean
field_uniform (GQuark field, const GValue * v, gpointer user_data)
{
  return value_uniform (v);
}

/* Whether GStreamer can write @e, an element of a list or array, back as
 * text: it writes a structure's NULL string field as NULL, but fails
 * (with a warning) on a list's NULL string ("{ NULL, u }"). */
static gboolean
element_writes (const GValue * e)
{
  gchar *text;

  text = gst_value_serialize (e);
  g_free (text);
  return text != NULL;
}

static gboolean
value_uniform (const GValue * v)
{
  gboolean list = GST_VALUE_HOLDS_LIST (v);

  if (list || GST_VALUE_HOLDS_ARRAY (v)) {
    guint n = list ? gst_value_list_get_size (v) : gst_value_array_get_size (v);
    GType type = 0;

    for (guint i = 0; i < n; i++) {
      const GValue *e = list ? gst_value_list_get_value (v, i) :
          gst_value_array_get_value (v, i);

      /* GStreamer writes a list in a list with its type cast on both
       * ("(int)< { (int)1, (int)2 } >"), which a peer's text may not have
       * (peer-names.h): refused, so that it never goes out */
      if (GST_VALUE_HOLDS_LIST (e) || GST_VALUE_HOLDS_ARRAY (e))
        return FALSE;
      if (i == 0)
        type = G_VALUE_TYPE (e);
      else if (G_VALUE_TYPE (e) != type)
        return FALSE;
      if (!value_uniform (e) || !element_writes (e))
        return FALSE;
    }
    return TRUE;
  }
  if (GST_VALUE_HOLDS_STRUCTURE (v))
    return cudaipc_media_structure_uniform (gst_value_get_structure (v));
  if (GST_VALUE_HOLDS_CAPS (v))
    return cudaipc_media_caps_uniform (gst_value_get_caps (v));
  return TRUE;
}

gboolean
cudaipc_media_structure_uniform (const GstStructure * st)
{
  return st == NULL || gst_structure_foreach (st, field_uniform, NULL);
}

gboolean
cudaipc_media_caps_uniform (const GstCaps * caps)
{
  guint n = caps ? gst_caps_get_size (caps) : 0;

  for (guint i = 0; i < n; i++)
    if (!cudaipc_media_structure_uniform (gst_caps_get_structure (caps, i)))
      return FALSE;
  return TRUE;
}
