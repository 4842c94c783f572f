/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * elements suite: cuipcsink's in-place pool (docs/design.md, Writing in
 * place), with the host backend, driven through gst-check's GstHarness as
 * upstream: frames written into slots go out without a copy, from the
 * first buffer after caps (the ring is made at caps, and again at caps of
 * larger frames), also from videotestsrc; writing in place goes on after
 * plain frames queued before a ring that fits them; a buffer
 * upstream drops unpushed gives its slot back; a frame the producer's own
 * pipeline still holds is never written again meanwhile; a buffer that
 * comes back whole is lent again with its slot; a buffer that
 * outlives the ring's replacement, or the sink itself, stays valid and is
 * copied; a wait for a slot follows on-full and ends when the sink stops;
 * a pool no longer the one proposed gets upstream one RECONFIGURE; and
 * in-place=false proposes no pool.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <gst/video/video.h>

#include "producer/slot-pool.h"
#include "ring/block.h"
#include "test-launch.h"
#include "test-main.h"
#include "test-pattern.h"
#include "test-pool.h"
#include "test-util.h"

#define CAPS "video/x-raw,format=NV12,width=64,height=48,framerate=30/1"
#define BIG_CAPS "video/x-raw,format=NV12,width=640,height=480,framerate=30/1"
#define RING 4

static gchar *sock;

static void
setup (void)
{
  sock = cudaipc_test_socket_path ("in-place", "p.sock");
}

static void
teardown (void)
{
  cudaipc_test_socket_remove (&sock);
}

static gsize
frame_size (const gchar * caps_str)
{
  GstCaps *caps = gst_caps_from_string (caps_str);
  GstVideoInfo info;

  fail_unless (gst_video_info_from_caps (&info, caps));
  gst_caps_unref (caps);
  return GST_VIDEO_INFO_SIZE (&info);
}

/* A playing cuipcsink, host backend, no consumer; @props: more settings. */
static GstHarness *
sink_new (const gchar * props, GstElement ** sink)
{
  gchar *line = g_strdup_printf ("cuipcsink name=sink socket-path=%s "
      "backend=host ring-size=%d wait-for-connection=false sync=false %s",
      sock, RING, props ? props : "");
  GstHarness *h = gst_harness_new_parse (line);

  g_free (line);
  fail_unless (h != NULL);
  *sink = gst_bin_get_by_name (GST_BIN (h->element), "sink");
  fail_unless (*sink != NULL);
  gst_harness_set_src_caps_str (h, CAPS);
  return h;
}

/* The pool the sink proposes for @caps_str, active. */
static GstBufferPool *
proposed_pool (GstHarness * h, const gchar * caps_str)
{
  GstCaps *caps = gst_caps_from_string (caps_str);
  GstBufferPool *pool = cudaipc_test_downstream_pool (h->srcpad, caps,
      frame_size (caps_str));

  fail_unless (pool != NULL, "no in-place pool proposed for %s", caps_str);
  gst_caps_unref (caps);
  return pool;
}

/* Lets go of the pool (NULL: none), the sink and the harness. */
static void
finish (GstHarness * h, GstElement * sink, GstBufferPool * pool)
{
  if (pool) {
    gst_buffer_pool_set_active (pool, FALSE);
    gst_object_unref (pool);
  }
  gst_object_unref (sink);
  gst_harness_teardown (h);
}

static GstBuffer *
acquire (GstBufferPool * pool)
{
  GstBuffer *buf = NULL;

  fail_unless_equals_int (gst_buffer_pool_acquire_buffer (pool, &buf, NULL),
      GST_FLOW_OK);
  fail_unless (buf != NULL);
  return buf;
}

/* Frame @i's pattern into @buf, with @i as its offset. */
static GstBuffer *
fill (GstBuffer * buf, guint i)
{
  GstMapInfo map;

  fail_unless (gst_buffer_map (buf, &map, GST_MAP_WRITE));
  cudaipc_test_fill_pattern (map.data, map.size, i, 0);
  gst_buffer_unmap (buf, &map);
  GST_BUFFER_PTS (buf) = i * GST_MSECOND;
  GST_BUFFER_OFFSET (buf) = i;
  return buf;
}

static void
check (GstBuffer * buf, guint i)
{
  GstMapInfo map;
  gssize bad;

  fail_unless (gst_buffer_map (buf, &map, GST_MAP_READ));
  bad = cudaipc_test_check_pattern (map.data, map.size, i, 0);
  gst_buffer_unmap (buf, &map);
  fail_unless (bad < 0, "frame %u changed at byte %" G_GSSIZE_FORMAT, i, bad);
}

static guint64
counter (GstElement * sink, const gchar * name)
{
  return cudaipc_test_stats_uint64 (sink, name);
}

/* The generation of the sink's ring (0: none yet). */
static guint
generation (GstElement * sink)
{
  GstStructure *st = NULL;
  guint g = G_MAXUINT;

  g_object_get (sink, "stats", &st, NULL);
  fail_unless (st != NULL);
  fail_unless (gst_structure_get_uint (st, "generation", &g));
  gst_structure_free (st);
  return g;
}

/* Bytes of a frame of CAPS laid out with padding: more than a slot of the
 * ring made for CAPS (a whole number of pages) holds. */
static gsize
padded_size (void)
{
  guint64 page = cudaipc_test_page ();

  return (frame_size (CAPS) + page - 1) / page * page + page;
}

GST_START_TEST (test_frames_go_out_in_place)
{
  GstElement *sink;
  GstHarness *h = sink_new (NULL, &sink);
  GstBufferPool *pool = proposed_pool (h, CAPS);

  /* the ring was made at caps: the first frame too is a slot */
  for (guint i = 0; i < 20; i++) {
    GstBuffer *buf = acquire (pool);

    fail_unless (cudaipc_slot_pool_buffer_ticket (buf) != NULL,
        "frame %u is not in a slot", i);
    fail_unless_equals_int (gst_harness_push (h, fill (buf, i)), GST_FLOW_OK);
  }
  fail_unless_equals_uint64 (counter (sink, "frames-published"), 20);
  fail_unless_equals_uint64 (counter (sink, "frames-in-place"), 20);
  fail_unless_equals_uint64 (counter (sink, "copies-from-host"), 0);
  fail_unless_equals_uint64 (counter (sink, "frames-dropped"), 0);

  finish (h, sink, pool);
}

GST_END_TEST;

/* The ring is made when caps arrive: before any frame there is one, and
 * the first buffers upstream takes from the pool are slots, also when it
 * takes three at once before it pushes any. */
GST_START_TEST (test_first_buffer_after_caps_in_place)
{
  GstElement *sink;
  GstHarness *h = sink_new (NULL, &sink);
  GstBufferPool *pool;
  GstBuffer *bufs[3];
  guint n = 0;

  fail_unless_equals_int (generation (sink), 1);
  fail_unless_equals_uint64 (counter (sink, "frames-published"), 0);
  pool = proposed_pool (h, CAPS);
  for (guint round = 0; round < 4; round++) {
    for (guint i = 0; i < G_N_ELEMENTS (bufs); i++) {
      CudaIpcSlotTicket *ticket;

      bufs[i] = acquire (pool);
      ticket = cudaipc_slot_pool_buffer_ticket (bufs[i]);
      fail_unless (ticket != NULL, "buffer %u is not a slot", n + i);
      fail_unless_equals_int (cudaipc_ring_get_generation
          (cudaipc_slot_ticket_get_ring (ticket)), 1);
    }
    for (guint i = 0; i < G_N_ELEMENTS (bufs); i++, n++)
      fail_unless_equals_int (gst_harness_push (h, fill (bufs[i], n)),
          GST_FLOW_OK);
  }
  fail_unless_equals_uint64 (counter (sink, "frames-published"), n);
  fail_unless_equals_uint64 (counter (sink, "frames-in-place"), n);
  fail_unless_equals_uint64 (counter (sink, "copies-from-host"), 0);
  fail_unless_equals_uint64 (counter (sink, "frames-dropped"), 0);
  fail_unless_equals_int (generation (sink), 1);

  finish (h, sink, pool);
}

GST_END_TEST;

/* Caps of larger frames make a new ring at once: the next buffer upstream
 * takes, from the pool for the new caps, is a slot of it. */
GST_START_TEST (test_caps_change_next_buffer_in_new_ring)
{
  GstElement *sink;
  GstHarness *h = sink_new (NULL, &sink);
  GstBufferPool *pool = proposed_pool (h, CAPS);
  CudaIpcSlotTicket *ticket;
  GstBuffer *buf;

  for (guint i = 0; i < 3; i++)
    fail_unless_equals_int (gst_harness_push (h, fill (acquire (pool), i)),
        GST_FLOW_OK);
  fail_unless_equals_uint64 (counter (sink, "frames-in-place"), 3);
  gst_buffer_pool_set_active (pool, FALSE);
  gst_object_unref (pool);

  gst_harness_set_src_caps_str (h, BIG_CAPS);
  fail_unless_equals_int (generation (sink), 2);
  pool = proposed_pool (h, BIG_CAPS);
  for (guint i = 3; i < 6; i++) {
    buf = acquire (pool);
    ticket = cudaipc_slot_pool_buffer_ticket (buf);
    fail_unless (ticket != NULL, "frame %u after the caps is not a slot", i);
    fail_unless_equals_int (cudaipc_ring_get_generation
        (cudaipc_slot_ticket_get_ring (ticket)), 2);
    fail_unless (cudaipc_block_get_size (cudaipc_slot_ticket_get_block
            (ticket)) >= frame_size (BIG_CAPS));
    fail_unless_equals_int (gst_harness_push (h, fill (buf, i)), GST_FLOW_OK);
  }
  fail_unless_equals_uint64 (counter (sink, "frames-published"), 6);
  fail_unless_equals_uint64 (counter (sink, "frames-in-place"), 6);
  fail_unless_equals_uint64 (counter (sink, "copies-from-host"), 0);
  fail_unless_equals_int (generation (sink), 2);

  finish (h, sink, pool);
}

GST_END_TEST;

/* videotestsrc takes its buffers from the pool the sink proposes: its
 * first frame, too, goes out in place. */
GST_START_TEST (test_videotestsrc_first_frame_in_place)
{
  GstElement *pipe = cudaipc_test_launch ("videotestsrc num-buffers=2 ! "
      CAPS " ! cuipcsink name=sink socket-path=%s backend=host "
      "wait-for-connection=false sync=false", sock);
  GstElement *sink = gst_bin_get_by_name (GST_BIN (pipe), "sink");
  GstBus *bus = gst_element_get_bus (pipe);
  GstMessage *msg;

  fail_unless (sink != NULL);
  fail_if (gst_element_set_state (pipe, GST_STATE_PLAYING) ==
      GST_STATE_CHANGE_FAILURE);
  msg = gst_bus_timed_pop_filtered (bus, 20 * GST_SECOND,
      GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  fail_unless (msg != NULL, "no EOS");
  fail_unless_equals_int (GST_MESSAGE_TYPE (msg), GST_MESSAGE_EOS);
  gst_message_unref (msg);
  fail_unless_equals_uint64 (counter (sink, "frames-published"), 2);
  fail_unless_equals_uint64 (counter (sink, "frames-in-place"), 2);
  fail_unless_equals_uint64 (counter (sink, "copies-from-host"), 0);

  gst_object_unref (bus);
  gst_object_unref (sink);
  cudaipc_test_stop (pipe);
}

GST_END_TEST;

/* Upstream with a queue (appsrc has one) takes frame i + 1 before frame i
 * reaches render(), and asks for buffers larger than the caps' frames (a
 * padded layout), which the ring made at caps does not fit: the frames
 * before render() makes a ring that fits them are plain memory, and
 * writing in place resumes once a slot beyond their copies is free. */
GST_START_TEST (test_queued_plain_frame_resumes_in_place)
{
  GstElement *sink;
  GstHarness *h = sink_new (NULL, &sink);
  GstCaps *caps = gst_caps_from_string (CAPS);
  GstBufferPool *pool = cudaipc_test_downstream_pool (h->srcpad, caps,
      padded_size ());
  GstBuffer *queued;

  gst_caps_unref (caps);
  fail_unless (pool != NULL);
  fail_unless_equals_int (generation (sink), 1);
  queued = fill (acquire (pool), 0);
  fail_unless (cudaipc_slot_pool_buffer_ticket (queued) == NULL,
      "a slot of the ring made at caps was lent for a padded frame");

  for (guint i = 1; i < 20; i++) {
    GstBuffer *next = fill (acquire (pool), i);

    if (i >= 2)
      fail_unless (cudaipc_slot_pool_buffer_ticket (next) != NULL,
          "frame %u is not in a slot", i);
    fail_unless_equals_int (gst_harness_push (h, queued), GST_FLOW_OK);
    queued = next;
  }
  fail_unless_equals_int (gst_harness_push (h, queued), GST_FLOW_OK);
  fail_unless_equals_uint64 (counter (sink, "frames-published"), 20);
  fail_unless_equals_uint64 (counter (sink, "frames-in-place"), 18);
  fail_unless_equals_uint64 (counter (sink, "copies-from-host"), 2);
  /* render() replaced the ring for the first padded frame */
  fail_unless_equals_int (generation (sink), 2);
  fail_unless_equals_uint64 (counter (sink, "frames-dropped"), 0);

  finish (h, sink, pool);
}

GST_END_TEST;

GST_START_TEST (test_unpushed_buffer_gives_slot_back)
{
  GstElement *sink;
  GstHarness *h = sink_new ("on-full=drop", &sink);
  GstBufferPool *pool = proposed_pool (h, CAPS);
  GstBuffer *lent[RING], *buf;

  fail_unless_equals_int (gst_harness_push (h, fill (acquire (pool), 0)),
      GST_FLOW_OK);
  for (guint i = 0; i < RING; i++) {
    lent[i] = acquire (pool);
    fail_unless (cudaipc_slot_pool_buffer_ticket (lent[i]) != NULL);
  }
  /* every slot is lent: with on-full=drop, plain memory at once */
  buf = acquire (pool);
  fail_unless (cudaipc_slot_pool_buffer_ticket (buf) == NULL);
  gst_buffer_unref (buf);

  /* dropped unpushed, they are free again */
  for (guint i = 0; i < RING; i++)
    gst_buffer_unref (lent[i]);
  for (guint i = 0; i < RING; i++) {
    lent[i] = acquire (pool);
    fail_unless (cudaipc_slot_pool_buffer_ticket (lent[i]) != NULL,
        "slot %u did not come back", i);
  }
  for (guint i = 0; i < RING; i++)
    fail_unless_equals_int (gst_harness_push (h, fill (lent[i], i + 1)),
        GST_FLOW_OK);
  /* frame 0 too: the ring was made at caps */
  fail_unless_equals_uint64 (counter (sink, "frames-in-place"), RING + 1);
  fail_unless_equals_uint64 (counter (sink, "copies-from-host"), 0);
  fail_unless_equals_uint64 (counter (sink, "frames-dropped"), 0);

  finish (h, sink, pool);
}

GST_END_TEST;

GST_START_TEST (test_held_frame_never_rewritten)
{
  GstElement *sink;
  GstHarness *h = sink_new ("on-full=drop", &sink);
  GstBufferPool *pool = proposed_pool (h, CAPS);
  GstBuffer *kept;

  fail_unless_equals_int (gst_harness_push (h, fill (acquire (pool), 0)),
      GST_FLOW_OK);
  /* a branch of the producer's pipeline (a tee) keeps frame 1 */
  kept = fill (acquire (pool), 1);
  gst_buffer_add_video_region_of_interest_meta (kept, "face", 1, 2, 3, 4);
  fail_unless (cudaipc_slot_pool_buffer_ticket (kept) != NULL);
  fail_unless_equals_int (gst_harness_push (h, gst_buffer_ref (kept)),
      GST_FLOW_OK);
  for (guint i = 2; i < 4 * RING; i++) {
    GstBuffer *buf = acquire (pool);

    /* never the slot of frame 1 */
    fail_unless (cudaipc_slot_pool_buffer_ticket (buf) != NULL);
    fail_if (cudaipc_slot_ticket_get_slot (cudaipc_slot_pool_buffer_ticket
            (buf)) == cudaipc_slot_ticket_get_slot
        (cudaipc_slot_pool_buffer_ticket (kept)));
    fail_unless_equals_int (gst_harness_push (h, fill (buf, i)), GST_FLOW_OK);
  }
  check (kept, 1);
  /* frames 0 to 4 * RING - 1, frame 0 too: the ring was made at caps */
  fail_unless_equals_uint64 (counter (sink, "frames-in-place"), 4 * RING);
  fail_unless_equals_uint64 (counter (sink, "frames-dropped"), 0);
  /* pushed again, it was published already: copied */
  fail_unless_equals_int (gst_harness_push (h, kept), GST_FLOW_OK);
  /* its region went out twice, counted once each time */
  fail_unless_equals_uint64 (counter (sink, "metas-sent"), 2);
  fail_unless_equals_uint64 (counter (sink, "copies-from-host"), 1);

  finish (h, sink, pool);
}

GST_END_TEST;

/* A buffer that comes back whole is lent again with its slot, its memory
 * not wrapped anew; one whose memory another buffer shares is not, and
 * its slot stays held until that buffer goes too. */
GST_START_TEST (test_buffers_lent_again)
{
  GstElement *sink;
  /* no last sample: the sink lets go of each buffer after its render */
  GstHarness *h = sink_new ("on-full=drop enable-last-sample=false", &sink);
  GstBufferPool *pool = proposed_pool (h, CAPS);
  GQuark seen = g_quark_from_static_string ("in-place-test-seen");
  GstBuffer *buf, *copy, *lent[RING];
  guint held_slot, n = 0, again = 0;

  fail_unless_equals_int (gst_harness_push (h, fill (acquire (pool), 0)),
      GST_FLOW_OK);
  for (guint i = 1; i <= 8 * RING; i++) {
    GstMiniObject *mem;

    buf = acquire (pool);
    fail_unless (cudaipc_slot_pool_buffer_ticket (buf) != NULL);
    /* a mark on the memory stays with it while it lives */
    mem = GST_MINI_OBJECT (gst_buffer_peek_memory (buf, 0));
    if (gst_mini_object_get_qdata (mem, seen))
      again++;
    gst_mini_object_set_qdata (mem, seen, GINT_TO_POINTER (1), NULL);
    fail_unless_equals_int (gst_harness_push (h, fill (buf, i)), GST_FLOW_OK);
    n++;
  }
  /* a memory a slot, wrapped once */
  fail_unless (again >= n - RING, "%u of %u frames in a memory seen before",
      again, n);
  /* and frame 0: the ring was made at caps */
  fail_unless_equals_uint64 (counter (sink, "frames-in-place"), n + 1);

  /* a copy of the buffer shares its memory: the slot stays held */
  buf = fill (acquire (pool), 100);
  held_slot = cudaipc_slot_ticket_get_slot (cudaipc_slot_pool_buffer_ticket
      (buf));
  copy = gst_buffer_copy (buf);
  fail_unless_equals_int (gst_harness_push (h, buf), GST_FLOW_OK);
  for (guint i = 0; i < RING - 1; i++) {
    lent[i] = acquire (pool);
    fail_unless (cudaipc_slot_pool_buffer_ticket (lent[i]) != NULL);
    fail_if (cudaipc_slot_ticket_get_slot (cudaipc_slot_pool_buffer_ticket
            (lent[i])) == held_slot);
  }
  buf = acquire (pool);
  fail_unless (cudaipc_slot_pool_buffer_ticket (buf) == NULL,
      "the slot of a frame still held was lent");
  gst_buffer_unref (buf);
  check (copy, 100);
  gst_buffer_unref (copy);
  /* now it is free again */
  buf = acquire (pool);
  fail_unless (cudaipc_slot_pool_buffer_ticket (buf) != NULL);
  fail_unless_equals_int (cudaipc_slot_ticket_get_slot
      (cudaipc_slot_pool_buffer_ticket (buf)), held_slot);
  gst_buffer_unref (buf);
  for (guint i = 0; i < RING - 1; i++)
    gst_buffer_unref (lent[i]);
  fail_unless_equals_uint64 (counter (sink, "frames-dropped"), 0);

  finish (h, sink, pool);
}

GST_END_TEST;

GST_START_TEST (test_buffer_outlives_ring_and_sink)
{
  GstElement *sink;
  GstHarness *h = sink_new (NULL, &sink);
  GstBufferPool *pool = proposed_pool (h, CAPS);
  GstBuffer *old, *after;

  fail_unless_equals_int (gst_harness_push (h, fill (acquire (pool), 0)),
      GST_FLOW_OK);
  old = fill (acquire (pool), 1);
  fail_unless (cudaipc_slot_pool_buffer_ticket (old) != NULL);

  /* caps of larger frames replace the ring while upstream still has a
   * slot */
  {
    GstBuffer *big = gst_buffer_new_allocate (NULL, frame_size (BIG_CAPS),
        NULL);

    gst_harness_set_src_caps_str (h, BIG_CAPS);
    fail_unless_equals_int (generation (sink), 2);
    fail_unless_equals_int (gst_harness_push (h, big), GST_FLOW_OK);
  }
  fail_unless_equals_int (generation (sink), 2);
  check (old, 1);
  gst_harness_set_src_caps_str (h, CAPS);
  /* its slot is of the replaced ring: copied, intact */
  fail_unless_equals_int (gst_harness_push (h, old), GST_FLOW_OK);
  /* frame 0 went in place; the big frame, plain memory, and old copied */
  fail_unless_equals_uint64 (counter (sink, "frames-in-place"), 1);
  fail_unless_equals_uint64 (counter (sink, "copies-from-host"), 2);

  /* and one that outlives the sink */
  gst_buffer_pool_set_active (pool, FALSE);
  gst_object_unref (pool);
  pool = proposed_pool (h, CAPS);
  after = acquire (pool);
  gst_element_set_state (h->element, GST_STATE_NULL);
  fill (after, 7);
  check (after, 7);
  gst_buffer_unref (after);
  /* the stopped sink's pool lends no slot, and upstream goes on */
  after = acquire (pool);
  fail_unless (cudaipc_slot_pool_buffer_ticket (after) == NULL);
  gst_buffer_unref (after);

  finish (h, sink, pool);
}

GST_END_TEST;

typedef struct
{
  GstBufferPool *pool;
  GstFlowReturn ret;
  gint64 took_us;
} Waiter;

static gpointer
wait_for_slot (gpointer data)
{
  Waiter *w = data;
  GstBuffer *buf = NULL;
  gint64 t0 = g_get_monotonic_time ();

  w->ret = gst_buffer_pool_acquire_buffer (w->pool, &buf, NULL);
  w->took_us = g_get_monotonic_time () - t0;
  if (buf)
    gst_buffer_unref (buf);
  return NULL;
}

GST_START_TEST (test_wait_follows_on_full_and_ends_at_stop)
{
  GstElement *sink;
  GstHarness *h = sink_new ("on-full=wait full-timeout=300", &sink);
  GstBufferPool *pool = proposed_pool (h, CAPS);
  GstBuffer *lent[RING], *buf;
  Waiter w = { pool, GST_FLOW_ERROR, 0 };
  GThread *t;
  gint64 t0;

  fail_unless_equals_int (gst_harness_push (h, fill (acquire (pool), 0)),
      GST_FLOW_OK);
  for (guint i = 0; i < RING; i++)
    lent[i] = acquire (pool);

  /* every slot lent: the wait lasts full-timeout, then plain memory */
  t0 = g_get_monotonic_time ();
  buf = acquire (pool);
  fail_unless (g_get_monotonic_time () - t0 >= 290 * G_TIME_SPAN_MILLISECOND);
  fail_unless (cudaipc_slot_pool_buffer_ticket (buf) == NULL);
  fail_unless (cudaipc_slot_pool_buffer_waited (buf));
  /* which render() does not wait for again: dropped at once */
  t0 = g_get_monotonic_time ();
  fail_unless_equals_int (gst_harness_push (h, buf), GST_FLOW_OK);
  fail_unless (g_get_monotonic_time () - t0 < 250 * G_TIME_SPAN_MILLISECOND);
  fail_unless_equals_uint64 (counter (sink, "frames-dropped"), 1);

  /* waiting as long as it takes, until upstream flushes its pool (a
   * source does when it stops) */
  g_object_set (sink, "full-timeout", 0, NULL);
  t = g_thread_new ("waiter", wait_for_slot, &w);
  g_usleep (200 * G_TIME_SPAN_MILLISECOND);
  gst_buffer_pool_set_flushing (pool, TRUE);
  g_thread_join (t);
  fail_unless (w.took_us >= 190 * G_TIME_SPAN_MILLISECOND);
  fail_unless_equals_int (w.ret, GST_FLOW_FLUSHING);
  gst_buffer_pool_set_flushing (pool, FALSE);

  /* or until the sink stops, which does not wait for upstream: plain
   * memory then */
  w.ret = GST_FLOW_ERROR;
  t = g_thread_new ("waiter", wait_for_slot, &w);
  g_usleep (200 * G_TIME_SPAN_MILLISECOND);
  t0 = g_get_monotonic_time ();
  fail_unless_equals_int (gst_element_set_state (h->element,
          GST_STATE_NULL), GST_STATE_CHANGE_SUCCESS);
  fail_unless (g_get_monotonic_time () - t0 < G_USEC_PER_SEC,
      "the state change waited for upstream");
  g_thread_join (t);
  fail_unless_equals_int (w.ret, GST_FLOW_OK);

  for (guint i = 0; i < RING; i++)
    gst_buffer_unref (lent[i]);
  finish (h, sink, pool);
}

GST_END_TEST;

/* Upstream events of type RECONFIGURE received since the last call. */
static guint
reconfigures (GstHarness * h)
{
  GstEvent *ev;
  guint n = 0;

  while ((ev = gst_harness_try_pull_upstream_event (h))) {
    if (GST_EVENT_TYPE (ev) == GST_EVENT_RECONFIGURE)
      n++;
    gst_event_unref (ev);
  }
  return n;
}

GST_START_TEST (test_stale_pool_reconfigures_once)
{
  GstElement *sink;
  GstHarness *h = sink_new (NULL, &sink);
  GstBufferPool *old = proposed_pool (h, CAPS);
  GstBufferPool *pool;

  fail_unless_equals_int (gst_harness_push (h, fill (acquire (old), 0)),
      GST_FLOW_OK);
  reconfigures (h);
  /* a second allocation query: the first pool is no longer the one */
  pool = proposed_pool (h, CAPS);
  fail_unless_equals_int (gst_harness_push (h, fill (acquire (pool), 1)),
      GST_FLOW_OK);
  fail_unless_equals_int (reconfigures (h), 0);
  for (guint i = 2; i < 4; i++)
    fail_unless_equals_int (gst_harness_push (h, fill (acquire (old), i)),
        GST_FLOW_OK);
  fail_unless_equals_int (reconfigures (h), 1);
  fail_unless_equals_int (gst_harness_push (h, fill (acquire (pool), 4)),
      GST_FLOW_OK);
  fail_unless_equals_int (reconfigures (h), 0);

  gst_buffer_pool_set_active (old, FALSE);
  gst_object_unref (old);
  finish (h, sink, pool);
}

GST_END_TEST;

GST_START_TEST (test_in_place_off)
{
  GstElement *sink;
  GstHarness *h = sink_new ("in-place=false", &sink);
  GstCaps *caps = gst_caps_from_string (CAPS);
  GstQuery *q = gst_query_new_allocation (caps, TRUE);

  /* answered, with no pool in the answer */
  fail_unless (gst_pad_peer_query (h->srcpad, q));
  fail_unless_equals_int (gst_query_get_n_allocation_pools (q), 0);
  gst_query_unref (q);
  gst_caps_unref (caps);
  for (guint i = 0; i < 3; i++)
    fail_unless_equals_int (gst_harness_push (h, fill (gst_buffer_new_allocate
                (NULL, frame_size (CAPS), NULL), i)), GST_FLOW_OK);
  fail_unless_equals_uint64 (counter (sink, "copies-from-host"), 3);
  fail_unless_equals_uint64 (counter (sink, "frames-in-place"), 0);

  finish (h, sink, NULL);
}

GST_END_TEST;

static Suite *
in_place_suite (void)
{
  Suite *s = suite_create ("in_place");
  TCase *tc = cudaipc_test_case (s, "general", 60);

  tcase_add_checked_fixture (tc, setup, teardown);
  tcase_add_test (tc, test_frames_go_out_in_place);
  tcase_add_test (tc, test_first_buffer_after_caps_in_place);
  tcase_add_test (tc, test_caps_change_next_buffer_in_new_ring);
  tcase_add_test (tc, test_videotestsrc_first_frame_in_place);
  tcase_add_test (tc, test_queued_plain_frame_resumes_in_place);
  tcase_add_test (tc, test_unpushed_buffer_gives_slot_back);
  tcase_add_test (tc, test_held_frame_never_rewritten);
  tcase_add_test (tc, test_buffers_lent_again);
  tcase_add_test (tc, test_buffer_outlives_ring_and_sink);
  tcase_add_test (tc, test_wait_follows_on_full_and_ends_at_stop);
  tcase_add_test (tc, test_stale_pool_reconfigures_once);
  tcase_add_test (tc, test_in_place_off);
  return s;
}

const CudaIpcTestMain cudaipc_test_main = {
  .name = "in_place",
  .suite = in_place_suite,
};
