/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The hints that end the texts of errors a user can fix, written once for
 * every front door: cuipcsrc, the C API and the Python package say the
 * same words, each naming the setting by the name its users know it by
 * (a property, an option field, a keyword). Any thread; the tables are
 * static and the texts the caller's to free.
 */
#pragma once

#include <gst/gst.h>

G_BEGIN_DECLS

/* What a front door calls the consumer's settings that hints name. */
typedef struct
{
  const gchar *socket_path;
  const gchar *connect_timeout;
  const gchar *reconnect_timeout;
  /* the value with which connect_timeout waits for as long as it takes
   * ("0"), and the same of reconnect_timeout */
  const gchar *connect_forever;
  const gchar *reconnect_forever;
} CudaIpcSettingNames;

/* cuipcsrc's properties, the C API's option fields (cudaipc.h), the
 * Python package's keywords. */
extern const CudaIpcSettingNames cudaipc_setting_names_element;
extern const CudaIpcSettingNames cudaipc_setting_names_c;
extern const CudaIpcSettingNames cudaipc_setting_names_python;

/* The table of a front door by its name: "element", "c" or "python";
 * NULL for another. */
const CudaIpcSettingNames *cudaipc_setting_names_lookup (const gchar * name);

/* "start the producer, check socket-path, or raise connect-timeout (0
 * waits for as long as it takes)": what to do when nobody listens on the
 * socket within the connection's time-out, the first connection's or,
 * with @again, a reconnection's. */
gchar *cudaipc_hint_no_producer (const CudaIpcSettingNames * names,
    gboolean again);

/* "The producer on PATH stayed away for 30 s after it was lost: start it
 * again, or raise reconnect-timeout to wait longer (0 waits for ever)":
 * the error of a consumer whose reconnection's time-out ran out. */
gchar *cudaipc_hint_stayed_away (const CudaIpcSettingNames * names,
    const gchar * path, guint timeout_ms);

/* The error of a consumer whose downstream refuses the producer's @caps
 * (fixed, the ones the consumer would push; in CUDA memory or system
 * memory) where downstream takes @accepted (its caps query, may be NULL
 * or ANY): the producer's caps in short, what downstream takes, and the
 * element to put in between. */
gchar *cudaipc_hint_not_negotiated (const GstCaps * caps,
    const GstCaps * accepted);

G_END_DECLS
