/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The one budget of names a process takes from peers: every name that
 * GStreamer's parser would intern from a producer's caps, events and
 * metas is made a quark, and counted, before the parser sees the text;
 * values are not; past the budget the text is refused whole, and the
 * memory of a consumer fed new names without end stays flat.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include <gst/check/gstcheck.h>

#include <gst/video/video.h>

#include "common/error.h"
#include "media/media.h"
#include "media/peer-names.h"
#include "test-main.h"
#include "test-util.h"

#ifdef CUDAIPC_TEST_ASAN
/* the memory bound below is about what stays: a small quarantine keeps
 * what AddressSanitizer holds of freed memory from hiding it */
const char *__asan_default_options (void);
const char *
__asan_default_options (void)
{
  return "quarantine_size_mb=16";
}
#endif

static guint serial;

/* A name no one made yet. */
static gchar *
fresh (const gchar * what)
{
  gchar *s;

  do {
    s = g_strdup_printf ("pn-%s-%u-%u", what, (guint) getpid (), serial++);
    if (g_quark_try_string (s) == 0)
      return s;
    g_free (s);
  } while (TRUE);
}

static void
assert_quark (const gchar * name, gboolean want)
{
  if (want)
    fail_unless (g_quark_try_string (name) != 0, "%s was not admitted",
        name);
  else
    fail_unless (g_quark_try_string (name) == 0, "%s, a value, was made a "
        "quark", name);
}

/* Every name admitted before GStreamer parses; values left alone; and
 * what GStreamer made of the text agrees. */
GST_START_TEST (test_names_admitted_before_parsing)
{
  g_autofree gchar *st_name = fresh ("struct"), *f1 = fresh ("field");
  g_autofree gchar *f2 = fresh ("field"), *inner = fresh ("inner");
  g_autofree gchar *inner_f = fresh ("innerfield"), *br = fresh ("bracket");
  g_autofree gchar *br_f = fresh ("bracketfield"), *l1 = fresh ("list");
  g_autofree gchar *l2 = fresh ("list"), *val = fresh ("value");
  g_autofree gchar *bare = fresh ("bare"), *f3 = fresh ("field");
  g_autofree gchar *f4 = fresh ("field"), *f5 = fresh ("field");
  g_autofree gchar *text = NULL;
  GError *err = NULL;
  GstStructure *st;
  guint before = cudaipc_peer_names_count ();

  text = g_strdup_printf ("%s, %s=(string)\"%s, x=1\", %s=(int)[ 1, 5 ], "
      "%s=(structure)\"%s\\,\\ %s\\=\\(int\\)3\\;\", %s=[%s, %s=(int)4], "
      "%s=(structure){ \"%s\\,\\ a\\=1\\;\", \"%s\\,\\ b\\=2\\;\" }, "
      "%s=%s", st_name, f1, val, f2, f3, inner, inner_f, f4, br, br_f, f5,
      l1, l2, "last", bare);
  fail_unless (cudaipc_peer_names_admit_text (text, &err), "%s",
      err ? err->message : "");
  assert_quark (st_name, TRUE);
  for (const gchar * const *n = (const gchar * const[]) { f1, f2, f3, inner,
          inner_f, f4, br, br_f, f5, l1, l2, NULL}; *n; n++)
    assert_quark (*n, TRUE);
  /* string values and bare values are not names */
  assert_quark (val, FALSE);
  assert_quark (bare, FALSE);
  fail_unless (cudaipc_peer_names_count () - before >= 12);

  st = gst_structure_from_string (text, NULL);
  fail_unless (st != NULL, "GStreamer does not parse %s", text);
  fail_unless (gst_structure_has_field (st, f3));
  fail_unless (gst_structure_has_field (st, f4));
  gst_structure_free (st);
  /* admitting it again costs nothing */
  before = cudaipc_peer_names_count ();
  fail_unless (cudaipc_peer_names_admit_text (text, NULL));
  fail_unless_equals_int (cudaipc_peer_names_count (), before);
}

GST_END_TEST;

GST_START_TEST (test_caps_features_and_tags)
{
  g_autofree gchar *media = fresh ("media"), *tag = fresh ("tag");
  /* feature names are letters and digits after the namespace */
  g_autofree gchar *feature = g_strdup_printf ("PnFeature%u%u",
      (guint) getpid (), serial++);
  g_autofree gchar *text = NULL;
  GstCaps *caps;

  text = g_strdup_printf ("video/%s(memory:%s), width=(int)2; video/x-raw",
      media, feature);
  fail_unless (cudaipc_peer_names_admit_text (text, NULL));
  {
    g_autofree gchar *m = g_strdup_printf ("video/%s", media);
    g_autofree gchar *f = g_strdup_printf ("memory:%s", feature);

    assert_quark (m, TRUE);
    assert_quark (f, TRUE);
  }
  caps = gst_caps_from_string (text);
  fail_unless (caps != NULL && gst_caps_get_size (caps) == 2);
  gst_caps_unref (caps);

  g_free (text);
  text = g_strdup_printf ("taglist, %s=(string)hello;", tag);
  fail_unless (cudaipc_peer_names_admit_text (text, NULL));
  assert_quark (tag, TRUE);
}

GST_END_TEST;

/* CAPS take no nested structure or caps, in quotes or in brackets; a
 * range is not one. */
GST_START_TEST (test_caps_not_nested)
{
  const gchar *refused[] = {
    "video/x-raw, s=(structure)\"a\\,\\ b\\=1\\;\"",
    "video/x-raw, c=(GstCaps)\"video/x-raw\"",
    "video/x-raw, s=[a, b=(int)1]",
  };
  GError *err = NULL;

  for (guint i = 0; i < G_N_ELEMENTS (refused); i++) {
    fail_if (cudaipc_peer_names_admit_caps (refused[i], &err), "%s",
        refused[i]);
    fail_unless (g_error_matches (err, CUDAIPC_ERROR, CUDAIPC_ERROR_INVALID));
    fail_unless (strstr (err->message, "nested") != NULL, "%s",
        err->message);
    g_clear_error (&err);
    /* as other text, they go */
    fail_unless (cudaipc_peer_names_admit_text (refused[i], NULL), "%s",
        refused[i]);
  }
  fail_unless (cudaipc_peer_names_admit_caps ("video/x-raw, format=(string)"
          "NV12, framerate=(fraction)[ 1/1, 30/1 ]", NULL));
  fail_unless (cudaipc_peer_names_admit_caps ("video/x-raw(memory:CUDAMemory, "
          "meta:GstVideoOverlayComposition), format=(string)NV12", NULL));
  /* features left open, or empty */
  fail_if (cudaipc_peer_names_admit_caps ("video/x-raw(memory:CUDAMemory",
          NULL));
  fail_if (cudaipc_peer_names_admit_caps ("video/x-raw(), width=(int)2",
          NULL));
}

GST_END_TEST;

/* Typed lists: GStreamer 1.22 leaks what it built of one whose element
 * does not read as the type (a 208-byte GValue an event), so such text is
 * refused before it parses; lists whose elements read go, and GStreamer
 * reads them. */
GST_START_TEST (test_typed_lists_checked)
{
  const gchar *refused[] = {
    "pn-tl, id=(int){ \"a\\,\\ x\\=\\,\\ y\\=1\\;\" }",
    "pn-tl, id=(int){ 1, x }",
    "pn-tl, id=(int)< 1, 2.5 >",
    "pn-tl, id=(boolean){ yes, maybe }",
    "pn-tl, id=(fraction){ 1/2, 1/x }",
    "pn-tl, id=(int){ (int)1 }",
    "pn-tl, id=(int){ { 1 } }",
    "pn-tl, id=(date){ 2020-13-01 }",
    "pn-tl, id=(int)x",
    /* a structure element that is not one: features, or a bracket left
     * open */
    "pn-tl, l=(structure){ \"a\\,\\ x\\=1\\;\", \"b(\\,\\ y\\=2\\;\" }",
    "pn-tl, l=(structure){ \"a\\,\\ x\\=[\\;\" }",
    "pn-tl, s=(structure)\"b\\(memory:X\\)\\,\\ y\\=2\\;\"",
    /* a quoted element that reads as no string: not UTF-8 */
    "pn-tl, l={ \"\xfe\xfe\" }",
  };
  const gchar *admitted[] = {
    "pn-tl, id=(int){ 1, 2, -3 }",
    "pn-tl, id=(string){ a, \"b c\" }",
    "pn-tl, id=(double)< 1.5, 2 >",
    "pn-tl, id=(fraction){ 1/2, 30000/1001 }",
    "pn-tl, id={ 1, x, \"y\" }",
    "pn-tl, id={ { 1, 2 }, 3 }",
    "pn-tl, id=(date)2020-01-01",
    "pn-tl, id=(date){ 2020-01-01 }",
    "pn-tl, l=(structure){ \"a\\,\\ x\\=1\\;\", \"b\\,\\ y\\=2\\;\" }",
  };
  GError *err = NULL;

  for (guint i = 0; i < G_N_ELEMENTS (refused); i++) {
    fail_if (cudaipc_peer_names_admit_text (refused[i], &err), "%s",
        refused[i]);
    fail_unless (g_error_matches (err, CUDAIPC_ERROR, CUDAIPC_ERROR_INVALID));
    g_clear_error (&err);
  }
  for (guint i = 0; i < G_N_ELEMENTS (admitted); i++) {
    GstStructure *st;

    fail_unless (cudaipc_peer_names_admit_text (admitted[i], &err), "%s: %s",
        admitted[i], err ? err->message : "");
    st = gst_structure_from_string (admitted[i], NULL);
    fail_unless (st != NULL, "GStreamer does not read %s", admitted[i]);
    gst_structure_free (st);
  }
}

GST_END_TEST;

/* Text on which GStreamer's own parser logs a warning or a critical
 * (gst-check fails a test on either) is refused before it is parsed: a
 * caps feature GStreamer does not take, text after one structure's ';',
 * a structure element whose name begins with a digit. */
GST_START_TEST (test_text_gstreamer_warns_about)
{
  const gchar *refused_caps[] = {
    "video/x-raw(ar/omemory:CUDAMemory), format=(string)NV12",
    "video/x-raw(memory), format=(string)NV12",
    "video/x-raw(memory:9a), format=(string)NV12",
    "video/x-raw(ANY), format=(string)NV12",
    "video/x-raw(memory:CUDAMemory\n), format=(string)NV12",
    "video/x-raw(memory:CUDAMemory, ), format=(string)NV12",
    "video/x-raw(memory:CUDAMemory ), format=(string)NV12",
  };
  const gchar *refused_structures[] = {
    "pn-one; pn-two",
    "pn-one, a=(int)1; ",
    "pn-tl, l=(structure){ \"a\\,\\ x\\=1\\;\", 99 }",
    "pn-tl, s=(structure)9x",
    "audio/x-raw-int, rate=(int)8000",
    "pn-tl, s=(structure)video/x-raw-yuv",
    /* a range GStreamer 1.22 leaks the elements of */
    "pn-range, r=[ 0, 3E]",
    "pn-range, r=[ 1, b ]",
    "pn-range, r=(string)[ 1, 2 ]",
    "pn-range, r=[ 1, 2, 3, 4 ]",
    "pn-range, r=(int)[ 1, 0 ]",
    "pn-range, r=[ 2.5, 2.5 ]",
    "pn-range, r=(int)[ 0, 8, 2 ]",
    /* quoted values GStreamer 1.22 reads as ints, with a warning */
    "pn-quoted, d=\"1\"",
    "pn-quoted, d={ \"\" }",
    "pn-quoted, c=\"t\"",
    "pn-quoted, c=\"2.5\"",
    "pn-quoted, c=\"1/2\"",
    /* and as flag sets (found by fuzz-text) */
    "pn-quoted, f=\"1:1\"",
    "pn-quoted, f={ \"1-1\" }",
    /* a cast to a type whose values the scan does not check */
    "pn-cast, b=(buffer)NV12",
    "pn-cast, s=(GstSample)x",
    /* a structure in brackets with a quoted bracket, where GStreamer 1.22
     * ends it (and leaks what it read) */
    "pn-tl, s=[t, g={ \"]\" }]",
    "pn-tl, s=[t, q=\"x[y\"]",
    /* a range cast to a structure or caps, of whose "name" GStreamer
     * makes a structure with a critical (found by fuzz-text) */
    "pn-tl, s=(structure)[ 1, 5 ]",
    "pn-tl, c=(GstCaps)[ 0, 2 ]",
    /* the abstract types of enums and flags, which hold no value */
    "pn-cast, f=(GFlags)1",
    "pn-cast, e=(GEnum)<1>",
    /* a nested structure with text after its ';' */
    "pn-tl, l=(structure){ \"a\\,\\ x\\=1\\;b:0\" }",
    /* an escape GStreamer cannot unwrap in a structure element */
    "pn-tl, l=(structure){ \"a\\,\\ x\\=1\\1\", \"b\\,\\ y\\=2\\;\" }",
  };
  GError *err = NULL;

  for (guint i = 0; i < G_N_ELEMENTS (refused_caps); i++) {
    fail_if (cudaipc_peer_names_admit_caps (refused_caps[i], &err), "%s",
        refused_caps[i]);
    fail_unless (g_error_matches (err, CUDAIPC_ERROR, CUDAIPC_ERROR_INVALID));
    g_clear_error (&err);
  }
  for (guint i = 0; i < G_N_ELEMENTS (refused_structures); i++) {
    fail_if (cudaipc_peer_names_admit_structure (refused_structures[i], &err),
        "%s", refused_structures[i]);
    fail_unless (g_error_matches (err, CUDAIPC_ERROR, CUDAIPC_ERROR_INVALID));
    g_clear_error (&err);
  }
  /* a structure in brackets cast to one goes */
  fail_unless (cudaipc_peer_names_admit_structure ("pn-tl, s=(structure)[ "
          "pn-in, b=5 ]", NULL));
  fail_unless (cudaipc_peer_names_admit_structure ("pn-range, a=[ 0, 3 ], "
          "b=(int64)[ 0, 8 ], c=[ 0.5, 2.5 ], d=(fraction)[ 1/2, 30/1 ]",
          NULL));
  /* a flag set, as video caps carry multiview-flags */
  g_type_ensure (GST_TYPE_VIDEO_MULTIVIEW_FLAGSET);
  fail_unless (cudaipc_peer_names_admit_caps ("video/x-raw, format=(string)"
          "NV12, multiview-flags=(GstVideoMultiviewFlagsSet)0:ffffffff", NULL));
  /* and a plain one, as GStreamer writes a value it read as one (found by
   * fuzz-metas: reference caps that went out again were refused) */
  fail_unless (cudaipc_peer_names_admit_caps ("timestamp/x-ntp, "
          "port=(flagset)0:123", NULL));
  fail_unless (cudaipc_peer_names_admit_caps ("timestamp/x-ntp, "
          "port=00:00123", NULL));
  fail_if (cudaipc_peer_names_admit_caps ("timestamp/x-ntp, "
          "port=(flagset)nope", NULL));
  /* one structure may end at its ';'; caps may hold several */
  fail_unless (cudaipc_peer_names_admit_structure ("pn-one, a=(int)1;", NULL));
  fail_unless (cudaipc_peer_names_admit_text ("video/x-raw; video/x-bayer",
          NULL));
  fail_unless (cudaipc_peer_names_admit_caps ("video/x-raw( memory:CUDAMemory,"
          "  meta:GstVideoOverlayComposition)", NULL));
}

GST_END_TEST;

/* A TAG event whose text is no tag list is refused with an error, not a
 * GStreamer critical (gst-check fails a test on one). */
GST_START_TEST (test_tag_event_not_a_tag_list)
{
  CudaIpcEventMsg m = { 0, };
  GError *err = NULL;
  GstEvent *ev;

  m.event_type = GST_EVENT_TAG;
  m.structure = "pn-not-tags, title=(string)x";
  ev = cudaipc_media_parse_event (&m, &err);
  fail_unless (ev == NULL);
  fail_unless (g_error_matches (err, CUDAIPC_ERROR, CUDAIPC_ERROR_INVALID));
  g_clear_error (&err);
  m.structure = "taglist, title=(string)x";
  ev = cudaipc_media_parse_event (&m, &err);
  fail_unless (ev != NULL, "%s", err ? err->message : "");
  gst_event_unref (ev);
}

GST_END_TEST;

/* An event whose lists GStreamer reads but cannot write back in a form
 * a consumer reads (values of mixed types, a NULL string, a list in a
 * list: found by fuzz-text) is refused, so that what a consumer passes on
 * reads again; a list of one type goes, and its text, written back,
 * reads again. */
GST_START_TEST (test_event_lists_write_back)
{
  const struct
  {
    GstEventType type;
    const gchar *text;
  } refused[] = {
    {GST_EVENT_CUSTOM_DOWNSTREAM, "pn-ev, a={f,2i,6}"},
    {GST_EVENT_CUSTOM_DOWNSTREAM, "pn-ev, a=<{NULL,u}>"},
    /* written back "(int)< { (int)1, (int)2 } >", a list in a typed list */
    {GST_EVENT_CUSTOM_DOWNSTREAM, "pn-ev, a=<{1,2}>"},
    {GST_EVENT_CUSTOM_BOTH, "pn-ev, s=(structure)\"pn-in\\,\\ b\\=\\{1\\,x\\}\\;\""},
    {GST_EVENT_TAG, "taglist, title={f,2i,6}"},
    {GST_EVENT_TAG, "taglist, title={NULL,u}"},
  };
  CudaIpcEventMsg m = { 0, };
  GError *err = NULL;
  GstEvent *ev, *ev2;
  gchar *again;

  for (guint i = 0; i < G_N_ELEMENTS (refused); i++) {
    m.event_type = refused[i].type;
    m.structure = refused[i].text;
    ev = cudaipc_media_parse_event (&m, &err);
    fail_unless (ev == NULL, "%s taken", refused[i].text);
    fail_unless (g_error_matches (err, CUDAIPC_ERROR, CUDAIPC_ERROR_INVALID));
    fail_unless (strstr (err->message, "does not write back") != NULL,
        "%s", err->message);
    g_clear_error (&err);
  }

  m.event_type = GST_EVENT_CUSTOM_DOWNSTREAM;
  m.structure = "pn-ev, a={1,2,3}, b=<(string)x, (string)y>";
  ev = cudaipc_media_parse_event (&m, &err);
  fail_unless (ev != NULL, "%s", err ? err->message : "");
  again = cudaipc_media_serialize_event (ev);
  m.structure = again;
  ev2 = cudaipc_media_parse_event (&m, &err);
  fail_unless (ev2 != NULL, "%s", err ? err->message : "");
  fail_unless (gst_structure_is_equal (gst_event_get_structure (ev),
          gst_event_get_structure (ev2)));
  gst_event_unref (ev2);
  gst_event_unref (ev);
  g_free (again);

  m.event_type = GST_EVENT_TAG;
  m.structure = "taglist, title=(string){a,b}";
  ev = cudaipc_media_parse_event (&m, &err);
  fail_unless (ev != NULL, "%s", err ? err->message : "");
  gst_event_unref (ev);
}

GST_END_TEST;

/* The budget, all or none; then a text of known names still goes, and
 * one new name is refused. Forked: it spends the process's budget. */
GST_START_TEST (test_budget_all_or_none)
{
  GError *err = NULL;
  GString *text = g_string_new ("pn-big");
  guint left = CUDAIPC_MAX_PEER_NAMES - cudaipc_peer_names_count ();
  g_autofree gchar *probe = NULL;

  /* one name more than is left, in one text: refused, none made */
  for (guint i = 0; i < left; i++)
    g_string_append_printf (text, ", pn-f%u-%u=1", (guint) getpid (), i);
  probe = g_strdup_printf ("pn-f%u-%u", (guint) getpid (), 0);
  fail_if (cudaipc_peer_names_admit_text (text->str, &err));
  fail_unless (g_error_matches (err, CUDAIPC_ERROR, CUDAIPC_ERROR_LIMIT));
  g_print ("peer-names: %s\n", err->message);
  g_clear_error (&err);
  assert_quark (probe, FALSE);
  fail_unless_equals_int (cudaipc_peer_names_count (),
      CUDAIPC_MAX_PEER_NAMES - left);

  /* without the structure's own new name it fits exactly */
  g_quark_from_static_string ("pn-known");
  g_string_erase (text, 0, strlen ("pn-big"));
  g_string_prepend (text, "pn-known");
  fail_unless (cudaipc_peer_names_admit_text (text->str, &err), "%s",
      err ? err->message : "");
  fail_unless_equals_int (cudaipc_peer_names_count (),
      CUDAIPC_MAX_PEER_NAMES);
  assert_quark (probe, TRUE);

  /* full: known names go, a new one does not */
  fail_unless (cudaipc_peer_names_admit_text ("pn-known, pn-known=(int)2",
          NULL));
  fail_if (cudaipc_peer_names_admit ("pn-one-more-name", &err));
  fail_unless (g_error_matches (err, CUDAIPC_ERROR, CUDAIPC_ERROR_LIMIT));
  g_clear_error (&err);
  assert_quark ("pn-one-more-name", FALSE);
  g_string_free (text, TRUE);
}

GST_END_TEST;

/* What a consumer parses from a producer refuses new names past the
 * budget: caps and custom events; the process's memory stays flat under
 * a million new names. Forked. */
GST_START_TEST (test_million_names_flat)
{
  guint64 rss_start = cudaipc_test_rss_kib () / 1024, rss_end;
  guint refused = 0, parsed = 0;

  for (guint i = 0; i < 1000 * 1000 / 100; i++) {
    GString *s = g_string_new (NULL);
    CudaIpcEventMsg m = { 0, };
    GstEvent *ev;
    GError *err = NULL;

    g_string_append_printf (s, "pn-ev-%u", i);
    for (guint j = 0; j < 99; j++)
      g_string_append_printf (s, ", pn-n-%u-%u=(int)1", i, j);
    m.event_type = GST_EVENT_CUSTOM_DOWNSTREAM;
    m.structure = s->str;
    ev = cudaipc_media_parse_event (&m, &err);
    if (ev) {
      parsed++;
      gst_event_unref (ev);
    } else {
      fail_unless (g_error_matches (err, CUDAIPC_ERROR, CUDAIPC_ERROR_LIMIT),
          "%s", err->message);
      refused++;
      g_clear_error (&err);
    }
    g_string_free (s, TRUE);
  }
  rss_end = cudaipc_test_rss_kib () / 1024;
  g_print ("peer-names: 1,000,000 new names in 10,000 events: %u parsed, "
      "%u refused; RSS %" G_GUINT64_FORMAT " -> %" G_GUINT64_FORMAT
      " MiB\n", parsed, refused, rss_start, rss_end);
  fail_unless (parsed <= CUDAIPC_MAX_PEER_NAMES / 100 + 1);
  fail_unless (refused >= 10000 - CUDAIPC_MAX_PEER_NAMES / 100 - 1);
  fail_unless (rss_end < rss_start + 100 + CUDAIPC_TEST_RSS_SLACK_KIB / 1024,
      "RSS grew from %" G_GUINT64_FORMAT " to %" G_GUINT64_FORMAT " MiB",
      rss_start, rss_end);
}

GST_END_TEST;

static Suite *
peer_names_suite (void)
{
  Suite *s = suite_create ("peer-names");
  /* a million names take 40 s under AddressSanitizer */
  TCase *tc = cudaipc_test_case (s, "general", 110);

  tcase_add_test (tc, test_names_admitted_before_parsing);
  tcase_add_test (tc, test_caps_features_and_tags);
  tcase_add_test (tc, test_caps_not_nested);
  tcase_add_test (tc, test_typed_lists_checked);
  tcase_add_test (tc, test_text_gstreamer_warns_about);
  tcase_add_test (tc, test_tag_event_not_a_tag_list);
  tcase_add_test (tc, test_event_lists_write_back);
  tcase_add_test (tc, test_budget_all_or_none);
  tcase_add_test (tc, test_million_names_flat);
  return s;
}

const CudaIpcTestMain cudaipc_test_main = {
  .name = "peer_names",
  .suite = peer_names_suite,
};
