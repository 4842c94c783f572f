/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the media payloads of the wire mean to GStreamer, on the consumer
 * side: a CAPS string as fixed raw-video caps, a FRAME's plane layout
 * checked against those caps, an EVENT as a GstEvent. Everything here is
 * untrusted input from the producer; every function says no with a
 * CUDAIPC_ERROR_INVALID error whose text names what was wrong.
 *
 * Pure functions; any thread. Results belong to the caller.
 */
#pragma once

#include <gst/gst.h>
#include <gst/video/video.h>
#include "protocol.h"

G_BEGIN_DECLS

/* A CAPS message's string as one fixed raw-video structure, with no caps
 * features (the memory feature is the consumer's choice), and its video
 * info in @info. Fields that do not come back fixed from a string (a
 * multiview flag set, for one) are fixated. */
GstCaps *cudaipc_media_parse_caps (const gchar * str, GstVideoInfo * info,
    GError ** error);

/* Checks that every plane of @frame (offset, stride and the rows its
 * format needs) lies inside the frame's size, that the plane count is the
 * format's, and that a frame without planes is large enough for @info.
 * Tiled formats must use the layout of @info. A frame of size 0 passes. */
gboolean cudaipc_media_check_layout (const CudaIpcFrameMsg * frame,
    const GstVideoInfo * info, GError ** error);

/* An EVENT message as a GstEvent: EOS, SEGMENT (time format, from the
 * "cudaipc-segment" fields), TAG, or a custom downstream event. Other
 * types and structures that do not parse fail. */
GstEvent *cudaipc_media_parse_event (const CudaIpcEventMsg * msg,
    GError ** error);

G_END_DECLS
