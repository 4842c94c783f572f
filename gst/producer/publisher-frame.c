/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One frame's way out, in one place: wait for a consumer, take the
 * in-place slot the buffer is or acquire one as on-full says, copy or
 * write, describe, publish (publisher.h has the contract, the state is
 * publisher-private.h's).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include "producer/publisher-private.h"
#include "producer/slot-pool.h"
#include "media/media.h"

/* acquire(): no deadline computed yet (-1 and times are taken) */
#define NO_DEADLINE G_MININT64

/* With wait-for-connection, waits until a consumer is ready. */
static CudaIpcPublishResult
wait_for_consumer (CudaIpcPublisher * pub)
{
  for (;;) {
    if (!g_atomic_int_get (&pub->wait_for_connection) ||
        cudaipc_server_get_n_clients (pub->server) > 0)
      return CUDAIPC_PUBLISH_OK;

    PUB_LOG (pub, "waiting for a consumer");
    switch (cudaipc_server_wait_for_client (pub->server, -1)) {
      case CUDAIPC_SERVER_OK:
        return CUDAIPC_PUBLISH_OK;
      case CUDAIPC_SERVER_FLUSHING:
        if (pub->callbacks.flushing == NULL ||
            !pub->callbacks.flushing (pub->user_data))
          return CUDAIPC_PUBLISH_FLUSHING;
        break;
      default:
        /* woken: the setting may have changed */
        break;
    }
  }
}

/* Waits for a free slot for a frame of @size as on-full says. OK with
 * @slot and @block; DROPPED: every slot stayed held. */
static CudaIpcPublishResult
acquire (CudaIpcPublisher * pub, const CudaIpcPublisherFrame * frame,
    guint64 size, guint * slot, CudaIpcBlock ** block, GError ** error)
{
  /* the in-place pool waited as long as on-full allows already */
  gboolean waited = frame->data == 0 &&
      cudaipc_slot_pool_buffer_waited (frame->buffer);
  CudaIpcServerStatus status;
  gint64 deadline = NO_DEADLINE, until;

  do {
    guint full_timeout = frame->full_timeout_ms;

    /* a stream that is not live waits for its slowest consumer */
    if (full_timeout == 0 && g_atomic_int_get (&pub->live))
      full_timeout = g_atomic_int_get (&pub->full_timeout_ms);
    if (!g_atomic_int_get (&pub->wait_when_full) || waited) {
      until = 0;
    } else {
      if (deadline == NO_DEADLINE)
        deadline = full_timeout == 0 ? -1 : g_get_monotonic_time () +
            G_TIME_SPAN_MILLISECOND * (gint64) full_timeout;
      until = deadline;
    }

    status = cudaipc_server_acquire (pub->server, size, until, slot, block,
        error);
    switch (status) {
      case CUDAIPC_SERVER_OK:
      case CUDAIPC_SERVER_WOKEN:
        /* woken: a setting changed, read it again */
        break;
      case CUDAIPC_SERVER_TIMEOUT:
        PUB_DEBUG (pub, "every slot is held: dropped buffer %"
            GST_PTR_FORMAT, frame->buffer);
        return CUDAIPC_PUBLISH_DROPPED;
      case CUDAIPC_SERVER_FLUSHING:
        if (pub->callbacks.flushing == NULL ||
            !pub->callbacks.flushing (pub->user_data))
          return CUDAIPC_PUBLISH_FLUSHING;
        /* paused meanwhile: the time limit starts again */
        deadline = NO_DEADLINE;
        break;
      case CUDAIPC_SERVER_NO_RING:
      case CUDAIPC_SERVER_ERROR:
        return CUDAIPC_PUBLISH_NO_RING;
    }
  } while (status != CUDAIPC_SERVER_OK);
  return CUDAIPC_PUBLISH_OK;
}

/* @buf's metas, as the filter lets them through, into the FRAME @f
 * (which borrows the blob until the next frame), with what went in and
 * what not in @counts. */
static void
encode_metas (CudaIpcPublisher * pub, GstBuffer * buf, CudaIpcFrameMsg * f,
    CudaIpcMetaCounts * counts)
{
  memset (counts, 0, sizeof (*counts));
  g_byte_array_set_size (pub->meta_blob, 0);
  cudaipc_metas_encode (buf, pub->meta_filter, pub->meta_blob, counts);
  f->meta = pub->meta_blob->data;
  f->meta_len = pub->meta_blob->len;
}

/* The FRAME for @buf but for its metas (encode_metas()) and its size in
 * the slot. */
static void
describe (CudaIpcPublisher * pub, GstBuffer * buf, CudaIpcFrameMsg * f)
{
  cudaipc_media_describe_buffer (buf, pub->have_info ? &pub->info : NULL, f);
  if (pub->callbacks.capture_time)
    f->clock_time = pub->callbacks.capture_time (f->pts, pub->user_data);
  else
    f->clock_time = g_get_monotonic_time () * 1000;
}

/* The metas of a frame that went out, into the counters and @out. */
static void
count_metas (CudaIpcPublisher * pub, const CudaIpcMetaCounts * counts,
    CudaIpcPublished * out)
{
  out->metas = *counts;
  /* most frames carry none: no lock for them */
  if (counts->carried == 0 && counts->skipped == 0 && counts->dropped == 0)
    return;
  g_mutex_lock (&pub->lock);
  pub->metas.carried += counts->carried;
  pub->metas.skipped += counts->skipped;
  pub->metas.dropped += counts->dropped;
  g_mutex_unlock (&pub->lock);
}

/* @buf is a slot upstream wrote into (the in-place pool): publishes it as
 * it is, with @f (described). FALSE, @f untouched but for its size, where
 * the server will not (its ring was replaced since, or the buffer went
 * out already): @buf is then copied as any other. */
static gboolean
publish_in_place (CudaIpcPublisher * pub, GstBuffer * buf,
    CudaIpcSlotTicket * ticket, CudaIpcFrameMsg * f, CudaIpcPublished * out)
{
  f->size = gst_buffer_get_size (buf);
  if (cudaipc_device_get_backend (pub->dev) == CUDAIPC_BACKEND_CUDA) {
    g_autoptr (GError) error = NULL;

    /* complete before its fence word is set on the CPU */
    if (!cudaipc_copier_prepare_in_place (pub->copier, buf, &error)) {
      PUB_WARNING (pub, "slot %u cannot go out as it is (%s): copied",
          cudaipc_slot_ticket_get_slot (ticket), error->message);
      return FALSE;
    }
  }
  if (!cudaipc_server_publish_in_place (pub->server, ticket, f,
          &out->n_clients)) {
    PUB_LOG (pub, "slot %u cannot go out as it is: copied",
        cudaipc_slot_ticket_get_slot (ticket));
    return FALSE;
  }
  g_mutex_lock (&pub->lock);
  pub->frames_in_place++;
  g_mutex_unlock (&pub->lock);
  out->in_place = TRUE;
  PUB_LOG (pub, "published frame %" G_GUINT64_FORMAT " in place in slot %u "
      "to %u client(s)", f->seq, f->slot, out->n_clients);
  return TRUE;
}

/* The frame's bytes into @slot, whose @block acquire() gave: the
 * copier's copy of the buffer, or the bytes at its pointer. */
static gboolean
write_slot (CudaIpcPublisher * pub, const CudaIpcPublisherFrame * frame,
    guint slot, CudaIpcBlock * block, guint64 * written, GError ** error)
{
  if (!pub->buffers) {
    if (!cudaipc_copier_write_now (pub->dev, cudaipc_block_get_ptr (block),
            frame->data, frame->size, frame->on_device, error))
      return FALSE;
    *written = frame->size;
    return TRUE;
  }
  return cudaipc_copier_copy (pub->copier, frame->buffer, pub->server, slot,
      block, written, error);
}

/* Publishes @slot, written by write_slot(): fenced after the copier's
 * copy, or as it is where it is complete already. */
static gboolean
publish_written (CudaIpcPublisher * pub, guint slot, CudaIpcFrameMsg * f,
    guint * n_clients, GError ** error)
{
  if (pub->buffers)
    return cudaipc_copier_publish (pub->copier, pub->server, slot, f,
        n_clients, error);
  *n_clients = cudaipc_server_publish (pub->server, slot, f);
  return TRUE;
}

CudaIpcPublishResult
cudaipc_publisher_publish (CudaIpcPublisher * pub,
    const CudaIpcPublisherFrame * frame, CudaIpcPublished * out,
    GError ** error)
{
  GstBuffer *buf = frame->buffer;
  CudaIpcFrameMsg f = { 0 };
  CudaIpcSlotTicket *ticket = NULL;
  CudaIpcMetaCounts counts;
  CudaIpcPublishResult res;
  CudaIpcBlock *block = NULL;
  gboolean described = FALSE;
  guint64 size, written = 0;

  g_return_val_if_fail (pub != NULL, CUDAIPC_PUBLISH_INVALID);
  g_return_val_if_fail (frame != NULL && GST_IS_BUFFER (buf),
      CUDAIPC_PUBLISH_INVALID);
  g_return_val_if_fail (pub->buffers == (frame->data == 0),
      CUDAIPC_PUBLISH_INVALID);
  g_return_val_if_fail (out != NULL, CUDAIPC_PUBLISH_INVALID);

  memset (out, 0, sizeof (*out));
  size = pub->buffers ? gst_buffer_get_size (buf) : frame->size;
  encode_metas (pub, buf, &f, &counts);
  if (frame->all_metas && counts.dropped > 0) {
    out->metas = counts;
    return CUDAIPC_PUBLISH_INVALID;
  }

  res = wait_for_consumer (pub);
  if (res != CUDAIPC_PUBLISH_OK)
    return res;

  /* the first frame may move the copies into upstream's CUDA context (the
   * copier looks at one frame, the first, ring or no ring) */
  if (pub->buffers && !cudaipc_copier_adopt_context (pub->copier, buf, error))
    return CUDAIPC_PUBLISH_NO_CONTEXT;

  if (pub->buffers)
    ticket = cudaipc_slot_pool_buffer_ticket (buf);
  if (ticket) {
    /* described once: a slot that cannot go out as it is goes out copied
     * with the same FRAME */
    describe (pub, buf, &f);
    described = TRUE;
    if (publish_in_place (pub, buf, ticket, &f, out)) {
      count_metas (pub, &counts, out);
      out->slot = f.slot;
      out->seq = f.seq;
      out->size = f.size;
      return CUDAIPC_PUBLISH_OK;
    }
  }

  res = acquire (pub, frame, size, &out->slot, &block, error);
  if (res != CUDAIPC_PUBLISH_OK)
    return res;

  /* the slot is ours until published: nobody else touches it, and only
   * this thread makes the server replace the ring */
  if (!write_slot (pub, frame, out->slot, block, &written, error)) {
    cudaipc_server_abort (pub->server, out->slot);
    return CUDAIPC_PUBLISH_WRITE_FAILED;
  }

  if (!described)
    describe (pub, buf, &f);
  f.size = written;
  count_metas (pub, &counts, out);

  if (!publish_written (pub, out->slot, &f, &out->n_clients, error))
    return CUDAIPC_PUBLISH_SYNC_FAILED;
  out->seq = f.seq;
  out->size = written;
  PUB_LOG (pub, "published frame %" G_GUINT64_FORMAT " in slot %u to %u "
      "client(s)", f.seq, out->slot, out->n_clients);
  return CUDAIPC_PUBLISH_OK;
}
