/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The consumer's core (reader.h has the contract): its settings, the
 * connection and reconnection rules and their texts, over the client.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include "consumer/reader.h"
#include "common/debug.h"
#include "common/error.h"
#include "common/hints.h"
#include "media/media.h"
#include "metas/metas.h"

#define GST_CAT_DEFAULT cudaipc_client_debug

struct _CudaIpcReader
{
  CudaIpcClient *client;        /* NULL where it could not be made */
  GError *client_error;         /* why */

  /* the settings: the lock */
  GMutex lock;
  gchar *socket_path;
  gchar *name;
  gint device_id;
  gboolean peer_access;
  gint announce;
  guint spin_us;
  guint connect_timeout;
  gboolean reconnect;
  guint reconnect_timeout;
  gint max_held;
  gboolean keep_all;
  CudaIpcLeaky leaky;
  gint copy_threshold;
  const CudaIpcSettingNames *names;     /* in the hints of errors */
  /* also the lock */
  CudaIpcMetaCounts metas;      /* since start() */
  guint64 copied;               /* frames that went out as copies */
  guint ring_limit;             /* auto max-held: the last ring's size
                                 * less one, at least 1; 0 before one */

  /* the owning thread */
  gchar *path;                  /* socket_path while started */
  guint connections;            /* made since start() */
  gboolean warned_events;       /* refused events were reported on this
                                 * connection */
  gboolean warned_metas;        /* refused metas were reported on this
                                 * connection */
};

CudaIpcReader *
cudaipc_reader_new (void)
{
  CudaIpcReader *r = g_new0 (CudaIpcReader, 1);

  g_mutex_init (&r->lock);
  r->device_id = CUDAIPC_READER_DEFAULT_DEVICE_ID;
  r->peer_access = CUDAIPC_READER_DEFAULT_PEER_ACCESS;
  r->connect_timeout = CUDAIPC_READER_DEFAULT_CONNECT_TIMEOUT;
  r->reconnect = CUDAIPC_READER_DEFAULT_RECONNECT;
  r->reconnect_timeout = CUDAIPC_READER_DEFAULT_RECONNECT_TIMEOUT;
  r->max_held = CUDAIPC_READER_DEFAULT_MAX_HELD;
  r->leaky = CUDAIPC_READER_DEFAULT_LEAKY;
  r->copy_threshold = CUDAIPC_READER_DEFAULT_COPY_THRESHOLD;
  r->names = &cudaipc_setting_names_element;
  r->client = cudaipc_client_new (&r->client_error);
  if (r->client == NULL) {
    GST_ERROR ("%s", r->client_error->message);
  } else {
    cudaipc_client_set_max_held (r->client, r->max_held);
    cudaipc_client_set_leaky (r->client, r->leaky);
  }
  return r;
}

void
cudaipc_reader_free (CudaIpcReader * r)
{
  if (r == NULL)
    return;
  /* frames still out keep the client's session alive */
  if (r->client != NULL) {
    cudaipc_client_disconnect (r->client, CUDAIPC_BYE_NORMAL,
        "the consumer stopped");
    cudaipc_client_free (r->client);
  }
  g_clear_error (&r->client_error);
  g_mutex_clear (&r->lock);
  g_free (r->socket_path);
  g_free (r->name);
  g_free (r->path);
  g_free (r);
}

/* Settings */

#define SETTING(type, field, set_name, get_name)                        \
void                                                                    \
set_name (CudaIpcReader * r, type value)                                \
{                                                                       \
  g_mutex_lock (&r->lock);                                              \
  r->field = value;                                                     \
  g_mutex_unlock (&r->lock);                                            \
}                                                                       \
                                                                        \
type                                                                    \
get_name (CudaIpcReader * r)                                            \
{                                                                       \
  type value;                                                           \
                                                                        \
  g_mutex_lock (&r->lock);                                              \
  value = r->field;                                                     \
  g_mutex_unlock (&r->lock);                                            \
  return value;                                                         \
}

/* *INDENT-OFF* */
SETTING (gint, device_id, cudaipc_reader_set_device_id,
    cudaipc_reader_get_device_id)
SETTING (gboolean, peer_access, cudaipc_reader_set_peer_access,
    cudaipc_reader_get_peer_access)
SETTING (gint, announce, cudaipc_reader_set_announce,
    cudaipc_reader_get_announce)
SETTING (guint, spin_us, cudaipc_reader_set_spin_us,
    cudaipc_reader_get_spin_us)
SETTING (guint, connect_timeout, cudaipc_reader_set_connect_timeout,
    cudaipc_reader_get_connect_timeout)
SETTING (gboolean, reconnect, cudaipc_reader_set_reconnect,
    cudaipc_reader_get_reconnect)
SETTING (guint, reconnect_timeout, cudaipc_reader_set_reconnect_timeout,
    cudaipc_reader_get_reconnect_timeout)
/* *INDENT-ON* */

static void
set_string (CudaIpcReader * r, gchar ** field, const gchar * value)
{
  g_mutex_lock (&r->lock);
  g_free (*field);
  *field = g_strdup (value);
  g_mutex_unlock (&r->lock);
}

static gchar *
dup_string (CudaIpcReader * r, gchar ** field)
{
  gchar *value;

  g_mutex_lock (&r->lock);
  value = g_strdup (*field);
  g_mutex_unlock (&r->lock);
  return value;
}

void
cudaipc_reader_set_socket_path (CudaIpcReader * r, const gchar * path)
{
  set_string (r, &r->socket_path, path);
}

gchar *
cudaipc_reader_dup_socket_path (CudaIpcReader * r)
{
  return dup_string (r, &r->socket_path);
}

void
cudaipc_reader_set_name (CudaIpcReader * r, const gchar * name)
{
  set_string (r, &r->name, name);
}

gchar *
cudaipc_reader_dup_name (CudaIpcReader * r)
{
  return dup_string (r, &r->name);
}

void
cudaipc_reader_set_setting_names (CudaIpcReader * r,
    const CudaIpcSettingNames * names)
{
  g_mutex_lock (&r->lock);
  r->names = names ? names : &cudaipc_setting_names_element;
  g_mutex_unlock (&r->lock);
}

/* With the lock: what the client drops frames beyond. */
static void
apply_max_held_locked (CudaIpcReader * r)
{
  if (r->client != NULL)
    cudaipc_client_set_max_held (r->client, r->keep_all ? 0 : r->max_held);
}

void
cudaipc_reader_set_max_held (CudaIpcReader * r, gint max_held)
{
  g_mutex_lock (&r->lock);
  r->max_held = max_held;
  apply_max_held_locked (r);
  g_mutex_unlock (&r->lock);
}

gint
cudaipc_reader_get_max_held (CudaIpcReader * r)
{
  gint value;

  g_mutex_lock (&r->lock);
  value = r->max_held;
  g_mutex_unlock (&r->lock);
  return value;
}

void
cudaipc_reader_set_keep_all (CudaIpcReader * r, gboolean keep_all)
{
  g_mutex_lock (&r->lock);
  r->keep_all = keep_all;
  apply_max_held_locked (r);
  g_mutex_unlock (&r->lock);
}

void
cudaipc_reader_set_leaky (CudaIpcReader * r, CudaIpcLeaky leaky)
{
  g_mutex_lock (&r->lock);
  r->leaky = leaky;
  if (r->client != NULL)
    cudaipc_client_set_leaky (r->client, leaky);
  g_mutex_unlock (&r->lock);
}

CudaIpcLeaky
cudaipc_reader_get_leaky (CudaIpcReader * r)
{
  CudaIpcLeaky value;

  g_mutex_lock (&r->lock);
  value = r->leaky;
  g_mutex_unlock (&r->lock);
  return value;
}

void
cudaipc_reader_set_copy_threshold (CudaIpcReader * r, gint threshold)
{
  g_atomic_int_set (&r->copy_threshold, MAX (threshold,
          CUDAIPC_COPY_THRESHOLD_AUTO));
}

gint
cudaipc_reader_get_copy_threshold (CudaIpcReader * r)
{
  return g_atomic_int_get (&r->copy_threshold);
}

gboolean
cudaipc_reader_set_setting (CudaIpcReader * r, const gchar * name,
    const GValue * value)
{
  if (g_str_equal (name, "socket-path"))
    cudaipc_reader_set_socket_path (r, g_value_get_string (value));
  else if (g_str_equal (name, "device-id"))
    cudaipc_reader_set_device_id (r, g_value_get_int (value));
  else if (g_str_equal (name, "connect-timeout"))
    cudaipc_reader_set_connect_timeout (r, g_value_get_uint (value));
  else if (g_str_equal (name, "reconnect"))
    cudaipc_reader_set_reconnect (r, g_value_get_boolean (value));
  else if (g_str_equal (name, "reconnect-timeout"))
    cudaipc_reader_set_reconnect_timeout (r, g_value_get_uint (value));
  else if (g_str_equal (name, "max-held"))
    cudaipc_reader_set_max_held (r, g_value_get_int (value));
  else if (g_str_equal (name, "client-name"))
    cudaipc_reader_set_name (r, g_value_get_string (value));
  else if (g_str_equal (name, "peer-access"))
    cudaipc_reader_set_peer_access (r, g_value_get_boolean (value));
  else if (g_str_equal (name, "leaky-type"))
    cudaipc_reader_set_leaky (r, g_value_get_enum (value));
  else if (g_str_equal (name, "copy-threshold"))
    cudaipc_reader_set_copy_threshold (r, g_value_get_int (value));
  else if (g_str_equal (name, "announce"))
    cudaipc_reader_set_announce (r, g_value_get_enum (value));
  else if (g_str_equal (name, "spin-us"))
    cudaipc_reader_set_spin_us (r, g_value_get_uint (value));
  else
    return FALSE;
  return TRUE;
}

gboolean
cudaipc_reader_get_setting (CudaIpcReader * r, const gchar * name,
    GValue * value)
{
  if (g_str_equal (name, "socket-path"))
    g_value_take_string (value, cudaipc_reader_dup_socket_path (r));
  else if (g_str_equal (name, "device-id"))
    g_value_set_int (value, cudaipc_reader_get_device_id (r));
  else if (g_str_equal (name, "connect-timeout"))
    g_value_set_uint (value, cudaipc_reader_get_connect_timeout (r));
  else if (g_str_equal (name, "reconnect"))
    g_value_set_boolean (value, cudaipc_reader_get_reconnect (r));
  else if (g_str_equal (name, "reconnect-timeout"))
    g_value_set_uint (value, cudaipc_reader_get_reconnect_timeout (r));
  else if (g_str_equal (name, "max-held"))
    g_value_set_int (value, cudaipc_reader_get_max_held (r));
  else if (g_str_equal (name, "client-name"))
    g_value_take_string (value, cudaipc_reader_dup_name (r));
  else if (g_str_equal (name, "peer-access"))
    g_value_set_boolean (value, cudaipc_reader_get_peer_access (r));
  else if (g_str_equal (name, "leaky-type"))
    g_value_set_enum (value, cudaipc_reader_get_leaky (r));
  else if (g_str_equal (name, "copy-threshold"))
    g_value_set_int (value, cudaipc_reader_get_copy_threshold (r));
  else if (g_str_equal (name, "announce"))
    g_value_set_enum (value, cudaipc_reader_get_announce (r));
  else if (g_str_equal (name, "spin-us"))
    g_value_set_uint (value, cudaipc_reader_get_spin_us (r));
  else
    return FALSE;
  return TRUE;
}

/* Runs */

gboolean
cudaipc_reader_start (CudaIpcReader * r, GError ** error)
{
  if (r->client == NULL) {
    g_set_error_literal (error, CUDAIPC_ERROR, CUDAIPC_ERROR_IO,
        r->client_error->message);
    return FALSE;
  }
  g_free (r->path);
  r->path = cudaipc_reader_dup_socket_path (r);
  if (r->path == NULL || r->path[0] == '\0') {
    g_set_error_literal (error, CUDAIPC_ERROR, CUDAIPC_ERROR_INVALID,
        "No socket-path set");
    return FALSE;
  }
  cudaipc_client_reset_stats (r->client);
  r->connections = 0;
  g_mutex_lock (&r->lock);
  memset (&r->metas, 0, sizeof (r->metas));
  r->copied = 0;
  r->ring_limit = 0;
  g_mutex_unlock (&r->lock);
  return TRUE;
}

void
cudaipc_reader_stop (CudaIpcReader * r)
{
  if (r->client == NULL)
    return;
  cudaipc_client_disconnect (r->client, CUDAIPC_BYE_NORMAL,
      "the consumer stopped");
  cudaipc_client_release_device (r->client);
}

const gchar *
cudaipc_reader_get_path (CudaIpcReader * r)
{
  return r->path;
}

CudaIpcClient *
cudaipc_reader_get_client (CudaIpcReader * r)
{
  return r->client;
}

void
cudaipc_reader_cancel (CudaIpcReader * r)
{
  if (r->client != NULL)
    cudaipc_client_cancel (r->client);
}

void
cudaipc_reader_uncancel (CudaIpcReader * r)
{
  if (r->client != NULL)
    cudaipc_client_uncancel (r->client);
}

/* The connection's ring, as @info says, for auto max-held. */
static void
note_ring (CudaIpcReader * r, const CudaIpcClientInfo * info)
{
  if (info->n_slots == 0)
    return;
  g_mutex_lock (&r->lock);
  r->ring_limit = MAX (info->n_slots - 1, 1);
  g_mutex_unlock (&r->lock);
}

guint
cudaipc_reader_held_limit (CudaIpcReader * r)
{
  CudaIpcClientInfo info;
  gint max_held = cudaipc_reader_get_max_held (r);
  guint limit;

  if (max_held > 0)
    return (guint) max_held;
  if (max_held == 0)
    return G_MAXUINT;
  if (r->client != NULL && cudaipc_client_get_info (r->client, &info))
    note_ring (r, &info);
  g_mutex_lock (&r->lock);
  limit = r->ring_limit > 0 ? r->ring_limit : G_MAXUINT;
  g_mutex_unlock (&r->lock);
  return limit;
}

/* Connecting */

/* Connects and runs the handshake: the first time within connect-timeout,
 * after a lost producer within reconnect-timeout, either bounded by
 * @deadline. */
static CudaIpcReaderStatus
reader_connect (CudaIpcReader * r, gint64 deadline, CudaIpcReaderItem * item,
    GError ** error)
{
  g_autoptr (GError) err = NULL;
  g_autofree gchar *name = NULL;
  CudaIpcClientStatus st;
  gboolean again = r->connections > 0;
  const gchar *setting = again ? "reconnect-timeout" : "connect-timeout";
  const CudaIpcSettingNames *names;
  guint timeout, full_timeout;
  gint device_id;

  g_mutex_lock (&r->lock);
  timeout = full_timeout = again ? r->reconnect_timeout : r->connect_timeout;
  names = r->names;
  device_id = r->device_id;
  name = g_strdup (r->name);
  cudaipc_client_set_peer_access (r->client, r->peer_access);
  cudaipc_client_set_announce (r->client, (CudaIpcAnnounce) r->announce,
      r->spin_us);
  g_mutex_unlock (&r->lock);

  if (deadline > 0) {
    gint64 left = (deadline - g_get_monotonic_time ()) / 1000;

    left = MAX (left, 1);
    timeout = timeout ? MIN (timeout, (guint) MIN (left, G_MAXUINT)) :
        (guint) MIN (left, G_MAXUINT);
  }

  GST_DEBUG ("connecting to %s (%s %u ms)", r->path, setting, timeout);
  st = cudaipc_client_connect (r->client, r->path, name, device_id, timeout,
      &err);
  if (st == CUDAIPC_CLIENT_CANCELLED)
    return CUDAIPC_READER_CANCELLED;
  if (st != CUDAIPC_CLIENT_OK) {
    item->debug = g_strdup_printf ("device-id %d, %s %u ms", device_id,
        setting, timeout);
    /* reconnect-timeout ran out (not the caller's deadline): the
     * producer is gone for good, as far as this consumer waits */
    if (again && timeout == full_timeout &&
        g_error_matches (err, CUDAIPC_ERROR, CUDAIPC_ERROR_TIMEOUT)) {
      g_autofree gchar *text = cudaipc_hint_stayed_away (names, r->path,
          timeout);

      g_set_error_literal (error, err->domain, err->code, text);
      g_free (item->debug);
      item->debug = g_strdup_printf ("reconnect-timeout %u ms: %s", timeout,
          err->message);
    } else if (g_error_matches (err, CUDAIPC_ERROR, CUDAIPC_ERROR_TIMEOUT)) {
      g_autofree gchar *hint = cudaipc_hint_no_producer (names, again);

      g_set_error (error, err->domain, err->code, "%s: %s", err->message,
          hint);
    } else
      g_propagate_error (error, g_steal_pointer (&err));
    return CUDAIPC_READER_CONNECT_FAILED;
  }
  r->connections++;
  r->warned_metas = FALSE;
  r->warned_events = FALSE;
  item->connections = r->connections;
  item->backend = cudaipc_client_get_backend (r->client);
  return CUDAIPC_READER_CONNECTED;
}

/* The producer left without EOS, after BYE if @ci says so; the client
 * closed the connection already. */
static CudaIpcReaderStatus
producer_lost (CudaIpcReader * r, const CudaIpcClientItem * ci,
    CudaIpcReaderItem * item, GError ** error)
{
  const gchar *reason = cudaipc_bye_reason_name (ci->bye_reason);
  /* a refusal would only be repeated on the next connection */
  gboolean refused = ci->said_bye && ci->bye_reason != CUDAIPC_BYE_NORMAL &&
      ci->bye_reason != CUDAIPC_BYE_TOO_SLOW;

  /* without a BYE from the producer, bye_text is this consumer's reason
   * for closing (interprocess events unavailable: it reconnects without) */
  item->why = ci->said_bye ? g_strdup_printf ("it said BYE (%s): %s", reason,
      ci->bye_text) : ci->bye_text ? g_strdup (ci->bye_text) :
      g_strdup ("it closed the connection without EOS");
  item->bye_reason = ci->said_bye ? reason : "none";
  item->reconnecting = cudaipc_reader_get_reconnect (r) && !refused;

  if (refused) {
    item->debug = g_strdup_printf ("BYE reason: %s", reason);
    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_PROTOCOL,
        "The producer on %s ended the connection: %s", r->path, ci->bye_text);
  } else if (!item->reconnecting) {
    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_IO,
        "Lost the producer on %s: %s", r->path, item->why);
  } else {
    item->text = g_strdup_printf ("Lost the producer on %s, reconnecting: %s",
        r->path, item->why);
  }
  return CUDAIPC_READER_LOST;
}

CudaIpcReaderStatus
cudaipc_reader_next (CudaIpcReader * r, gint64 deadline,
    CudaIpcReaderItem * item, GError ** error)
{
  CudaIpcReaderStatus ret = CUDAIPC_READER_FAILED;
  CudaIpcClientItem ci;

  memset (item, 0, sizeof (*item));
  g_return_val_if_fail (r->client != NULL && r->path != NULL,
      CUDAIPC_READER_FAILED);

  /* the first connection and every reconnection happen here, in the
   * caller's thread, so that nothing else waits for a producer */
  if (!cudaipc_client_is_connected (r->client))
    return reader_connect (r, deadline, item, error);

  switch (cudaipc_client_receive_until (r->client, &ci, deadline, error)) {
    case CUDAIPC_CLIENT_OK:
      item->item = ci;
      return ci.type == CUDAIPC_CLIENT_ITEM_FRAME ? CUDAIPC_READER_FRAME :
          CUDAIPC_READER_EVENT;
    case CUDAIPC_CLIENT_CLOSED:
      ret = producer_lost (r, &ci, item, error);
      break;
    case CUDAIPC_CLIENT_CANCELLED:
      ret = CUDAIPC_READER_CANCELLED;
      break;
    case CUDAIPC_CLIENT_TIMEOUT:
      ret = CUDAIPC_READER_TIMEOUT;
      break;
    case CUDAIPC_CLIENT_ERROR:
      /* the connection is closed; BYE told the producer why */
      ret = CUDAIPC_READER_FAILED;
      break;
  }
  cudaipc_client_item_clear (&ci);
  return ret;
}

void
cudaipc_reader_item_clear (CudaIpcReaderItem * item)
{
  if (item == NULL)
    return;
  cudaipc_client_item_clear (&item->item);
  g_free (item->why);
  g_free (item->text);
  g_free (item->debug);
  memset (item, 0, sizeof (*item));
}

/* What the front doors show */

void
cudaipc_reader_decode_metas (CudaIpcReader * r, GBytes * meta,
    GstBuffer * buf, GError ** metas_error)
{
  g_autoptr (GError) err = NULL;
  CudaIpcMetaCounts counts = { 0, };
  gsize len;
  const guint8 *data = g_bytes_get_data (meta, &len);
  gboolean ok = cudaipc_metas_decode (data, len, buf, &counts, &err);

  g_mutex_lock (&r->lock);
  r->metas.carried += counts.carried;
  r->metas.skipped += counts.skipped;
  r->metas.dropped += counts.dropped;
  g_mutex_unlock (&r->lock);
  /* what the producer sent is untrusted: a meta that breaks a rule is
   * dropped, with those after it, and reported once a connection; the
   * frame goes out all the same */
  if (!ok) {
    GST_DEBUG ("metas of a frame refused: %s", err->message);
    if (!r->warned_metas) {
      r->warned_metas = TRUE;
      g_propagate_error (metas_error, g_steal_pointer (&err));
    }
  }
}

GstBuffer *
cudaipc_reader_make_buffer (CudaIpcReader * r, CudaIpcClientFrame * frame)
{
  GstBuffer *buf = gst_buffer_new ();

  /* from here, unreffing the buffer releases the slot */
  gst_buffer_append_memory (buf, g_steal_pointer (&frame->memory));
  cudaipc_media_apply_frame (buf, &frame->msg, &frame->info);
  if (frame->discont)
    GST_BUFFER_FLAG_SET (buf, GST_BUFFER_FLAG_DISCONT);
  return buf;
}

gchar *
cudaipc_reader_describe_producer (CudaIpcReader * r)
{
  CudaIpcClientInfo info = { 0, };

  if (r->client == NULL || !cudaipc_client_get_info (r->client, &info))
    return g_strdup_printf ("The producer on %s", r->path);
  return g_strdup_printf ("The producer '%s' (pid %u) on %s",
      info.producer_name ? info.producer_name : "", info.producer_pid,
      r->path);
}

gchar *
cudaipc_reader_take_event_refusal (CudaIpcReader * r)
{
  gchar *text;

  if (r->client == NULL)
    return NULL;
  text = cudaipc_client_take_event_refusal (r->client);
  if (text == NULL || r->warned_events) {
    g_free (text);
    return NULL;
  }
  r->warned_events = TRUE;
  return text;
}

gchar *
cudaipc_reader_refusal_text (CudaIpcReader * r, gboolean events)
{
  g_autofree gchar *who = cudaipc_reader_describe_producer (r);

  if (events)
    return g_strdup_printf ("%s sent events this consumer refused; they "
        "are dropped, the frames go out", who);
  return g_strdup_printf ("%s sent frame metadata that breaks the rules; "
      "such metas are dropped, the frames go out", who);
}

gchar *
cudaipc_reader_take_warnings (CudaIpcReader * r, const GError * metas_error)
{
  g_autofree gchar *refusal = cudaipc_reader_take_event_refusal (r);
  GString *text;

  if (metas_error == NULL && refusal == NULL)
    return NULL;
  text = g_string_new (NULL);
  if (metas_error != NULL) {
    g_autofree gchar *what = cudaipc_reader_refusal_text (r, FALSE);

    g_string_append_printf (text, "%s (%s; warned once a connection)", what,
        metas_error->message);
  }
  if (refusal != NULL) {
    g_autofree gchar *what = cudaipc_reader_refusal_text (r, TRUE);

    g_string_append_printf (text, "%s%s (%s; warned once a connection)",
        text->len ? "\n" : "", what, refusal);
  }
  return g_string_free (text, FALSE);
}

gboolean
cudaipc_reader_should_copy (CudaIpcReader * r,
    const CudaIpcClientFrame * frame)
{
  gint threshold = g_atomic_int_get (&r->copy_threshold);
  guint limit;

  if (threshold == 0 || frame->lent == 0)
    return FALSE;
  if (threshold > 0) {
    limit = (guint) threshold;
  } else {
    g_mutex_lock (&r->lock);
    /* ring_limit is the ring less one */
    limit = MAX ((r->ring_limit + 1) / 2, 1);
    g_mutex_unlock (&r->lock);
  }
  return frame->lent >= limit;
}

void
cudaipc_reader_count_copy (CudaIpcReader * r)
{
  g_mutex_lock (&r->lock);
  r->copied++;
  g_mutex_unlock (&r->lock);
}

GstStructure *
cudaipc_reader_describe_connection (CudaIpcReader * r, GstCaps * caps)
{
  g_autofree gchar *caps_str = NULL;
  CudaIpcClientInfo info;

  if (!cudaipc_client_get_info (r->client, &info))
    return NULL;
  note_ring (r, &info);
  GST_INFO ("%s producer '%s' (pid %u) on %s: %u slots",
      r->connections > 1 ? "reconnected to" : "connected to",
      info.producer_name, info.producer_pid, r->path, info.n_slots);
  caps_str = gst_caps_to_string (caps);
  return gst_structure_new (r->connections > 1 ?
      "cudaipcsrc-reconnected" : "cudaipcsrc-connected",
      "socket-path", G_TYPE_STRING, r->path,
      "producer", G_TYPE_STRING, info.producer_name,
      "producer-pid", G_TYPE_UINT, info.producer_pid,
      "backend", G_TYPE_STRING, cudaipc_backend_name (info.backend),
      "ring-size", G_TYPE_UINT, info.n_slots,
      "slot-size", G_TYPE_UINT64, info.slot_size,
      "generation", G_TYPE_UINT, (guint) info.generation,
      "caps", G_TYPE_STRING, caps_str,
      "fence", G_TYPE_BOOLEAN, info.fence,
      "events", G_TYPE_BOOLEAN, info.events,
      "peer", G_TYPE_BOOLEAN, info.peer,
      "announce", G_TYPE_STRING, info.channel ? "shared-memory" : "socket",
      "max-held", G_TYPE_UINT, info.max_held,
      "live", G_TYPE_BOOLEAN, info.live,
      "leaky", G_TYPE_BOOLEAN, info.leaky,
      "connections", G_TYPE_UINT, r->connections, NULL);
}

guint
cudaipc_reader_latency_frames (CudaIpcReader * r)
{
  guint held;

  g_mutex_lock (&r->lock);
  /* auto before a connection: at least one frame */
  if (r->max_held >= 0)
    held = (guint) r->max_held;
  else
    held = r->ring_limit > 0 ? r->ring_limit : 1;
  g_mutex_unlock (&r->lock);
  return held;
}

GstStructure *
cudaipc_reader_get_stats (CudaIpcReader * r, guint64 pushed,
    const gchar * output)
{
  CudaIpcClientStats cs = { 0, };
  CudaIpcClientInfo info = { 0, };
  CudaIpcMetaCounts metas;
  guint64 copied;

  if (r->client != NULL) {
    cudaipc_client_get_stats (r->client, &cs);
    cudaipc_client_peek_policy (r->client, &info);
  }
  g_mutex_lock (&r->lock);
  metas = r->metas;
  copied = r->copied;
  g_mutex_unlock (&r->lock);
  return gst_structure_new ("application/x-cudaipcsrc-stats",
      "frames-received", G_TYPE_UINT64, cs.received,
      "frames-pushed", G_TYPE_UINT64, pushed,
      "frames-dropped", G_TYPE_UINT64, cs.dropped,
      "frames-discarded", G_TYPE_UINT64, cs.discarded,
      "metas-received", G_TYPE_UINT64, (guint64) metas.carried,
      "metas-skipped", G_TYPE_UINT64, (guint64) metas.skipped,
      "metas-refused", G_TYPE_UINT64, (guint64) metas.dropped,
      "events-refused", G_TYPE_UINT64, cs.events_refused,
      "frames-released", G_TYPE_UINT64, cs.released,
      "held", G_TYPE_UINT, cs.held,
      "generation", G_TYPE_UINT, cs.generation,
      "imports", G_TYPE_UINT, cs.imports,
      "driver-calls", G_TYPE_UINT64, cs.driver_calls,
      "copy-waits", G_TYPE_UINT64, cs.copy_waits,
      "copy-wait-ns", G_TYPE_UINT64, cs.copy_wait_ns,
      "frames-copied", G_TYPE_UINT64, copied,
      "live", G_TYPE_BOOLEAN, info.live, "leaky", G_TYPE_BOOLEAN, info.leaky,
      "output", G_TYPE_STRING, output, "peer", G_TYPE_BOOLEAN, cs.peer, NULL);
}
