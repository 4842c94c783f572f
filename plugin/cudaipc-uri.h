/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The cuipc:// URI of both elements (GstURIHandler), so that playbin,
 * uridecodebin, urisourcebin, gst_element_make_from_uri() and a URI in a
 * gst-launch-1.0 line reach them:
 *
 *   cuipc:///run/cam1.sock              socket-path=/run/cam1.sock
 *   cuipc://@cam1?max-held=4            socket-path=@cam1 max-held=4
 *
 * The part before '?' is the socket, percent-decoded: an absolute path,
 * or '@' and a Linux abstract name. The query holds the element's own
 * writable properties (those its class installs, not those of
 * GstBaseSrc or GstBaseSink) as name=value, values percent-decoded and
 * read as gst-launch-1.0 reads them. A URI is the whole setting: set_uri
 * puts every such property the URI leaves out back to its default, and
 * get_uri names each one that differs from its default, so
 * set_uri (get_uri ()) gives the same settings on any element of the
 * type. A URI that cannot be read, an unknown parameter or a value out of
 * range fails set_uri with GST_URI_ERROR_BAD_URI and changes nothing; a
 * socket name too long to bind fails with GST_URI_ERROR_BAD_REFERENCE;
 * set_uri on a running element (PAUSED or PLAYING) fails with
 * GST_URI_ERROR_BAD_STATE.
 *
 * Threads: get_uri and set_uri may be called from any thread; they read
 * and write the element through its properties, which lock.
 */
#pragma once

#include <gst/gst.h>

G_BEGIN_DECLS

/* The scheme, without "://". */
#define CUDAIPC_URI_SCHEME "cuipc"

/* Interface init functions for G_IMPLEMENT_INTERFACE (GST_TYPE_URI_HANDLER,
 * ...): the sink's is a GST_URI_SINK, the source's a GST_URI_SRC. */
void cudaipc_uri_sink_handler_init (gpointer g_iface, gpointer iface_data);
void cudaipc_uri_src_handler_init (gpointer g_iface, gpointer iface_data);

G_END_DECLS
