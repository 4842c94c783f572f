/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libs suite: the hints of user errors (gst/common/hints.h): each front
 * door's names for the settings a missing producer points to, and what a
 * refused negotiation says for frames in system memory (host backend) and
 * in CUDA memory (cuda backend, worded here without a GPU).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include <gst/check/gstcheck.h>

#include "common/hints.h"
#include "test-main.h"

static void
assert_has (const gchar * text, const gchar * part)
{
  fail_unless (strstr (text, part) != NULL, "\"%s\" lacks \"%s\"", text,
      part);
}

GST_START_TEST (test_no_producer_names_each_door)
{
  gchar *t;

  t = cudaipc_hint_no_producer (&cudaipc_setting_names_element, FALSE);
  fail_unless_equals_string (t, "start the producer, check socket-path, or "
      "raise connect-timeout (0 waits for as long as it takes)");
  g_free (t);
  t = cudaipc_hint_no_producer (&cudaipc_setting_names_element, TRUE);
  assert_has (t, "raise reconnect-timeout (0 waits");
  g_free (t);
  t = cudaipc_hint_no_producer (cudaipc_setting_names_lookup ("c"), FALSE);
  fail_unless_equals_string (t, "start the producer, check the socket path, "
      "or raise connect_timeout_ms (0 waits for as long as it takes)");
  g_free (t);
  t = cudaipc_hint_no_producer (cudaipc_setting_names_lookup ("c"), TRUE);
  fail_unless_equals_string (t, "start the producer, check the socket path, "
      "or raise reconnect_timeout_ms (0 waits for as long as it takes)");
  g_free (t);
  t = cudaipc_hint_stayed_away (cudaipc_setting_names_lookup ("python"),
      "@cam1", 30000);
  fail_unless_equals_string (t, "The producer on @cam1 stayed away for 30 s "
      "after it was lost: start it again, or raise reconnect_timeout to wait "
      "longer (None waits for ever)");
  g_free (t);
  t = cudaipc_hint_stayed_away (&cudaipc_setting_names_element, "@cam1", 300);
  assert_has (t, "stayed away for 300 ms after it was lost: start it again, "
      "or raise reconnect-timeout to wait longer (0 waits for ever)");
  g_free (t);
  t = cudaipc_hint_no_producer (cudaipc_setting_names_lookup ("python"),
      FALSE);
  fail_unless_equals_string (t, "start the producer, check socket_path, or "
      "raise connect_timeout (None waits for as long as it takes)");
  g_free (t);
  fail_unless (cudaipc_setting_names_lookup ("perl") == NULL);
}

GST_END_TEST;

static gchar *
not_negotiated (const gchar * caps, const gchar * accepted)
{
  GstCaps *c = gst_caps_from_string (caps);
  GstCaps *a = accepted ? gst_caps_from_string (accepted) : NULL;
  gchar *t = cudaipc_hint_not_negotiated (c, a);

  gst_caps_unref (c);
  gst_clear_caps (&a);
  GST_INFO ("%s", t);
  return t;
}

#define NV12 "format=NV12, width=1920, height=1080, framerate=30/1, " \
  "pixel-aspect-ratio=1/1, interlace-mode=progressive, colorimetry=bt709"

GST_START_TEST (test_not_negotiated_system_memory)
{
  gchar *t;

  t = not_negotiated ("video/x-raw, " NV12,
      "video/x-raw, format={ I420, YV12 }, width=[ 1, 2147483647 ]");
  /* the caps in short: what a user compares, not every field */
  fail_unless_equals_string (t, "Downstream does not accept the producer's "
      "caps video/x-raw, format=NV12, width=1920, height=1080, "
      "framerate=30/1; it takes video/x-raw, format={ I420, YV12 }: put "
      "videoconvert (videoscale for another size) after the consumer");
  g_free (t);
  /* downstream in GPU memory only */
  t = not_negotiated ("video/x-raw, " NV12,
      "video/x-raw(memory:CUDAMemory), format=NV12");
  assert_has (t, "it takes video/x-raw(memory:CUDAMemory), format=NV12: ");
  assert_has (t, "put cudaupload after the consumer");
  g_free (t);
  t = not_negotiated ("video/x-raw, " NV12, NULL);
  assert_has (t, "videoconvert");
  g_free (t);
}

GST_END_TEST;

GST_START_TEST (test_not_negotiated_cuda_memory)
{
  gchar *t;

  t = not_negotiated ("video/x-raw(memory:CUDAMemory), " NV12,
      "video/x-raw(memory:CUDAMemory), format=RGBA");
  assert_has (t, "the producer's caps video/x-raw(memory:CUDAMemory), "
      "format=NV12, width=1920, height=1080, framerate=30/1; ");
  assert_has (t, "put cudaconvert (cudascale for another size) after the "
      "consumer");
  g_free (t);
  /* downstream in system memory only: out of GPU memory first */
  t = not_negotiated ("video/x-raw(memory:CUDAMemory), " NV12,
      "video/x-raw, format=RGBA");
  assert_has (t, "put cudadownload after the consumer");
  assert_has (t, "videoconvert");
  g_free (t);
}

GST_END_TEST;

static Suite *
hints_suite (void)
{
  Suite *s = suite_create ("hints");
  TCase *tc = cudaipc_test_case (s, "general", 30);

  tcase_add_test (tc, test_no_producer_names_each_door);
  tcase_add_test (tc, test_not_negotiated_system_memory);
  tcase_add_test (tc, test_not_negotiated_cuda_memory);
  return s;
}

const CudaIpcTestMain cudaipc_test_main = {
  .name = "hints",
  .suite = hints_suite,
};
