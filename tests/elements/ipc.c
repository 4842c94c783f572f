/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Two pipelines in separate processes meeting on a socket in a temporary
 * folder: a producer (appsrc ! cuipcsink) and consumers (cuipcsrc !
 * appsink), each an ipc-node process. Every frame is checked byte for byte
 * against the pattern of its frame number.
 *
 * Built twice: for the elements suite with the host backend, and, with
 * CUDAIPC_TEST_GPU defined, for the gpu suite with the cuda backend (it
 * skips with 77 where ipc-node finds no GPU).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib/gstdio.h>
#include <gst/check/gstcheck.h>

#include "buffers/gstcuda.h"
#include "ipc-nodes.h"
#include "test-main.h"
#include "test-pattern.h"
#include "test-util.h"

#ifdef CUDAIPC_TEST_GPU
#define BACKEND "cuda"
#else
#define BACKEND "host"
#endif

GST_START_TEST (test_bit_exact_frames)
{
  Node *c, *p;

  /* the consumer starts first and waits for its producer */
  c = spawn_node ("consumer", NULL);
  g_usleep (200 * 1000);
  p = spawn_node ("producer", "--frames", "60", "--clients", "1", "--sink",
      "backend=" BACKEND, NULL);
  wait_node (p, 90);
  wait_node (c, 90);
  assert_exit_ok (p);
  assert_exit_ok (c);
  fail_unless_equals_uint64 (field (p, "published"), 60);
  fail_unless_equals_uint64 (field (p, "dropped"), 0);
  fail_unless_equals_uint64 (field (c, "frames"), 60);
  fail_unless_equals_uint64 (field (c, "bad"), 0);
  fail_unless_equals_uint64 (field (c, "first"), 0);
  fail_unless_equals_uint64 (field (c, "last"), 59);
  /* frames in system memory: one host copy each, none from the GPU */
  fail_unless_equals_uint64 (field (p, "from_host"), 60);
  fail_unless_equals_uint64 (field (p, "from_gpu"), 0);
  /* appsink offers no CUDA pool: the imported slots go out */
  fail_unless_equals_uint64 (field (c, "output"), 0);
  node_free (p);
  node_free (c);
}

GST_END_TEST;

GST_START_TEST (test_caps_change)
{
  Node *c, *p;

  p = spawn_node ("producer", "--frames", "20", "--width", "1280",
      "--height", "720", "--switch-at", "10", "--width2", "1920",
      "--height2", "1080", "--clients", "1", "--sink",
      "backend=" BACKEND, NULL);
  c = spawn_node ("consumer", NULL);
  wait_node (p, 90);
  wait_node (c, 90);
  assert_exit_ok (p);
  assert_exit_ok (c);
  fail_unless_equals_uint64 (field (c, "frames"), 20);
  fail_unless_equals_uint64 (field (c, "caps"), 2);
  fail_unless_equals_uint64 (field (c, "bad"), 0);
  node_free (p);
  node_free (c);
}

GST_END_TEST;

/* Downstream that takes another format, in the memory the backend's
 * frames are in: the consumer's error says what to put in between, for
 * that memory (cudaconvert for CUDA memory, videoconvert for system
 * memory). */
GST_START_TEST (test_not_negotiated)
{
#ifdef CUDAIPC_TEST_GPU
  const gchar *caps = "video/x-raw(memory:CUDAMemory),format=I420";
  const gchar *advice = "; it takes video/x-raw(memory:CUDAMemory), "
      "format=I420: put cudaconvert";
#else
  const gchar *caps = "video/x-raw,format=I420";
  const gchar *advice = "; it takes video/x-raw, format=I420: put "
      "videoconvert";
#endif
  Node *c, *p;

  p = spawn_node ("producer", "--frames", "200", "--fps", "30", "--clients",
      "1", "--sink", "backend=" BACKEND, NULL);
  c = spawn_node ("consumer", "--caps", caps, "--src", "reconnect=false",
      NULL);
  wait_node (c, 60);
  fail_unless (WIFEXITED (c->status) && WEXITSTATUS (c->status) == 1);
  fail_unless (strstr (c->err->str, "Downstream does not accept the "
          "producer's caps") != NULL && strstr (c->err->str, advice) != NULL,
      "%s", c->err->str);
  kill (p->pid, SIGKILL);
  wait_node (p, 60);
  node_free (p);
  node_free (c);
}

GST_END_TEST;

GST_START_TEST (test_three_consumers_wait)
{
  Node *c[3], *p;

  for (guint i = 0; i < 3; i++)
    c[i] = spawn_node ("consumer", NULL);
  p = spawn_node ("producer", "--frames", "100", "--clients", "3", "--sink",
      "backend=" BACKEND " on-full=wait ring-size=4", NULL);
  wait_node (p, 90);
  assert_exit_ok (p);
  fail_unless_equals_uint64 (field (p, "published"), 100);
  fail_unless_equals_uint64 (field (p, "dropped"), 0);
  for (guint i = 0; i < 3; i++) {
    wait_node (c[i], 90);
    assert_exit_ok (c[i]);
    fail_unless_equals_uint64 (field (c[i], "frames"), 100);
    fail_unless_equals_uint64 (field (c[i], "bad"), 0);
    node_free (c[i]);
  }
  node_free (p);
}

GST_END_TEST;

/* ordering=fence (on the host backend the producer writes the page on the
 * CPU): two consumers read every frame, across a caps change that sends
 * the ring, and its fence page, again; each connection reads the page,
 * no consumer makes a driver call per frame and the producer never
 * synchronises on the host. */
GST_START_TEST (test_fence_ordering)
{
  Node *c[2], *p;

  for (guint i = 0; i < 2; i++)
    c[i] = spawn_node ("consumer", NULL);
  p = spawn_node ("producer", "--frames", "80", "--clients", "2",
      "--switch-at", "40", "--width2", "640", "--height2", "480", "--sink",
      "backend=" BACKEND " ordering=fence on-full=wait ring-size=4", NULL);
  wait_node (p, 90);
  assert_exit_ok (p);
  fail_unless_equals_uint64 (field (p, "published"), 80);
  fail_unless_equals_uint64 (field (p, "dropped"), 0);
  fail_unless_equals_uint64 (field (p, "host_syncs"), 0);
  for (guint i = 0; i < 2; i++) {
    wait_node (c[i], 90);
    assert_exit_ok (c[i]);
    fail_unless_equals_uint64 (field (c[i], "frames"), 80);
    fail_unless_equals_uint64 (field (c[i], "bad"), 0);
    fail_unless_equals_uint64 (field (c[i], "caps"), 2);
    fail_unless_equals_uint64 (field (c[i], "connects"), 1);
    fail_unless_equals_uint64 (field (c[i], "fenced"), 1);
    fail_unless_equals_uint64 (field (c[i], "driver_calls"), 0);
    node_free (c[i]);
  }
  node_free (p);
}

GST_END_TEST;

/* Every frame's metas arrive with it, field by field, as the sink's metas
 * setting lets them through (tests/common/test-metas.h). */
static void
metas_case (const gchar * setting)
{
  Node *c, *p;
  gchar *props = g_strdup_printf ("backend=" BACKEND " metas=%s", setting);

  c = spawn_node ("consumer", "--expect-metas", setting, NULL);
  p = spawn_node ("producer", "--frames", "60", "--clients", "1", "--metas",
      "--sink", props, NULL);
  wait_node (p, 90);
  wait_node (c, 90);
  assert_exit_ok (p);
  assert_exit_ok (c);
  fail_unless_equals_uint64 (field (c, "frames"), 60);
  fail_unless_equals_uint64 (field (c, "bad"), 0);
  fail_unless_equals_uint64 (field (c, "metas_ok"), 60);
  fail_unless_equals_uint64 (field (c, "metas_bad"), 0);
  node_free (p);
  node_free (c);
  g_free (props);
}

GST_START_TEST (test_metas_all)
{
  metas_case ("all");
}

GST_END_TEST;

GST_START_TEST (test_metas_none)
{
  metas_case ("none");
}

GST_END_TEST;

GST_START_TEST (test_metas_listed)
{
  metas_case ("GstVideoCropMetaAPI,GstReferenceTimestampMetaAPI");
}

GST_END_TEST;

/* Frames that go out as copies (downstream holds slots: copy-threshold)
 * carry their metas too: decoded onto the copy, not onto the slot's
 * buffer first. */
GST_START_TEST (test_metas_on_copies)
{
  Node *c, *p;

  c = spawn_node ("consumer", "--expect-metas", "all", "--hold", "3",
      "--src", "copy-threshold=1", NULL);
  p = spawn_node ("producer", "--frames", "60", "--clients", "1", "--metas",
      "--sink", "backend=" BACKEND " metas=all on-full=wait", NULL);
  wait_node (p, 90);
  wait_node (c, 90);
  assert_exit_ok (p);
  assert_exit_ok (c);
  fail_unless_equals_uint64 (field (c, "frames"), 60);
  fail_unless_equals_uint64 (field (c, "bad"), 0);
  if (g_str_equal (BACKEND, "cuda") && !GST_CHECK_VERSION (1, 24, 0))
    /* copies of CUDA memory go into a pool of GStreamer's CUDA library,
     * which 1.22 may not give: then the frames go out whole, the source
     * warns, and every one still carries its metas */
    fail_unless (field (c, "copied") > 0 || field (c, "warnings") >= 1);
  else
    fail_unless (field (c, "copied") > 0);
  fail_unless_equals_uint64 (field (c, "metas_ok"), 60);
  fail_unless_equals_uint64 (field (c, "metas_bad"), 0);
  node_free (p);
  node_free (c);
}

GST_END_TEST;

/* Consumers that give frames back through their release page and ones
 * that send a RELEASE each (an older consumer, or CUDAIPC_RELEASE_PAGE=0)
 * share a producer, and a producer without pages serves both: every
 * frame reaches each, none is dropped. */
static void
release_ways_case (gboolean producer_pages)
{
  Node *paged, *msgs, *p;

  paged = spawn_node ("consumer", NULL);
  g_setenv ("CUDAIPC_RELEASE_PAGE", "0", TRUE);
  msgs = spawn_node ("consumer", NULL);
  if (producer_pages)
    g_unsetenv ("CUDAIPC_RELEASE_PAGE");
  p = spawn_node ("producer", "--frames", "300", "--clients", "2", "--sink",
      "backend=" BACKEND " ring-size=4 on-full=wait", NULL);
  g_unsetenv ("CUDAIPC_RELEASE_PAGE");
  wait_node (p, 90);
  wait_node (paged, 90);
  wait_node (msgs, 90);
  assert_exit_ok (p);
  assert_exit_ok (paged);
  assert_exit_ok (msgs);
  fail_unless_equals_uint64 (field (p, "dropped"), 0);
  fail_unless_equals_uint64 (field (paged, "frames"), 300);
  fail_unless_equals_uint64 (field (paged, "bad"), 0);
  fail_unless_equals_uint64 (field (msgs, "frames"), 300);
  fail_unless_equals_uint64 (field (msgs, "bad"), 0);
  node_free (p);
  node_free (paged);
  node_free (msgs);
}

GST_START_TEST (test_release_page_beside_messages)
{
  release_ways_case (TRUE);
  release_ways_case (FALSE);
}

GST_END_TEST;

/* announce=shared-memory: two consumers read the frames announced
 * through their pages (one holding its last 3 frames, one spinning
 * before it sleeps and slow), beside one on the socket, across a caps
 * change whose RING and SLOTs, with their fds, go on the socket behind
 * their marks: every frame, byte-exact, none changed while held. */
GST_START_TEST (test_announce_through_memory)
{
  Node *held, *spin, *plain, *p;

  held = spawn_node ("consumer", "--hold", "3", "--src",
      "announce=shared-memory", NULL);
  spin = spawn_node ("consumer", "--slow-ms", "2", "--src",
      "announce=shared-memory spin-us=50", NULL);
  plain = spawn_node ("consumer", NULL);
  p = spawn_node ("producer", "--frames", "120", "--clients", "3",
      "--switch-at", "60", "--width2", "640", "--height2", "480", "--sink",
      "backend=" BACKEND " on-full=wait ring-size=6", NULL);
  wait_node (p, 90);
  wait_node (held, 90);
  wait_node (spin, 90);
  wait_node (plain, 90);
  assert_exit_ok (p);
  assert_exit_ok (held);
  assert_exit_ok (spin);
  assert_exit_ok (plain);
  fail_unless_equals_uint64 (field (p, "published"), 120);
  fail_unless_equals_uint64 (field (p, "dropped"), 0);
  fail_unless_equals_uint64 (field (held, "channel"), 1);
  fail_unless_equals_uint64 (field (spin, "channel"), 1);
  fail_unless_equals_uint64 (field (plain, "channel"), 0);
  fail_unless_equals_uint64 (field (held, "frames"), 120);
  fail_unless_equals_uint64 (field (held, "bad"), 0);
  fail_unless_equals_uint64 (field (held, "recheck_bad"), 0);
  fail_unless_equals_uint64 (field (held, "disorder"), 0);
  fail_unless_equals_uint64 (field (spin, "frames"), 120);
  fail_unless_equals_uint64 (field (spin, "bad"), 0);
  fail_unless_equals_uint64 (field (spin, "disorder"), 0);
  fail_unless_equals_uint64 (field (plain, "frames"), 120);
  fail_unless_equals_uint64 (field (plain, "bad"), 0);
  node_free (p);
  node_free (held);
  node_free (spin);
  node_free (plain);
}

GST_END_TEST;

GST_START_TEST (test_holding_consumer)
{
  Node *holder, *other, *p;

  /* one consumer keeps its last 3 frames (a queue), the other none; the
   * producer never writes a slot that is still held: the holder checks each
   * frame again when it lets it go */
  holder = spawn_node ("consumer", "--hold", "3", NULL);
  other = spawn_node ("consumer", NULL);
  p = spawn_node ("producer", "--frames", "150", "--clients", "2", "--sink",
      "backend=" BACKEND " on-full=wait ring-size=6", NULL);
  wait_node (p, 90);
  wait_node (holder, 90);
  wait_node (other, 90);
  assert_exit_ok (p);
  assert_exit_ok (holder);
  assert_exit_ok (other);
  fail_unless_equals_uint64 (field (holder, "frames"), 150);
  fail_unless_equals_uint64 (field (holder, "recheck_bad"), 0);
  fail_unless_equals_uint64 (field (other, "frames"), 150);
  node_free (p);
  node_free (holder);
  node_free (other);
}

GST_END_TEST;

/* A slow consumer (appsink takes one frame at a time, 8 ms each) of a
 * producer that waits for it and exits right after its EOS: while the
 * source waits downstream its background reader reads the last frames,
 * the EOS and the producer's close; every frame still goes out, in order,
 * then the EOS (before, the source took the closed connection for a lost
 * producer, dropped what was queued and waited for another). */
GST_START_TEST (test_slow_consumer_gets_the_tail)
{
  Node *c, *p;

  c = spawn_node ("consumer", "--slow-ms", "8", NULL);
  p = spawn_node ("producer", "--frames", "100", "--clients", "1", "--sink",
      "backend=" BACKEND " on-full=wait ring-size=4", NULL);
  wait_node (p, 90);
  wait_node (c, 90);
  assert_exit_ok (p);
  assert_exit_ok (c);
  fail_unless_equals_uint64 (field (p, "dropped"), 0);
  fail_unless_equals_uint64 (field (c, "frames"), 100);
  fail_unless_equals_uint64 (field (c, "first"), 0);
  fail_unless_equals_uint64 (field (c, "last"), 99);
  fail_unless_equals_uint64 (field (c, "disorder"), 0);
  fail_unless_equals_uint64 (field (c, "bad"), 0);
  fail_unless_equals_uint64 (field (c, "ok"), 1);
  node_free (p);
  node_free (c);
}

GST_END_TEST;

GST_START_TEST (test_on_full_drop)
{
  Node *c, *p;

  /* the consumer never lets its first two frames go, and copies none
   * (copy-threshold=0): with two slots, every later frame finds the ring
   * full and is dropped, and counted */
  c = spawn_node ("consumer", "--hold", "2", "--src", "copy-threshold=0",
      NULL);
  p = spawn_node ("producer", "--frames", "50", "--clients", "1", "--sink",
      "backend=" BACKEND " on-full=drop ring-size=2", NULL);
  wait_node (p, 90);
  wait_node (c, 90);
  assert_exit_ok (p);
  assert_exit_ok (c);
  fail_unless_equals_uint64 (field (p, "published"), 2);
  fail_unless_equals_uint64 (field (p, "dropped"), 48);
  fail_unless_equals_uint64 (field (c, "frames"), 2);
  fail_unless_equals_uint64 (field (c, "recheck_bad"), 0);
  node_free (p);
  node_free (c);
}

GST_END_TEST;

#ifdef CUDAIPC_TEST_GPU
/* 60 frames of 1080p from cudaupload into a cuipcsink with @sink_props,
 * read back by cudadownload, every one as it was sent; the producer's
 * node, for its counts */
static Node *
run_upload (const gchar * sink_props)
{
  Node *c, *p;

  c = spawn_node ("consumer", "--download", NULL);
  p = spawn_node ("producer", "--frames", "60", "--width", "1920",
      "--height", "1080", "--clients", "1", "--upload", "--sink",
      sink_props, NULL);
  wait_node (p, 90);
  wait_node (c, 90);
  assert_exit_ok (p);
  assert_exit_ok (c);
  fail_unless_equals_uint64 (field (c, "frames"), 60);
  fail_unless_equals_uint64 (field (c, "bad"), 0);
  fail_unless_equals_uint64 (field (c, "recheck_bad"), 0);
  fail_unless_equals_uint64 (field (p, "from_host"), 0);
  node_free (c);
  return p;
}

GST_START_TEST (test_cuda_memory_both_ends)
{
  /* cudaupload gives the sink CUDA memory, copied device to device into
   * the slot (in-place=false): no CPU round trip on the producer */
  Node *p = run_upload ("backend=cuda in-place=false");

  fail_unless_equals_uint64 (field (p, "from_gpu"), 60);
  fail_unless_equals_uint64 (field (p, "in_place"), 0);
  node_free (p);
}

GST_END_TEST;

/* cudaupload writes into the slots themselves (GStreamer >= 1.24: the
 * sink's pool is a GstCudaBufferPool of GstCudaMemory over the slots);
 * 1.22 copies them all. */
GST_START_TEST (test_cuda_in_place)
{
  Node *p = run_upload ("backend=cuda on-full=wait full-timeout=0");
  guint64 in_place = field (p, "in_place"), from_gpu = field (p, "from_gpu");

  g_print ("cuda in place: %" G_GUINT64_FORMAT " of 60 frames written in "
      "place, %" G_GUINT64_FORMAT " copied\n", in_place, from_gpu);
  fail_unless_equals_uint64 (in_place + from_gpu, 60);
  if (GST_CHECK_VERSION (1, 24, 0) && cudaipc_gstcuda_can_wrap ())
    /* a frame may be copied when every slot is held (the ring is made
     * at caps: the first frame is a slot too) */
    fail_unless (in_place >= 50, "only %" G_GUINT64_FORMAT " frames in place",
        in_place);
  else
    fail_unless_equals_uint64 (in_place, 0);
  node_free (p);
}

GST_END_TEST;

/* nvcodec's GstCudaMemory out of the source (GStreamer 1.22: a copy into a
 * CUDA buffer pool; >= 1.24: the slot wrapped), read back by cudadownload;
 * and the imported slot itself into cudadownload */
static void
run_download (const gchar * output_memory, guint64 expect_output)
{
  g_autofree gchar *props = g_strdup_printf ("output-memory=%s",
      output_memory);
  Node *c, *p;

  c = spawn_node ("consumer", "--download", "--src", props, NULL);
  p = spawn_node ("producer", "--frames", "60", "--width", "1280",
      "--height", "720", "--clients", "1", "--sink", "backend=cuda", NULL);
  wait_node (p, 90);
  wait_node (c, 90);
  assert_exit_ok (p);
  assert_exit_ok (c);
  fail_unless_equals_uint64 (field (c, "frames"), 60);
  fail_unless_equals_uint64 (field (c, "bad"), 0);
  /* ipc-node's output: 0 the imported slot, 1 a copy into a CUDA pool,
   * 2 the slot wrapped */
  fail_unless_equals_uint64 (field (c, "output"), expect_output);
  node_free (p);
  node_free (c);
}

GST_START_TEST (test_gst_cuda_memory_out)
{
  /* GStreamer >= 1.24 wraps the slot (gst_cuda_allocator_alloc_wrapped),
   * 1.22 copies it into a CUDA buffer pool */
  run_download ("gst-cuda", GST_CHECK_VERSION (1, 24, 0) ? 2 : 1);
}

GST_END_TEST;

GST_START_TEST (test_imported_memory_out)
{
  run_download ("imported", 0);
}

GST_END_TEST;
#endif

static Suite *
ipc_suite (void)
{
  Suite *s = suite_create ("ipc-" BACKEND);
  TCase *tc = cudaipc_test_case (s, "general", 240);

  tcase_add_checked_fixture (tc, nodes_setup, nodes_teardown);
  tcase_add_test (tc, test_bit_exact_frames);
  tcase_add_test (tc, test_caps_change);
  tcase_add_test (tc, test_not_negotiated);
  tcase_add_test (tc, test_three_consumers_wait);
  tcase_add_test (tc, test_fence_ordering);
  tcase_add_test (tc, test_metas_all);
  tcase_add_test (tc, test_metas_none);
  tcase_add_test (tc, test_metas_listed);
  tcase_add_test (tc, test_metas_on_copies);
  tcase_add_test (tc, test_release_page_beside_messages);
  tcase_add_test (tc, test_holding_consumer);
  tcase_add_test (tc, test_announce_through_memory);
  tcase_add_test (tc, test_on_full_drop);
  tcase_add_test (tc, test_slow_consumer_gets_the_tail);
#ifdef CUDAIPC_TEST_GPU
  tcase_add_test (tc, test_cuda_memory_both_ends);
  tcase_add_test (tc, test_cuda_in_place);
  tcase_add_test (tc, test_gst_cuda_memory_out);
  tcase_add_test (tc, test_imported_memory_out);
#endif
  return s;
}

const CudaIpcTestMain cudaipc_test_main = {
  .name = "ipc-" BACKEND,
  .suite = ipc_suite,
#ifdef CUDAIPC_TEST_GPU
  .prepare = cudaipc_test_need_gpu,
#endif
};
