/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Fuzz target: text a producer sends, as the consumer reads it. The first
 * byte picks the reader (0 CAPS, 1 a custom event, 2 a tag event, 3 the
 * names budget's scan alone, media/peer-names.h); the rest, cut at the
 * first NUL and at CUDAIPC_MAX_STRING bytes, is the text. Whatever it
 * holds, reading it must not crash or leak; the names budget only ever
 * grows, and never past CUDAIPC_MAX_PEER_NAMES; an event read is written
 * back as a producer writes it and must read again.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdlib.h>
#include <string.h>
#include <gst/gst.h>

#include "media/media.h"
#include "media/peer-names.h"
#include "fuzz-util.h"

int LLVMFuzzerTestOneInput (const guint8 * data, size_t size);

int
LLVMFuzzerTestOneInput (const guint8 * data, size_t size)
{
  static gboolean inited;
  gchar *text;
  guint before;

  if (!inited) {
    gst_init (NULL, NULL);
    fuzz_abort_on_criticals ();
    inited = TRUE;
  }
  if (size < 1)
    return 0;
  text = g_strndup ((const gchar *) data + 1,
      MIN (size - 1, (gsize) CUDAIPC_MAX_STRING - 1));
  before = cudaipc_peer_names_count ();

  switch (data[0] % 4) {
    case 0:{
      GstVideoInfo info;
      GstCaps *caps = cudaipc_media_parse_caps (text, &info, NULL);

      if (caps)
        gst_caps_unref (caps);
      break;
    }
    case 1:
    case 2:{
      CudaIpcEventMsg m = { 0, };
      GstEvent *ev;

      m.event_type = data[0] % 4 == 1 ? GST_EVENT_CUSTOM_DOWNSTREAM :
          GST_EVENT_TAG;
      m.structure = text;
      ev = cudaipc_media_parse_event (&m, NULL);
      if (ev) {
        /* what a consumer takes, it can pass on (cuipcsrc ! cuipcsink):
         * written back as a producer writes it, it reads again */
        CudaIpcEventMsg again = m;
        gchar *written = cudaipc_media_serialize_event (ev);

        if (written == NULL)
          abort ();
        /* a text past a message's bound never goes out */
        if (strlen (written) < CUDAIPC_MAX_STRING) {
          GstEvent *ev2;

          again.structure = written;
          ev2 = cudaipc_media_parse_event (&again, NULL);
          if (ev2 == NULL)
            abort ();
          gst_event_unref (ev2);
        }
        g_free (written);
        gst_event_unref (ev);
      }
      break;
    }
    default:
      /* the scan alone bounds its own depth */
      cudaipc_peer_names_admit_text (text, NULL);
      break;
  }
  if (cudaipc_peer_names_count () < before ||
      cudaipc_peer_names_count () > CUDAIPC_MAX_PEER_NAMES)
    abort ();
  g_free (text);
  return 0;
}
