/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cuipcsink's errors and warnings (cudaipcsink-report.h): the words are
 * the publisher's (gst/producer/publisher.h), the domains and codes
 * GStreamer's.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "cudaipcsink-report.h"
#include "common/error.h"
#include "metas/metas.h"

GST_DEBUG_CATEGORY_EXTERN (gst_cu_ipc_sink_debug);
#define GST_CAT_DEFAULT gst_cu_ipc_sink_debug

void
gst_cu_ipc_sink_post_start_error (GstElement * self,
    CudaIpcPublisherFailed failed, const GError * error,
    const CudaIpcPublisherConfig * config)
{
  g_autofree gchar *debug = NULL;
  g_autofree gchar *text = cudaipc_publisher_failure_text (failed, error,
      config, &debug);

  if (failed >= CUDAIPC_PUBLISHER_FAILED_METAS &&
      failed <= CUDAIPC_PUBLISHER_FAILED_SOCKET_NAME)
    GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS, ("%s", text), ("%s", debug));
  else if (failed == CUDAIPC_PUBLISHER_FAILED_DEVICE &&
      (g_error_matches (error, CUDAIPC_ERROR, CUDAIPC_ERROR_NO_DRIVER) ||
          g_error_matches (error, CUDAIPC_ERROR, CUDAIPC_ERROR_NO_DEVICE)))
    GST_ELEMENT_ERROR (self, RESOURCE, NOT_FOUND, ("%s", text), ("%s", debug));
  else if ((failed == CUDAIPC_PUBLISHER_FAILED_NONE ||
          failed == CUDAIPC_PUBLISHER_FAILED_SERVER) &&
      g_error_matches (error, CUDAIPC_ERROR, CUDAIPC_ERROR_BUSY))
    GST_ELEMENT_ERROR (self, RESOURCE, BUSY, ("%s", text), ("%s", debug));
  else
    GST_ELEMENT_ERROR (self, RESOURCE, OPEN_READ_WRITE, ("%s", text),
        ("%s", debug));
}

void
gst_cu_ipc_sink_post_caps_error (GstElement * self, GstCaps * caps,
    const GError * error)
{
  /* a render() that cannot make its ring says NO_SPACE_LEFT too */
  if (g_error_matches (error, CUDAIPC_ERROR, CUDAIPC_ERROR_LIMIT))
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION, ("%s", error->message),
        ("caps %" GST_PTR_FORMAT, caps));
  else
    GST_ELEMENT_ERROR (self, RESOURCE, NO_SPACE_LEFT, ("%s", error->message),
        ("caps %" GST_PTR_FORMAT, caps));
}

void
gst_cu_ipc_sink_warn_metas_dropped (GstElement * self, guint dropped)
{
  GST_ELEMENT_WARNING (self, STREAM, ENCODE,
      ("%u metas of a frame were left out: beyond what a frame carries "
          "(%d bytes, %d metas, %d items in one)", dropped,
          CUDAIPC_MAX_META_BYTES, CUDAIPC_MAX_METAS, CUDAIPC_MAX_META_ITEMS),
      ("counted in stats metas-dropped; warned once"));
}

GstFlowReturn
gst_cu_ipc_sink_post_publish_error (GstElement * self,
    CudaIpcPublisher * publisher, CudaIpcPublishResult res,
    const CudaIpcPublisherFrame * frame, const CudaIpcPublished * out,
    const GError * error)
{
  g_autofree gchar *debug = NULL;
  g_autofree gchar *text = cudaipc_publisher_result_text (publisher,
      res, frame, out, error, &debug);

  if (res == CUDAIPC_PUBLISH_NO_CONTEXT)
    GST_ELEMENT_ERROR (self, RESOURCE, OPEN_READ_WRITE, ("%s", text), (NULL));
  else if (res == CUDAIPC_PUBLISH_NO_RING)
    GST_ELEMENT_ERROR (self, RESOURCE, NO_SPACE_LEFT, ("%s", text),
        ("%s", debug));
  else
    GST_ELEMENT_ERROR (self, RESOURCE, WRITE, ("%s", text), ("%s", debug));
  return GST_FLOW_ERROR;
}
