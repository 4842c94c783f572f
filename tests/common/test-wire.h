/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Writing wire bytes by hand, for tests that play a peer breaking the
 * rules: little-endian integers, strings as the protocol writes them
 * (a u32 length with the NUL, then the bytes), and metadata entries
 * (docs/protocol.md, Frame metadata).
 */
#pragma once

#include <stdarg.h>
#include <string.h>
#include <glib.h>
#include <gst/gst.h>

static inline void
wire_put16 (GByteArray * b, guint16 v)
{
  guint8 d[2];

  GST_WRITE_UINT16_LE (d, v);
  g_byte_array_append (b, d, 2);
}

static inline void
wire_put32 (GByteArray * b, guint32 v)
{
  guint8 d[4];

  GST_WRITE_UINT32_LE (d, v);
  g_byte_array_append (b, d, 4);
}

static inline void
wire_put64 (GByteArray * b, guint64 v)
{
  guint8 d[8];

  GST_WRITE_UINT64_LE (d, v);
  g_byte_array_append (b, d, 8);
}

static inline void
wire_put_str (GByteArray * b, const gchar * s)
{
  wire_put32 (b, strlen (s) + 1);
  g_byte_array_append (b, (const guint8 *) s, strlen (s) + 1);
}

/* A metadata entry of @kind whose payload is @payload. */
static inline void
wire_put_entry (GByteArray * b, guint16 kind, GByteArray * payload)
{
  wire_put16 (b, kind);
  wire_put16 (b, 0);
  wire_put32 (b, payload->len);
  g_byte_array_append (b, payload->data, payload->len);
}

/* A frame's names entry (kind 7), listing the names given, NULL last:
 * metas name the i-th as i. */
static inline void
wire_put_names (GByteArray * b, const gchar * first, ...)
{
  GByteArray *p = g_byte_array_new ();
  guint n = 0;
  va_list ap;

  wire_put32 (p, 0);
  va_start (ap, first);
  for (const gchar * s = first; s != NULL; s = va_arg (ap, const gchar *)) {
    wire_put_str (p, s);
    n++;
  }
  va_end (ap);
  GST_WRITE_UINT32_LE (p->data, n);
  wire_put_entry (b, 7, p);
  g_byte_array_unref (p);
}
