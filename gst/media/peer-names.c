/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Names a peer makes this process intern (peer-names.h has the contract).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include <gst/gst.h>

#include "media/peer-names.h"
#include "common/error.h"

/* the scan stops descending here (the callers bound nesting before) */
#define MAX_DEPTH 16

static gint admitted;

typedef struct
{
  GPtrArray *names;             /* new ones, each once; NULL: none yet */
  GHashTable *seen;             /* the same strings */
  gboolean bad;                 /* not GStreamer's syntax */
  guint nested;                 /* values typed structure or caps, and
                                 * structures in brackets */
  gboolean one;                 /* one structure: nothing after a ';' */
} Scan;

/* GStreamer's characters of a bare string (GST_ASCII_IS_STRING) */
static gboolean
is_name_char (gchar c)
{
  return g_ascii_isalnum (c) || (c != '\0' && strchr ("_-+/:.", c) != NULL);
}

static const gchar *
skip_spaces (const gchar * p, const gchar * end)
{
  while (p < end && g_ascii_isspace (*p))
    p++;
  return p;
}

static const gchar *
bare_end (const gchar * p, const gchar * end)
{
  while (p < end && is_name_char (*p))
    p++;
  return p;
}

static void
add (Scan * scan, const gchar * start, const gchar * stop)
{
  gchar buf[128], *name;
  gsize len = stop - start;

  if (stop <= start)
    return;
  /* names the process knows (most of them) cost no allocation */
  name = len < sizeof (buf) ? buf : g_malloc (len + 1);
  memcpy (name, start, len);
  name[len] = '\0';
  if (g_quark_try_string (name) != 0 || (scan->seen &&
          g_hash_table_contains (scan->seen, name))) {
    if (name != buf)
      g_free (name);
    return;
  }
  if (name == buf)
    name = g_strndup (start, len);
  if (scan->seen == NULL) {
    scan->seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
        NULL);
    scan->names = g_ptr_array_new ();
  }
  g_hash_table_add (scan->seen, name);
  g_ptr_array_add (scan->names, name);
}

/* The end of a quoted string starting at @p (its opening quote): past
 * the closing one, or @end. */
static const gchar *
quoted_end (const gchar * p, const gchar * end)
{
  for (p++; p < end; p++) {
    if (*p == '\\' && p + 1 < end)
      p++;
    else if (*p == '"')
      return p + 1;
  }
  return end;
}

/* what a value was cast to */
enum
{
  NOT_NESTED = 0,
  NESTED_STRUCTURE = 1,
  NESTED_CAPS = 2,
};

static void scan_structures (Scan * scan, const gchar * p,
    const gchar * end, gboolean features, guint depth);
static gboolean structure_name_ok (const gchar * p, const gchar * end);

/* Past the bracket that closes the one at @p, quotes and inner brackets
 * skipped; @end where none does. */
static const gchar *
bracket_end (const gchar * p, const gchar * end)
{
  gchar want[MAX_DEPTH + 1];
  guint depth = 0;

  for (; p < end; p++) {
    gchar close = 0;

    switch (*p) {
      case '"':
        p = quoted_end (p, end) - 1;
        continue;
      case '(':
        close = ')';
        break;
      case '[':
        close = ']';
        break;
      case '{':
        close = '}';
        break;
      case '<':
        close = '>';
        break;
      case ')':
      case ']':
      case '}':
      case '>':
        if (depth > 0 && want[depth - 1] == *p && --depth == 0)
          return p + 1;
        continue;
      default:
        continue;
    }
    if (depth > MAX_DEPTH)
      return end;
    want[depth++] = close;
  }
  return end;
}

/* Whether a quoted string from @p to @end holds a square bracket.
 * GStreamer 1.22 ends a structure in brackets at the bracket that
 * balances the first, counting quoted ones too, and leaks what it read
 * of a structure so cut ("[t, g={ \"]\" }]", found by fuzz-text). */
static gboolean
bracket_quoted (const gchar * p, const gchar * end)
{
  for (; p < end; p++) {
    const gchar *q;

    if (*p != '"')
      continue;
    q = quoted_end (p, end);
    if (memchr (p, '[', q - p) || memchr (p, ']', q - p))
      return TRUE;
    p = q - 1;
  }
  return FALSE;
}

/* A quoted string's text, unescaped, read again as structures. */
static void
scan_quoted_structures (Scan * scan, const gchar * p, const gchar * q,
    gboolean caps, guint depth)
{
  GString *s = g_string_sized_new (q - p);

  /* between the quotes */
  for (p++, q--; p < q; p++) {
    if (*p == '\\' && p + 1 < q)
      p++;
    g_string_append_c (s, *p);
  }
  scan_structures (scan, s->str, s->str + s->len, caps, depth + 1);
  g_string_free (s, TRUE);
}

/* The type a cast names where it is one whose values this scan checks:
 * numbers, booleans, strings, fractions, bitmasks, dates and registered
 * enums, flags and flag sets (video caps' multiview-flags), by GStreamer's
 * short names or their own; else 0. */
static GType
checked_type (const gchar * t, gsize n)
{
  static const struct
  {
    const gchar *name;
    gint which;
  } names[] = {
    {"int", 0}, {"i", 0}, {"gint", 0}, {"uint", 1}, {"u", 1}, {"guint", 1},
    {"int64", 2}, {"gint64", 2}, {"uint64", 3}, {"guint64", 3},
    {"float", 4}, {"f", 4}, {"gfloat", 4}, {"double", 5}, {"d", 5},
    {"gdouble", 5}, {"boolean", 6}, {"bool", 6}, {"b", 6}, {"gboolean", 6},
    {"string", 7}, {"str", 7}, {"s", 7}, {"gchararray", 7},
    {"fraction", 8}, {"GstFraction", 8}, {"bitmask", 9}, {"GstBitmask", 9},
    {"date", 10}, {"GDate", 10}, {"datetime", 11}, {"GstDateTime", 11},
    {"flagset", 12},
  };
  gchar name[64];
  GType type;

  for (guint i = 0; i < G_N_ELEMENTS (names); i++) {
    if (strlen (names[i].name) != n || strncmp (names[i].name, t, n) != 0)
      continue;
    switch (names[i].which) {
      case 0:
        return G_TYPE_INT;
      case 1:
        return G_TYPE_UINT;
      case 2:
        return G_TYPE_INT64;
      case 3:
        return G_TYPE_UINT64;
      case 4:
        return G_TYPE_FLOAT;
      case 5:
        return G_TYPE_DOUBLE;
      case 6:
        return G_TYPE_BOOLEAN;
      case 7:
        return G_TYPE_STRING;
      case 8:
        return GST_TYPE_FRACTION;
      case 9:
        return GST_TYPE_BITMASK;
      case 10:
        return G_TYPE_DATE;
      case 11:
        return GST_TYPE_DATE_TIME;
      default:
        /* what GStreamer writes of a value it read, uncast, as one:
         * "00:00123" comes back as "(flagset)0:123" */
        return GST_TYPE_FLAG_SET;
    }
  }
  if (n == 0 || n >= sizeof (name))
    return 0;
  memcpy (name, t, n);
  name[n] = '\0';
  /* looks the name up without interning it; GEnum and GFlags themselves
   * hold no value (GLib's critical, found by fuzz-text) */
  type = g_type_from_name (name);
  return type != 0 && !G_TYPE_IS_ABSTRACT (type) &&
      (G_TYPE_IS_ENUM (type) || G_TYPE_IS_FLAGS (type) ||
      g_type_is_a (type, GST_TYPE_FLAG_SET)) ? type : 0;
}

/* Whether the value text from @p to @end reads as a @type. */
static gboolean
reads_as (GType type, const gchar * p, const gchar * end)
{
  gchar buf[256], *text = end - p < (gssize) sizeof (buf) ? buf :
      g_malloc (end - p + 1);
  GValue v = G_VALUE_INIT;
  gboolean ok;

  memcpy (text, p, end - p);
  text[end - p] = '\0';
  g_value_init (&v, type);
  ok = gst_value_deserialize (&v, text);
  g_value_unset (&v);
  if (text != buf)
    g_free (text);
  return ok;
}

/* Reads @text into @v (unset) as the first of the types GStreamer 1.22
 * tries on an uncast value before it falls back to a string: int, double,
 * fraction, flag set ("1:1", and "1-1" too), boolean. */
static gboolean
read_before_string (GValue * v, const gchar * text)
{
  const GType types[] = { G_TYPE_INT, G_TYPE_DOUBLE, GST_TYPE_FRACTION,
    GST_TYPE_FLAG_SET, G_TYPE_BOOLEAN
  };

  for (guint i = 0; i < G_N_ELEMENTS (types); i++) {
    g_value_init (v, types[i]);
    if (gst_value_deserialize (v, text))
      return TRUE;
    g_value_unset (v);
  }
  return FALSE;
}

/* Reads the bare text from @p to @end into @v as @type (0: as GStreamer
 * reads an uncast range element, read_before_string()). */
static gboolean
read_range_element (GValue * v, GType type, const gchar * p,
    const gchar * end)
{
  gchar buf[64];

  if (end - p >= (gssize) sizeof (buf))
    return FALSE;
  memcpy (buf, p, end - p);
  buf[end - p] = '\0';
  if (type == 0)
    return read_before_string (v, buf);
  g_value_init (v, type);
  if (gst_value_deserialize (v, buf))
    return TRUE;
  g_value_unset (v);
  return FALSE;
}

/* A range's elements from @p to @end: GStreamer 1.22 reads each before it
 * checks that they make a range, and leaks those it read where they do
 * not (a string after a number, "[ 1, x ]"), and asserts with a critical
 * on a range that ends where it starts or before. So two bare elements,
 * numbers (@cast: 0 none, else the type it is cast to: int, int64, double
 * or fraction) or, uncast, booleans, nothing GStreamer allocates for, the
 * first below the second. No step: raw-video caps do not need one, and
 * GStreamer asserts on a step that does not divide both ends. */
static gboolean
range_ok (const gchar * p, const gchar * end, GType cast)
{
  GValue v[2] = { G_VALUE_INIT, G_VALUE_INIT };
  guint n = 0;
  gboolean ok = TRUE;

  if (cast != 0 && cast != G_TYPE_INT && cast != G_TYPE_INT64 &&
      cast != G_TYPE_DOUBLE && cast != GST_TYPE_FRACTION)
    return FALSE;
  for (p = skip_spaces (p, end); ok && p < end; n++) {
    const gchar *e = bare_end (p, end);

    if (e == p || n == 2 || !read_range_element (&v[n], cast, p, e)) {
      ok = FALSE;
      break;
    }
    p = skip_spaces (e, end);
    if (p < end && *p != ',')
      ok = FALSE;
    else if (p < end && (p = skip_spaces (p + 1, end)) >= end)
      ok = FALSE;         /* a ',' before the end */
  }
  ok = ok && n == 2 && gst_value_compare (&v[0], &v[1]) == GST_VALUE_LESS_THAN;
  for (guint i = 0; i < 2; i++)
    if (G_IS_VALUE (&v[i]))
      g_value_unset (&v[i]);
  return ok;
}

/* A quoted value with no cast, from @p to @end, its quotes included, as
 * GStreamer takes it without a warning: it unwraps as a string, and the
 * string reads as none of the types GStreamer 1.22 tries before a string
 * (it reads "1", "" and "t" as an int and a boolean, "1:1" as a flag set,
 * and warns that it does). */
static gboolean
quoted_uncast_ok (const gchar * p, const gchar * end)
{
  g_autofree gchar *text = g_strndup (p, end - p);
  GValue s = G_VALUE_INIT, v = G_VALUE_INIT;
  const gchar *str;
  gboolean ok;

  g_value_init (&s, G_TYPE_STRING);
  ok = gst_value_deserialize (&s, text);
  str = ok ? g_value_get_string (&s) : NULL;
  ok = str != NULL && str[0] != '\0';
  if (ok && read_before_string (&v, str)) {
    g_value_unset (&v);
    ok = FALSE;
  }
  g_value_unset (&s);
  return ok;
}

static void
check_reads_as (Scan * scan, GType type, const gchar * p, const gchar * e)
{
  if (type != G_TYPE_NONE && !reads_as (type, p, e))
    scan->bad = TRUE;
}

/* One value at @p; @nested: NESTED_STRUCTURE or NESTED_CAPS where it is
 * of a structure or caps type, else NOT_NESTED; @in_list: an element of a
 * list or array; @list_type: the type that list was cast to (G_TYPE_NONE:
 * a cast whose values are not checked, 0: none). Returns where it ends.
 * GStreamer 1.22 leaks what it built of a list whose element does not
 * read (as the list's type, or at all), so such elements are checked here
 * before it sees them. */
static const gchar *
scan_value (Scan * scan, const gchar * p, const gchar * end,
    gint nested, GType list_type, gboolean in_list, guint depth)
{
  GType cast = 0;
  gboolean has_cast = FALSE;

  p = skip_spaces (p, end);
  if (p < end && *p == '(') {
    const gchar *t = skip_spaces (p + 1, end), *te = bare_end (t, end);
    gsize n = te - t;

    /* an element cast again inside a typed list: not checked, refused */
    if (list_type != 0)
      scan->bad = TRUE;
    has_cast = TRUE;
    if ((n == 9 && strncmp (t, "structure", 9) == 0) ||
        (n == 12 && strncmp (t, "GstStructure", 12) == 0))
      nested = NESTED_STRUCTURE;
    else if ((n == 4 && strncmp (t, "caps", 4) == 0) ||
        (n == 7 && strncmp (t, "GstCaps", 7) == 0))
      nested = NESTED_CAPS;
    else
      nested = NOT_NESTED;
    if (nested)
      scan->nested++;
    else
      cast = checked_type (t, n);
    /* a cast to any other type is refused: GStreamer's own reading of
     * some (a buffer from text that is not hex) ends in a critical */
    if (!nested && cast == 0)
      scan->bad = TRUE;
    p = skip_spaces (te, end);
    if (p < end && *p == ')')
      p++;
    else
      scan->bad = TRUE;
    p = skip_spaces (p, end);
  }
  if (p >= end || depth > MAX_DEPTH) {
    scan->bad = TRUE;
    return end;
  }

  switch (*p) {
    case '"':{
      const gchar *q = quoted_end (p, end);

      if (q == end && (q - p < 2 || q[-1] != '"'))
        scan->bad = TRUE;       /* left open */
      else if (nested) {
        scan_quoted_structures (scan, p, q, nested == NESTED_CAPS, depth);
        /* GStreamer unwraps it as it does a string (an octal escape has
         * three digits), and leaks the list around one it cannot */
        check_reads_as (scan, G_TYPE_STRING, p, q);
      }
      else if (cast != 0 || list_type != 0)
        check_reads_as (scan, cast ? cast : list_type, p, q);
      else if (!quoted_uncast_ok (p, q))
        /* a quoted value must read as a string (its escapes, UTF-8):
         * GStreamer leaks the list around an element where none reads;
         * and GStreamer 1.22 warns of one that reads as an int */
        scan->bad = TRUE;
      return q;
    }
    case '[':{
      /* a structure or caps in brackets, whose names count, else a range */
      const gchar *q = bracket_end (p, end);
      gboolean bad = scan->bad, structure;

      scan_structures (scan, p + 1, q > p + 1 ? q - 1 : q, FALSE, depth + 1);
      structure = !scan->bad && !bracket_quoted (p, q);
      if (structure)
        scan->nested++;
      /* left open: GStreamer leaks a typed list with such an element */
      scan->bad = bad || (q == end && q[-1] != ']');
      /* cast to a structure or caps, brackets hold one: GStreamer makes
       * a structure of what a range holds, with a critical for its name
       * ("(structure)[ 1, 5 ]", found by fuzz-text) */
      if (!structure && nested)
        scan->bad = TRUE;
      else if (!structure && !range_ok (p + 1, q > p + 1 ? q - 1 : q,
              has_cast ? cast : 0))
        scan->bad = TRUE;
      return q;
    }
    case '{':
    case '<':{
      const gchar *q = bracket_end (p, end), *in_end = q > p + 1 ? q - 1 : q;
      /* the type its elements must read as: a list in a typed list is
       * refused, as is one cast to a type whose values are not checked */
      GType elements = has_cast && !nested ? (cast ? cast : G_TYPE_NONE) : 0;

      if (q == end && q[-1] != (*p == '{' ? '}' : '>'))
        scan->bad = TRUE;
      if (list_type != 0 || elements == G_TYPE_NONE)
        scan->bad = TRUE;

      p = skip_spaces (p + 1, in_end);
      /* an empty list, else values with one ',' between them */
      while (p < in_end) {
        p = skip_spaces (scan_value (scan, p, in_end, nested, elements,
                TRUE, depth + 1), in_end);
        if (p < in_end && *p != ',') {
          scan->bad = TRUE;
          break;
        }
        if (p < in_end && skip_spaces (p + 1, in_end) >= in_end)
          scan->bad = TRUE;     /* a ',' before the end */
        if (p < in_end)
          p++;
      }
      return q;
    }
    default:{
      const gchar *e = bare_end (p, end);

      if (e == p)
        scan->bad = TRUE;
      else if (nested && structure_name_ok (p, e))
        add (scan, p, e);
      else if (nested)
        /* GStreamer makes a structure of any other name with a critical
         * or a warning */
        scan->bad = TRUE;
      else if (!nested && (cast != 0 || list_type != 0))
        check_reads_as (scan, cast ? cast : list_type, p, e);
      return e;
    }
  }
}

/* A structure's name as GStreamer takes it without a warning: it begins
 * with a letter, and is none of GStreamer 0.10's raw caps names, of
 * which GStreamer warns (the characters are bare_end()'s). */
static gboolean
structure_name_ok (const gchar * p, const gchar * end)
{
  gsize len = end - p;

  if (len == 0 || !g_ascii_isalpha (*p))
    return FALSE;
  return !(len >= 12 && (strncmp (p, "video/x-raw-", 12) == 0 ||
          strncmp (p, "audio/x-raw-", 12) == 0));
}

/* A caps feature name as GStreamer takes it without a warning: letters,
 * ':', a letter, then letters and digits ("memory:CUDAMemory"). */
static gboolean
feature_name_ok (const gchar * p, const gchar * end)
{
  while (p < end && g_ascii_isalpha (*p))
    p++;
  if (p == end || *p != ':' || p + 1 == end || !g_ascii_isalpha (p[1]))
    return FALSE;
  for (p += 2; p < end; p++)
    if (!g_ascii_isalnum (*p))
      return FALSE;
  return TRUE;
}

/* Structures (or caps) from @p to @end: a name, features in brackets,
 * fields, ';' between structures; up to what does not parse. */
static void
scan_structures (Scan * scan, const gchar * p, const gchar * end,
    gboolean features, guint depth)
{
  gboolean first = TRUE;

  while (depth <= MAX_DEPTH) {
    const gchar *n, *ne;

    p = skip_spaces (p, end);
    if (p >= end) {
      /* nothing at all is no structure; after a ';' the end is fine */
      if (first)
        scan->bad = TRUE;
      return;
    }
    first = FALSE;
    n = p;
    ne = bare_end (n, end);
    if (structure_name_ok (n, ne))
      add (scan, n, ne);
    else
      scan->bad = TRUE;
    p = skip_spaces (ne, end);
    if (p < end && *p == '(') {
      /* caps features: names with one ',' between them, closed; none in
       * a structure (GStreamer 1.22 leaks a typed list whose structure
       * element does not parse) */
      const gchar *fend = bracket_end (p, end);
      const gchar *in_end = fend > p + 1 ? fend - 1 : fend;

      if (!features || (fend == end && fend[-1] != ')'))
        scan->bad = TRUE;
      /* GStreamer's features parser skips the ' ' before a name alone,
       * and warns of any other character outside a name (a space after
       * one too) */
      {
        gboolean before_name = TRUE;

        for (const gchar * c = p + 1; c < in_end; c++) {
          if (*c == ',')
            before_name = TRUE;
          else if (is_name_char (*c))
            before_name = FALSE;
          else if (*c != ' ' || !before_name)
            scan->bad = TRUE;
        }
      }
      p = skip_spaces (p + 1, in_end);
      if (p >= in_end)
        scan->bad = TRUE;
      while (p < in_end) {
        const gchar *fe = bare_end (p, in_end);

        if (!feature_name_ok (p, fe)) {
          scan->bad = TRUE;
          break;
        }
        add (scan, p, fe);
        p = skip_spaces (fe, in_end);
        if (p < in_end && *p != ',') {
          scan->bad = TRUE;
          break;
        }
        if (p < in_end) {
          p = skip_spaces (p + 1, in_end);
          if (p >= in_end)
            scan->bad = TRUE;   /* a ',' before the end */
        }
      }
      p = skip_spaces (fend, end);
    }
    /* fields */
    while (p < end && *p == ',') {
      const gchar *f = skip_spaces (p + 1, end), *fe = bare_end (f, end);
      const gchar *eq = skip_spaces (fe, end);

      if (fe == f || eq >= end || *eq != '=') {
        scan->bad = TRUE;
        return;
      }
      add (scan, f, fe);
      p = skip_spaces (scan_value (scan, eq + 1, end, NOT_NESTED, 0, FALSE,
              depth), end);
    }
    if (p < end && *p == ';') {
      /* GStreamer reads one structure up to its ';' and warns of any
       * text after it: the text of an event or a meta, and a structure
       * nested in a value (caps may hold several) */
      if (depth == 0 ? scan->one : !features) {
        if (p + 1 < end)
          scan->bad = TRUE;
        return;
      }
      p++;
      continue;
    }
    if (p < end)
      scan->bad = TRUE;
    return;
  }
  scan->bad = TRUE;
}

/* Takes @n names from the budget, all or none. */
static gboolean
take (guint n, GError ** error)
{
  gint have;

  do {
    have = g_atomic_int_get (&admitted);
    if (n > (guint) (CUDAIPC_MAX_PEER_NAMES - have)) {
      g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_LIMIT,
          "%u name(s) this process does not know, past the %d a process "
          "takes from peers (%d taken)", n, CUDAIPC_MAX_PEER_NAMES, have);
      return FALSE;
    }
  } while (!g_atomic_int_compare_and_exchange (&admitted, have,
          have + (gint) n));
  return TRUE;
}

gboolean
cudaipc_peer_names_admit (const gchar * name, GError ** error)
{
  g_return_val_if_fail (name != NULL && name[0] != '\0', FALSE);

  if (g_quark_try_string (name) != 0)
    return TRUE;
  if (!take (1, error))
    return FALSE;
  /* another thread may have made it meanwhile: counted twice at worst */
  g_quark_from_string (name);
  return TRUE;
}

static gboolean
admit_text (const gchar * text, gboolean flat, gboolean one, GError ** error)
{
  Scan scan = {.one = one };
  gboolean ok = TRUE;

  g_return_val_if_fail (text != NULL, FALSE);

  scan_structures (&scan, text, text + strlen (text), TRUE, 0);
  if (scan.bad) {
    /* GStreamer would refuse it too, and its parser has leaked on such
     * text (a list of nested structures cut short): it never sees it */
    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_INVALID,
        "the text does not parse as GStreamer's structures or caps");
    ok = FALSE;
  } else if (flat && scan.nested > 0) {
    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_INVALID,
        "not raw-video caps: a nested structure or caps");
    ok = FALSE;
  } else if (scan.names != NULL) {
    ok = take (scan.names->len, error);
    for (guint i = 0; ok && i < scan.names->len; i++)
      g_quark_from_string (g_ptr_array_index (scan.names, i));
  }
  if (scan.names != NULL) {
    g_ptr_array_unref (scan.names);
    g_hash_table_unref (scan.seen);
  }
  return ok;
}

gboolean
cudaipc_peer_names_admit_text (const gchar * text, GError ** error)
{
  return admit_text (text, FALSE, FALSE, error);
}

gboolean
cudaipc_peer_names_admit_structure (const gchar * text, GError ** error)
{
  return admit_text (text, FALSE, TRUE, error);
}

gboolean
cudaipc_peer_names_admit_caps (const gchar * text, GError ** error)
{
  return admit_text (text, TRUE, FALSE, error);
}

guint
cudaipc_peer_names_count (void)
{
  return (guint) g_atomic_int_get (&admitted);
}
