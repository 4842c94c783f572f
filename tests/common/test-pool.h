/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What an element that writes its output does to get buffers from
 * downstream, for the test and benchmark programs that act as upstream of
 * cuipcsink (elements-in-place, cudaipc-bench --in-place): no gst-check
 * needed.
 *
 * cudaipc_test_downstream_pool() sends an allocation query for @caps from
 * @srcpad to its peer, and configures and activates the first pool the
 * answer proposes for frames of @size bytes, with the video meta option.
 * NULL where none was proposed or it refused the configuration.
 */
#pragma once

#include <gst/gst.h>
#include <gst/video/video.h>

static inline GstBufferPool *
cudaipc_test_downstream_pool (GstPad * srcpad, GstCaps * caps, gsize size)
{
  GstQuery *q = gst_query_new_allocation (caps, TRUE);
  GstBufferPool *pool = NULL;

  if (gst_pad_peer_query (srcpad, q) &&
      gst_query_get_n_allocation_pools (q) > 0)
    gst_query_parse_nth_allocation_pool (q, 0, &pool, NULL, NULL, NULL);
  gst_query_unref (q);
  if (pool) {
    GstStructure *config = gst_buffer_pool_get_config (pool);

    gst_buffer_pool_config_set_params (config, caps, (guint) size, 0, 0);
    gst_buffer_pool_config_add_option (config,
        GST_BUFFER_POOL_OPTION_VIDEO_META);
    if (!gst_buffer_pool_set_config (pool, config) ||
        !gst_buffer_pool_set_active (pool, TRUE))
      g_clear_pointer (&pool, gst_object_unref);
  }
  return pool;
}
