/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * api suite: libcudaipc's objects shared by threads (cudaipc.h, Threads),
 * host backend: two threads taking a consumer's frames in turn, each
 * frame once, with no harm to the connection; a consumer freed while
 * another thread waits in next() for its producer; a producer's
 * publish() from eight threads at once; a producer cancelled, and one
 * freed, while a publish() waits for a slot.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include "api/cudaipc.h"
#include "ipc-nodes.h"
#include "test-main.h"
#include "test-pattern.h"

#define W 64
#define H 48
#define SIZE (W * H * 3 / 2)
#define CAPS "video/x-raw, format=NV12, width=64, height=48, framerate=30/1"

/* A next() in a thread of its own, and what it said. */
typedef struct
{
  cudaipc_consumer *c;
  cudaipc_status st;
} Waiter;

static gpointer
wait_next (gpointer data)
{
  Waiter *w = data;
  cudaipc_frame *f = NULL;

  w->st = cudaipc_consumer_next (w->c, 0, &f);
  cudaipc_frame_release (f);
  return NULL;
}

GST_START_TEST (test_consumer_freed_while_connecting)
{
  cudaipc_consumer_options o;
  Waiter w = { NULL, CUDAIPC_STATUS_OK };
  GThread *t;
  gint64 start;

  cudaipc_consumer_options_init (&o);
  o.connect_timeout_ms = 5000;
  w.c = cudaipc_consumer_new (sock, &o);
  fail_unless (w.c != NULL);
  t = g_thread_new ("next", wait_next, &w);
  /* the thread waits for a producer nobody starts */
  g_usleep (300 * 1000);
  start = g_get_monotonic_time ();
  /* free() ends that wait, and returns once next() did */
  cudaipc_consumer_free (w.c);
  fail_unless (g_get_monotonic_time () - start < 2 * G_USEC_PER_SEC);
  g_thread_join (t);
  fail_unless_equals_int (w.st, CUDAIPC_STATUS_CANCELLED);
}

GST_END_TEST;

/* Frames taken by two threads from one consumer. */
typedef struct
{
  cudaipc_consumer *c;
  gint seen[200];               /* atomic: times each offset came */
  gint bad;                     /* atomic: frames not as sent */
  gint failed;                  /* atomic: statuses other than OK, EOS */
} Takers;

static gpointer
take_frames (gpointer data)
{
  Takers *t = data;
  cudaipc_frame *f;
  cudaipc_status st;

  while ((st = cudaipc_consumer_next (t->c, 20000, &f)) == CUDAIPC_STATUS_OK) {
    cudaipc_frame_info info = { sizeof (info), };

    fail_unless_equals_int (cudaipc_frame_get_info (f, &info),
        CUDAIPC_STATUS_OK);
    if (info.offset < G_N_ELEMENTS (t->seen))
      g_atomic_int_inc (&t->seen[info.offset]);
    if (cudaipc_test_check_pattern ((const guint8 *) info.data, info.size,
            (guint) info.offset, 0) != -1)
      g_atomic_int_inc (&t->bad);
    cudaipc_frame_release (f);
  }
  if (st != CUDAIPC_STATUS_EOS)
    g_atomic_int_inc (&t->failed);
  return NULL;
}

GST_START_TEST (test_consumer_next_from_two_threads)
{
  cudaipc_consumer_options o;
  Takers t = { NULL, };
  GThread *a, *b;
  Node *p;

  cudaipc_consumer_options_init (&o);
  o.connect_timeout_ms = 20000;
  o.reconnect = 0;
  o.keep_all = 1;
  t.c = cudaipc_consumer_new (sock, &o);
  fail_unless (t.c != NULL);
  p = spawn_node ("producer", "--frames", "200", "--width", "64", "--height",
      "48", "--clients", "1", "--sink", "backend=host on-full=wait "
      "full-timeout=0 consumer-timeout=0", NULL);
  a = g_thread_new ("a", take_frames, &t);
  b = g_thread_new ("b", take_frames, &t);
  g_thread_join (a);
  g_thread_join (b);
  /* each frame once, as sent, over the one connection */
  for (guint i = 0; i < G_N_ELEMENTS (t.seen); i++)
    fail_unless_equals_int (t.seen[i], 1);
  fail_unless_equals_int (t.bad, 0);
  fail_unless_equals_int (t.failed, 0);
  wait_node (p, 60);
  assert_exit_ok (p);
  fail_unless_equals_uint64 (field (p, "joined"), 1);
  fail_unless_equals_uint64 (field (p, "warnings"), 0);
  cudaipc_consumer_free (t.c);
  node_free (p);
}

GST_END_TEST;

static cudaipc_producer *
producer (void)
{
  cudaipc_producer_options o;
  cudaipc_producer *prod;

  cudaipc_producer_options_init (&o);
  o.backend = CUDAIPC_BACKEND_TYPE_HOST;
  o.ring_size = 2;
  prod = cudaipc_producer_new (sock, CAPS, &o);
  fail_unless (prod != NULL, "%s", cudaipc_producer_last_error ());
  return prod;
}

typedef struct
{
  cudaipc_producer *p;
  guint8 *frame;
  gint failed;                  /* atomic */
} Publishers;

static gpointer
publish_frames (gpointer data)
{
  Publishers *pub = data;

  for (guint i = 0; i < 300; i++) {
    if (cudaipc_producer_publish (pub->p, (uintptr_t) pub->frame, SIZE, 0,
            i, 0) != CUDAIPC_STATUS_OK)
      g_atomic_int_inc (&pub->failed);
  }
  return NULL;
}

GST_START_TEST (test_producer_publish_from_threads)
{
  Publishers pub = { producer (), g_malloc0 (SIZE), 0 };
  GThread *threads[8];
  uint64_t published = 0, dropped = 0;

  for (guint i = 0; i < G_N_ELEMENTS (threads); i++)
    threads[i] = g_thread_new ("publish", publish_frames, &pub);
  for (guint i = 0; i < G_N_ELEMENTS (threads); i++)
    g_thread_join (threads[i]);
  fail_unless_equals_int (pub.failed, 0);
  cudaipc_producer_counts (pub.p, &published, &dropped);
  fail_unless_equals_uint64 (published, 8 * 300);
  fail_unless_equals_uint64 (dropped, 0);
  cudaipc_producer_free (pub.p);
  g_free (pub.frame);
}

GST_END_TEST;

/* A producer whose ring a consumer of this process fills, and a thread
 * that publishes three frames into it: the third waits for a slot. */
typedef struct
{
  cudaipc_producer *p;
  cudaipc_consumer *c;
  cudaipc_frame *held;
  guint8 *frame;
  cudaipc_status st[3];
  GThread *thread;
} Full;

static gpointer
publish_three (gpointer data)
{
  Full *full = data;

  for (gint i = 0; i < 2000 && cudaipc_producer_n_consumers (full->p) == 0; i++)
    g_usleep (10000);
  for (guint i = 0; i < 3; i++)
    full->st[i] = cudaipc_producer_publish (full->p, (uintptr_t) full->frame,
        SIZE, 0, i, 0);
  return NULL;
}

static void
full_start (Full * full)
{
  cudaipc_consumer_options o;

  full->p = producer ();
  full->frame = g_malloc0 (SIZE);
  cudaipc_consumer_options_init (&o);
  o.connect_timeout_ms = 20000;
  /* the frames it is not given yet keep their slots */
  o.keep_all = 1;
  full->c = cudaipc_consumer_new (sock, &o);
  fail_unless (full->c != NULL);
  full->thread = g_thread_new ("publish", publish_three, full);
  /* the first frame held, the second waiting in the consumer: the ring of
   * two is full, and the stream, not live, waits as long as it takes */
  fail_unless_equals_int (cudaipc_consumer_next (full->c, 20000,
          &full->held), CUDAIPC_STATUS_OK);
  g_usleep (300 * 1000);
}

/* The thread's third frame was cancelled. */
static void
full_join (Full * full)
{
  g_thread_join (full->thread);
  fail_unless_equals_int (full->st[0], CUDAIPC_STATUS_OK);
  fail_unless_equals_int (full->st[1], CUDAIPC_STATUS_OK);
  fail_unless_equals_int (full->st[2], CUDAIPC_STATUS_CANCELLED);
}

static void
full_finish (Full * full)
{
  cudaipc_frame_release (full->held);
  cudaipc_consumer_free (full->c);
  g_free (full->frame);
}

GST_START_TEST (test_producer_cancelled_while_waiting)
{
  Full full = { NULL, };
  uint64_t published = 0, dropped = 0;

  full_start (&full);
  cudaipc_producer_cancel (full.p);
  full_join (&full);
  fail_unless (strstr (cudaipc_producer_error (full.p), "cancelled") != NULL,
      "%s", cudaipc_producer_error (full.p));
  /* and every later one */
  fail_unless_equals_int (cudaipc_producer_publish (full.p,
          (uintptr_t) full.frame, SIZE, 0, 3, 0), CUDAIPC_STATUS_CANCELLED);
  fail_unless_equals_int (cudaipc_producer_end (full.p),
      CUDAIPC_STATUS_CANCELLED);
  cudaipc_producer_counts (full.p, &published, &dropped);
  fail_unless_equals_uint64 (published, 2);
  cudaipc_producer_free (full.p);
  full_finish (&full);
}

GST_END_TEST;

GST_START_TEST (test_producer_freed_while_waiting)
{
  Full full = { NULL, };
  gint64 start;

  full_start (&full);
  start = g_get_monotonic_time ();
  /* free() ends the wait, and returns once publish() did */
  cudaipc_producer_free (full.p);
  fail_unless (g_get_monotonic_time () - start < 2 * G_USEC_PER_SEC);
  full_join (&full);
  full_finish (&full);
}

GST_END_TEST;

/* NULL objects and arguments, before anything is used */
GST_START_TEST (test_null_arguments)
{
  cudaipc_frame *f = (cudaipc_frame *) 0x1;
  cudaipc_frame_info info = { sizeof (info), };
  cudaipc_plane plane;
  cudaipc_region region;
  cudaipc_object object;
  uint64_t published = 1, dropped = 1;
  cudaipc_producer *p;
  guint8 *frame = g_malloc0 (SIZE);

  cudaipc_consumer_options_init (NULL);
  cudaipc_producer_options_init (NULL);
  fail_unless (cudaipc_consumer_new (NULL, NULL) == NULL);
  fail_unless_equals_int (cudaipc_consumer_next (NULL, 0, &f),
      CUDAIPC_STATUS_INVALID);
  fail_unless (f == NULL);
  fail_unless (cudaipc_consumer_error (NULL) != NULL);
  fail_unless_equals_int (cudaipc_consumer_held (NULL), 0);
  fail_unless_equals_uint64 (cudaipc_consumer_dropped (NULL), 0);
  cudaipc_consumer_cancel (NULL);
  cudaipc_consumer_free (NULL);
  fail_unless_equals_int (cudaipc_frame_get_info (NULL, &info),
      CUDAIPC_STATUS_INVALID);
  fail_unless_equals_int (cudaipc_frame_get_plane (NULL, 0, &plane),
      CUDAIPC_STATUS_INVALID);
  fail_unless_equals_int (cudaipc_frame_get_region (NULL, 0, &region),
      CUDAIPC_STATUS_INVALID);
  fail_unless_equals_int (cudaipc_frame_get_object (NULL, 0, &object),
      CUDAIPC_STATUS_INVALID);
  fail_unless (cudaipc_frame_ref (NULL) == NULL);
  cudaipc_frame_release (NULL);
  fail_unless (cudaipc_frame_to_dlpack (NULL, 0) == NULL);

  fail_unless (cudaipc_producer_new (NULL, CAPS, NULL) == NULL);
  fail_unless (cudaipc_producer_new (sock, NULL, NULL) == NULL);
  fail_unless_equals_int (cudaipc_producer_publish (NULL, (uintptr_t) frame,
          SIZE, 0, 0, 0), CUDAIPC_STATUS_INVALID);
  fail_unless_equals_int (cudaipc_producer_publish_annotated (NULL,
          (uintptr_t) frame, SIZE, 0, 0, 0, NULL, 0, NULL, 0),
      CUDAIPC_STATUS_INVALID);
  fail_unless_equals_int (cudaipc_producer_n_consumers (NULL), 0);
  cudaipc_producer_counts (NULL, &published, &dropped);
  fail_unless_equals_uint64 (published, 0);
  fail_unless_equals_uint64 (dropped, 0);
  fail_unless_equals_int (cudaipc_producer_end (NULL),
      CUDAIPC_STATUS_INVALID);
  fail_unless (cudaipc_producer_error (NULL) != NULL);
  cudaipc_producer_cancel (NULL);
  cudaipc_producer_free (NULL);

  /* a producer's NULL data and arrays, each with its reason */
  p = producer ();
  fail_unless_equals_int (cudaipc_producer_publish (p, 0, SIZE, 0, 0, 0),
      CUDAIPC_STATUS_INVALID);
  fail_unless (strstr (cudaipc_producer_error (p), "NULL") != NULL);
  fail_unless_equals_int (cudaipc_producer_publish_annotated (p,
          (uintptr_t) frame, SIZE, 0, 0, 0, NULL, 2, NULL, 0),
      CUDAIPC_STATUS_INVALID);
  fail_unless (strstr (cudaipc_producer_error (p), "NULL") != NULL);
  cudaipc_producer_free (p);
  g_free (frame);
}

GST_END_TEST;

static Suite *
api_threads_suite (void)
{
  Suite *s = suite_create ("api-threads");
  TCase *tc = cudaipc_test_case (s, "general", 120);

  tcase_add_checked_fixture (tc, nodes_setup, nodes_teardown);
  tcase_add_test (tc, test_consumer_freed_while_connecting);
  tcase_add_test (tc, test_consumer_next_from_two_threads);
  tcase_add_test (tc, test_producer_publish_from_threads);
  tcase_add_test (tc, test_producer_cancelled_while_waiting);
  tcase_add_test (tc, test_producer_freed_while_waiting);
  tcase_add_test (tc, test_null_arguments);
  return s;
}

const CudaIpcTestMain cudaipc_test_main = {
  .name = "api-threads",
  .suite = api_threads_suite,
};
