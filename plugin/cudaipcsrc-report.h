/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cuipcsrc's reports: what the source tells the application, in
 * GStreamer's words, of what its reader (gst/consumer/reader.h) found. The
 * streaming thread (create()) calls them, except where said.
 */
#pragma once

#include "cudaipcsrc.h"

G_BEGIN_DECLS

/* With a connection's first frame (its ring and caps known): a LATENCY
 * message, then "cudaipcsrc-connected", or "cudaipcsrc-reconnected" after
 * a lost producer. */
void gst_cu_ipc_src_announce_connection (GstCuIpcSrc * self, GstCaps * caps);
/* The producer left without EOS (@item, @err: the reader's words):
 * "cudaipcsrc-producer-lost", then a warning and OK where the reader
 * connects again, else an error and ERROR. */
GstFlowReturn gst_cu_ipc_src_producer_lost (GstCuIpcSrc * self,
    const CudaIpcReaderItem * item, const GError * err);
/* The reader could not connect, or failed (@status CONNECT_FAILED,
 * FAILED): the error, and ERROR. */
GstFlowReturn gst_cu_ipc_src_reader_failed (GstCuIpcSrc * self,
    CudaIpcReaderStatus status, const CudaIpcReaderItem * item,
    const GError * err);
/* Whether downstream takes @caps (TRUE with nothing linked: the push
 * says so), and the error of caps it does not take, which names them,
 * what downstream takes and what to put in between. */
gboolean gst_cu_ipc_src_downstream_accepts (GstCuIpcSrc * self,
    GstCaps * caps);
void gst_cu_ipc_src_not_negotiated (GstCuIpcSrc * self, GstCaps * caps);
/* Metas the producer got wrong (@metas_err, NULL: none) and events the
 * reader refused since the last call: a warning each, which the reader
 * lets come once a connection. */
void gst_cu_ipc_src_warn_refusals (GstCuIpcSrc * self,
    const GError * metas_err);
/* @n frames of a live stream dropped before @buf (the oldest waiting
 * beyond max-held, leaky-type): a QoS message for each batch, as a sink
 * posts one for the buffers it drops, and a warning at most every 10 s,
 * none of what went while the pipeline was paused. */
void gst_cu_ipc_src_report_drops (GstCuIpcSrc * self, GstBuffer * buf,
    guint64 n);
/* A frame downstream hoards could not be copied (@copy_err, may be NULL):
 * a warning, once. */
void gst_cu_ipc_src_warn_no_copy (GstCuIpcSrc * self,
    const GError * copy_err);
/* A frame could not go out as GstCudaMemory (@out_err, may be NULL): where
 * it @went_out as the imported slot, a warning and TRUE; where it did not
 * (output-memory=gst-cuda), an error and FALSE. */
gboolean gst_cu_ipc_src_output_failed (GstCuIpcSrc * self,
    const GError * out_err, gboolean went_out);

/* The "stats" property's structure (any thread). */
GstStructure *gst_cu_ipc_src_get_stats (GstCuIpcSrc * self);
/* The ticker's thread, every stats-interval from start() to stop():
 * "cudaipcsrc-stats". */
void gst_cu_ipc_src_post_stats (gpointer self);

G_END_DECLS
