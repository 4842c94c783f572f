/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What cuipcsrc tells the application (cudaipcsrc-report.h): its element
 * messages, the errors and warnings of a connection, the QoS and warnings
 * of the frames a live stream drops, and its stats.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "cudaipcsrc-report.h"
#include "common/error.h"
#include "common/hints.h"

GST_DEBUG_CATEGORY_EXTERN (gst_cu_ipc_src_debug);
#define GST_CAT_DEFAULT gst_cu_ipc_src_debug

/* Connection */

static void
post_element_message (GstCuIpcSrc * self, GstStructure * s)
{
  gst_element_post_message (GST_ELEMENT (self),
      gst_message_new_element (GST_OBJECT (self), s));
}

/* With a connection's first frame (its ring and caps known):
 * "cudaipcsrc-connected", or "cudaipcsrc-reconnected" after a lost
 * producer. */
void
gst_cu_ipc_src_announce_connection (GstCuIpcSrc * self, GstCaps * caps)
{
  GstStructure *s = cudaipc_reader_describe_connection (self->reader, caps);

  self->announce = FALSE;
  if (s == NULL)
    return;
  gst_element_post_message (GST_ELEMENT (self),
      gst_message_new_latency (GST_OBJECT (self)));
  post_element_message (self, s);
}

/* The producer left without EOS; the reader says why, and whether it
 * connects again. */
GstFlowReturn
gst_cu_ipc_src_producer_lost (GstCuIpcSrc * self,
    const CudaIpcReaderItem * item, const GError * err)
{
  gst_clear_caps (&self->out_caps);
  post_element_message (self, gst_structure_new ("cudaipcsrc-producer-lost",
          "socket-path", G_TYPE_STRING, cudaipc_reader_get_path (self->reader),
          "reason", G_TYPE_STRING, item->why,
          "bye-reason", G_TYPE_STRING, item->bye_reason,
          "reconnecting", G_TYPE_BOOLEAN, item->reconnecting, NULL));
  if (!item->reconnecting && item->debug != NULL)
    GST_ELEMENT_ERROR (self, RESOURCE, READ, ("%s", err->message),
        ("%s", item->debug));
  else if (!item->reconnecting)
    GST_ELEMENT_ERROR (self, RESOURCE, READ, ("%s", err->message), (NULL));
  if (!item->reconnecting)
    return GST_FLOW_ERROR;
  GST_ELEMENT_WARNING (self, RESOURCE, READ, ("%s", item->text), (NULL));
  return GST_FLOW_OK;
}

GstFlowReturn
gst_cu_ipc_src_reader_failed (GstCuIpcSrc * self, CudaIpcReaderStatus status,
    const CudaIpcReaderItem * item, const GError * err)
{
  if (status == CUDAIPC_READER_CONNECT_FAILED)
    GST_ELEMENT_ERROR (self, RESOURCE, OPEN_READ, ("%s", err->message),
        ("%s", item->debug));
  else if (g_error_matches (err, CUDAIPC_ERROR, CUDAIPC_ERROR_PROTOCOL))
    GST_ELEMENT_ERROR (self, STREAM, FAILED, ("%s", err->message), (NULL));
  else
    GST_ELEMENT_ERROR (self, RESOURCE, FAILED, ("%s", err->message), (NULL));
  return GST_FLOW_ERROR;
}

/* Caps */

/* Whether downstream takes @caps; nothing linked yet takes anything (the
 * push says not-linked). */
gboolean
gst_cu_ipc_src_downstream_accepts (GstCuIpcSrc * self, GstCaps * caps)
{
  GstPad *peer = gst_pad_get_peer (GST_BASE_SRC_PAD (self));
  gboolean ok = TRUE;

  if (peer != NULL) {
    ok = gst_pad_query_accept_caps (peer, caps);
    gst_object_unref (peer);
  }
  return ok;
}

/* The producer's caps, what downstream takes and what to put between
 * them, in the library's words (common/hints.h). */
void
gst_cu_ipc_src_not_negotiated (GstCuIpcSrc * self, GstCaps * caps)
{
  GstCaps *accepted = gst_pad_peer_query_caps (GST_BASE_SRC_PAD (self),
      NULL);
  g_autofree gchar *text = cudaipc_hint_not_negotiated (caps, accepted);
  g_autofree gchar *full = gst_caps_to_string (caps);

  GST_ELEMENT_ERROR (self, CORE, NEGOTIATION, ("%s", text),
      ("the producer's caps on %s: %s; downstream's: %" GST_PTR_FORMAT,
          cudaipc_reader_get_path (self->reader), full, accepted));
  gst_clear_caps (&accepted);
}

/* Frames */

void
gst_cu_ipc_src_warn_refusals (GstCuIpcSrc * self, const GError * metas_err)
{
  g_autofree gchar *refusal =
      cudaipc_reader_take_event_refusal (self->reader);

  /* the words are the reader's, which the library warns with too */
  if (metas_err != NULL) {
    g_autofree gchar *what = cudaipc_reader_refusal_text (self->reader,
        FALSE);

    GST_ELEMENT_WARNING (self, STREAM, DECODE, ("%s", what),
        ("%s (counted in stats metas-refused; warned once a connection)",
            metas_err->message));
  }
  if (refusal != NULL) {
    g_autofree gchar *what = cudaipc_reader_refusal_text (self->reader,
        TRUE);

    GST_ELEMENT_WARNING (self, STREAM, DECODE, ("%s", what),
        ("%s (counted in stats events-refused; warned once a connection)",
            refusal));
  }
}

/* @n frames of a live stream dropped before @buf (the oldest
 * waiting beyond max-held, leaky-type): a QoS message for each batch, as
 * a sink posts one for the buffers it drops, and a warning at most every
 * DROPS_WARN_INTERVAL. */
#define DROPS_WARN_INTERVAL (10 * G_TIME_SPAN_SECOND)

void
gst_cu_ipc_src_report_drops (GstCuIpcSrc * self, GstBuffer * buf, guint64 n)
{
  GstSegment *segment = &GST_BASE_SRC (self)->segment;
  GstClockTime pts = GST_BUFFER_PTS (buf);
  CudaIpcClientStats stats;
  guint64 total, pushed;
  GstMessage *msg;
  gint64 now;

  cudaipc_client_get_stats (cudaipc_reader_get_client (self->reader), &stats);
  total = stats.dropped;
  GST_OBJECT_LOCK (self);
  pushed = self->pushed;
  GST_OBJECT_UNLOCK (self);
  msg = gst_message_new_qos (GST_OBJECT (self), TRUE,
      gst_segment_to_running_time (segment, GST_FORMAT_TIME, pts),
      gst_segment_to_stream_time (segment, GST_FORMAT_TIME, pts), pts,
      GST_BUFFER_DURATION (buf));
  gst_message_set_qos_values (msg, 0, 1.0, 1000000);
  gst_message_set_qos_stats (msg, GST_FORMAT_BUFFERS, pushed, total);
  gst_element_post_message (GST_ELEMENT (self), msg);

  /* a live stream goes on while this pipeline pauses: what it dropped
   * meanwhile is said in the QoS message alone */
  if (g_atomic_int_exchange (&self->paused, 0))
    return;
  self->drops_unwarned += n;
  now = g_get_monotonic_time ();
  if (self->drops_warned_at != 0 &&
      now - self->drops_warned_at < DROPS_WARN_INTERVAL)
    return;
  GST_ELEMENT_WARNING (self, STREAM, FAILED,
      ("Dropped %" G_GUINT64_FORMAT " frame(s) of the live stream on %s: "
          "downstream is slower than the producer", self->drops_unwarned,
          cudaipc_reader_get_path (self->reader)),
      ("%" G_GUINT64_FORMAT " dropped since start (stats frames-dropped). "
          "Of a live stream this consumer keeps the newest frames and drops "
          "the oldest waiting beyond max-held. Make downstream faster, raise "
          "max-held for bursts, or set leaky-type=none to hold the producer "
          "back instead (warned at most every %d s)", total,
          (gint) (DROPS_WARN_INTERVAL / G_TIME_SPAN_SECOND)));
  self->drops_warned_at = now;
  self->drops_unwarned = 0;
}

void
gst_cu_ipc_src_warn_no_copy (GstCuIpcSrc * self, const GError * copy_err)
{
  if (self->warned_copy)
    return;
  self->warned_copy = TRUE;
  GST_ELEMENT_WARNING (self, RESOURCE, FAILED,
      ("Downstream keeps frames in the producer's slots, and a copy could "
          "not be made: %s", copy_err ? copy_err->message :
          "not in this memory"), ("frames go out in the slots; the "
          "producer may wait for them (warned once)"));
}

gboolean
gst_cu_ipc_src_output_failed (GstCuIpcSrc * self, const GError * out_err,
    gboolean went_out)
{
  const gchar *why = out_err ? out_err->message : "no reason given";

  if (!went_out) {
    GST_ELEMENT_ERROR (self, RESOURCE, FAILED,
        ("Could not hand a frame downstream as GstCudaMemory: %s", why),
        ("set output-memory=imported to push the imported slot instead"));
    return FALSE;
  }
  GST_ELEMENT_WARNING (self, RESOURCE, FAILED,
      ("Could not hand frames downstream as GstCudaMemory: %s; pushing the "
          "imported slots from now on", why), (NULL));
  return TRUE;
}

/* Stats */

GstStructure *
gst_cu_ipc_src_get_stats (GstCuIpcSrc * self)
{
  guint64 pushed;

  GST_OBJECT_LOCK (self);
  pushed = self->pushed;
  GST_OBJECT_UNLOCK (self);
  return cudaipc_reader_get_stats (self->reader, pushed,
      cudaipc_output_get_name (self->output));
}

void
gst_cu_ipc_src_post_stats (gpointer user_data)
{
  GstCuIpcSrc *self = user_data;
  GstStructure *st = gst_cu_ipc_src_get_stats (self);

  gst_structure_set_name (st, "cudaipcsrc-stats");
  gst_element_post_message (GST_ELEMENT (self),
      gst_message_new_element (GST_OBJECT (self), st));
}
