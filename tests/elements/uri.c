/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * elements suite: the cuipc:// URI of cuipcsink and cuipcsrc
 * (plugin/cudaipc-uri.h), host backend.
 *
 *  - Every registered name of each element is a URI handler of the right
 *    kind for "cuipc".
 *  - set_uri reads the socket and the parameters, get_uri gives a URI that
 *    sets the same again on a fresh element, and a URI sets every
 *    parameter (those it leaves out go back to their defaults).
 *  - Each bad URI fails with its error code and a message that names
 *    what is wrong, and changes nothing.
 *  - Frames go from a producer made by gst_element_make_from_uri() to a
 *    consumer in a gst-launch line given as a URI, and to playbin (where
 *    the playback plugin is installed: not in the GStreamer 1.26 kit).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>
#include <unistd.h>

#include <gst/check/gstcheck.h>

#include "test-main.h"
#include "test-util.h"

#define N_FRAMES 10

static gchar *sock;

static void
setup (void)
{
  sock = cudaipc_test_socket_path ("uri", "u.sock");
}

static void
teardown (void)
{
  cudaipc_test_socket_remove (&sock);
}

/* An abstract socket name of this test's alone. */
static gchar *
abstract_name (const gchar * tag)
{
  static gint serial;

  return g_strdup_printf ("@cudaipc-uri-%s-%d-%d", tag, (gint) getpid (),
      g_atomic_int_add (&serial, 1));
}

static GstElement *
make (const gchar * factory)
{
  GstElement *e = gst_element_factory_make (factory, NULL);

  fail_unless (e != NULL, "no %s", factory);
  return gst_object_ref_sink (e);
}

static gboolean
set_uri (GstElement * e, const gchar * uri, GError ** err)
{
  return gst_uri_handler_set_uri (GST_URI_HANDLER (e), uri, err);
}

/* The value of @prop as gst-launch-1.0 would write it. */
static gchar *
get_text (GstElement * e, const gchar * prop)
{
  GParamSpec *ps = g_object_class_find_property (G_OBJECT_GET_CLASS (e),
      prop);
  GValue v = G_VALUE_INIT;
  gchar *text;

  fail_unless (ps != NULL, "no property %s", prop);
  g_value_init (&v, ps->value_type);
  g_object_get_property (G_OBJECT (e), prop, &v);
  text = G_VALUE_HOLDS_STRING (&v) ? g_value_dup_string (&v) :
      gst_value_serialize (&v);
  g_value_unset (&v);
  return text;
}

static void
assert_prop (GstElement * e, const gchar * prop, const gchar * expected)
{
  g_autofree gchar *text = get_text (e, prop);

  fail_unless (g_strcmp0 (text, expected) == 0, "%s: %s is \"%s\", not "
      "\"%s\"", G_OBJECT_TYPE_NAME (e), prop, GST_STR_NULL (text),
      GST_STR_NULL (expected));
}

GST_START_TEST (test_handlers_registered)
{
  static const struct
  {
    const gchar *name;
    GstURIType type;
  } names[] = {
    {"cuipcsink", GST_URI_SINK}, {"cuipcsrc", GST_URI_SRC},
    {"cudaipcsink", GST_URI_SINK}, {"cudaipcsrc", GST_URI_SRC},
  };
  guint found = 0;

  for (guint i = 0; i < G_N_ELEMENTS (names); i++) {
    GstElementFactory *f = gst_element_factory_find (names[i].name);
    const gchar *const *protocols;

    /* cudaipc* only where the plugin registers them (coexist.c checks
     * where that is) */
    if (f == NULL || g_strcmp0 (gst_plugin_feature_get_plugin_name
            (GST_PLUGIN_FEATURE (f)), "cudaipc") != 0) {
      fail_if (g_str_has_prefix (names[i].name, "cuipc"), "no %s",
          names[i].name);
      g_clear_object (&f);
      continue;
    }
    found++;
    fail_unless_equals_int (gst_element_factory_get_uri_type (f),
        names[i].type);
    protocols = gst_element_factory_get_uri_protocols (f);
    fail_unless (protocols != NULL && g_strv_length ((gchar **) protocols)
        == 1 && strcmp (protocols[0], "cuipc") == 0, "%s: protocols",
        names[i].name);
    /* no rank: nothing autoplugs them (autovideosink, playsink and
     * decodebin take MARGINAL and up); URIs reach them all the same */
    fail_unless_equals_int (gst_plugin_feature_get_rank (GST_PLUGIN_FEATURE
            (f)), GST_RANK_NONE);
    gst_object_unref (f);
  }
  fail_unless (found >= 2);
  fail_unless (gst_uri_protocol_is_supported (GST_URI_SRC, "cuipc"));
  fail_unless (gst_uri_protocol_is_supported (GST_URI_SINK, "cuipc"));
}

GST_END_TEST;

/* set_uri of @uri on a fresh @factory, then the URI it gives back on
 * another: both hold the same settings, and the second gives the same
 * URI again. Returns the first element. */
static GstElement *
round_trip (const gchar * factory, const gchar * uri)
{
  GstElement *a = make (factory), *b = make (factory);
  g_autofree gchar *back = NULL, *again = NULL;
  g_autofree GParamSpec **props = NULL;
  GError *err = NULL;
  guint n = 0;

  fail_unless (set_uri (a, uri, &err), "%s: %s", uri, err ? err->message : "");
  back = gst_uri_handler_get_uri (GST_URI_HANDLER (a));
  fail_unless (back != NULL && g_str_has_prefix (back, "cuipc://"), "%s",
      GST_STR_NULL (back));
  fail_unless (set_uri (b, back, &err), "%s: %s", back, err ? err->message :
      "");
  props = g_object_class_list_properties (G_OBJECT_GET_CLASS (a), &n);
  for (guint i = 0; i < n; i++) {
    g_autofree gchar *va = NULL, *vb = NULL;

    if (!(props[i]->flags & G_PARAM_READABLE) ||
        g_type_is_a (props[i]->value_type, G_TYPE_BOXED) ||
        strcmp (props[i]->name, "name") == 0 ||
        strcmp (props[i]->name, "parent") == 0)
      continue;
    va = get_text (a, props[i]->name);
    vb = get_text (b, props[i]->name);
    fail_unless (g_strcmp0 (va, vb) == 0, "%s: %s is \"%s\" from %s but "
        "\"%s\" from %s", factory, props[i]->name, GST_STR_NULL (va), uri,
        GST_STR_NULL (vb), back);
  }
  again = gst_uri_handler_get_uri (GST_URI_HANDLER (b));
  fail_unless_equals_string (again, back);
  gst_object_unref (b);
  return a;
}

GST_START_TEST (test_round_trip)
{
  GstElement *e;

  /* a path, percent-decoded; parameters of the source */
  e = round_trip ("cuipcsrc", "cuipc:///tmp/a%20b%3Fc.sock?max-held=4&"
      "reconnect=false&client-name=cam%26one&connect-timeout=250&"
      "leaky-type=downstream");
  assert_prop (e, "socket-path", "/tmp/a b?c.sock");
  assert_prop (e, "max-held", "4");
  assert_prop (e, "reconnect", "false");
  assert_prop (e, "client-name", "cam&one");
  assert_prop (e, "connect-timeout", "250");
  assert_prop (e, "leaky-type", "downstream");
  gst_object_unref (e);

  /* an abstract name; parameters of the sink, enums by their nicks */
  e = round_trip ("cuipcsink", "cuipc://@cam1?backend=host&ring-size=6&"
      "on-full=drop&allowed-users=alice,bob&socket-mode=0640&"
      "in-place=true&enable-last-sample=true");
  assert_prop (e, "socket-path", "@cam1");
  assert_prop (e, "backend", "host");
  assert_prop (e, "ring-size", "6");
  assert_prop (e, "on-full", "drop");
  assert_prop (e, "allowed-users", "alice,bob");
  assert_prop (e, "socket-mode", "416");
  assert_prop (e, "in-place", "true");
  assert_prop (e, "enable-last-sample", "true");
  gst_object_unref (e);

  /* the scheme is case-insensitive, as every URI scheme */
  e = round_trip ("cuipcsrc", "CUIPC://@x");
  assert_prop (e, "socket-path", "@x");
  gst_object_unref (e);
}

GST_END_TEST;

GST_START_TEST (test_uri_is_the_whole_setting)
{
  GstElement *src = make ("cuipcsrc");
  g_autofree gchar *uri = NULL, *def = NULL, *cwd = g_get_current_dir ();
  g_autofree gchar *abs = NULL;
  GError *err = NULL;

  /* nothing to say before a socket is known */
  fail_unless (gst_uri_handler_get_uri (GST_URI_HANDLER (src)) == NULL);
  /* a fresh element is at its properties' defaults: no parameter */
  for (guint i = 0; i < 2; i++) {
    GstElement *fresh = make (i ? "cuipcsink" : "cuipcsrc");

    g_object_set (fresh, "socket-path", "@x", NULL);
    uri = gst_uri_handler_get_uri (GST_URI_HANDLER (fresh));
    fail_unless_equals_string (uri, "cuipc://@x");
    g_clear_pointer (&uri, g_free);
    gst_object_unref (fresh);
  }
  def = get_text (src, "max-held");
  fail_unless (set_uri (src, "cuipc://@a?max-held=7", &err));
  assert_prop (src, "max-held", "7");
  /* a parameter left out goes back to its default */
  fail_unless (set_uri (src, "cuipc://@b", &err));
  assert_prop (src, "max-held", def);
  assert_prop (src, "socket-path", "@b");
  uri = gst_uri_handler_get_uri (GST_URI_HANDLER (src));
  fail_unless_equals_string (uri, "cuipc://@b");
  g_clear_pointer (&uri, g_free);

  /* properties set by hand show in the URI */
  g_object_set (src, "max-held", 3, "socket-path", "/run/c d.sock", NULL);
  uri = gst_uri_handler_get_uri (GST_URI_HANDLER (src));
  fail_unless_equals_string (uri, "cuipc:///run/c%20d.sock?max-held=3");
  g_clear_pointer (&uri, g_free);

  /* a relative socket path is named from the root */
  g_object_set (src, "socket-path", "rel.sock", NULL);
  uri = gst_uri_handler_get_uri (GST_URI_HANDLER (src));
  abs = g_strconcat ("cuipc://", cwd, "/rel.sock?max-held=3", NULL);
  /* (the test's folder has no character to escape) */
  fail_unless_equals_string (uri, abs);
  gst_object_unref (src);
}

GST_END_TEST;

/* @uri fails on @factory with @code and a message holding @words. */
static void
assert_refused (const gchar * factory, const gchar * uri, gint code,
    const gchar * words)
{
  GstElement *e = make (factory);
  GError *err = NULL;

  fail_unless (set_uri (e, "cuipc://@before?max-held=3", NULL) ||
      set_uri (e, "cuipc://@before?ring-size=3", NULL));
  fail_if (set_uri (e, uri, &err), "%s took %s", factory, uri);
  fail_unless (err != NULL && err->domain == GST_URI_ERROR, "%s", uri);
  fail_unless (err->code == code, "%s: code %d, not %d (%s)", uri,
      err->code, code, err->message);
  fail_unless (strstr (err->message, words) != NULL, "%s: \"%s\" does not "
      "say \"%s\"", uri, err->message, words);
  GST_INFO ("%s: %s", uri, err->message);
  g_error_free (err);
  /* nothing changed */
  assert_prop (e, "socket-path", "@before");
  if (g_str_equal (factory, "cuipcsrc"))
    assert_prop (e, "max-held", "3");
  else
    assert_prop (e, "ring-size", "3");
  gst_object_unref (e);
}

GST_START_TEST (test_bad_uris)
{
  g_autofree gchar *long_name = g_strnfill (200, 'x');
  g_autofree gchar *too_long = g_strconcat ("cuipc://@", long_name, NULL);

  assert_refused ("cuipcsrc", "cuipc://@a?max-held=2&bogus=1",
      GST_URI_ERROR_BAD_URI, "unknown parameter \"bogus\"");
  /* the producer's setting, not the consumer's */
  assert_refused ("cuipcsrc", "cuipc://@a?ring-size=4",
      GST_URI_ERROR_BAD_URI, "\"ring-size\" (a setting of the producer");
  assert_refused ("cuipcsink", "cuipc://@a?max-held=4",
      GST_URI_ERROR_BAD_URI, "\"max-held\" (a setting of the consumer");
  /* GstBaseSrc's, not ours */
  assert_refused ("cuipcsrc", "cuipc://@a?num-buffers=4",
      GST_URI_ERROR_BAD_URI, "\"num-buffers\" (a property of the base");
  /* read-only, here and on the sink */
  assert_refused ("cuipcsrc", "cuipc://@a?stats=1",
      GST_URI_ERROR_BAD_URI, "\"stats\" (read-only)");
  assert_refused ("cuipcsink", "cuipc://@a?num-clients=1",
      GST_URI_ERROR_BAD_URI, "\"num-clients\" (read-only)");
  assert_refused ("cuipcsrc", "cuipc://@a?num-clients=1",
      GST_URI_ERROR_BAD_URI, "\"num-clients\"; known");
  assert_refused ("cuipcsink", "cuipc://@a?socket-path=/x",
      GST_URI_ERROR_BAD_URI, "the socket is the URI's path");
  assert_refused ("cuipcsrc", "cuipc://@a?max-held=2&max-held=abc",
      GST_URI_ERROR_BAD_URI, "max-held is given twice");
  assert_refused ("cuipcsrc", "cuipc://@a?max-held=abc",
      GST_URI_ERROR_BAD_URI, "max-held: \"abc\" is not a valid");
  assert_refused ("cuipcsrc", "cuipc://@a?max-held",
      GST_URI_ERROR_BAD_URI, "max-held has no value");
  assert_refused ("cuipcsink", "cuipc://@a?ring-size=100000",
      GST_URI_ERROR_BAD_URI, "ring-size: \"100000\" is out of range");
  assert_refused ("cuipcsink", "cuipc://@a?backend=gpu",
      GST_URI_ERROR_BAD_URI, "backend: \"gpu\"");
  assert_refused ("cuipcsrc", "cuipc://@a?client-name=%zz",
      GST_URI_ERROR_BAD_URI, "bad %-escape");
  assert_refused ("cuipcsrc", "cuipc://relative/cam.sock",
      GST_URI_ERROR_BAD_URI, "absolute path");
  assert_refused ("cuipcsrc", "cuipc://", GST_URI_ERROR_BAD_URI,
      "absolute path");
  assert_refused ("cuipcsrc", "cuipc://@", GST_URI_ERROR_BAD_URI,
      "no socket name");
  assert_refused ("cuipcsrc", "cuipc://@a%00b", GST_URI_ERROR_BAD_URI,
      "bad %-escape");
  assert_refused ("cuipcsink", "cuipc:///run/a%2", GST_URI_ERROR_BAD_URI,
      "bad %-escape");
  assert_refused ("cuipcsrc", "cuipc://@a#b", GST_URI_ERROR_BAD_URI,
      "fragment");
  assert_refused ("cuipcsrc", too_long, GST_URI_ERROR_BAD_REFERENCE,
      "more than the 107");
  assert_refused ("cuipcsink", "file:///tmp/a",
      GST_URI_ERROR_UNSUPPORTED_PROTOCOL, "file");
}

GST_END_TEST;

/* A running element keeps its URI. */
GST_START_TEST (test_no_change_while_running)
{
  GstElement *sink = make ("cuipcsink");
  g_autofree gchar *uri = g_strconcat ("cuipc://", sock, "?backend=host",
      NULL);
  GError *err = NULL;

  fail_unless (set_uri (sink, uri, &err));
  fail_unless (gst_element_set_state (sink, GST_STATE_PAUSED) ==
      GST_STATE_CHANGE_ASYNC);
  fail_if (set_uri (sink, "cuipc://@other?backend=host", &err));
  fail_unless (g_error_matches (err, GST_URI_ERROR,
          GST_URI_ERROR_BAD_STATE), "%s", err->message);
  g_clear_error (&err);
  assert_prop (sink, "socket-path", sock);
  fail_unless_equals_int (gst_element_set_state (sink, GST_STATE_NULL),
      GST_STATE_CHANGE_SUCCESS);
  fail_unless (set_uri (sink, "cuipc://@other?backend=host", &err));
  gst_object_unref (sink);
}

GST_END_TEST;

GST_START_TEST (test_make_from_uri)
{
  GError *err = NULL;
  GstElement *e;

  e = gst_element_make_from_uri (GST_URI_SINK, "cuipc://@x?backend=host",
      NULL, &err);
  fail_unless (e != NULL, "%s", err ? err->message : "");
  fail_unless_equals_string (G_OBJECT_TYPE_NAME (e), "GstCuIpcSink");
  assert_prop (e, "backend", "host");
  assert_prop (e, "socket-path", "@x");
  gst_object_unref (gst_object_ref_sink (e));

  e = gst_element_make_from_uri (GST_URI_SRC, "cuipc:///run/cam1.sock",
      NULL, &err);
  fail_unless (e != NULL, "%s", err ? err->message : "");
  fail_unless_equals_string (G_OBJECT_TYPE_NAME (e), "GstCuIpcSrc");
  assert_prop (e, "socket-path", "/run/cam1.sock");
  gst_object_unref (gst_object_ref_sink (e));

  /* the handler's error reaches the caller */
  e = gst_element_make_from_uri (GST_URI_SRC, "cuipc://@x?bogus=1", NULL, &err);
  fail_unless (e == NULL);
  fail_unless (err != NULL && strstr (err->message, "bogus") != NULL);
  g_clear_error (&err);
}

GST_END_TEST;

/* Frames seen by a fakesink with signal-handoffs. */
static void
count_frame (GstElement * sink, GstBuffer * buf, GstPad * pad, gpointer data)
{
  g_atomic_int_inc ((gint *) data);
}

/* Runs @producer and @consumer until @count reaches N_FRAMES (at most
 * 20 s); fails on an error from either. */
static void
run_until_frames (GstElement * producer, GstElement * consumer, gint * count)
{
  GstBus *pbus = gst_element_get_bus (producer);
  GstBus *cbus = gst_element_get_bus (consumer);
  gint64 deadline = g_get_monotonic_time () + 20 * G_USEC_PER_SEC;

  fail_if (gst_element_set_state (consumer, GST_STATE_PLAYING) ==
      GST_STATE_CHANGE_FAILURE);
  fail_if (gst_element_set_state (producer, GST_STATE_PLAYING) ==
      GST_STATE_CHANGE_FAILURE);
  while (g_atomic_int_get (count) < N_FRAMES &&
      g_get_monotonic_time () < deadline) {
    GstBus *buses[] = { pbus, cbus };

    for (guint i = 0; i < 2; i++) {
      GstMessage *msg = gst_bus_timed_pop_filtered (buses[i],
          20 * GST_MSECOND, GST_MESSAGE_ERROR);
      GError *err = NULL;
      gchar *dbg = NULL;

      if (msg == NULL)
        continue;
      gst_message_parse_error (msg, &err, &dbg);
      fail ("%s: %s (%s)", GST_MESSAGE_SRC_NAME (msg), err->message,
          GST_STR_NULL (dbg));
    }
  }
  fail_unless (g_atomic_int_get (count) >= N_FRAMES, "%d of %d frames",
      g_atomic_int_get (count), N_FRAMES);
  gst_element_set_state (consumer, GST_STATE_NULL);
  gst_element_set_state (producer, GST_STATE_NULL);
  gst_object_unref (pbus);
  gst_object_unref (cbus);
}

/* videotestsrc ! the sink gst_element_make_from_uri() makes of
 * cuipc://SOCKET?backend=host */
static GstElement *
producer_from_uri (const gchar * socket)
{
  g_autofree gchar *escaped = g_uri_escape_string (socket, "/@", FALSE);
  g_autofree gchar *uri = g_strconcat ("cuipc://", escaped,
      "?backend=host&ring-size=3", NULL);
  GstElement *pipe = gst_pipeline_new ("producer");
  GstElement *src = gst_element_factory_make ("videotestsrc", NULL);
  GstElement *filter = gst_element_factory_make ("capsfilter", NULL);
  GError *err = NULL;
  GstElement *sink = gst_element_make_from_uri (GST_URI_SINK, uri, NULL,
      &err);
  GstCaps *caps = gst_caps_from_string ("video/x-raw,format=NV12,"
      "width=64,height=48,framerate=100/1");

  fail_unless (sink != NULL, "%s: %s", uri, err ? err->message : "");
  g_object_set (src, "is-live", TRUE, NULL);
  g_object_set (filter, "caps", caps, NULL);
  gst_caps_unref (caps);
  gst_bin_add_many (GST_BIN (pipe), src, filter, sink, NULL);
  fail_unless (gst_element_link_many (src, filter, sink, NULL));
  return pipe;
}

GST_START_TEST (test_frames_through_uris)
{
  g_autofree gchar *desc = g_strdup_printf ("cuipc://%s?max-held=2 ! "
      "fakesink name=out signal-handoffs=true sync=false", sock);
  GstElement *producer = producer_from_uri (sock);
  GError *err = NULL;
  GstElement *consumer = gst_parse_launch (desc, &err);
  GstElement *out;
  gint count = 0;

  fail_unless (consumer != NULL, "%s: %s", desc, err ? err->message : "");
  out = gst_bin_get_by_name (GST_BIN (consumer), "out");
  g_signal_connect (out, "handoff", G_CALLBACK (count_frame), &count);
  run_until_frames (producer, consumer, &count);
  gst_object_unref (out);
  gst_object_unref (consumer);
  gst_object_unref (producer);
}

GST_END_TEST;

/* playbin finds the source by the URI's scheme alone, with no rank */
GST_START_TEST (test_playbin)
{
  g_autofree gchar *name = abstract_name ("playbin");
  g_autofree gchar *uri = g_strconcat ("cuipc://", name, "?max-held=2",
      NULL);
  GstElement *producer, *playbin, *out;
  GstElementFactory *f = gst_element_factory_find ("playbin");
  gint count = 0;

  if (f == NULL) {
    g_print ("uri: skipped the playbin case: no playback plugin here\n");
    return;
  }
  gst_object_unref (f);
  producer = producer_from_uri (name);
  playbin = gst_element_factory_make ("playbin", NULL);
  out = gst_element_factory_make ("fakesink", NULL);
  g_object_set (out, "signal-handoffs", TRUE, "sync", FALSE, NULL);
  g_signal_connect (out, "handoff", G_CALLBACK (count_frame), &count);
  g_object_set (playbin, "uri", uri, "video-sink", out, NULL);
  /* the frames as they come: no converter to have installed */
  gst_util_set_object_arg (G_OBJECT (playbin), "flags", "video+native-video");
  run_until_frames (producer, playbin, &count);
  gst_object_unref (playbin);
  gst_object_unref (producer);
}

GST_END_TEST;

static Suite *
uri_suite (void)
{
  Suite *s = suite_create ("uri");
  TCase *tc = cudaipc_test_case (s, "general", 60);

  tcase_add_checked_fixture (tc, setup, teardown);
  tcase_add_test (tc, test_handlers_registered);
  tcase_add_test (tc, test_round_trip);
  tcase_add_test (tc, test_uri_is_the_whole_setting);
  tcase_add_test (tc, test_bad_uris);
  tcase_add_test (tc, test_no_change_while_running);
  tcase_add_test (tc, test_make_from_uri);
  tcase_add_test (tc, test_frames_through_uris);
  tcase_add_test (tc, test_playbin);
  return s;
}

const CudaIpcTestMain cudaipc_test_main = {
  .name = "uri",
  .suite = uri_suite,
};
