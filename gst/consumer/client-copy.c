/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A frame's copy order and the wait for the producer's copy into its slot
 * (client-private.h): the ring's fence page, whose word the consumer
 * reads with no driver call, or the slot's interprocess event, queried in
 * the device's context. Each frame not yet handed out holds its order,
 * so that a new ring or a closed connection never frees it under it.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <time.h>
#include <sys/prctl.h>

#include "consumer/client-private.h"
#include "common/error.h"

#define GST_CAT_DEFAULT cudaipc_client_debug

/* Longest wait for a producer's copy into a slot (microseconds), from its
 * FRAME's arrival: a copy takes microseconds, so this only ends a wait
 * that would never end. */
#define FENCE_TIMEOUT_US (2 * G_USEC_PER_SEC)
/* wait_copy(): how long it reads busily, then the shortest and the
 * longest sleep between reads (microseconds): a copy that lands as its
 * FRAME arrives is seen at once, a slow one within a quarter of the time
 * waited so far, and a copy that never lands costs little to wait for. */
#define COPY_SPIN_US 20
#define COPY_SLEEP_MIN_US 20
#define COPY_SLEEP_MAX_US 1000
/* The timer slack (ns) of a thread while it sleeps between those reads:
 * Linux lets a sleep of a normal thread run 50 us past its end by
 * default, more than the sleep itself, so a copy that lands just after
 * the busy reads would be seen 50-100 us late (docs/benchmarks.md). */
#define COPY_SLEEP_SLACK_NS 1000

/* CLOCK_MONOTONIC in nanoseconds: a copy that lands a few microseconds
 * after its FRAME is measured, not rounded away */
static gint64
now_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (gint64) ts.tv_sec * G_GINT64_CONSTANT (1000000000) + ts.tv_nsec;
}

/* What orders the copies into a ring's slots: its fence page, or one
 * slot's interprocess event with the device whose context a query needs.
 * The client holds the current ones; each frame not yet handed out holds
 * its own, which a new ring or a closed connection must not free under
 * it. */
struct _CudaIpcCopyOrder
{
  gint refcount;
  CudaIpcFencePage *page;
  CudaIpcFence *event;
  CudaIpcDevice *dev;           /* with @event */
};

CudaIpcCopyOrder *
cudaipc_copy_order_new (CudaIpcFencePage * page, CudaIpcFence * event,
    CudaIpcDevice * dev)
{
  CudaIpcCopyOrder *o = g_new0 (CudaIpcCopyOrder, 1);

  o->refcount = 1;
  o->page = page;
  o->event = event;
  o->dev = dev ? cudaipc_device_ref (dev) : NULL;
  return o;
}

CudaIpcCopyOrder *
cudaipc_copy_order_ref (CudaIpcCopyOrder * o)
{
  g_atomic_int_inc (&o->refcount);
  return o;
}

void
cudaipc_copy_order_unref (CudaIpcCopyOrder * o)
{
  if (o == NULL || !g_atomic_int_dec_and_test (&o->refcount))
    return;
  cudaipc_fence_page_free (o->page);
  cudaipc_fence_free (o->event);
  g_clear_pointer (&o->dev, cudaipc_device_unref);
  g_free (o);
}

/* The wait */

/* Reads once whether the copy ordered by @o has landed: 1 yes, 0 not yet,
 * -1 a fence word the producer got wrong (CUDAIPC_ERROR_PROTOCOL) or an
 * event that failed. */
static gint
copy_landed (CudaIpcCopyOrder * o, const CudaIpcFrameMsg * f, guint * calls,
    GError ** error)
{
  gboolean done = FALSE;

  if (o->page != NULL)
    return cudaipc_fence_page_check (o->page, f->slot, f->seq, error);
  (*calls)++;
  if (!cudaipc_fence_query (o->event, &done, error))
    return -1;
  return done ? 1 : 0;
}

CudaIpcClientStatus
cudaipc_client_wait_copy (CudaIpcClient * client, CudaIpcClientItem * item,
    gint64 deadline, GError ** error)
{
  const CudaIpcFrameMsg *f = &item->frame.msg;
  CudaIpcCopyOrder *o = item->frame.ordering;
  g_autoptr (GError) err = NULL;
  gint64 limit = item->frame.received_at + FENCE_TIMEOUT_US;
  gint64 start = g_get_monotonic_time (), now, until;
  gint64 waiting_since = 0;     /* ns: the first read that found it pending */
  /* -1 until the first sleep; then the thread's own timer slack where
   * it was lowered for the sleeps, 0 where it was left as it was */
  int slack = -1;
  CudaIpcClientStatus st = CUDAIPC_CLIENT_OK;
  guint slot = f->slot, calls = 0;
  gboolean pushed = FALSE, fenced;
  gint landed = 0;

  if (o == NULL)
    return CUDAIPC_CLIENT_OK;
  fenced = o->page != NULL;

  /* an event is queried with the device's context current for the wait
   * alone: pushed and popped on this thread, so none of ours is left
   * current on a streaming thread that a pool may hand to other work (or
   * that outlives the device) */
  if (!fenced) {
    calls++;
    pushed = cudaipc_device_push (o->dev, &err);
    if (!pushed)
      landed = -1;
  }
  while (landed == 0) {
    landed = copy_landed (o, f, &calls, &err);
    if (landed != 0)
      break;
    if (waiting_since == 0)
      waiting_since = now_ns ();
    now = g_get_monotonic_time ();
    if (now >= limit) {
      if (fenced)
        g_set_error (&err, CUDAIPC_ERROR, CUDAIPC_ERROR_TIMEOUT,
            "the producer's copy did not complete within %d ms (the fence "
            "of slot %u is at %" G_GUINT64_FORMAT ", frame %" G_GUINT64_FORMAT
            " waits for it)", (int) (FENCE_TIMEOUT_US / 1000), slot,
            cudaipc_fence_page_peek (o->page, slot), f->seq);
      else
        g_set_error (&err, CUDAIPC_ERROR, CUDAIPC_ERROR_TIMEOUT,
            "the producer's copy did not complete within %d ms",
            (int) (FENCE_TIMEOUT_US / 1000));
      landed = -1;
      break;
    }
    if (deadline > 0 && now >= deadline) {
      st = CUDAIPC_CLIENT_TIMEOUT;
      break;
    }
    if (now - start < COPY_SPIN_US)
      continue;
    if (slack < 0) {
      /* lowered for the sleeps of this wait alone */
      slack = prctl (PR_GET_TIMERSLACK, 0, 0, 0, 0);
      if (slack > COPY_SLEEP_SLACK_NS)
        prctl (PR_SET_TIMERSLACK, COPY_SLEEP_SLACK_NS, 0, 0, 0);
      else
        slack = 0;
    }
    until = now + CLAMP ((now - start) / 4, COPY_SLEEP_MIN_US,
        COPY_SLEEP_MAX_US);
    until = MIN (until, limit);
    if (deadline > 0)
      until = MIN (until, deadline);
    if (cudaipc_client_wait_readable (client, -1, until) == -ECANCELED) {
      st = CUDAIPC_CLIENT_CANCELLED;
      break;
    }
  }
  if (slack > COPY_SLEEP_SLACK_NS)
    prctl (PR_SET_TIMERSLACK, (unsigned long) slack, 0, 0, 0);
  if (pushed) {
    calls++;
    cudaipc_device_pop (o->dev);
  }
  if (calls > 0 || waiting_since != 0) {
    gint64 waited = waiting_since != 0 ? now_ns () - waiting_since : 0;

    g_mutex_lock (&client->session->lock);
    client->session->driver_calls += calls;
    if (waiting_since != 0) {
      /* a frame once, however many calls its wait took */
      if (!item->frame.copy_waited)
        client->session->copy_waits++;
      item->frame.copy_waited = TRUE;
      client->session->copy_wait_ns += (guint64) MAX (waited, 0);
    }
    g_mutex_unlock (&client->session->lock);
  }

  if (landed > 0) {
    g_clear_pointer (&item->frame.ordering, cudaipc_copy_order_unref);
    return CUDAIPC_CLIENT_OK;
  }
  if (landed == 0)
    return st;

  /* given back while the connection is still there, then closed */
  cudaipc_client_item_clear (item);
  if (g_error_matches (err, CUDAIPC_ERROR, CUDAIPC_ERROR_TIMEOUT))
    /* the producer died with the copy queued, or its GPU hangs: this frame
     * is lost, the connection too */
    return cudaipc_client_producer_stalled (client, item, slot, err->message);
  if (fenced)
    return cudaipc_client_broken_producer (client, error, "%s", err->message);
  return cudaipc_client_events_unavailable (client, item, err->message);
}
