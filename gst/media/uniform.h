/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What a peer sent as text, checked once GStreamer has read it: that
 * GStreamer can write it back in a form it reads, so that what this
 * process passes on (cuipcsrc ! ... ! cuipcsink) reads again at the next
 * one. Any thread.
 */
#pragma once

#include <gst/gst.h>

G_BEGIN_DECLS

/* Whether every list and array in @st (@caps), in nested structures and
 * caps too, holds values of one type, each of which GStreamer can write,
 * and no list or array. GStreamer reads an uncast list element by element
 * ("{ f, 2i, 6 }": a boolean, a string, an int) and writes the list back
 * cast to its first element's type, which it then cannot read; it reads
 * "{ NULL, u }" and cannot write it at all; and it writes a list in a
 * list ("<{1,2}>") with casts inside a cast list, which a peer's text may
 * not have (peer-names.c). A meta or an event so made would not travel on
 * from this process. */
G_GNUC_INTERNAL gboolean cudaipc_media_structure_uniform (const GstStructure *
    st);
G_GNUC_INTERNAL gboolean cudaipc_media_caps_uniform (const GstCaps * caps);

G_END_DECLS
