/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Fuzz target: a FRAME's metadata blob (metas.h), decoded onto a buffer.
 * The input is the blob. Whatever it holds, decoding must not crash or
 * leak, must keep to its limits, and what it added must be freeable; an
 * accepted blob is encoded again (the producer's side) and that encoding
 * must decode.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>
#include <gst/gst.h>

#include "metas/metas.h"
#include "fuzz-util.h"

int LLVMFuzzerTestOneInput (const guint8 * data, size_t size);

int
LLVMFuzzerTestOneInput (const guint8 * data, size_t size)
{
  static gboolean inited;
  GstBuffer *buf;
  CudaIpcMetaCounts counts = { 0, };
  gboolean ok;

  if (!inited) {
    gst_init (NULL, NULL);
    fuzz_abort_on_criticals ();
    inited = TRUE;
  }
  buf = gst_buffer_new ();
  ok = cudaipc_metas_decode (data, size, buf, &counts, NULL);
  g_assert (counts.carried <= CUDAIPC_MAX_METAS);
  if (ok) {
    GByteArray *blob = g_byte_array_new ();
    CudaIpcMetaCounts again = { 0, };
    GstBuffer *copy = gst_buffer_new ();

    cudaipc_metas_encode (buf, NULL, blob, &again);
    g_assert (blob->len <= CUDAIPC_MAX_META_BYTES);
    memset (&again, 0, sizeof (again));
    g_assert (cudaipc_metas_decode (blob->data, blob->len, copy, &again,
            NULL));
    gst_buffer_unref (copy);
    g_byte_array_unref (blob);
  }
  gst_buffer_unref (buf);
  return 0;
}
