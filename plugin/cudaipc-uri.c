/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The cuipc:// URI handler of cuipcsink and cuipcsrc (cudaipc-uri.h).
 * Both go through the elements' properties, so a property an element
 * gains is a URI parameter with nothing to add here.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include "cudaipc-uri.h"
#include "wire/connection.h"

#define SOCKET_PROPERTY "socket-path"
#define PREFIX CUDAIPC_URI_SCHEME "://"

/* Left as they are in get_uri's output: reserved characters that mean
 * nothing to the parser (the socket ends at '?', a parameter at '&', its
 * name at '='; '+' is escaped for readers that take it for a space). */
#define KEEP_IN_SOCKET "!$&'()*+,;=:@/"
#define KEEP_IN_VALUE "!$'()*,;:@/"

static const gchar *const protocols[] = { CUDAIPC_URI_SCHEME, NULL };

/* The element's name in messages: the one of ours alone. */
static const gchar *
element_word (GstURIHandler * handler)
{
  return gst_uri_handler_get_uri_type (handler) == GST_URI_SINK ?
      "cuipcsink" : "cuipcsrc";
}

/* A property the query may set: writable at any time, installed by our
 * element class (the one that implements the interface), and not the
 * socket, which is the URI's path. */
static gboolean
is_parameter (GParamSpec * pspec)
{
  return (pspec->flags & G_PARAM_WRITABLE) != 0 &&
      (pspec->flags & G_PARAM_READABLE) != 0 &&
      (pspec->flags & G_PARAM_CONSTRUCT_ONLY) == 0 &&
      g_type_is_a (pspec->owner_type, GST_TYPE_URI_HANDLER) &&
      strcmp (pspec->name, SOCKET_PROPERTY) != 0;
}

/* The parameters of @object's class, in the order the class installed
 * them; free the array with g_free(). */
static GParamSpec **
list_parameters (GObject * object, guint * n_out)
{
  guint n = 0, kept = 0;
  GParamSpec **all = g_object_class_list_properties (G_OBJECT_GET_CLASS
      (object), &n);

  for (guint i = 0; i < n; i++)
    if (is_parameter (all[i]))
      all[kept++] = all[i];
  *n_out = kept;
  return all;
}

/* "a, b, c": the parameters, for an error message. */
static gchar *
parameter_names (GObject * object)
{
  guint n = 0;
  g_autofree GParamSpec **params = list_parameters (object, &n);
  GString *s = g_string_new (NULL);

  for (guint i = 0; i < n; i++)
    g_string_append_printf (s, "%s%s", i ? ", " : "", params[i]->name);
  return g_string_free (s, FALSE);
}

/* @value as the URI spells it: a string as it is, an enum by its nick,
 * anything else as gst_value_serialize() writes it (what gst-launch-1.0
 * reads back). */
static gchar *
value_to_text (const GValue * value)
{
  if (G_VALUE_HOLDS_STRING (value))
    return g_value_dup_string (value);
  if (G_VALUE_HOLDS_ENUM (value)) {
    GEnumClass *klass = g_type_class_ref (G_VALUE_TYPE (value));
    GEnumValue *ev = g_enum_get_value (klass, g_value_get_enum (value));
    gchar *text = g_strdup (ev ? ev->value_nick : "");

    g_type_class_unref (klass);
    return text;
  }
  return gst_value_serialize (value);
}

/* @text (decoded) into @value, initialised to @pspec's type: read as
 * gst-launch-1.0 reads a property, and within @pspec's range. An empty
 * string is no string (NULL). */
static gboolean
text_to_value (GstURIHandler * handler, GParamSpec * pspec,
    const gchar * text, GValue * value, GError ** error)
{
  g_value_init (value, G_PARAM_SPEC_VALUE_TYPE (pspec));
  if (G_VALUE_HOLDS_STRING (value)) {
    g_value_set_string (value, text[0] != '\0' ? text : NULL);
  } else if (!gst_value_deserialize (value, text)) {
    g_set_error (error, GST_URI_ERROR, GST_URI_ERROR_BAD_URI,
        "%s URI parameter %s: \"%s\" is not a valid %s", element_word
        (handler), pspec->name, text, g_type_name (G_PARAM_SPEC_VALUE_TYPE
            (pspec)));
    return FALSE;
  }
  /* TRUE where the value had to be changed to fit: out of range */
  if (g_param_value_validate (pspec, value)) {
    g_autofree gchar *fits = value_to_text (value);

    g_set_error (error, GST_URI_ERROR, GST_URI_ERROR_BAD_URI,
        "%s URI parameter %s: \"%s\" is out of range (the nearest allowed "
        "value is %s)", element_word (handler), pspec->name, text, fits);
    return FALSE;
  }
  return TRUE;
}

/* The socket: "/absolute/path" or "@abstract-name", percent-encoded.
 * Returns the decoded name. */
static gchar *
parse_socket (GstURIHandler * handler, const gchar * part, GError ** error)
{
  gchar *name;

  if (part[0] != '/' && part[0] != '@') {
    g_set_error (error, GST_URI_ERROR, GST_URI_ERROR_BAD_URI,
        "%s URI: the socket must be an absolute path (" PREFIX
        "/run/cam1.sock) or @ and an abstract name (" PREFIX "@cam1), not "
        "\"%s\"", element_word (handler), part);
    return NULL;
  }
  name = g_uri_unescape_string (part, NULL);
  if (name == NULL) {
    g_set_error (error, GST_URI_ERROR, GST_URI_ERROR_BAD_URI,
        "%s URI: the socket \"%s\" has a bad %%-escape (or one of a NUL "
        "byte)", element_word (handler), part);
    return NULL;
  }
  if (strcmp (name, "@") == 0 || strcmp (name, "/") == 0) {
    g_set_error (error, GST_URI_ERROR, GST_URI_ERROR_BAD_URI,
        "%s URI: no socket name after \"%s\"", element_word (handler), name);
    g_free (name);
    return NULL;
  }
  if (strlen (name) > cudaipc_socket_max_name ()) {
    g_set_error (error, GST_URI_ERROR, GST_URI_ERROR_BAD_REFERENCE,
        "%s URI: the socket name is %" G_GSIZE_FORMAT " bytes long, more "
        "than the %" G_GSIZE_FORMAT " a Unix socket can have",
        element_word (handler), strlen (name), cudaipc_socket_max_name ());
    g_free (name);
    return NULL;
  }
  return name;
}

/* A hint for a parameter @key the element does not take: the socket, a
 * property that is not a parameter, or a setting of the other end (a
 * producer's URI given to the consumer). */
static const gchar *
why_unknown (GstURIHandler * handler, const gchar * key)
{
  gboolean sink = gst_uri_handler_get_uri_type (handler) == GST_URI_SINK;
  GType other = g_type_from_name (sink ? "GstCuIpcSrc" : "GstCuIpcSink");
  GParamSpec *own = g_object_class_find_property (G_OBJECT_GET_CLASS
      (handler), key);
  GObjectClass *klass;
  GParamSpec *theirs;
  gboolean hint;

  if (strcmp (key, SOCKET_PROPERTY) == 0)
    return " (the socket is the URI's path)";
  if (own != NULL && (own->flags & G_PARAM_WRITABLE) == 0)
    return " (read-only)";
  if (own != NULL)
    return " (a property of the base class: set it on the element)";
  if (other == 0)
    return "";
  klass = g_type_class_ref (other);
  theirs = g_object_class_find_property (klass, key);
  hint = theirs != NULL && is_parameter (theirs);
  g_type_class_unref (klass);
  if (!hint)
    return "";
  return sink ? " (a setting of the consumer, cuipcsrc)" :
      " (a setting of the producer, cuipcsink: the consumer follows it)";
}

/* Reads the query "a=1&b=2" into @values (parameter name to a GValue),
 * every name known and given once, every value valid. */
static gboolean
parse_query (GstURIHandler * handler, const gchar * query,
    GHashTable * values, GError ** error)
{
  GObject *object = G_OBJECT (handler);
  g_auto (GStrv) pairs = g_strsplit (query, "&", -1);

  for (guint i = 0; pairs[i] != NULL; i++) {
    const gchar *eq = strchr (pairs[i], '=');
    g_autofree gchar *key = NULL, *text = NULL;
    GParamSpec *pspec;
    GValue *value;

    /* "a=1&&b=2" and a trailing '&' are harmless */
    if (pairs[i][0] == '\0')
      continue;
    key = g_uri_unescape_segment (pairs[i], eq, NULL);
    text = eq ? g_uri_unescape_string (eq + 1, NULL) : NULL;
    if (key == NULL || (eq != NULL && text == NULL)) {
      g_set_error (error, GST_URI_ERROR, GST_URI_ERROR_BAD_URI,
          "%s URI: the parameter \"%s\" has a bad %%-escape",
          element_word (handler), pairs[i]);
      return FALSE;
    }
    pspec = g_object_class_find_property (G_OBJECT_GET_CLASS (object), key);
    if (pspec == NULL || !is_parameter (pspec)) {
      g_autofree gchar *known = parameter_names (object);

      g_set_error (error, GST_URI_ERROR, GST_URI_ERROR_BAD_URI,
          "%s URI: unknown parameter \"%s\"%s; known: %s",
          element_word (handler), key, why_unknown (handler, key), known);
      return FALSE;
    }
    if (text == NULL) {
      g_set_error (error, GST_URI_ERROR, GST_URI_ERROR_BAD_URI,
          "%s URI parameter %s has no value (%s=VALUE)",
          element_word (handler), key, key);
      return FALSE;
    }
    if (g_hash_table_contains (values, pspec->name)) {
      g_set_error (error, GST_URI_ERROR, GST_URI_ERROR_BAD_URI,
          "%s URI parameter %s is given twice", element_word (handler), key);
      return FALSE;
    }
    value = g_new0 (GValue, 1);
    /* keyed by the pspec's own (static) name */
    g_hash_table_insert (values, (gpointer) pspec->name, value);
    if (!text_to_value (handler, pspec, text, value, error))
      return FALSE;
  }
  return TRUE;
}

static void
free_value (gpointer data)
{
  GValue *value = data;

  if (G_IS_VALUE (value))
    g_value_unset (value);
  g_free (value);
}

static gboolean
cudaipc_uri_set_uri (GstURIHandler * handler, const gchar * uri,
    GError ** error)
{
  GObject *object = G_OBJECT (handler);
  GstElement *element = GST_ELEMENT (handler);
  g_autoptr (GHashTable) values = g_hash_table_new_full (g_str_hash,
      g_str_equal, NULL, free_value);
  g_autofree gchar *socket = NULL, *target = NULL;
  g_autofree GParamSpec **params = NULL;
  const gchar *rest, *query;
  GstState state;
  guint n = 0;

  GST_OBJECT_LOCK (element);
  state = MAX (GST_STATE (element), GST_STATE_PENDING (element));
  GST_OBJECT_UNLOCK (element);
  if (state > GST_STATE_READY) {
    g_set_error (error, GST_URI_ERROR, GST_URI_ERROR_BAD_STATE,
        "%s: the URI can only change in the NULL and READY states",
        element_word (handler));
    return FALSE;
  }
  if (uri == NULL || g_ascii_strncasecmp (uri, PREFIX, strlen (PREFIX))) {
    g_set_error (error, GST_URI_ERROR, GST_URI_ERROR_UNSUPPORTED_PROTOCOL,
        "%s: \"%s\" is not a " PREFIX " URI", element_word (handler),
        GST_STR_NULL (uri));
    return FALSE;
  }
  rest = uri + strlen (PREFIX);
  if (strchr (rest, '#') != NULL) {
    g_set_error (error, GST_URI_ERROR, GST_URI_ERROR_BAD_URI,
        "%s URI \"%s\": a fragment (#) means nothing here; write a '#' of "
        "a socket name as %%23", element_word (handler), uri);
    return FALSE;
  }
  query = strchr (rest, '?');
  target = query ? g_strndup (rest, query - rest) : g_strdup (rest);
  socket = parse_socket (handler, target, error);
  if (socket == NULL)
    return FALSE;
  if (query != NULL && !parse_query (handler, query + 1, values, error))
    return FALSE;

  /* all read: now set everything at once, the rest to its default */
  params = list_parameters (object, &n);
  g_object_freeze_notify (object);
  g_object_set (object, SOCKET_PROPERTY, socket, NULL);
  for (guint i = 0; i < n; i++) {
    GValue *given = g_hash_table_lookup (values, params[i]->name);
    GValue def = G_VALUE_INIT;

    if (given != NULL) {
      g_object_set_property (object, params[i]->name, given);
      continue;
    }
    g_value_init (&def, G_PARAM_SPEC_VALUE_TYPE (params[i]));
    g_param_value_set_default (params[i], &def);
    g_object_set_property (object, params[i]->name, &def);
    g_value_unset (&def);
  }
  g_object_thaw_notify (object);
  return TRUE;
}

static gchar *
cudaipc_uri_get_uri (GstURIHandler * handler)
{
  GObject *object = G_OBJECT (handler);
  g_autofree gchar *socket = NULL, *escaped = NULL;
  g_autofree GParamSpec **params = NULL;
  GString *uri;
  guint n = 0, given = 0;

  g_object_get (object, SOCKET_PROPERTY, &socket, NULL);
  if (socket == NULL || socket[0] == '\0')
    return NULL;
  /* a relative path (set as a property) names a file of this folder,
   * which the URI names from the root */
  if (socket[0] != '/' && socket[0] != '@') {
    g_autofree gchar *cwd = g_get_current_dir ();
    gchar *abs = g_build_filename (cwd, socket, NULL);

    g_free (socket);
    socket = abs;
  }
  escaped = g_uri_escape_string (socket, KEEP_IN_SOCKET, FALSE);
  uri = g_string_new (PREFIX);
  g_string_append (uri, escaped);

  params = list_parameters (object, &n);
  for (guint i = 0; i < n; i++) {
    GValue value = G_VALUE_INIT;
    g_autofree gchar *text = NULL, *text_escaped = NULL;

    g_value_init (&value, G_PARAM_SPEC_VALUE_TYPE (params[i]));
    g_object_get_property (object, params[i]->name, &value);
    if (!g_param_value_defaults (params[i], &value)) {
      text = value_to_text (&value);
      text_escaped = g_uri_escape_string (text ? text : "", KEEP_IN_VALUE,
          FALSE);
      g_string_append_printf (uri, "%c%s=%s", given++ ? '&' : '?',
          params[i]->name, text_escaped);
    }
    g_value_unset (&value);
  }
  return g_string_free (uri, FALSE);
}

static const gchar *const *
cudaipc_uri_get_protocols (GType type)
{
  return protocols;
}

static GstURIType
cudaipc_uri_get_type_sink (GType type)
{
  return GST_URI_SINK;
}

static GstURIType
cudaipc_uri_get_type_src (GType type)
{
  return GST_URI_SRC;
}

static void
init_common (GstURIHandlerInterface * iface)
{
  iface->get_protocols = cudaipc_uri_get_protocols;
  iface->get_uri = cudaipc_uri_get_uri;
  iface->set_uri = cudaipc_uri_set_uri;
}

void
cudaipc_uri_sink_handler_init (gpointer g_iface, gpointer iface_data)
{
  GstURIHandlerInterface *iface = g_iface;

  iface->get_type = cudaipc_uri_get_type_sink;
  init_common (iface);
}

void
cudaipc_uri_src_handler_init (gpointer g_iface, gpointer iface_data)
{
  GstURIHandlerInterface *iface = g_iface;

  iface->get_type = cudaipc_uri_get_type_src;
  init_common (iface);
}
