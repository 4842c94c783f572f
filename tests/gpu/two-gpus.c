/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * gpu suite, two GPUs: a producer with its ring on device 0 and consumers
 * on device 1, in separate processes (ipc-node). Where the two GPUs can
 * access each other as peers the consumer maps the slots for device 1 and
 * reads them in place: every frame is checked byte for byte, and its frame
 * rate is printed beside the same consumer's on device 0. Where they
 * cannot (two GPUs without peer access between them), or with
 * peer-access=false, the consumer on device 1 is refused with an error
 * that names the device to use, and a consumer on that device reads every
 * frame.
 *
 * The whole test exits 77 (a skip) where fewer than two GPUs are seen,
 * with the probe's reason.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gst/check/gstcheck.h>

#include "ipc-nodes.h"
#include "test-main.h"
#include "test-pattern.h"

#define FRAMES "300"

/* Runs a producer on device 0 and one consumer with @src_props; returns
 * the consumer's frames/s, or -1 when the consumer failed (its node is
 * then left in *@out for the caller to look at). */
static gdouble
run_pair (const gchar * src_props, const gchar * extra, Node ** out)
{
  Node *c, *p;
  gdouble fps = -1;

  c = spawn_node ("consumer", "--src", src_props, extra, NULL);
  p = spawn_node ("producer", "--frames", FRAMES, "--width", "1920",
      "--height", "1080", "--clients", "1", "--sink",
      "backend=cuda device-id=0", NULL);
  wait_node (c, 90);
  /* a refused consumer never counts as a client: stop the producer */
  if (!WIFEXITED (c->status) || WEXITSTATUS (c->status) != 0)
    kill (p->pid, SIGTERM);
  wait_node (p, 90);
  if (WIFEXITED (c->status) && WEXITSTATUS (c->status) == 0) {
    guint64 us = field (c, "elapsed_us");

    assert_exit_ok (p);
    fail_unless_equals_uint64 (field (c, "frames"), atoi (FRAMES));
    fail_unless_equals_uint64 (field (c, "bad"), 0);
    fail_unless_equals_uint64 (field (c, "recheck_bad"), 0);
    fps = us > 0 ? (atoi (FRAMES) - 1) * 1e6 / us : 0;
  }
  node_free (p);
  if (out)
    *out = c;
  else
    node_free (c);
  return fps;
}

/* Runs a consumer on device 1 with @extra (may be NULL): its frames/s, or
 * -1 where it was refused for want of peer access between the two GPUs,
 * once the refusal was checked to say so and to name the device to use
 * instead (device 0, the producer's). Any other failure fails the test. */
static gdouble
run_on_device_1 (const gchar * extra, Node ** out)
{
  Node *c = NULL;
  gdouble fps = run_pair ("device-id=1", extra, &c);
  gboolean refused = fps < 0 && strstr (c->err->str, "cannot access as a peer");

  fail_if (fps < 0 && !refused, "the consumer on device 1 failed: %s",
      c->err->str);
  if (refused) {
    fail_unless (strstr (c->err->str, "set device-id=0") != NULL,
        "the refusal does not name the producer's device: %s", c->err->str);
    g_print ("devices 0 and 1 are not peers: the consumer on device 1 was "
        "refused with: %s", c->err->str);
  }
  if (out)
    *out = c;
  else
    node_free (c);
  return fps;
}

GST_START_TEST (test_peer_reads_bit_exact)
{
  Node *c = NULL;
  gdouble same, peer;

  peer = run_on_device_1 (NULL, &c);
  if (peer >= 0)
    fail_unless_equals_uint64 (field (c, "peer"), 1);
  node_free (c);
  /* peers: the comparison; not peers: the device the refusal named, which
   * must then serve the consumer */
  same = run_pair ("device-id=0", NULL, NULL);
  fail_unless (same > 0);
  /* paced by the producer's appsrc: a comparison, not a limit */
  if (peer >= 0)
    g_print ("1080p NV12, %s frames: consumer on device 0 %.0f frames/s, on "
        "device 1 through peer access %.0f frames/s\n", FRAMES, same, peer);
  else
    g_print ("1080p NV12, %s frames: consumer on device 0, as the refusal "
        "said, %.0f frames/s\n", FRAMES, same);
}

GST_END_TEST;

GST_START_TEST (test_peer_into_gst_cuda_memory)
{
  /* cudadownload on device 1 reads frames of device 0's ring */
  run_on_device_1 ("--download", NULL);
}

GST_END_TEST;

GST_START_TEST (test_peer_access_off_refused)
{
  Node *c = NULL;

  fail_unless (run_pair ("device-id=1 peer-access=false", NULL, &c) < 0);
  fail_unless (strstr (c->err->str, "device-id=0") != NULL,
      "the error does not name the producer's device: %s", c->err->str);
  node_free (c);
}

GST_END_TEST;

static Suite *
peer_suite (void)
{
  Suite *s = suite_create ("gpu-two-gpus");
  TCase *tc = cudaipc_test_case (s, "general", 300);

  tcase_add_checked_fixture (tc, nodes_setup, nodes_teardown);
  tcase_add_test (tc, test_peer_reads_bit_exact);
  tcase_add_test (tc, test_peer_into_gst_cuda_memory);
  tcase_add_test (tc, test_peer_access_off_refused);
  return s;
}

/* Runs the suite only where ipc-node sees two GPUs; CUDA is never opened
 * in this process: the nodes do it. */
static gint
probe_two_gpus (void)
{
  const gchar *node = g_getenv ("CUDAIPC_IPC_NODE");
  gchar *probe[] = { (gchar *) node, (gchar *) "probe",
    (gchar *) "--min-devices", (gchar *) "2", NULL
  };
  gchar *said = NULL;
  gint status = 0;
  GError *err = NULL;

  if (node == NULL) {
    g_printerr ("CUDAIPC_IPC_NODE is not set (meson test sets it)\n");
    return 1;
  }
  if (!g_spawn_sync (NULL, probe, NULL, G_SPAWN_DEFAULT, NULL, NULL, &said,
          NULL, &status, &err)) {
    g_printerr ("cannot run %s: %s\n", node, err->message);
    return 1;
  }
  if (WIFEXITED (status) && WEXITSTATUS (status) == CUDAIPC_TEST_SKIP) {
    /* the probe says why: no GPU, or fewer than two */
    g_print ("SKIP: %s", said);
    g_free (said);
    return CUDAIPC_TEST_SKIP;
  }
  if (!WIFEXITED (status) || WEXITSTATUS (status) != 0) {
    g_printerr ("the probe failed (status %d): %s\n", status, said);
    return 1;
  }
  g_print ("%s", said);
  g_free (said);
  return 0;
}

const CudaIpcTestMain cudaipc_test_main = {
  .name = "gpu-two-gpus",
  .suite = peer_suite,
  .prepare = probe_two_gpus,
};
