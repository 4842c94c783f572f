/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A consumer source's events and timestamps, in order (downstream.h has
 * the contract).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "consumer/downstream.h"
#include "media/timing.h"

/* passthrough: a new measure of the offset between the two pipelines'
 * running times replaces the connection's only when it is this far from
 * it: the producer's base time changed (a flushing seek, a pause), no
 * reading of the clocks (a microsecond or so) */
#define OFFSET_TOLERANCE GST_MSECOND

struct _CudaIpcDownstream
{
  GstBaseSrc *src;
  /* passthrough: the producer's last segment, and whether the running
   * time offset that lines it up with this pipeline is still to apply */
  GstSegment producer_segment;
  gboolean have_producer_segment;
  gboolean segment_needs_offset;
  /* passthrough: that offset, measured with the connection's first frame
   * and kept for all its segments, so that the running times of its
   * frames are the producer's to the nanosecond */
  gint64 offset;
  gboolean have_offset;
  /* clock mode: the last PTS stamped since reset(), across connections;
   * each frame goes out after it */
  GstClockTime last_pts;
  gboolean pushed_any;          /* a buffer went out since reset() */
  gboolean segment_pending;     /* new_segment() since the last buffer */
  GQueue pending_events;        /* waiting for the next buffer */
  CudaIpcClockReading clocks;   /* the clock against CLOCK_MONOTONIC */
};

CudaIpcDownstream *
cudaipc_downstream_new (GstBaseSrc * src)
{
  CudaIpcDownstream *d = g_new0 (CudaIpcDownstream, 1);

  d->src = src;
  d->last_pts = GST_CLOCK_TIME_NONE;
  g_queue_init (&d->pending_events);
  return d;
}

void
cudaipc_downstream_reset (CudaIpcDownstream * d)
{
  g_queue_clear_full (&d->pending_events, (GDestroyNotify) gst_event_unref);
  d->pushed_any = FALSE;
  d->segment_pending = FALSE;
  d->have_producer_segment = FALSE;
  d->segment_needs_offset = FALSE;
  d->have_offset = FALSE;
  d->last_pts = GST_CLOCK_TIME_NONE;
  cudaipc_clock_reading_clear (&d->clocks);
}

void
cudaipc_downstream_free (CudaIpcDownstream * d)
{
  if (d == NULL)
    return;
  cudaipc_downstream_reset (d);
  g_free (d);
}

void
cudaipc_downstream_connected (CudaIpcDownstream * d)
{
  d->segment_needs_offset = d->have_producer_segment;
  /* another producer, another base time */
  d->have_offset = FALSE;
}

/* TAG and custom events go out in order, before the next buffer and after
 * caps and segment: basesrc inserts them in its own queue before the
 * buffer we return, and once a buffer went out they can go at once. */
static void
queue_event (CudaIpcDownstream * d, GstEvent * event)
{
  if (!d->pushed_any || d->segment_pending ||
      !g_queue_is_empty (&d->pending_events))
    g_queue_push_tail (&d->pending_events, event);
  else
    gst_pad_push_event (GST_BASE_SRC_PAD (d->src), event);
}

void
cudaipc_downstream_buffer_out (CudaIpcDownstream * d)
{
  GstElementClass *parent;
  gboolean queueable = TRUE;
  GstEvent *event;

  /* most frames come with no event held */
  if (g_queue_is_empty (&d->pending_events)) {
    d->pushed_any = TRUE;
    d->segment_pending = FALSE;
    return;
  }
  /* the source's parent class: basesrc's send_event */
  parent = g_type_class_peek_parent (G_OBJECT_GET_CLASS (d->src));

  /* basesrc queues these types only (its send_event); with any other, all
   * go out now, in order, ahead of a new segment */
  for (GList * l = d->pending_events.head; l != NULL; l = l->next) {
    GstEventType type = GST_EVENT_TYPE (l->data);

    if (type != GST_EVENT_TAG && type != GST_EVENT_CUSTOM_DOWNSTREAM &&
        type != GST_EVENT_CUSTOM_BOTH)
      queueable = FALSE;
  }
  /* pushed here, they would overtake the segment basesrc pushes before
   * the next buffer: that segment goes first (basesrc sends it again,
   * unchanged, which downstream takes as the same segment) */
  if (!queueable && (!d->pushed_any || d->segment_pending)) {
    GstSegment seg;

    GST_OBJECT_LOCK (d->src);
    seg = d->src->segment;
    GST_OBJECT_UNLOCK (d->src);
    gst_pad_push_event (GST_BASE_SRC_PAD (d->src),
        gst_event_new_segment (&seg));
  }
  while ((event = g_queue_pop_head (&d->pending_events)) != NULL) {
    if (queueable)
      parent->send_event (GST_ELEMENT (d->src), event);
    else
      gst_pad_push_event (GST_BASE_SRC_PAD (d->src), event);
  }
  d->pushed_any = TRUE;
  d->segment_pending = FALSE;
}

GstFlowReturn
cudaipc_downstream_event (CudaIpcDownstream * d, GstEvent * event,
    gboolean passthrough)
{
  switch (GST_EVENT_TYPE (event)) {
    case GST_EVENT_EOS:
      gst_event_unref (event);
      /* EOS ends the stream: what is queued goes before it */
      while ((event = g_queue_pop_head (&d->pending_events)) != NULL)
        gst_pad_push_event (GST_BASE_SRC_PAD (d->src), event);
      return GST_FLOW_EOS;
    case GST_EVENT_SEGMENT:{
      GstSegment seg;

      /* in clock mode the source keeps its own live segment; in
       * passthrough the producer's goes out, its running time moved onto
       * this pipeline's with the next frame (stamp()) */
      if (passthrough) {
        gst_event_copy_segment (event, &seg);
        d->producer_segment = seg;
        d->have_producer_segment = TRUE;
        d->segment_needs_offset = TRUE;
        if (gst_base_src_new_segment (d->src, &seg))
          d->segment_pending = TRUE;
      }
      gst_event_unref (event);
      break;
    }
    default:
      queue_event (d, event);
      break;
  }
  return GST_FLOW_OK;
}

/* passthrough: with the first frame of a connection (or after a new
 * segment), the producer's segment goes out moved onto this pipeline's
 * running time (timing.h), by the connection's offset */
static void
offset_producer_segment (CudaIpcDownstream * d, const CudaIpcFrameMsg * f)
{
  GstSegment seg;
  gint64 offset;

  if (!d->segment_needs_offset)
    return;
  if (!d->have_producer_segment)
    gst_segment_init (&d->producer_segment, GST_FORMAT_TIME);
  seg = d->producer_segment;
  if (!cudaipc_timing_segment_offset (GST_ELEMENT (d->src), &d->clocks, &seg,
          f->clock_time, f->pts, &offset))
    return;
  /* measured anew for each segment, the offset would differ by the
   * jitter of the clock readings, and so would the producer's running
   * times between frames here */
  if (d->have_offset && ABS (offset - d->offset) <= OFFSET_TOLERANCE) {
    offset = d->offset;
  } else if (d->have_offset) {
    GST_INFO_OBJECT (d->src, "the producer's running time moved by %"
        G_GINT64_FORMAT " ns against this pipeline's", offset - d->offset);
  }
  if (!gst_segment_offset_running_time (&seg, GST_FORMAT_TIME, offset))
    return;
  d->offset = offset;
  d->have_offset = TRUE;
  d->segment_needs_offset = FALSE;
  if (gst_base_src_new_segment (d->src, &seg))
    d->segment_pending = TRUE;
}

/* clock mode: the least time between two PTS, a frame that would be
 * closer to the last one going that far after it: a millisecond, the
 * finest time Matroska keeps by default (a nanosecond apart, two frames
 * of a recording would be at one time there still), or half a frame where
 * that is less, so that the frames that follow, a frame apart, soon catch
 * up with their own time */
#define CLOCK_STEP GST_MSECOND

/* clock mode: each frame after the last one, whatever its own time (a
 * frame from before this pipeline started, or one a producer stamped at
 * or behind an earlier frame, of this connection or of the one before):
 * a recording has no two frames at one time, and none goes back. A
 * frame placed later keeps its end time: its duration shrinks by as much,
 * to the step at least. */
static void
stamp_clock (CudaIpcDownstream * d, const CudaIpcFrameMsg * f, GstBuffer * buf)
{
  GstClockTime earliest = GST_CLOCK_TIME_NONE, later, step = CLOCK_STEP;
  GstClockTime duration = GST_BUFFER_DURATION (buf);

  if (GST_CLOCK_TIME_IS_VALID (duration))
    step = CLAMP (duration / 2, 1, CLOCK_STEP);
  if (GST_CLOCK_TIME_IS_VALID (d->last_pts))
    earliest = d->last_pts + step;
  later = cudaipc_timing_from_monotonic (GST_ELEMENT (d->src), &d->clocks,
      f->clock_time, earliest, f->pts, f->dts, &GST_BUFFER_PTS (buf),
      &GST_BUFFER_DTS (buf));
  /* without a clock (not PLAYING yet) do-timestamp may stamp the frame */
  if (!GST_BUFFER_PTS_IS_VALID (buf))
    return;
  d->last_pts = GST_BUFFER_PTS (buf);
  if (later > 0 && GST_CLOCK_TIME_IS_VALID (duration))
    GST_BUFFER_DURATION (buf) = duration > later + step ?
        duration - later : step;
}

void
cudaipc_downstream_stamp (CudaIpcDownstream * d, const CudaIpcFrameMsg * f,
    GstBuffer * buf, gboolean passthrough)
{
  if (passthrough) {
    GST_BUFFER_PTS (buf) = cudaipc_timing_sane (f->pts);
    GST_BUFFER_DTS (buf) = cudaipc_timing_sane (f->dts);
    offset_producer_segment (d, f);
    return;
  }
  stamp_clock (d, f, buf);
}
