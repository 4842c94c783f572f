/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The client's connection and handshake (client.h has the contract).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "consumer/client-private.h"
#include "device/cuda-loader.h"
#include "common/error.h"

#define GST_CAT_DEFAULT cudaipc_client_debug

#define RETRY_INTERVAL_MS 50

/* A monotonic deadline @ms from now, 0 (none) for 0. */
static gint64
deadline_after_ms (guint ms)
{
  return ms ? g_get_monotonic_time () + ms * G_GINT64_CONSTANT (1000) : 0;
}

/* Connects to @path, trying again every RETRY_INTERVAL_MS while nobody
 * listens there or its backlog is full, until @deadline (0: forever).
 * Returns 0, -ETIMEDOUT (@last_error: what the last try gave), -ECANCELED
 * or the connect error. */
static gint
connect_producer (CudaIpcClient * client, const gchar * path,
    gint64 deadline, int *fd_out, gint * last_error)
{
  gboolean logged = FALSE;

  for (;;) {
    gint64 now, wake;
    gint ret;

    ret = cudaipc_socket_connect (path, fd_out);
    if (ret == 0)
      return 0;
    /* no socket file yet, or a stale one, or a full backlog */
    if (ret != -ENOENT && ret != -ECONNREFUSED && ret != -EAGAIN)
      return ret;
    *last_error = ret;
    if (!logged) {
      GST_INFO ("waiting for a producer on %s (%s)", path, g_strerror (-ret));
      logged = TRUE;
    }

    now = g_get_monotonic_time ();
    if (deadline > 0 && now >= deadline)
      return -ETIMEDOUT;
    wake = now + RETRY_INTERVAL_MS * 1000;
    if (deadline > 0 && wake > deadline)
      wake = deadline;
    ret = cudaipc_client_wait_readable (client, -1, wake);
    if (ret < 0)
      return ret;
  }
}

/* Handshake */

static CudaIpcError
refusal_code (guint32 reason)
{
  switch (reason) {
    case CUDAIPC_BYE_VERSION:
      return CUDAIPC_ERROR_VERSION;
    case CUDAIPC_BYE_BACKEND:
    case CUDAIPC_BYE_DEVICE:
      return CUDAIPC_ERROR_DEVICE_MISMATCH;
    case CUDAIPC_BYE_PERMISSION:
      return CUDAIPC_ERROR_PERMISSION;
    default:
      return CUDAIPC_ERROR_PROTOCOL;
  }
}

/* The producer's ring is on another GPU than @dev (@device_id): NULL when
 * this consumer can and may read it in place through peer access, else why
 * not, for the user. */
static gchar *
other_gpu_refusal (CudaIpcClient * client, CudaIpcDevice * dev,
    gint device_id, const guint8 producer_uuid[CUDAIPC_UUID_LEN],
    guint32 producer_caps)
{
  gchar theirs[CUDAIPC_UUID_STRING_LEN], ours[CUDAIPC_UUID_STRING_LEN];
  gboolean can_access = FALSE;
  gint ordinal = -1;
  guint8 uuid[CUDAIPC_UUID_LEN];

  cudaipc_device_get_uuid (dev, uuid);
  cudaipc_uuid_format (producer_uuid, theirs);
  cudaipc_uuid_format (uuid, ours);
  if (!cudaipc_device_find_peer (dev, producer_uuid, &ordinal, &can_access))
    return g_strdup_printf ("the producer's GPU %s is not this consumer's "
        "device %d (%s), and this process does not see it (check "
        "CUDA_VISIBLE_DEVICES and the GPUs given to the container)", theirs,
        device_id, ours);
  if (!g_atomic_int_get (&client->peer_access))
    return g_strdup_printf ("the producer's GPU %s is this process's device "
        "%d, not this consumer's device %d (%s): set device-id=%d, or allow "
        "peer access", theirs, ordinal, device_id, ours, ordinal);
  if (!can_access)
    return g_strdup_printf ("the producer's GPU %s is this process's device "
        "%d, which this consumer's device %d (%s) cannot access as a peer: "
        "set device-id=%d", theirs, ordinal, device_id, ours, ordinal);
  if (!(producer_caps & CUDAIPC_CAP_PEER))
    return g_strdup_printf ("the producer's GPU %s is this process's device "
        "%d, not this consumer's device %d (%s), and the producer takes no "
        "consumers on other GPUs: set device-id=%d", theirs, ordinal,
        device_id, ours, ordinal);
  return NULL;
}

/* Checks the producer's HELLO in @msg, opens its backend and answers;
 * on a mismatch sends BYE and fails. @ret is what recv_msg() gave. */
static gboolean
handshake (CudaIpcClient * client, CudaIpcConn * conn, CudaIpcMsg * msg,
    gint ret, const gchar * name, gint device_id, guint timeout,
    GError ** error)
{
  const gchar *path = client->path;
  g_autoptr (GError) err = NULL;
  CudaIpcDevice *dev;
  CudaIpcMsg hello;
  guint8 uuid[CUDAIPC_UUID_LEN];
  gboolean peer = FALSE;

  if (ret == -EPROTONOSUPPORT && msg->type == CUDAIPC_MSG_HELLO) {
    g_autofree gchar *text =
        g_strdup_printf ("this consumer speaks protocol version %u",
        CUDAIPC_PROTOCOL_VERSION);

    cudaipc_client_send_bye (conn, CUDAIPC_BYE_VERSION, text);
    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_VERSION,
        "The producer on %s speaks protocol version %u, this consumer %u",
        path, msg->u.hello.version, CUDAIPC_PROTOCOL_VERSION);
    return FALSE;
  }
  if (ret == -ETIMEDOUT) {
    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_TIMEOUT,
        "The producer on %s sent no HELLO within %u ms", path, timeout);
    return FALSE;
  }
  if (ret < 0) {
    cudaipc_client_send_bye (conn, CUDAIPC_BYE_PROTOCOL, "bad HELLO");
    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_PROTOCOL,
        "The producer on %s sent a bad %s message: %s", path,
        cudaipc_msg_type_name (msg->type), g_strerror (-ret));
    return FALSE;
  }
  if (msg->type == CUDAIPC_MSG_BYE) {
    GST_INFO ("BYE reason: %s", cudaipc_bye_reason_name (msg->u.bye.reason));
    g_set_error (error, CUDAIPC_ERROR, refusal_code (msg->u.bye.reason),
        "The producer on %s refused this consumer: %s", path, msg->u.bye.text);
    return FALSE;
  }
  if (msg->type != CUDAIPC_MSG_HELLO) {
    cudaipc_client_send_bye (conn, CUDAIPC_BYE_PROTOCOL, "expected HELLO");
    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_PROTOCOL,
        "The producer on %s sent %s before HELLO", path,
        cudaipc_msg_type_name (msg->type));
    return FALSE;
  }

  if (msg->u.hello.backend == CUDAIPC_BACKEND_CUDA && client->ready_dev &&
      client->ready_id == device_id) {
    dev = cudaipc_device_ref (client->ready_dev);
  } else {
    dev = cudaipc_device_new (msg->u.hello.backend, device_id, &err);
  }
  if (msg->u.hello.backend == CUDAIPC_BACKEND_HOST) {
    /* no context is held for a producer that needs none */
    client->host_producer = TRUE;
    g_clear_pointer (&client->ready_dev, cudaipc_device_unref);
  }
  if (dev == NULL) {
    g_autofree gchar *text = g_strdup_printf ("this consumer cannot open "
        "the %s backend on device %d: %s",
        cudaipc_backend_name (msg->u.hello.backend), device_id, err->message);

    cudaipc_client_send_bye (conn, CUDAIPC_BYE_BACKEND, text);
    g_set_error (error, CUDAIPC_ERROR, err->code,
        "Cannot open the producer's %s backend on device %d: %s",
        cudaipc_backend_name (msg->u.hello.backend), device_id, err->message);
    return FALSE;
  }

  cudaipc_device_get_uuid (dev, uuid);
  if (msg->u.hello.backend == CUDAIPC_BACKEND_CUDA &&
      memcmp (uuid, msg->u.hello.uuid, CUDAIPC_UUID_LEN) != 0) {
    g_autofree gchar *text = other_gpu_refusal (client, dev, device_id,
        msg->u.hello.uuid, msg->u.hello.caps);

    if (text != NULL) {
      cudaipc_client_send_bye (conn, CUDAIPC_BYE_DEVICE, text);
      g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_DEVICE_MISMATCH, "%s",
          text);
      cudaipc_device_unref (dev);
      return FALSE;
    }
    peer = TRUE;
  }

  cudaipc_msg_init (&hello, CUDAIPC_MSG_HELLO);
  hello.u.hello.version = CUDAIPC_PROTOCOL_VERSION;
  hello.u.hello.backend = msg->u.hello.backend;
  memcpy (hello.u.hello.uuid, uuid, CUDAIPC_UUID_LEN);
  /* the fence page, which needs nothing of this consumer's device, and
   * legacy interprocess events, unless they failed on this client before
   * (a producer offers them only with ordering=events) */
  hello.u.hello.caps = CUDAIPC_CAP_FENCE;
  if (msg->u.hello.backend == CUDAIPC_BACKEND_CUDA && !client->events_failed)
    hello.u.hello.caps |= CUDAIPC_CAP_EVENTS;
  if (peer)
    hello.u.hello.caps |= CUDAIPC_CAP_PEER;
  /* frames given back through a page, not a message each
   * (ring/release-page.h); CUDAIPC_RELEASE_PAGE=0: messages */
  if (g_strcmp0 (g_getenv ("CUDAIPC_RELEASE_PAGE"), "0") != 0)
    hello.u.hello.caps |= CUDAIPC_CAP_RELEASE_PAGE;
  /* the producer's messages through shared memory, where asked for */
  if (g_atomic_int_get (&client->announce) == CUDAIPC_ANNOUNCE_SHARED_MEMORY)
    hello.u.hello.caps |= CUDAIPC_CAP_CHANNEL;
  hello.u.hello.pid = (guint32) getpid ();
  hello.u.hello.name = name;
  ret = cudaipc_conn_send (conn, &hello);
  if (ret < 0) {
    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_IO,
        "Could not send HELLO to the producer on %s: %s", path,
        g_strerror (-ret));
    cudaipc_device_unref (dev);
    return FALSE;
  }

  GST_INFO ("connected to producer '%s' (pid %u) on %s, backend %s, "
      "device %d (%s)", msg->u.hello.name, msg->u.hello.pid, path,
      cudaipc_backend_name (msg->u.hello.backend), device_id,
      cudaipc_device_get_name (dev));
  client->backend = msg->u.hello.backend;
  client->dev = dev;
  g_free (client->producer_name);
  client->producer_name = g_strdup (msg->u.hello.name);
  client->producer_pid = msg->u.hello.pid;
  g_atomic_int_set (&client->peer, peer ? 1 : 0);
  if (peer)
    GST_INFO ("the producer's GPU is another than device %d: its slots are "
        "read through peer access", device_id);
  /* in effect: what both sides sent */
  client->events = (hello.u.hello.caps & msg->u.hello.caps &
      CUDAIPC_CAP_EVENTS) != 0;
  client->fence = (hello.u.hello.caps & msg->u.hello.caps &
      CUDAIPC_CAP_FENCE) != 0;
  client->release_page = (hello.u.hello.caps & msg->u.hello.caps &
      CUDAIPC_CAP_RELEASE_PAGE) != 0;
  client->channel = (hello.u.hello.caps & msg->u.hello.caps &
      CUDAIPC_CAP_CHANNEL) != 0;
  if ((hello.u.hello.caps & CUDAIPC_CAP_CHANNEL) && !client->channel)
    GST_INFO ("the producer on %s offers no announce channel: its messages "
        "come on the socket", path);
  GST_DEBUG ("fence page %s, interprocess events %s",
      client->fence ? "offered" : "not offered", client->events ? "in use" :
      client->events_failed ? "off: they failed before" : "off");
  return TRUE;
}

/* A CUDA device (and its context) before connecting, where a driver and
 * the device are there, unless the producer was found to use the host
 * backend: getting a context can take seconds when many processes start
 * at once, and the producer's handshake deadline would run meanwhile. A
 * failure here is only logged: the handshake opens the device again, and
 * reports the error, if the producer turns out to need it. */
static void
prepare_device (CudaIpcClient * client, gint device_id)
{
  g_autoptr (GError) err = NULL;

  if (client->host_producer)
    return;
  if (client->ready_dev && client->ready_id == device_id)
    return;
  g_clear_pointer (&client->ready_dev, cudaipc_device_unref);
  if (!cudaipc_cuda_load (NULL))
    return;
  client->ready_dev = cudaipc_device_new (CUDAIPC_BACKEND_CUDA, device_id,
      &err);
  client->ready_id = device_id;
  if (client->ready_dev == NULL)
    GST_INFO ("no CUDA device %d made before connecting: %s", device_id,
        err->message);
}

CudaIpcClientStatus
cudaipc_client_connect (CudaIpcClient * client, const gchar * path,
    const gchar * name, gint device_id, guint timeout_ms, GError ** error)
{
  g_autofree gchar *our_name = NULL;
  CudaIpcConn *conn = NULL;
  CudaIpcMsg msg;
  Session *s;
  gint64 deadline;
  int fd = -1;
  gint ret;

  g_return_val_if_fail (client != NULL, CUDAIPC_CLIENT_ERROR);
  g_return_val_if_fail (path != NULL, CUDAIPC_CLIENT_ERROR);
  g_return_val_if_fail (client->conn == NULL, CUDAIPC_CLIENT_ERROR);
  s = client->session;

  g_free (client->path);
  client->path = g_strdup (path);
  our_name = name ? g_strdup (name) : g_strdup_printf ("cudaipcsrc-%d",
      (int) getpid ());
  /* the wire's limit, NUL included */
  if (strlen (our_name) >= CUDAIPC_MAX_NAME)
    our_name[CUDAIPC_MAX_NAME - 1] = '\0';

  prepare_device (client, device_id);
  deadline = deadline_after_ms (timeout_ms);
  for (;;) {
    gint last_error = 0;

    ret = connect_producer (client, path, deadline, &fd, &last_error);
    if (ret == -ECANCELED)
      return CUDAIPC_CLIENT_CANCELLED;
    if (ret == -ETIMEDOUT && last_error == -EAGAIN) {
      g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_TIMEOUT,
          "The producer on %s accepted no connection in %u ms (its "
          "backlog is full: is it stopped or hung?)", path, timeout_ms);
      return CUDAIPC_CLIENT_ERROR;
    }
    if (ret == -ETIMEDOUT) {
      GST_INFO ("nothing listens on %s; is the cuipcsink running?", path);
      g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_TIMEOUT,
          "No producer on %s after %u ms", path, timeout_ms);
      return CUDAIPC_CLIENT_ERROR;
    }
    if (ret == -ENAMETOOLONG) {
      g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_INVALID,
          "Cannot connect to %s: the name is %" G_GSIZE_FORMAT " bytes, and "
          "a Unix socket's may have %" G_GSIZE_FORMAT ": choose a shorter "
          "path, or an abstract name (@name), on both ends", path,
          strlen (path), cudaipc_socket_max_name ());
      return CUDAIPC_CLIENT_ERROR;
    }
    if (ret < 0) {
      g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_IO,
          "Could not connect to the producer on %s: %s", path,
          g_strerror (-ret));
      return CUDAIPC_CLIENT_ERROR;
    }
    conn = cudaipc_conn_new (fd);

    /* the producer speaks first */
    ret =
        cudaipc_client_recv_msg (client, conn, &msg,
        deadline_after_ms (timeout_ms));
    if (ret == -ECANCELED) {
      cudaipc_conn_free (conn);
      return CUDAIPC_CLIENT_CANCELLED;
    }
    /* a producer that is shutting down may still accept: wait for the
     * next one as if nobody listened */
    if (ret != -EPIPE && !(ret == 0 && msg.type == CUDAIPC_MSG_BYE &&
            msg.u.bye.reason == CUDAIPC_BYE_NORMAL))
      break;
    GST_INFO ("the producer on %s left during the handshake%s%s", path,
        ret == 0 ? ": " : "", ret == 0 ? msg.u.bye.text : "");
    cudaipc_msg_clear (&msg);
    cudaipc_conn_free (conn);
    conn = NULL;
    if (deadline > 0 && g_get_monotonic_time () >= deadline) {
      GST_INFO ("a producer accepted, then left before its HELLO");
      g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_TIMEOUT,
          "No producer on %s after %u ms", path, timeout_ms);
      return CUDAIPC_CLIENT_ERROR;
    }
    ret = cudaipc_client_wait_readable (client, -1,
        g_get_monotonic_time () + RETRY_INTERVAL_MS * 1000);
    if (ret == -ECANCELED)
      return CUDAIPC_CLIENT_CANCELLED;
  }

  if (!handshake (client, conn, &msg, ret, our_name, device_id, timeout_ms,
          error)) {
    cudaipc_msg_clear (&msg);
    cudaipc_conn_free (conn);
    return CUDAIPC_CLIENT_ERROR;
  }
  cudaipc_msg_clear (&msg);

  client->discont = TRUE;
  client->have_caps_in_use = FALSE;
  client->have_ring = FALSE;
  client->n_slots = 0;
  g_mutex_lock (&s->lock);
  s->conn = conn;
  s->serial++;
  s->held = 0;
  s->held_mask = 0;
  s->imports = 0;
  s->generation = 0;
  g_mutex_unlock (&s->lock);

  /* from now on the background reader may read it too */
  g_mutex_lock (&client->reader_lock);
  client->conn = conn;
  client->left_at = g_get_monotonic_time ();
  g_cond_broadcast (&client->reader_cond);
  g_mutex_unlock (&client->reader_lock);
  return CUDAIPC_CLIENT_OK;
}
