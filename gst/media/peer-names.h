/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Names a peer makes this process intern. GStreamer keeps every structure
 * name, field name and caps feature it parses as a GQuark, which lives as
 * long as the process: a producer that sends new names without end would
 * grow its consumers without bound. Every name a peer's text or metadata
 * would add goes through here first and counts against one budget a
 * process (CUDAIPC_MAX_PEER_NAMES), made a quark here once admitted, so
 * that it is counted once; past the budget the text or name is refused
 * (CUDAIPC_ERROR_LIMIT) before GStreamer's parser sees it.
 *
 * Text is read as GStreamer serializes structures and caps: a structure
 * name, its features in brackets, then "name=value" fields, structures
 * separated by ';'; a value typed structure or caps (GstStructure,
 * GstCaps) is read again as such text, quoted or in brackets, in lists
 * and arrays too. Text that does not read so is refused
 * (CUDAIPC_ERROR_INVALID) before GStreamer sees it: GStreamer 1.22's
 * parser leaks on some such text.
 *
 * Any thread (the count is atomic).
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* New names a process takes from peers, in every form together. */
#define CUDAIPC_MAX_PEER_NAMES 4096

/* Admits one name (not empty): TRUE where it is a quark already or the
 * budget has room (it is then made one); FALSE past the budget. */
gboolean cudaipc_peer_names_admit (const gchar * name, GError ** error);

/* Admits every name that parsing @text (structures or caps) would
 * intern, all or none: FALSE, with nothing made a quark, where they do
 * not fit in what is left of the budget. */
gboolean cudaipc_peer_names_admit_text (const gchar * text, GError ** error);

/* As admit_text(), for the text of one structure (an event's, a meta's):
 * refuses also (INVALID) any text after its first ';', on which
 * gst_structure_from_string() warns. */
gboolean cudaipc_peer_names_admit_structure (const gchar * text,
    GError ** error);

/* As admit_text(), for a CAPS message: refuses also (INVALID) caps with
 * a value typed structure or caps, or a structure in brackets, which
 * raw-video caps never hold and on some of which GStreamer 1.22's caps
 * parser leaks. */
gboolean cudaipc_peer_names_admit_caps (const gchar * text, GError ** error);

/* New names admitted so far in this process. */
guint cudaipc_peer_names_count (void);

G_END_DECLS
