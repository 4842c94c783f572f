/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cuipcsink's reports: what the sink tells the application, in
 * GStreamer's words, of what its publisher (gst/producer/publisher.h)
 * found.
 */
#pragma once

#include <gst/gst.h>

#include "producer/publisher.h"

G_BEGIN_DECLS

/* The publisher could not be made (the part of it that @failed, @config
 * what it was asked for): the error, in the domain and code that fit. */
void gst_cu_ipc_sink_post_start_error (GstElement * sink,
    CudaIpcPublisherFailed failed, const GError * error,
    const CudaIpcPublisherConfig * config);
/* @caps could not be set (cudaipc_publisher_set_caps()): caps that
 * cannot be shared are a negotiation error, a ring that cannot be made
 * for them one of the resource. */
void gst_cu_ipc_sink_post_caps_error (GstElement * sink, GstCaps * caps,
    const GError * error);
/* A frame that could not go out (@res, as publish() gave it): the error,
 * and ERROR. */
GstFlowReturn gst_cu_ipc_sink_post_publish_error (GstElement * sink,
    CudaIpcPublisher * publisher, CudaIpcPublishResult res,
    const CudaIpcPublisherFrame * frame, const CudaIpcPublished * out,
    const GError * error);
/* @dropped metas of a frame were left out (counted in stats): the
 * warning; the caller says it once. */
void gst_cu_ipc_sink_warn_metas_dropped (GstElement * sink, guint dropped);

G_END_DECLS
