/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * docs/examples/frame-pointer as the consumer process of an ipc-node
 * producer: every frame it prints must carry the FNV-1a hash of the
 * visible bytes of the pattern of its offset (frame i is the pattern of
 * key (i, 0) over the whole NV12 frame, in the default layout of the
 * producer's size), and it must exit 0 after N frames, 1 with a clear
 * message on an error.
 *
 * Built twice: for the elements suite with the host backend (the example
 * maps host memory), and, with CUDAIPC_TEST_GPU defined, for the gpu suite
 * with the cuda backend (the example maps with GST_MAP_CUDA and reads the
 * rows with the CUDA driver; it skips with 77 where ipc-node finds no GPU).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdlib.h>
#include <string.h>

#include <gst/check/gstcheck.h>
#include <gst/video/video.h>

#include "ipc-nodes.h"
#include "test-main.h"
#include "test-pattern.h"

#ifdef CUDAIPC_TEST_GPU
#define BACKEND "cuda"
#define POINTER " device_ptr=0x"
#else
#define BACKEND "host"
#define POINTER " host_ptr=0x"
#endif

static Node *
spawn_example (gint frames)
{
  gchar *exe = (gchar *) g_getenv ("CUDAIPC_EXAMPLE_FRAME_POINTER");
  gchar *n = g_strdup_printf ("%d", frames);
  gchar *argv[] = { exe, sock, (gchar *) "--frames", n, NULL };
  Node *node;

  fail_unless (exe != NULL, "CUDAIPC_EXAMPLE_FRAME_POINTER is not set");
  node = spawn_argv (argv);
  g_free (n);
  return node;
}

static guint64
fnv1a (guint64 hash, const guint8 * data, gsize len)
{
  for (gsize i = 0; i < len; i++)
    hash = (hash ^ data[i]) * G_GUINT64_CONSTANT (0x100000001b3);
  return hash;
}

/* The hash of frame @offset of a @width x @height producer: luma rows of
 * @width bytes, then (height + 1) / 2 chroma rows of the UV pairs, each
 * read at the default NV12 strides and plane offsets. */
static guint64
expected_hash (gint width, gint height, guint offset)
{
  guint64 hash = G_GUINT64_CONSTANT (0xcbf29ce484222325);
  gsize row_bytes[2] = { width, (width + 1) / 2 * 2 };
  gsize rows[2] = { height, (height + 1) / 2 };
  GstVideoInfo info;
  guint8 *frame;

  gst_video_info_set_format (&info, GST_VIDEO_FORMAT_NV12, width, height);
  frame = g_malloc (info.size);
  cudaipc_test_fill_pattern (frame, info.size, offset, 0);
  for (guint p = 0; p < 2; p++)
    for (gsize r = 0; r < rows[p]; r++)
      hash = fnv1a (hash, frame + info.offset[p] + r * info.stride[p],
          row_bytes[p]);
  g_free (frame);
  return hash;
}

/* The value after " @key=" in @line. */
static const gchar *
value (const gchar * line, const gchar * key)
{
  gchar *k = g_strdup_printf (" %s=", key);
  const gchar *at = strstr (line, k);

  fail_unless (at != NULL, "no %s in '%s'", key, line);
  at += strlen (k);
  g_free (k);
  return at;
}

/* Checks every "frame" line the example printed against the pattern of its
 * offset; returns how many there were. Frames come in order from 0. */
static guint
check_frames (Node * ex, gint width, gint height)
{
  gchar **lines = g_strsplit (ex->out->str, "\n", -1);
  GstVideoInfo info;
  gchar *layout;
  guint n = 0;

  gst_video_info_set_format (&info, GST_VIDEO_FORMAT_NV12, width, height);
  layout = g_strdup_printf ("planes=2 pitch=%d,%d offsets=0,%" G_GSIZE_FORMAT
      " ", info.stride[0], info.stride[1], info.offset[1]);
  for (guint i = 0; lines[i]; i++) {
    const gchar *line = lines[i];
    guint64 offset, hash;

    if (!g_str_has_prefix (line, "frame "))
      continue;
    offset = g_ascii_strtoull (line + 6, NULL, 10);
    hash = g_ascii_strtoull (value (line, "fnv1a"), NULL, 16);
    fail_unless_equals_uint64 (offset, n);
    fail_unless (strstr (line, POINTER) != NULL, "not" POINTER ": %s", line);
    /* the producer's layout; a frame that came while the program held
     * copy-threshold others is a copy, in the rows of a pool of its own */
    if (strstr (line, layout) == NULL) {
      gint pitch0 = 0, pitch1 = 0;
      guint64 off1 = 0;

      fail_unless (n > 0, "the first frame is not in the producer's layout "
          "%s: %s", layout, line);
      fail_unless_equals_int (sscanf (value (line, "pitch"), "%d,%d "
              "offsets=0,%" G_GUINT64_FORMAT, &pitch0, &pitch1, &off1), 3);
      fail_unless (pitch0 >= width && pitch1 == pitch0 &&
          off1 >= (guint64) pitch0 * height, "neither %s nor a copy's "
          "layout: %s", layout, line);
    }
    fail_unless (hash == expected_hash (width, height, (guint) offset),
        "frame %" G_GUINT64_FORMAT ": fnv1a %016" G_GINT64_MODIFIER "x, "
        "expected %016" G_GINT64_MODIFIER "x", offset, hash,
        expected_hash (width, height, (guint) offset));
    n++;
  }
  g_free (layout);
  g_strfreev (lines);
  return n;
}

static void
run_example (gint frames, gint width, gint height)
{
  gchar *n = g_strdup_printf ("%d", frames);
  gchar *w = g_strdup_printf ("%d", width);
  gchar *h = g_strdup_printf ("%d", height);
  Node *ex, *p;

  /* the example starts first and waits for its producer */
  ex = spawn_example (frames);
  g_usleep (200 * 1000);
  p = spawn_node ("producer", "--frames", n, "--width", w, "--height", h,
      "--clients", "1", "--sink", "backend=" BACKEND, NULL);
  wait_node (p, 60);
  wait_node (ex, 60);
  assert_exit_ok (p);
  assert_exit_ok (ex);
  fail_unless_equals_uint64 (field (p, "published"), frames);
  fail_unless_equals_int (check_frames (ex, width, height), frames);
  node_free (p);
  node_free (ex);
  g_free (n);
  g_free (w);
  g_free (h);
}

GST_START_TEST (test_frames)
{
  run_example (12, 320, 240);
}

GST_END_TEST;

GST_START_TEST (test_padded_rows)
{
  /* an odd size: luma rows of 317 bytes and chroma rows of 318 at a
   * stride of 320, 89 chroma rows; only the visible bytes are hashed */
  run_example (6, 317, 177);
}

GST_END_TEST;

GST_START_TEST (test_stream_ends_early)
{
  Node *ex, *p;

  ex = spawn_example (8);
  g_usleep (200 * 1000);
  p = spawn_node ("producer", "--frames", "3", "--clients", "1", "--sink",
      "backend=" BACKEND, NULL);
  wait_node (p, 60);
  wait_node (ex, 60);
  assert_exit_ok (p);
  fail_unless (WIFEXITED (ex->status) && WEXITSTATUS (ex->status) == 1,
      "status %d: %s", ex->status, ex->err->str);
  fail_unless (strstr (ex->err->str, "ended after 3 of 8 frames") != NULL,
      "%s", ex->err->str);
  fail_unless_equals_int (check_frames (ex, 320, 240), 3);
  node_free (p);
  node_free (ex);
}

GST_END_TEST;

GST_START_TEST (test_no_producer)
{
  Node *ex;

  /* cuipcsrc gives up after its connect-timeout (10 s) */
  ex = spawn_example (1);
  wait_node (ex, 60);
  fail_unless (WIFEXITED (ex->status) && WEXITSTATUS (ex->status) == 1,
      "status %d: %s", ex->status, ex->err->str);
  fail_unless (strstr (ex->err->str, "No producer on") != NULL, "%s",
      ex->err->str);
  fail_unless_equals_int (check_frames (ex, 320, 240), 0);
  node_free (ex);
}

GST_END_TEST;

static Suite *
example_suite (void)
{
  Suite *s = suite_create ("example-" BACKEND);
  TCase *tc = cudaipc_test_case (s, "general", 120);

  tcase_add_checked_fixture (tc, nodes_setup, nodes_teardown);
  tcase_add_test (tc, test_frames);
  tcase_add_test (tc, test_padded_rows);
  tcase_add_test (tc, test_stream_ends_early);
  tcase_add_test (tc, test_no_producer);
  return s;
}

const CudaIpcTestMain cudaipc_test_main = {
  .name = "example-" BACKEND,
  .suite = example_suite,
#ifdef CUDAIPC_TEST_GPU
  .prepare = cudaipc_test_need_gpu,
#endif
};
