/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the media payloads of the wire mean to GStreamer: a GstEvent as
 * the text of an EVENT message (the producer's side), and on the
 * consumer's side a CAPS string as fixed raw-video caps, a FRAME's plane
 * layout checked against those caps, an EVENT as a GstEvent. What the
 * consumer parses is untrusted input from the producer; every parsing
 * function says no with a CUDAIPC_ERROR_INVALID error whose text names
 * what was wrong.
 *
 * Pure functions; any thread. Results belong to the caller.
 */
#pragma once

#include <gst/gst.h>
#include <gst/video/video.h>
#include "wire/protocol.h"

G_BEGIN_DECLS

/* How deep a producer's caps and event structures may nest brackets
 * (lists, arrays, ranges, nested structures, types): raw-video caps have
 * types alone; a custom event may carry a few levels. */
#define CUDAIPC_MAX_CAPS_NESTING 2
#define CUDAIPC_MAX_EVENT_NESTING 8

/* Checks, before any parsing, that @str nests brackets at most @max_depth
 * deep (outside quoted strings; CUDAIPC_ERROR_LIMIT otherwise), that each
 * closing bracket closes the one open last and that nothing stays open
 * (CUDAIPC_ERROR_INVALID otherwise: GStreamer's parser has leaked on such
 * strings). @max_depth is at most CUDAIPC_MAX_EVENT_NESTING. */
gboolean cudaipc_media_check_nesting (const gchar * str, guint max_depth,
    GError ** error);
/* The depth alone, for @len bytes of @data that need not be text (NULs
 * and binary fields included: serialized metas). */
gboolean cudaipc_media_check_nesting_len (const gchar * data, gsize len,
    guint max_depth, GError ** error);

/* A CAPS message's string as one fixed raw-video structure of a positive
 * width and height, with no caps features (the memory feature is the
 * consumer's choice), and its video info in @info. Nesting is bounded
 * before anything is parsed (CUDAIPC_MAX_CAPS_NESTING); caps that are not
 * fixed are refused, but for the flag sets a string gives back unfixed (a
 * multiview flag set), which are fixated. */
GstCaps *cudaipc_media_parse_caps (const gchar * str, GstVideoInfo * info,
    GError ** error);

/* Checks that every plane of @frame (offset, stride and the rows its
 * format needs) lies inside the frame's size, that the plane count is the
 * format's, and that a frame without planes is large enough for @info.
 * Tiled formats must use the layout of @info. A frame of size 0 passes. */
gboolean cudaipc_media_check_layout (const CudaIpcFrameMsg * frame,
    const GstVideoInfo * info, GError ** error);

/* The producer: @buf's flags (buffer flags only: no mini-object flags, no
 * TAG_MEMORY), PTS, DTS, duration, offsets and plane layout (its
 * GstVideoMeta, else @info's, else none; @info may be NULL) written into
 * @frame. The rest of @frame is left as it is. */
void cudaipc_media_describe_buffer (GstBuffer * buf, const GstVideoInfo * info,
    CudaIpcFrameMsg * frame);

/* The consumer: @frame's duration, offsets and buffer flags set on @buf,
 * and its plane layout as a GstVideoMeta of @info's format and size (a
 * frame that cudaipc_media_check_layout() passed). Timestamps are the
 * caller's (timing.h). */
void cudaipc_media_apply_frame (GstBuffer * buf, const CudaIpcFrameMsg * frame,
    const GstVideoInfo * info);

/* The frame duration of @caps' fixed positive frame rate, else
 * GST_CLOCK_TIME_NONE. */
GstClockTime cudaipc_media_frame_duration (GstCaps * caps);

/* The payload of @event (EOS, SEGMENT, TAG or a custom event) as the text
 * an EVENT message carries, which cudaipc_media_parse_event() reads back:
 * a SEGMENT as a "cudaipc-segment" structure, a TAG as a tag list, any
 * other event as its structure ("" for none). */
gchar *cudaipc_media_serialize_event (GstEvent * event);

/* An EVENT message as a GstEvent: EOS, SEGMENT (time format, from the
 * "cudaipc-segment" fields), TAG, or a custom downstream event. Other
 * types and structures that do not parse fail. */
GstEvent *cudaipc_media_parse_event (const CudaIpcEventMsg * msg,
    GError ** error);

G_END_DECLS
