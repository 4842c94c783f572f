/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * SECTION:element-cudaipcsrc
 * @title: cudaipcsrc
 * @see_also: cudaipcsink
 *
 * Receives video frames from a cudaipcsink in another process, without a
 * copy. The source connects to the sink's socket, imports each slot of the
 * sink's ring once (GPU memory with the cuda backend, shared host memory
 * with the host backend) and pushes every frame as a read-only memory over
 * its slot, with a #GstVideoMeta that carries the producer's plane offsets
 * and strides. When downstream drops the last reference to a frame, the
 * slot goes back to the producer.
 *
 * The backend is the producer's: the source opens it on its own
 * #GstCuIpcSrc:device-id and, for the cuda backend, checks that both are
 * the same GPU. With the cuda backend the source offers
 * `video/x-raw(memory:CUDAMemory)` to downstream elements that accept it
 * (a map with GST_MAP_CUDA gives the device pointer), and plain
 * `video/x-raw` otherwise (a plain map gives a host copy of the frame).
 *
 * A source started before its producer waits up to
 * #GstCuIpcSrc:connect-timeout for it. A producer that goes away without
 * EOS is reported with a warning and waited for again when
 * #GstCuIpcSrc:reconnect is set.
 *
 * ## Example launch lines
 * |[
 * gst-launch-1.0 videotestsrc ! video/x-raw,format=NV12 ! cudaipcsink socket-path=/tmp/cam1.sock backend=host
 * gst-launch-1.0 cudaipcsrc socket-path=/tmp/cam1.sock ! videoconvert ! autovideosink
 * ]| Two processes: the first publishes test frames in shared host memory,
 * the second shows them.
 * |[
 * gst-launch-1.0 cudaipcsrc socket-path=@cam1 device-id=0 ! cudadownload ! videoconvert ! jpegenc ! multifilesink location=frame-%05d.jpg
 * ]| Frames from a producer on the abstract socket `@cam1`, on GPU 0.
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>

#include <gst/video/video.h>

#include "cudaipcsrc.h"
#include "block.h"
#include "connection.h"
#include "descriptor.h"
#include "device.h"
#include "error.h"
#include "fdutil.h"
#include "memory.h"
#include "ring.h"

GST_DEBUG_CATEGORY_STATIC (gst_cu_ipc_src_debug);
#define GST_CAT_DEFAULT gst_cu_ipc_src_debug

#define CUDA_MEMORY_FEATURE "memory:CUDAMemory"
#define RETRY_INTERVAL_MS 50
/* CAPS ids kept at once; older ones are forgotten first */
#define MAX_CAPS_ENTRIES 16

enum
{
  PROP_0,
  PROP_SOCKET_PATH,
  PROP_DEVICE_ID,
  PROP_CONNECT_TIMEOUT,
  PROP_RECONNECT,
  PROP_MAX_HELD,
  PROP_IS_LIVE,
  PROP_TIMESTAMP_MODE,
  PROP_CLIENT_NAME,
  PROP_STATS,
  N_PROPS
};

#define DEFAULT_SOCKET_PATH NULL
#define DEFAULT_DEVICE_ID 0
#define DEFAULT_CONNECT_TIMEOUT 10000
#define DEFAULT_RECONNECT TRUE
#define DEFAULT_MAX_HELD 0
#define DEFAULT_IS_LIVE TRUE
#define DEFAULT_TIMESTAMP_MODE GST_CU_IPC_SRC_TIMESTAMP_CLOCK
#define DEFAULT_CLIENT_NAME NULL

static GParamSpec *properties[N_PROPS];

static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC,
    GST_PAD_ALWAYS,
    GST_STATIC_CAPS ("video/x-raw(" CUDA_MEMORY_FEATURE "); video/x-raw"));

/* What the element, its frames and their release callbacks share. The
 * lock serialises sends on the connection (the streaming thread and
 * releases from any thread) and guards everything here. */
typedef struct
{
  gint refcount;
  GMutex lock;
  CudaIpcConn *conn;            /* NULL while not connected */
  guint64 serial;               /* grows with every connection */
  guint32 generation;           /* the current ring's */
  guint64 held_mask;            /* slots of @generation held by frames */
  guint held;                   /* frames of this connection not released */
  guint imports;                /* slots imported on this connection */
  guint64 received, pushed, dropped, released;
} CuIpcSession;

/* One frame's way back to the producer. */
typedef struct
{
  CuIpcSession *session;
  guint64 serial;
  guint32 generation;
  guint32 slot;
  guint64 seq;
} CuIpcFrameRelease;

/* The producer's caps for one caps id, features removed. */
typedef struct
{
  GstCaps *caps;
  GstVideoInfo info;
} CuIpcCapsEntry;

struct _GstCuIpcSrc
{
  GstPushSrc parent;

  /* properties, with the object lock */
  gchar *socket_path;
  gint device_id;
  guint connect_timeout;
  gboolean reconnect;
  guint max_held;
  GstCuIpcSrcTimestampMode timestamp_mode;
  gchar *client_name;
  GstCaps *offer;               /* what get_caps offers once caps are known */

  int wake_fd;                  /* eventfd: unlock() wakes every wait */
  gint flushing;                /* atomic */

  CuIpcSession *session;

  /* start(), stop() and the streaming thread */
  gchar *path;                  /* socket-path while started */
  CudaIpcConn *conn;            /* the session's, freed under its lock */
  gboolean need_reconnect;
  CudaIpcDevice *dev;
  CudaIpcBackend backend;
  gboolean have_ring;
  guint32 generation;
  guint n_slots;
  guint64 slot_size;
  CudaIpcSharedBlock *slots[CUDAIPC_MAX_SLOTS];
  GHashTable *caps;             /* caps id -> CuIpcCapsEntry */
  gboolean have_out_caps;
  guint32 out_caps_id;
  gboolean discont;
  gboolean pushed_any;          /* a buffer went out since start() */
  gboolean segment_pending;     /* new_segment() since the last buffer */
  GQueue pending_events;        /* waiting for the next buffer */
};

G_DEFINE_TYPE_WITH_CODE (GstCuIpcSrc, gst_cu_ipc_src, GST_TYPE_PUSH_SRC,
    GST_DEBUG_CATEGORY_INIT (gst_cu_ipc_src_debug, "cudaipcsrc", 0,
        "CUDA IPC consumer"));
GST_ELEMENT_REGISTER_DEFINE (cudaipcsrc, "cudaipcsrc", GST_RANK_NONE,
    GST_TYPE_CU_IPC_SRC);

GType
gst_cu_ipc_src_timestamp_mode_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_CU_IPC_SRC_TIMESTAMP_CLOCK,
          "Map the producer's clock time to this pipeline's running time",
        "clock"},
    {GST_CU_IPC_SRC_TIMESTAMP_PASSTHROUGH,
          "Push the producer's PTS, DTS and segments unchanged",
        "passthrough"},
    {0, NULL, NULL},
  };

  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstCuIpcSrcTimestampMode", values);
    g_once_init_leave (&type, t);
  }
  return type;
}

/* Session */

static CuIpcSession *
session_new (void)
{
  CuIpcSession *s = g_new0 (CuIpcSession, 1);

  s->refcount = 1;
  g_mutex_init (&s->lock);
  return s;
}

static CuIpcSession *
session_ref (CuIpcSession * s)
{
  g_atomic_int_inc (&s->refcount);
  return s;
}

static void
session_unref (CuIpcSession * s)
{
  if (!s || !g_atomic_int_dec_and_test (&s->refcount))
    return;
  /* the element closed the connection before dropping its reference */
  g_warn_if_fail (s->conn == NULL);
  cudaipc_conn_free (s->conn);
  g_mutex_clear (&s->lock);
  g_free (s);
}

/* With the session lock and a connection. */
static gint
session_send_release (CuIpcSession * s, guint32 generation, guint32 slot,
    guint64 seq)
{
  CudaIpcMsg msg;
  gint ret;

  cudaipc_msg_init (&msg, CUDAIPC_MSG_RELEASE);
  msg.u.release.generation = generation;
  msg.u.release.slot = slot;
  msg.u.release.seq = seq;
  ret = cudaipc_conn_send (s->conn, &msg);
  if (ret == 0)
    s->released++;
  return ret;
}

static gint
send_bye (CudaIpcConn * conn, CudaIpcByeReason reason, const gchar * text)
{
  CudaIpcMsg msg;

  cudaipc_msg_init (&msg, CUDAIPC_MSG_BYE);
  msg.u.bye.reason = reason;
  msg.u.bye.text = text;
  return cudaipc_conn_send (conn, &msg);
}

/* Called once, from whichever thread freed the frame's memory. */
static void
frame_release (gpointer data)
{
  CuIpcFrameRelease *r = data;
  CuIpcSession *s = r->session;

  g_mutex_lock (&s->lock);
  /* a frame of a connection that is gone holds nothing at the producer */
  if (s->conn != NULL && s->serial == r->serial) {
    gint ret;

    if (s->generation == r->generation)
      s->held_mask &= ~(G_GUINT64_CONSTANT (1) << r->slot);
    if (s->held > 0)
      s->held--;
    ret = session_send_release (s, r->generation, r->slot, r->seq);
    if (ret < 0)
      GST_DEBUG ("could not send RELEASE of slot %u: %s", r->slot,
          g_strerror (-ret));
  }
  g_mutex_unlock (&s->lock);
}

static void
frame_release_free (gpointer data)
{
  CuIpcFrameRelease *r = data;

  session_unref (r->session);
  g_free (r);
}

static void
caps_entry_free (gpointer data)
{
  CuIpcCapsEntry *e = data;

  gst_caps_unref (e->caps);
  g_free (e);
}

static const gchar *
bye_reason_name (guint32 reason)
{
  switch (reason) {
    case CUDAIPC_BYE_NORMAL:
      return "normal";
    case CUDAIPC_BYE_VERSION:
      return "version";
    case CUDAIPC_BYE_BACKEND:
      return "backend";
    case CUDAIPC_BYE_DEVICE:
      return "device";
    case CUDAIPC_BYE_PROTOCOL:
      return "protocol";
    case CUDAIPC_BYE_PERMISSION:
      return "permission";
    case CUDAIPC_BYE_TOO_SLOW:
      return "too slow";
    default:
      return "unknown";
  }
}

static gchar *
uuid_to_string (const guint8 u[CUDAIPC_UUID_LEN])
{
  return g_strdup_printf ("GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
      "%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2], u[3], u[4], u[5], u[6],
      u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
}

/* Waiting */

/* A monotonic deadline @ms from now, 0 (none) for 0. */
static gint64
deadline_after_ms (guint ms)
{
  return ms ? g_get_monotonic_time () + ms * G_GINT64_CONSTANT (1000) : 0;
}

/* Waits until @fd (-1: none) is readable, @deadline (monotonic µs, 0: none)
 * passes or unlock() is called. Returns 1 (readable), 0 (time-out),
 * -ECANCELED (unlocked) or a negative errno. */
static gint
wait_readable (GstCuIpcSrc * self, int fd, gint64 deadline)
{
  for (;;) {
    struct pollfd pfd[2] = {
      {self->wake_fd, POLLIN, 0},
      {fd, POLLIN, 0},
    };
    int timeout = -1, n;

    if (g_atomic_int_get (&self->flushing))
      return -ECANCELED;
    if (deadline > 0) {
      gint64 left = deadline - g_get_monotonic_time ();

      if (left <= 0)
        return 0;
      /* round up: never wake a whole millisecond early */
      timeout = (int) MIN ((left + 999) / 1000, G_MAXINT);
    }

    n = poll (pfd, fd >= 0 ? 2 : 1, timeout);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return -errno;
    }
    /* only a wake-up whose unlock() still holds cancels */
    if ((pfd[0].revents & POLLIN) && g_atomic_int_get (&self->flushing))
      return -ECANCELED;
    if (fd >= 0 && pfd[1].revents != 0) {
      if (pfd[1].revents & POLLNVAL)
        return -EBADF;
      /* POLLHUP and POLLERR too: recv says what happened */
      return 1;
    }
    if (pfd[0].revents & POLLIN) {
      guint64 value;

      /* stale: unlock_stop() ran between the write and now */
      while (read (self->wake_fd, &value, sizeof (value)) > 0) {
      }
    }
  }
}

/* Receives one message, waiting as wait_readable() does; -ETIMEDOUT when
 * @deadline passes. @msg is always safe to cudaipc_msg_clear(). */
static gint
recv_msg (GstCuIpcSrc * self, CudaIpcConn * conn, CudaIpcMsg * msg,
    gint64 deadline)
{
  gint ret;

  cudaipc_msg_init (msg, 0);
  ret = wait_readable (self, cudaipc_conn_get_fd (conn), deadline);
  if (ret == 0)
    return -ETIMEDOUT;
  if (ret < 0)
    return ret;
  return cudaipc_conn_recv (conn, msg);
}

/* Connects to @path, trying again every RETRY_INTERVAL_MS while nobody
 * listens there, until @deadline (0: forever). Returns 0, -ETIMEDOUT,
 * -ECANCELED (unlocked) or the connect error. */
static gint
connect_producer (GstCuIpcSrc * self, const gchar * path, gint64 deadline,
    int *fd_out)
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
    if (!logged) {
      GST_INFO_OBJECT (self, "waiting for a producer on %s (%s)", path,
          g_strerror (-ret));
      logged = TRUE;
    }

    now = g_get_monotonic_time ();
    if (deadline > 0 && now >= deadline)
      return -ETIMEDOUT;
    wake = now + RETRY_INTERVAL_MS * 1000;
    if (deadline > 0 && wake > deadline)
      wake = deadline;
    ret = wait_readable (self, -1, wake);
    if (ret < 0)
      return ret;
  }
}

/* Connection state */

static void
drop_imports (GstCuIpcSrc * self)
{
  /* frames still downstream keep their own references */
  for (guint i = 0; i < G_N_ELEMENTS (self->slots); i++)
    g_clear_pointer (&self->slots[i], cudaipc_shared_block_unref);
  self->have_ring = FALSE;
  self->n_slots = 0;
}

/* Closes the connection (after BYE with @reason and @text when @text is
 * set) and forgets everything the producer told us. */
static void
close_connection (GstCuIpcSrc * self, CudaIpcByeReason reason,
    const gchar * text)
{
  CuIpcSession *s = self->session;

  g_mutex_lock (&s->lock);
  if (s->conn != NULL) {
    if (text != NULL) {
      gint ret = send_bye (s->conn, reason, text);

      if (ret < 0)
        GST_DEBUG_OBJECT (self, "could not send BYE: %s", g_strerror (-ret));
    }
    cudaipc_conn_free (s->conn);
    s->conn = NULL;
  }
  s->held = 0;
  s->held_mask = 0;
  g_mutex_unlock (&s->lock);
  self->conn = NULL;

  drop_imports (self);
  g_hash_table_remove_all (self->caps);
  self->have_out_caps = FALSE;
  /* imported blocks hold their own device references */
  g_clear_pointer (&self->dev, cudaipc_device_unref);
}

/* The producer broke the protocol: tell it, drop it, post an error. */
/* *INDENT-OFF* */
static GstFlowReturn broken_producer (GstCuIpcSrc * self,
    const gchar * format, ...) G_GNUC_PRINTF (2, 3);
/* *INDENT-ON* */

static GstFlowReturn
broken_producer (GstCuIpcSrc * self, const gchar * format, ...)
{
  g_autofree gchar *text = NULL;
  va_list args;

  va_start (args, format);
  text = g_strdup_vprintf (format, args);
  va_end (args);

  GST_WARNING_OBJECT (self, "producer on %s: %s", self->path, text);
  close_connection (self, CUDAIPC_BYE_PROTOCOL, text);
  GST_ELEMENT_ERROR (self, STREAM, FAILED,
      ("The producer on %s broke the protocol: %s", self->path, text), (NULL));
  return GST_FLOW_ERROR;
}

/* Connects and runs the handshake. GST_FLOW_OK: connected, the session
 * holds the connection; GST_FLOW_FLUSHING: unlocked; GST_FLOW_ERROR: an
 * error was posted. */
static GstFlowReturn
gst_cu_ipc_src_open (GstCuIpcSrc * self)
{
  g_autoptr (GError) err = NULL;
  g_autofree gchar *name = NULL;
  g_autofree gchar *producer_uuid = NULL;
  g_autofree gchar *our_uuid = NULL;
  CudaIpcConn *conn = NULL;
  CudaIpcDevice *dev = NULL;
  CudaIpcMsg msg, hello;
  CuIpcSession *s = self->session;
  guint8 uuid[CUDAIPC_UUID_LEN];
  guint timeout;
  gint device_id;
  gint64 deadline;
  int fd = -1;
  gint ret;

  GST_OBJECT_LOCK (self);
  timeout = self->connect_timeout;
  device_id = self->device_id;
  name = self->client_name ? g_strdup (self->client_name) :
      g_strdup_printf ("cudaipcsrc-%d", (int) getpid ());
  GST_OBJECT_UNLOCK (self);
  /* the wire's limit, NUL included */
  if (strlen (name) >= CUDAIPC_MAX_NAME)
    name[CUDAIPC_MAX_NAME - 1] = '\0';

  deadline = deadline_after_ms (timeout);
  for (;;) {
    gint64 hello_deadline;

    ret = connect_producer (self, self->path, deadline, &fd);
    if (ret == -ECANCELED)
      return GST_FLOW_FLUSHING;
    if (ret == -ETIMEDOUT) {
      GST_ELEMENT_ERROR (self, RESOURCE, OPEN_READ,
          ("No producer on %s after %u ms", self->path, timeout),
          ("nothing listens on the socket; is the cudaipcsink running?"));
      return GST_FLOW_ERROR;
    }
    if (ret < 0) {
      GST_ELEMENT_ERROR (self, RESOURCE, OPEN_READ,
          ("Could not connect to the producer on %s: %s", self->path,
              g_strerror (-ret)), ("connect: %s", g_strerror (-ret)));
      return GST_FLOW_ERROR;
    }
    conn = cudaipc_conn_new (fd);

    /* the producer speaks first */
    hello_deadline = deadline_after_ms (timeout);
    ret = recv_msg (self, conn, &msg, hello_deadline);
    if (ret == -ECANCELED) {
      cudaipc_conn_free (conn);
      return GST_FLOW_FLUSHING;
    }
    /* a producer that is shutting down may still accept: wait for the
     * next one as if nobody listened */
    if (ret != -EPIPE && !(ret == 0 && msg.type == CUDAIPC_MSG_BYE &&
            msg.u.bye.reason == CUDAIPC_BYE_NORMAL))
      break;
    GST_INFO_OBJECT (self, "the producer on %s left during the handshake%s%s",
        self->path, ret == 0 ? ": " : "", ret == 0 ? msg.u.bye.text : "");
    cudaipc_msg_clear (&msg);
    cudaipc_conn_free (conn);
    conn = NULL;
    if (deadline > 0 && g_get_monotonic_time () >= deadline) {
      GST_ELEMENT_ERROR (self, RESOURCE, OPEN_READ,
          ("No producer on %s after %u ms", self->path, timeout),
          ("a producer accepted, then left before its HELLO"));
      return GST_FLOW_ERROR;
    }
    ret = wait_readable (self, -1,
        g_get_monotonic_time () + RETRY_INTERVAL_MS * 1000);
    if (ret == -ECANCELED)
      return GST_FLOW_FLUSHING;
  }

  if (ret == -EPROTONOSUPPORT && msg.type == CUDAIPC_MSG_HELLO) {
    g_autofree gchar *text =
        g_strdup_printf ("this consumer speaks protocol version %u",
        CUDAIPC_PROTOCOL_VERSION);

    send_bye (conn, CUDAIPC_BYE_VERSION, text);
    GST_ELEMENT_ERROR (self, RESOURCE, OPEN_READ,
        ("The producer on %s speaks protocol version %u, this consumer %u",
            self->path, msg.u.hello.version, CUDAIPC_PROTOCOL_VERSION), (NULL));
    goto failed;
  }
  if (ret == -ETIMEDOUT) {
    GST_ELEMENT_ERROR (self, RESOURCE, OPEN_READ,
        ("The producer on %s sent no HELLO within %u ms", self->path,
            timeout), (NULL));
    goto failed;
  }
  if (ret < 0) {
    send_bye (conn, CUDAIPC_BYE_PROTOCOL, "bad HELLO");
    GST_ELEMENT_ERROR (self, RESOURCE, OPEN_READ,
        ("The producer on %s sent a bad %s message: %s", self->path,
            cudaipc_msg_type_name (msg.type), g_strerror (-ret)), (NULL));
    goto failed;
  }
  if (msg.type == CUDAIPC_MSG_BYE) {
    GST_ELEMENT_ERROR (self, RESOURCE, OPEN_READ,
        ("The producer on %s refused this consumer: %s", self->path,
            msg.u.bye.text), ("BYE reason: %s",
            bye_reason_name (msg.u.bye.reason)));
    goto failed;
  }
  if (msg.type != CUDAIPC_MSG_HELLO) {
    send_bye (conn, CUDAIPC_BYE_PROTOCOL, "expected HELLO");
    GST_ELEMENT_ERROR (self, RESOURCE, OPEN_READ,
        ("The producer on %s sent %s before HELLO", self->path,
            cudaipc_msg_type_name (msg.type)), (NULL));
    goto failed;
  }

  dev = cudaipc_device_new (msg.u.hello.backend, device_id, &err);
  if (dev == NULL) {
    g_autofree gchar *text = g_strdup_printf ("this consumer cannot open "
        "the %s backend on device %d: %s",
        cudaipc_backend_name (msg.u.hello.backend), device_id, err->message);

    send_bye (conn, CUDAIPC_BYE_BACKEND, text);
    GST_ELEMENT_ERROR (self, RESOURCE, OPEN_READ,
        ("Cannot open the producer's %s backend on device %d: %s",
            cudaipc_backend_name (msg.u.hello.backend), device_id,
            err->message), ("producer on %s", self->path));
    goto failed;
  }

  cudaipc_device_get_uuid (dev, uuid);
  if (msg.u.hello.backend == CUDAIPC_BACKEND_CUDA &&
      memcmp (uuid, msg.u.hello.uuid, CUDAIPC_UUID_LEN) != 0) {
    g_autofree gchar *text = NULL;

    producer_uuid = uuid_to_string (msg.u.hello.uuid);
    our_uuid = uuid_to_string (uuid);
    text = g_strdup_printf ("the producer's GPU %s is not this consumer's "
        "device %d (%s)", producer_uuid, device_id, our_uuid);
    send_bye (conn, CUDAIPC_BYE_DEVICE, text);
    GST_ELEMENT_ERROR (self, RESOURCE, OPEN_READ, ("%s", text),
        ("producer on %s", self->path));
    goto failed;
  }

  cudaipc_msg_init (&hello, CUDAIPC_MSG_HELLO);
  hello.u.hello.version = CUDAIPC_PROTOCOL_VERSION;
  hello.u.hello.backend = msg.u.hello.backend;
  memcpy (hello.u.hello.uuid, uuid, CUDAIPC_UUID_LEN);
  hello.u.hello.caps = 0;
  hello.u.hello.pid = (guint32) getpid ();
  hello.u.hello.name = name;
  ret = cudaipc_conn_send (conn, &hello);
  if (ret < 0) {
    GST_ELEMENT_ERROR (self, RESOURCE, WRITE,
        ("Could not send HELLO to the producer on %s: %s", self->path,
            g_strerror (-ret)), (NULL));
    goto failed;
  }

  GST_INFO_OBJECT (self, "connected to producer '%s' (pid %u) on %s, "
      "backend %s, device %d (%s)", msg.u.hello.name, msg.u.hello.pid,
      self->path, cudaipc_backend_name (msg.u.hello.backend), device_id,
      cudaipc_device_get_name (dev));

  self->backend = msg.u.hello.backend;
  self->dev = dev;
  self->conn = conn;
  self->discont = TRUE;
  g_mutex_lock (&s->lock);
  s->conn = conn;
  s->serial++;
  s->held = 0;
  s->held_mask = 0;
  s->imports = 0;
  s->generation = 0;
  g_mutex_unlock (&s->lock);
  cudaipc_msg_clear (&msg);
  return GST_FLOW_OK;

failed:
  cudaipc_msg_clear (&msg);
  cudaipc_device_unref (dev);
  cudaipc_conn_free (conn);
  return GST_FLOW_ERROR;
}

/* The producer left without EOS, after @bye (NULL: it just closed). */
static GstFlowReturn
producer_lost (GstCuIpcSrc * self, const CudaIpcByeMsg * bye)
{
  g_autofree gchar *why = NULL;
  gboolean reconnect;

  GST_OBJECT_LOCK (self);
  reconnect = self->reconnect;
  GST_OBJECT_UNLOCK (self);

  why = bye ? g_strdup_printf ("it said BYE (%s): %s",
      bye_reason_name (bye->reason), bye->text) :
      g_strdup ("it closed the connection without EOS");
  close_connection (self, CUDAIPC_BYE_NORMAL, NULL);

  /* a refusal would only be repeated on the next connection */
  if (bye && bye->reason != CUDAIPC_BYE_NORMAL &&
      bye->reason != CUDAIPC_BYE_TOO_SLOW) {
    GST_ELEMENT_ERROR (self, RESOURCE, READ,
        ("The producer on %s ended the connection: %s", self->path,
            bye->text), ("BYE reason: %s", bye_reason_name (bye->reason)));
    return GST_FLOW_ERROR;
  }
  if (!reconnect) {
    GST_ELEMENT_ERROR (self, RESOURCE, READ,
        ("Lost the producer on %s: %s", self->path, why), (NULL));
    return GST_FLOW_ERROR;
  }

  GST_ELEMENT_WARNING (self, RESOURCE, READ,
      ("Lost the producer on %s, reconnecting: %s", self->path, why), (NULL));
  self->need_reconnect = TRUE;
  return GST_FLOW_OK;
}

/* Caps */

static GstCaps *
choose_output_caps (GstCuIpcSrc * self, GstCaps * plain)
{
  GstCaps *cuda;

  if (self->backend != CUDAIPC_BACKEND_CUDA)
    return gst_caps_ref (plain);

  cuda = gst_caps_copy (plain);
  gst_caps_set_features (cuda, 0,
      gst_caps_features_new (CUDA_MEMORY_FEATURE, NULL));
  if (gst_pad_peer_query_accept_caps (GST_BASE_SRC_PAD (self), cuda))
    return cuda;
  gst_caps_unref (cuda);
  return gst_caps_ref (plain);
}

static void
update_offer (GstCuIpcSrc * self, GstCaps * plain)
{
  GstCaps *offer = gst_caps_new_empty ();

  if (self->backend == CUDAIPC_BACKEND_CUDA) {
    GstCaps *cuda = gst_caps_copy (plain);

    gst_caps_set_features (cuda, 0,
        gst_caps_features_new (CUDA_MEMORY_FEATURE, NULL));
    gst_caps_append (offer, cuda);
  }
  gst_caps_append (offer, gst_caps_copy (plain));

  GST_OBJECT_LOCK (self);
  gst_caps_replace (&self->offer, offer);
  GST_OBJECT_UNLOCK (self);
  gst_caps_unref (offer);
}

/* Sets the output caps for @entry unless they are already current. */
static gboolean
apply_caps (GstCuIpcSrc * self, CuIpcCapsEntry * entry)
{
  GstCaps *out, *current;
  gboolean ok = TRUE;

  update_offer (self, entry->caps);
  out = choose_output_caps (self, entry->caps);
  current = gst_pad_get_current_caps (GST_BASE_SRC_PAD (self));
  if (current == NULL || !gst_caps_is_equal (current, out)) {
    GST_DEBUG_OBJECT (self, "output caps %" GST_PTR_FORMAT, out);
    ok = gst_base_src_set_caps (GST_BASE_SRC (self), out);
  }
  if (!ok) {
    g_autofree gchar *str = gst_caps_to_string (out);

    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION,
        ("Downstream does not accept the producer's caps %s", str), (NULL));
  }
  gst_clear_caps (&current);
  gst_caps_unref (out);
  return ok;
}

static GstFlowReturn
ensure_caps (GstCuIpcSrc * self, guint32 caps_id, CuIpcCapsEntry * entry)
{
  if (self->have_out_caps && self->out_caps_id == caps_id)
    return GST_FLOW_OK;
  if (!apply_caps (self, entry))
    return GST_FLOW_NOT_NEGOTIATED;
  self->have_out_caps = TRUE;
  self->out_caps_id = caps_id;
  return GST_FLOW_OK;
}

static GstFlowReturn
handle_caps (GstCuIpcSrc * self, const CudaIpcCapsMsg * m)
{
  CuIpcCapsEntry *entry;
  GstCaps *caps;

  caps = gst_caps_from_string (m->caps);
  if (caps == NULL || gst_caps_get_size (caps) != 1) {
    gst_clear_caps (&caps);
    return broken_producer (self, "CAPS %u are not one caps structure: "
        "\"%s\"", m->caps_id, m->caps);
  }
  /* Some fields do not survive a round trip through a string as fixed
   * values (nvh264dec's multiview flag set, for one): fixate them. */
  if (!gst_caps_is_fixed (caps))
    caps = gst_caps_fixate (caps);
  caps = gst_caps_make_writable (caps);
  /* system memory: the memory feature is decided per downstream */
  gst_caps_set_features (caps, 0, NULL);

  entry = g_new0 (CuIpcCapsEntry, 1);
  entry->caps = caps;
  if (!gst_structure_has_name (gst_caps_get_structure (caps, 0),
          "video/x-raw") || !gst_video_info_from_caps (&entry->info, caps)) {
    caps_entry_free (entry);
    return broken_producer (self, "CAPS %u are not raw video: \"%s\"",
        m->caps_id, m->caps);
  }

  /* keep the table bounded: forget the oldest id not in use */
  while (g_hash_table_size (self->caps) >= MAX_CAPS_ENTRIES &&
      !g_hash_table_contains (self->caps, GUINT_TO_POINTER (m->caps_id))) {
    GHashTableIter iter;
    gpointer key;
    guint32 oldest = G_MAXUINT32;
    gboolean found = FALSE;

    g_hash_table_iter_init (&iter, self->caps);
    while (g_hash_table_iter_next (&iter, &key, NULL)) {
      guint32 id = GPOINTER_TO_UINT (key);

      if ((!self->have_out_caps || id != self->out_caps_id) && id <= oldest) {
        oldest = id;
        found = TRUE;
      }
    }
    if (!found)
      break;
    g_hash_table_remove (self->caps, GUINT_TO_POINTER (oldest));
  }

  GST_DEBUG_OBJECT (self, "caps %u: %" GST_PTR_FORMAT, m->caps_id, caps);
  g_hash_table_replace (self->caps, GUINT_TO_POINTER (m->caps_id), entry);
  if (self->have_out_caps && self->out_caps_id == m->caps_id)
    self->have_out_caps = FALSE;        /* redefined: apply again */
  return GST_FLOW_OK;
}

/* Ring and slots */

static GstFlowReturn
handle_ring (GstCuIpcSrc * self, const CudaIpcRingMsg * m)
{
  CuIpcSession *s = self->session;

  GST_DEBUG_OBJECT (self, "ring generation %u: %u slots of %" G_GUINT64_FORMAT
      " bytes", m->generation, m->n_slots, m->slot_size);
  drop_imports (self);
  self->have_ring = TRUE;
  self->generation = m->generation;
  self->n_slots = m->n_slots;
  self->slot_size = m->slot_size;

  g_mutex_lock (&s->lock);
  s->generation = m->generation;
  s->held_mask = 0;
  g_mutex_unlock (&s->lock);
  return GST_FLOW_OK;
}

static GstFlowReturn
handle_slot (GstCuIpcSrc * self, CudaIpcMsg * msg)
{
  const CudaIpcSlotMsg *m = &msg->u.slot;
  g_autoptr (GError) err = NULL;
  CudaIpcDescriptor *desc;
  CudaIpcBlock *block;
  guint n_fds;

  if (!self->have_ring)
    return broken_producer (self, "SLOT %u came before any RING", m->index);
  if (m->generation != self->generation)
    return broken_producer (self, "SLOT %u names ring generation %u, the "
        "current one is %u", m->index, m->generation, self->generation);
  if (m->index >= self->n_slots)
    return broken_producer (self, "SLOT %u is beyond the ring's %u slots",
        m->index, self->n_slots);
  if (self->slots[m->index] != NULL)
    return broken_producer (self, "SLOT %u was announced twice", m->index);

  /* the descriptor takes the fds, whatever its verdict */
  n_fds = msg->n_fds;
  msg->n_fds = 0;
  desc = cudaipc_descriptor_new_from_fds (self->dev, msg->fds,
      m->alloc_sizes, n_fds, m->size, &err);
  if (desc == NULL)
    return broken_producer (self, "the descriptor of slot %u failed its "
        "checks: %s", m->index, err->message);

  block = cudaipc_block_import (self->dev, desc, &err);
  cudaipc_descriptor_free (desc);
  if (block == NULL) {
    g_autofree gchar *text = g_strdup_printf ("this consumer could not "
        "import slot %u: %s", m->index, err->message);

    close_connection (self, CUDAIPC_BYE_NORMAL, text);
    GST_ELEMENT_ERROR (self, RESOURCE, FAILED,
        ("Could not import slot %u of the producer on %s: %s", m->index,
            self->path, err->message), (NULL));
    return GST_FLOW_ERROR;
  }

  self->slots[m->index] = cudaipc_shared_block_new (block);
  g_mutex_lock (&self->session->lock);
  self->session->imports++;
  g_mutex_unlock (&self->session->lock);
  GST_DEBUG_OBJECT (self, "imported slot %u: %" G_GUINT64_FORMAT " bytes in "
      "%u allocations", m->index, m->size, n_fds);
  return GST_FLOW_OK;
}

/* Frames */

/* Checks the frame's planes against its caps and its size; on failure
 * returns FALSE with the reason in @why. */
static gboolean
check_layout (const CudaIpcFrameMsg * f, const GstVideoInfo * info,
    gchar ** why)
{
  const GstVideoFormatInfo *finfo = info->finfo;
  guint n_planes = GST_VIDEO_INFO_N_PLANES (info);

  if (f->n_planes == 0) {
    if (f->size < GST_VIDEO_INFO_SIZE (info)) {
      *why = g_strdup_printf ("a FRAME of %" G_GUINT64_FORMAT " bytes "
          "without plane layout is smaller than its caps need (%"
          G_GSIZE_FORMAT " bytes)", f->size, GST_VIDEO_INFO_SIZE (info));
      return FALSE;
    }
    return TRUE;
  }
  if (f->n_planes != n_planes) {
    *why = g_strdup_printf ("a FRAME has %u planes, its format %s has %u",
        f->n_planes, GST_VIDEO_INFO_NAME (info), n_planes);
    return FALSE;
  }

  for (guint p = 0; p < n_planes; p++) {
    guint64 offset = f->planes[p].offset;
    guint64 stride = f->planes[p].stride;
    guint64 rows = 0, row_bytes = 0, end;

    if (stride == 0 || stride > G_MAXINT) {
      *why =
          g_strdup_printf ("plane %u of a FRAME has stride %" G_GUINT64_FORMAT,
          p, stride);
      return FALSE;
    }
    if (offset >= f->size) {
      *why = g_strdup_printf ("plane %u of a FRAME starts at byte %"
          G_GUINT64_FORMAT ", beyond the frame's %" G_GUINT64_FORMAT " bytes",
          p, offset, f->size);
      return FALSE;
    }
    if (GST_VIDEO_FORMAT_INFO_IS_TILED (finfo)) {
      /* tile strides encode tile counts: accept the caps' own layout only */
      if (offset != GST_VIDEO_INFO_PLANE_OFFSET (info, p) ||
          stride != (guint64) GST_VIDEO_INFO_PLANE_STRIDE (info, p) ||
          f->size < GST_VIDEO_INFO_SIZE (info)) {
        *why = g_strdup_printf ("plane %u of a FRAME in the tiled format %s "
            "is not laid out as its caps say", p, GST_VIDEO_INFO_NAME (info));
        return FALSE;
      }
      continue;
    }

    for (guint c = 0; c < GST_VIDEO_FORMAT_INFO_N_COMPONENTS (finfo); c++) {
      gint pstride;
      guint64 bytes;

      if (GST_VIDEO_FORMAT_INFO_PLANE (finfo, c) != p)
        continue;
      rows = MAX (rows, (guint64) GST_VIDEO_INFO_COMP_HEIGHT (info, c));
      pstride = GST_VIDEO_INFO_COMP_PSTRIDE (info, c);
      bytes = pstride > 0 ?
          (guint64) GST_VIDEO_INFO_COMP_WIDTH (info, c) * pstride :
          (guint64) GST_VIDEO_INFO_PLANE_STRIDE (info, p);
      row_bytes = MAX (row_bytes, bytes);
    }
    if (rows == 0) {
      /* a plane without components: the palette */
      rows = 1;
      row_bytes = GST_VIDEO_FORMAT_INFO_HAS_PALETTE (finfo) ? 256 * 4 : 1;
    }
    if (rows > 1 && stride < row_bytes) {
      *why = g_strdup_printf ("plane %u of a FRAME has stride %"
          G_GUINT64_FORMAT ", less than a row of %" G_GUINT64_FORMAT " bytes",
          p, stride, row_bytes);
      return FALSE;
    }
    /* no overflow: offset < 2^32, stride < 2^31, rows < 2^31 */
    end = offset + stride * (rows - 1) + row_bytes;
    if (end > f->size) {
      *why = g_strdup_printf ("plane %u of a FRAME (offset %" G_GUINT64_FORMAT
          ", stride %" G_GUINT64_FORMAT ", %" G_GUINT64_FORMAT " rows) ends at"
          " byte %" G_GUINT64_FORMAT ", beyond the frame's %" G_GUINT64_FORMAT
          " bytes", p, offset, stride, rows, end, f->size);
      return FALSE;
    }
  }
  return TRUE;
}

static GstClockTime
sane_time (guint64 t)
{
  /* keeps the signed arithmetic below far from overflow */
  return t < (G_GUINT64_CONSTANT (1) << 62) ? t : GST_CLOCK_TIME_NONE;
}

static void
set_times (GstCuIpcSrc * self, const CudaIpcFrameMsg * f, GstBuffer * buf)
{
  GstCuIpcSrcTimestampMode mode;
  GstClockTime pts = sane_time (f->pts), dts = sane_time (f->dts);
  GstClockTime clock_time = sane_time (f->clock_time);
  GstClock *clock;

  GST_OBJECT_LOCK (self);
  mode = self->timestamp_mode;
  GST_OBJECT_UNLOCK (self);

  GST_BUFFER_DURATION (buf) = f->duration;
  GST_BUFFER_OFFSET (buf) = f->offset;
  GST_BUFFER_OFFSET_END (buf) = f->offset_end;

  if (mode == GST_CU_IPC_SRC_TIMESTAMP_PASSTHROUGH) {
    GST_BUFFER_PTS (buf) = pts;
    GST_BUFFER_DTS (buf) = dts;
    return;
  }

  /* running_time = clock_time - base_time - (monotonic_now - clock_now);
   * without a clock (not PLAYING yet) do-timestamp may stamp the frame */
  GST_BUFFER_PTS (buf) = GST_CLOCK_TIME_NONE;
  GST_BUFFER_DTS (buf) = GST_CLOCK_TIME_NONE;
  clock = gst_element_get_clock (GST_ELEMENT (self));
  if (clock != NULL && GST_CLOCK_TIME_IS_VALID (clock_time)) {
    GstClockTime base_time = gst_element_get_base_time (GST_ELEMENT (self));
    GstClockTime clock_now = gst_clock_get_time (clock);
    gint64 mono_now = g_get_monotonic_time () * 1000;
    gint64 running;

    running = (gint64) clock_time - (mono_now - (gint64) clock_now) -
        (gint64) base_time;
    /* frames from before this pipeline started */
    GST_BUFFER_PTS (buf) = running > 0 ? (GstClockTime) running : 0;
    if (GST_CLOCK_TIME_IS_VALID (pts) && GST_CLOCK_TIME_IS_VALID (dts)) {
      gint64 d = running + ((gint64) dts - (gint64) pts);

      GST_BUFFER_DTS (buf) = d > 0 ? (GstClockTime) d : 0;
    }
  }
  gst_clear_object (&clock);
}

static GstFlowReturn
handle_frame (GstCuIpcSrc * self, const CudaIpcFrameMsg * f,
    GstBuffer ** outbuf)
{
  g_autoptr (GError) err = NULL;
  CuIpcSession *s = self->session;
  CuIpcCapsEntry *entry;
  CudaIpcSharedBlock *sb;
  CuIpcFrameRelease *rel;
  GstMemory *mem;
  GstBuffer *buf;
  GstFlowReturn ret;
  gchar *why = NULL;
  guint64 block_size, bit;
  guint max_held;
  guint32 flags;

  g_mutex_lock (&s->lock);
  s->received++;
  g_mutex_unlock (&s->lock);

  if (!self->have_ring)
    return broken_producer (self, "a FRAME came before any RING");
  if (f->generation != self->generation)
    return broken_producer (self, "a FRAME names ring generation %u, the "
        "current one is %u", f->generation, self->generation);
  if (f->slot >= self->n_slots || (sb = self->slots[f->slot]) == NULL)
    return broken_producer (self, "a FRAME names slot %u, which no SLOT "
        "announced", f->slot);
  entry = g_hash_table_lookup (self->caps, GUINT_TO_POINTER (f->caps_id));
  if (entry == NULL)
    return broken_producer (self, "a FRAME names caps id %u, which no CAPS "
        "announced", f->caps_id);
  block_size = cudaipc_block_get_size (cudaipc_shared_block_get_block (sb));
  if (f->size > block_size)
    return broken_producer (self, "a FRAME of %" G_GUINT64_FORMAT " bytes "
        "does not fit slot %u of %" G_GUINT64_FORMAT " bytes", f->size,
        f->slot, block_size);
  if (f->size > 0 && !check_layout (f, &entry->info, &why)) {
    ret = broken_producer (self, "%s", why);
    g_free (why);
    return ret;
  }

  GST_OBJECT_LOCK (self);
  max_held = self->max_held;
  GST_OBJECT_UNLOCK (self);

  bit = G_GUINT64_CONSTANT (1) << f->slot;
  g_mutex_lock (&s->lock);
  if (s->held_mask & bit) {
    g_mutex_unlock (&s->lock);
    return broken_producer (self, "slot %u was published again while this "
        "consumer still holds it", f->slot);
  }
  if (f->size == 0 || (max_held > 0 && s->held >= max_held)) {
    /* give it back at once: an empty frame, or one too many held */
    gint r = session_send_release (s, f->generation, f->slot, f->seq);

    if (f->size > 0)
      s->dropped++;
    g_mutex_unlock (&s->lock);
    if (r < 0)
      GST_DEBUG_OBJECT (self, "could not send RELEASE: %s", g_strerror (-r));
    GST_LOG_OBJECT (self, "%s frame %" G_GUINT64_FORMAT " in slot %u",
        f->size ? "dropped" : "skipped empty", f->seq, f->slot);
    if (f->size > 0)
      self->discont = TRUE;
    return GST_FLOW_OK;
  }
  s->held++;
  s->held_mask |= bit;
  rel = g_new0 (CuIpcFrameRelease, 1);
  rel->session = session_ref (s);
  rel->serial = s->serial;
  g_mutex_unlock (&s->lock);
  rel->generation = f->generation;
  rel->slot = f->slot;
  rel->seq = f->seq;

  mem = cudaipc_memory_new (sb, 0, f->size, frame_release, rel,
      frame_release_free, &err);
  if (mem == NULL) {
    frame_release (rel);
    frame_release_free (rel);
    GST_ELEMENT_ERROR (self, STREAM, FAILED,
        ("Could not wrap a frame of the producer on %s: %s", self->path,
            err->message), (NULL));
    return GST_FLOW_ERROR;
  }
  /* from here, unreffing the buffer releases the slot */
  buf = gst_buffer_new ();
  gst_buffer_append_memory (buf, mem);

  ret = ensure_caps (self, f->caps_id, entry);
  if (ret != GST_FLOW_OK) {
    gst_buffer_unref (buf);
    return ret;
  }

  if (f->n_planes > 0) {
    gsize offsets[GST_VIDEO_MAX_PLANES] = { 0, };
    gint strides[GST_VIDEO_MAX_PLANES] = { 0, };

    for (guint p = 0; p < f->n_planes; p++) {
      offsets[p] = f->planes[p].offset;
      strides[p] = (gint) f->planes[p].stride;
    }
    gst_buffer_add_video_meta_full (buf, GST_VIDEO_FRAME_FLAG_NONE,
        GST_VIDEO_INFO_FORMAT (&entry->info),
        GST_VIDEO_INFO_WIDTH (&entry->info),
        GST_VIDEO_INFO_HEIGHT (&entry->info), f->n_planes, offsets, strides);
  }

  set_times (self, f, buf);
  /* buffer flags only: the mini object flags and memory tag are ours */
  flags = f->flags & ~(GST_MINI_OBJECT_FLAG_LAST - 1) &
      ~GST_BUFFER_FLAG_TAG_MEMORY;
  GST_BUFFER_FLAGS (buf) = flags;
  if (self->discont) {
    GST_BUFFER_FLAG_SET (buf, GST_BUFFER_FLAG_DISCONT);
    self->discont = FALSE;
  }

  GST_LOG_OBJECT (self, "frame %" G_GUINT64_FORMAT " in slot %u: %"
      GST_PTR_FORMAT, f->seq, f->slot, buf);
  *outbuf = buf;
  return GST_FLOW_OK;
}

/* Events */

static gboolean
get_u64 (const GstStructure * st, const gchar * field, guint64 * out)
{
  const GValue *v = gst_structure_get_value (st, field);

  if (v == NULL)
    return FALSE;
  if (G_VALUE_HOLDS_UINT64 (v))
    *out = g_value_get_uint64 (v);
  else if (G_VALUE_HOLDS_INT64 (v))
    *out = (guint64) g_value_get_int64 (v);     /* -1 is NONE */
  else if (G_VALUE_HOLDS_UINT (v))
    *out = g_value_get_uint (v);
  else if (G_VALUE_HOLDS_INT (v))
    *out =
        g_value_get_int (v) < 0 ? G_MAXUINT64 : (guint64) g_value_get_int (v);
  else
    return FALSE;
  return TRUE;
}

static gboolean
get_double (const GstStructure * st, const gchar * field, gdouble * out)
{
  const GValue *v = gst_structure_get_value (st, field);

  if (v == NULL)
    return FALSE;
  if (G_VALUE_HOLDS_DOUBLE (v))
    *out = g_value_get_double (v);
  else if (G_VALUE_HOLDS_INT (v))
    *out = g_value_get_int (v);
  else
    return FALSE;
  return TRUE;
}

static gboolean
get_enum_or_int (const GstStructure * st, const gchar * field, GType type,
    gint * out)
{
  const GValue *v = gst_structure_get_value (st, field);

  if (v == NULL)
    return FALSE;
  if (G_VALUE_HOLDS_ENUM (v))
    *out = g_value_get_enum (v);
  else if (G_VALUE_HOLDS_FLAGS (v))
    *out = (gint) g_value_get_flags (v);
  else if (G_VALUE_HOLDS_INT (v))
    *out = g_value_get_int (v);
  else if (G_VALUE_HOLDS_UINT (v))
    *out = (gint) g_value_get_uint (v);
  else if (G_VALUE_HOLDS_STRING (v) && type != G_TYPE_NONE &&
      G_TYPE_IS_ENUM (type)) {
    GEnumClass *klass = g_type_class_ref (type);
    GEnumValue *ev = g_enum_get_value_by_nick (klass, g_value_get_string (v));

    if (ev == NULL)
      ev = g_enum_get_value_by_name (klass, g_value_get_string (v));
    if (ev != NULL)
      *out = ev->value;
    g_type_class_unref (klass);
    return ev != NULL;
  } else
    return FALSE;
  return TRUE;
}

/* "cudaipc-segment, format=..., rate=..., ..." into @seg. */
static gboolean
parse_segment (const gchar * str, GstSegment * seg, const gchar ** why)
{
  g_autoptr (GstStructure) st = gst_structure_from_string (str, NULL);
  gint format, flags;
  guint64 v;

  if (st == NULL || !gst_structure_has_name (st, "cudaipc-segment")) {
    *why = "not a cudaipc-segment structure";
    return FALSE;
  }
  if (!get_enum_or_int (st, "format", GST_TYPE_FORMAT, &format)) {
    *why = "no format";
    return FALSE;
  }
  gst_segment_init (seg, (GstFormat) format);
  get_double (st, "rate", &seg->rate);
  get_double (st, "applied-rate", &seg->applied_rate);
  if (get_enum_or_int (st, "flags", G_TYPE_NONE, &flags))
    seg->flags = (GstSegmentFlags) flags;
  if (get_u64 (st, "base", &v))
    seg->base = v;
  if (get_u64 (st, "offset", &v))
    seg->offset = v;
  if (get_u64 (st, "start", &v))
    seg->start = v;
  if (get_u64 (st, "stop", &v))
    seg->stop = v;
  if (get_u64 (st, "time", &v))
    seg->time = v;
  if (get_u64 (st, "position", &v))
    seg->position = v;
  if (get_u64 (st, "duration", &v))
    seg->duration = v;

  if (seg->format != GST_FORMAT_TIME) {
    *why = "not in time format";
    return FALSE;
  }
  if (!(seg->rate < 0 || seg->rate > 0) || !isfinite (seg->rate) ||
      !(seg->applied_rate < 0 || seg->applied_rate > 0) ||
      !isfinite (seg->applied_rate)) {
    *why = "bad rate";
    return FALSE;
  }
  if (!GST_CLOCK_TIME_IS_VALID (seg->start) ||
      (GST_CLOCK_TIME_IS_VALID (seg->stop) && seg->stop < seg->start)) {
    *why = "bad start or stop";
    return FALSE;
  }
  return TRUE;
}

/* TAG and custom events go out in order, before the next buffer and after
 * caps and segment: basesrc inserts them in its own queue before the
 * buffer we return, and once a buffer went out they can go at once. */
static void
queue_event (GstCuIpcSrc * self, GstEvent * event)
{
  if (!self->pushed_any || self->segment_pending ||
      !g_queue_is_empty (&self->pending_events))
    g_queue_push_tail (&self->pending_events, event);
  else
    gst_pad_push_event (GST_BASE_SRC_PAD (self), event);
}

static void
flush_events_to_basesrc (GstCuIpcSrc * self)
{
  GstElementClass *parent = GST_ELEMENT_CLASS (gst_cu_ipc_src_parent_class);
  gboolean queueable = TRUE;
  GstEvent *event;

  /* basesrc queues these types only (its send_event); with any other, all
   * go out now, in order, ahead of a new segment */
  for (GList * l = self->pending_events.head; l != NULL; l = l->next) {
    GstEventType type = GST_EVENT_TYPE (l->data);

    if (type != GST_EVENT_TAG && type != GST_EVENT_CUSTOM_DOWNSTREAM &&
        type != GST_EVENT_CUSTOM_BOTH)
      queueable = FALSE;
  }
  while ((event = g_queue_pop_head (&self->pending_events)) != NULL) {
    if (queueable)
      parent->send_event (GST_ELEMENT (self), event);
    else
      gst_pad_push_event (GST_BASE_SRC_PAD (self), event);
  }
}

static GstFlowReturn
handle_event (GstCuIpcSrc * self, const CudaIpcEventMsg * m)
{
  GstCuIpcSrcTimestampMode mode;
  GstEvent *event;

  GST_DEBUG_OBJECT (self, "event %s: %s",
      gst_event_type_get_name (m->event_type), m->structure);

  switch (m->event_type) {
    case GST_EVENT_EOS:
      /* EOS ends the stream: what is queued goes before it */
      while ((event = g_queue_pop_head (&self->pending_events)) != NULL)
        gst_pad_push_event (GST_BASE_SRC_PAD (self), event);
      return GST_FLOW_EOS;
    case GST_EVENT_SEGMENT:{
      GstSegment seg;
      const gchar *why = NULL;

      GST_OBJECT_LOCK (self);
      mode = self->timestamp_mode;
      GST_OBJECT_UNLOCK (self);
      /* in clock mode the source keeps its own live segment */
      if (mode != GST_CU_IPC_SRC_TIMESTAMP_PASSTHROUGH)
        break;
      if (!parse_segment (m->structure, &seg, &why)) {
        GST_WARNING_OBJECT (self, "ignoring segment (%s): %s", why,
            m->structure);
        break;
      }
      if (gst_base_src_new_segment (GST_BASE_SRC (self), &seg))
        self->segment_pending = TRUE;
      break;
    }
    case GST_EVENT_TAG:{
      GstTagList *tags = gst_tag_list_new_from_string (m->structure);

      if (tags == NULL) {
        GST_WARNING_OBJECT (self, "ignoring unparseable tags: %s",
            m->structure);
        break;
      }
      queue_event (self, gst_event_new_tag (tags));
      break;
    }
    case GST_EVENT_CUSTOM_DOWNSTREAM:
    case GST_EVENT_CUSTOM_DOWNSTREAM_STICKY:
    case GST_EVENT_CUSTOM_BOTH:{
      GstStructure *st = gst_structure_from_string (m->structure, NULL);

      if (st == NULL) {
        GST_WARNING_OBJECT (self, "ignoring unparseable custom event: %s",
            m->structure);
        break;
      }
      queue_event (self, gst_event_new_custom (m->event_type, st));
      break;
    }
    default:
      GST_WARNING_OBJECT (self, "ignoring event of type %u (%s)",
          m->event_type, gst_event_type_get_name (m->event_type));
      break;
  }
  return GST_FLOW_OK;
}

/* Streaming */

static GstFlowReturn
handle_message (GstCuIpcSrc * self, CudaIpcMsg * msg, GstBuffer ** outbuf)
{
  switch (msg->type) {
    case CUDAIPC_MSG_RING:
      return handle_ring (self, &msg->u.ring);
    case CUDAIPC_MSG_SLOT:
      return handle_slot (self, msg);
    case CUDAIPC_MSG_CAPS:
      return handle_caps (self, &msg->u.caps);
    case CUDAIPC_MSG_FRAME:
      return handle_frame (self, &msg->u.frame, outbuf);
    case CUDAIPC_MSG_EVENT:
      return handle_event (self, &msg->u.event);
    case CUDAIPC_MSG_BYE:
      return producer_lost (self, &msg->u.bye);
    default:
      return broken_producer (self, "unexpected %s message",
          cudaipc_msg_type_name (msg->type));
  }
}

static GstFlowReturn
gst_cu_ipc_src_create (GstPushSrc * psrc, GstBuffer ** outbuf)
{
  GstCuIpcSrc *self = GST_CU_IPC_SRC (psrc);
  GstBuffer *buf = NULL;
  GstFlowReturn ret;

  while (buf == NULL) {
    CudaIpcMsg msg;
    gint err;

    if (self->need_reconnect) {
      ret = gst_cu_ipc_src_open (self);
      if (ret != GST_FLOW_OK)
        return ret;
      self->need_reconnect = FALSE;
    }
    if (self->conn == NULL) {
      GST_ELEMENT_ERROR (self, RESOURCE, READ,
          ("Not connected to a producer on %s", self->path), (NULL));
      return GST_FLOW_ERROR;
    }

    err = recv_msg (self, self->conn, &msg, 0);
    if (err == -ECANCELED)
      return GST_FLOW_FLUSHING;
    if (err == -EPIPE) {
      ret = producer_lost (self, NULL);
      if (ret != GST_FLOW_OK)
        return ret;
      continue;
    }
    if (err < 0) {
      const gchar *type = cudaipc_msg_type_name (msg.type);

      cudaipc_msg_clear (&msg);
      close_connection (self, CUDAIPC_BYE_PROTOCOL, "bad message");
      GST_ELEMENT_ERROR (self, STREAM, FAILED,
          ("The producer on %s sent a bad %s message: %s", self->path, type,
              g_strerror (-err)), (NULL));
      return GST_FLOW_ERROR;
    }

    ret = handle_message (self, &msg, &buf);
    cudaipc_msg_clear (&msg);
    if (ret != GST_FLOW_OK)
      return ret;
  }

  flush_events_to_basesrc (self);
  self->pushed_any = TRUE;
  self->segment_pending = FALSE;
  g_mutex_lock (&self->session->lock);
  self->session->pushed++;
  g_mutex_unlock (&self->session->lock);
  *outbuf = buf;
  return GST_FLOW_OK;
}

/* GstBaseSrc */

static gboolean
gst_cu_ipc_src_start (GstBaseSrc * bsrc)
{
  GstCuIpcSrc *self = GST_CU_IPC_SRC (bsrc);
  CuIpcSession *s = self->session;

  if (self->wake_fd < 0) {
    GST_ELEMENT_ERROR (self, RESOURCE, OPEN_READ,
        ("Could not create a wake-up eventfd"), (NULL));
    return FALSE;
  }

  GST_OBJECT_LOCK (self);
  g_free (self->path);
  self->path = g_strdup (self->socket_path);
  GST_OBJECT_UNLOCK (self);
  if (self->path == NULL || self->path[0] == '\0') {
    GST_ELEMENT_ERROR (self, RESOURCE, NOT_FOUND,
        ("No socket-path set"), ("set socket-path to the cudaipcsink's"));
    return FALSE;
  }

  g_mutex_lock (&s->lock);
  s->received = s->pushed = s->dropped = s->released = 0;
  g_mutex_unlock (&s->lock);
  self->need_reconnect = FALSE;
  self->pushed_any = FALSE;
  self->segment_pending = FALSE;
  self->have_out_caps = FALSE;

  return gst_cu_ipc_src_open (self) == GST_FLOW_OK;
}

static gboolean
gst_cu_ipc_src_stop (GstBaseSrc * bsrc)
{
  GstCuIpcSrc *self = GST_CU_IPC_SRC (bsrc);

  close_connection (self, CUDAIPC_BYE_NORMAL, "the consumer stopped");
  g_queue_clear_full (&self->pending_events, (GDestroyNotify) gst_event_unref);
  self->need_reconnect = FALSE;
  GST_OBJECT_LOCK (self);
  gst_clear_caps (&self->offer);
  GST_OBJECT_UNLOCK (self);
  return TRUE;
}

static gboolean
gst_cu_ipc_src_unlock (GstBaseSrc * bsrc)
{
  GstCuIpcSrc *self = GST_CU_IPC_SRC (bsrc);
  guint64 one = 1;

  g_atomic_int_set (&self->flushing, 1);
  if (self->wake_fd >= 0 && write (self->wake_fd, &one, sizeof (one)) < 0)
    GST_DEBUG_OBJECT (self, "eventfd write: %s", g_strerror (errno));
  return TRUE;
}

static gboolean
gst_cu_ipc_src_unlock_stop (GstBaseSrc * bsrc)
{
  GstCuIpcSrc *self = GST_CU_IPC_SRC (bsrc);
  guint64 value;

  g_atomic_int_set (&self->flushing, 0);
  /* non-blocking: reads until empty */
  if (self->wake_fd >= 0) {
    while (read (self->wake_fd, &value, sizeof (value)) > 0) {
    }
  }
  return TRUE;
}

static GstCaps *
gst_cu_ipc_src_get_caps (GstBaseSrc * bsrc, GstCaps * filter)
{
  GstCuIpcSrc *self = GST_CU_IPC_SRC (bsrc);
  GstCaps *caps = NULL;

  GST_OBJECT_LOCK (self);
  if (self->offer != NULL)
    caps = gst_caps_ref (self->offer);
  GST_OBJECT_UNLOCK (self);
  if (caps == NULL)
    caps = gst_pad_get_pad_template_caps (GST_BASE_SRC_PAD (bsrc));

  if (filter != NULL) {
    GstCaps *tmp = gst_caps_intersect_full (filter, caps,
        GST_CAPS_INTERSECT_FIRST);

    gst_caps_unref (caps);
    caps = tmp;
  }
  return caps;
}

/* Until the producer's caps are known there is nothing to negotiate; the
 * default would fix caps from the template. */
static gboolean
gst_cu_ipc_src_negotiate (GstBaseSrc * bsrc)
{
  GstCuIpcSrc *self = GST_CU_IPC_SRC (bsrc);
  CuIpcCapsEntry *entry;

  if (!self->have_out_caps)
    return TRUE;
  entry = g_hash_table_lookup (self->caps,
      GUINT_TO_POINTER (self->out_caps_id));
  if (entry == NULL)
    return TRUE;
  return apply_caps (self, entry);
}

/* Frames live in imported slots: no pool is ever used. */
static gboolean
gst_cu_ipc_src_decide_allocation (GstBaseSrc * bsrc, GstQuery * query)
{
  while (gst_query_get_n_allocation_pools (query) > 0)
    gst_query_remove_nth_allocation_pool (query, 0);
  return TRUE;
}

/* GObject */

static GstStructure *
gst_cu_ipc_src_get_stats (GstCuIpcSrc * self)
{
  CuIpcSession *s = self->session;
  GstStructure *st;

  g_mutex_lock (&s->lock);
  st = gst_structure_new ("application/x-cudaipcsrc-stats",
      "frames-received", G_TYPE_UINT64, s->received,
      "frames-pushed", G_TYPE_UINT64, s->pushed,
      "frames-dropped", G_TYPE_UINT64, s->dropped,
      "frames-released", G_TYPE_UINT64, s->released,
      "held", G_TYPE_UINT, s->held,
      "generation", G_TYPE_UINT, s->generation,
      "imports", G_TYPE_UINT, s->imports, NULL);
  g_mutex_unlock (&s->lock);
  return st;
}

static void
gst_cu_ipc_src_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstCuIpcSrc *self = GST_CU_IPC_SRC (object);

  switch (prop_id) {
    case PROP_IS_LIVE:
      gst_base_src_set_live (GST_BASE_SRC (self), g_value_get_boolean (value));
      return;
    default:
      break;
  }

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_SOCKET_PATH:
      g_free (self->socket_path);
      self->socket_path = g_value_dup_string (value);
      break;
    case PROP_DEVICE_ID:
      self->device_id = g_value_get_int (value);
      break;
    case PROP_CONNECT_TIMEOUT:
      self->connect_timeout = g_value_get_uint (value);
      break;
    case PROP_RECONNECT:
      self->reconnect = g_value_get_boolean (value);
      break;
    case PROP_MAX_HELD:
      self->max_held = g_value_get_uint (value);
      break;
    case PROP_TIMESTAMP_MODE:
      self->timestamp_mode = g_value_get_enum (value);
      break;
    case PROP_CLIENT_NAME:
      g_free (self->client_name);
      self->client_name = g_value_dup_string (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_cu_ipc_src_get_property (GObject * object, guint prop_id, GValue * value,
    GParamSpec * pspec)
{
  GstCuIpcSrc *self = GST_CU_IPC_SRC (object);

  switch (prop_id) {
    case PROP_IS_LIVE:
      g_value_set_boolean (value, gst_base_src_is_live (GST_BASE_SRC (self)));
      return;
    case PROP_STATS:
      g_value_take_boxed (value, gst_cu_ipc_src_get_stats (self));
      return;
    default:
      break;
  }

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_SOCKET_PATH:
      g_value_set_string (value, self->socket_path);
      break;
    case PROP_DEVICE_ID:
      g_value_set_int (value, self->device_id);
      break;
    case PROP_CONNECT_TIMEOUT:
      g_value_set_uint (value, self->connect_timeout);
      break;
    case PROP_RECONNECT:
      g_value_set_boolean (value, self->reconnect);
      break;
    case PROP_MAX_HELD:
      g_value_set_uint (value, self->max_held);
      break;
    case PROP_TIMESTAMP_MODE:
      g_value_set_enum (value, self->timestamp_mode);
      break;
    case PROP_CLIENT_NAME:
      g_value_set_string (value, self->client_name);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_cu_ipc_src_finalize (GObject * object)
{
  GstCuIpcSrc *self = GST_CU_IPC_SRC (object);

  /* stop() ran: nothing is connected or imported any more */
  cudaipc_close_fd (&self->wake_fd);
  session_unref (self->session);
  g_hash_table_unref (self->caps);
  g_queue_clear_full (&self->pending_events, (GDestroyNotify) gst_event_unref);
  gst_clear_caps (&self->offer);
  g_free (self->socket_path);
  g_free (self->client_name);
  g_free (self->path);

  G_OBJECT_CLASS (gst_cu_ipc_src_parent_class)->finalize (object);
}

static void
gst_cu_ipc_src_init (GstCuIpcSrc * self)
{
  GstBaseSrc *bsrc = GST_BASE_SRC (self);

  self->socket_path = g_strdup (DEFAULT_SOCKET_PATH);
  self->device_id = DEFAULT_DEVICE_ID;
  self->connect_timeout = DEFAULT_CONNECT_TIMEOUT;
  self->reconnect = DEFAULT_RECONNECT;
  self->max_held = DEFAULT_MAX_HELD;
  self->timestamp_mode = DEFAULT_TIMESTAMP_MODE;
  self->client_name = g_strdup (DEFAULT_CLIENT_NAME);

  self->wake_fd = eventfd (0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (self->wake_fd < 0)
    GST_ERROR_OBJECT (self, "eventfd: %s", g_strerror (errno));
  self->session = session_new ();
  self->caps = g_hash_table_new_full (NULL, NULL, NULL, caps_entry_free);
  g_queue_init (&self->pending_events);

  gst_base_src_set_format (bsrc, GST_FORMAT_TIME);
  gst_base_src_set_live (bsrc, DEFAULT_IS_LIVE);
}

static void
gst_cu_ipc_src_class_init (GstCuIpcSrcClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstBaseSrcClass *basesrc_class = GST_BASE_SRC_CLASS (klass);
  GstPushSrcClass *pushsrc_class = GST_PUSH_SRC_CLASS (klass);

  gobject_class->set_property = gst_cu_ipc_src_set_property;
  gobject_class->get_property = gst_cu_ipc_src_get_property;
  gobject_class->finalize = gst_cu_ipc_src_finalize;

  /**
   * GstCuIpcSrc:socket-path:
   *
   * The cudaipcsink's socket: a file path, or "@name" for a Linux abstract
   * socket.
   */
  properties[PROP_SOCKET_PATH] = g_param_spec_string ("socket-path",
      "Socket path",
      "The producer's socket: a path, or @name for an abstract socket",
      DEFAULT_SOCKET_PATH, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
      GST_PARAM_MUTABLE_READY);

  /**
   * GstCuIpcSrc:device-id:
   *
   * The CUDA device this consumer uses (ignored by the host backend). The
   * backend is the producer's, learned from its HELLO; with the cuda
   * backend the producer's GPU must be this one.
   */
  properties[PROP_DEVICE_ID] = g_param_spec_int ("device-id", "Device ID",
      "CUDA device ordinal of this consumer (the producer's GPU)", 0,
      G_MAXINT, DEFAULT_DEVICE_ID, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
      GST_PARAM_MUTABLE_READY);

  /**
   * GstCuIpcSrc:connect-timeout:
   *
   * How long to wait for a producer, in milliseconds, when none listens on
   * #GstCuIpcSrc:socket-path yet (at start and on reconnection), and for
   * its HELLO once connected. 0 waits forever.
   */
  properties[PROP_CONNECT_TIMEOUT] = g_param_spec_uint ("connect-timeout",
      "Connect timeout",
      "How long to wait for the producer, in ms (0 = forever)", 0,
      G_MAXUINT, DEFAULT_CONNECT_TIMEOUT, G_PARAM_READWRITE |
      G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING);

  /**
   * GstCuIpcSrc:reconnect:
   *
   * When the producer goes away without EOS, post a warning and wait for it
   * again (up to #GstCuIpcSrc:connect-timeout) instead of failing. Frames
   * of the old connection still downstream stay valid.
   */
  properties[PROP_RECONNECT] = g_param_spec_boolean ("reconnect", "Reconnect",
      "Reconnect when the producer goes away without EOS", DEFAULT_RECONNECT,
      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING);

  /**
   * GstCuIpcSrc:max-held:
   *
   * The most frames this consumer holds at once (pushed and not yet freed
   * downstream). A frame that arrives beyond it is released to the producer
   * at once and counted in frames-dropped: a slow consumer then drops its
   * own frames instead of stalling the producer. 0: no limit.
   */
  properties[PROP_MAX_HELD] = g_param_spec_uint ("max-held", "Max held",
      "Most frames held at once; more are dropped (0 = no limit)", 0,
      G_MAXUINT, DEFAULT_MAX_HELD, G_PARAM_READWRITE |
      G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING);

  /**
   * GstCuIpcSrc:is-live:
   *
   * Act as a live source.
   */
  properties[PROP_IS_LIVE] = g_param_spec_boolean ("is-live", "Is live",
      "Act as a live source", DEFAULT_IS_LIVE, G_PARAM_READWRITE |
      G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY);

  /**
   * GstCuIpcSrc:timestamp-mode:
   *
   * clock: stamp each frame with this pipeline's running time of the
   * moment the producer's PTS stands for (both share CLOCK_MONOTONIC), so
   * the two pipelines' running times line up; frames from before this
   * pipeline started get 0. passthrough: push the producer's PTS, DTS and
   * segments unchanged.
   */
  properties[PROP_TIMESTAMP_MODE] = g_param_spec_enum ("timestamp-mode",
      "Timestamp mode", "How frames are timestamped",
      GST_TYPE_CU_IPC_SRC_TIMESTAMP_MODE, DEFAULT_TIMESTAMP_MODE,
      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING);

  /**
   * GstCuIpcSrc:client-name:
   *
   * The name this consumer gives the producer in its HELLO, for the
   * producer's messages and statistics, at most 255 bytes. NULL:
   * "cudaipcsrc-<pid>".
   */
  properties[PROP_CLIENT_NAME] = g_param_spec_string ("client-name",
      "Client name",
      "Name given to the producer (NULL = cudaipcsrc-<pid>)",
      DEFAULT_CLIENT_NAME, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
      GST_PARAM_MUTABLE_READY);

  /**
   * GstCuIpcSrc:stats:
   *
   * Counters, as an "application/x-cudaipcsrc-stats" structure:
   * frames-received (FRAMEs received), frames-pushed, frames-dropped
   * (released at once because of #GstCuIpcSrc:max-held), frames-released
   * (RELEASEs sent), all guint64 since start; held (frames of the current
   * connection not yet released), generation (the producer's ring) and
   * imports (slots imported on the current connection), all guint.
   */
  properties[PROP_STATS] = g_param_spec_boxed ("stats", "Statistics",
      "Frame counters", GST_TYPE_STRUCTURE,
      G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (gobject_class, N_PROPS, properties);

  gst_element_class_add_static_pad_template (element_class, &src_template);
  gst_element_class_set_static_metadata (element_class,
      "CUDA IPC source", "Source/Video/Hardware",
      "Receives video frames in GPU memory from a cudaipcsink in another "
      "process, without a copy", "gst-cudaipc developers");

  basesrc_class->start = GST_DEBUG_FUNCPTR (gst_cu_ipc_src_start);
  basesrc_class->stop = GST_DEBUG_FUNCPTR (gst_cu_ipc_src_stop);
  basesrc_class->unlock = GST_DEBUG_FUNCPTR (gst_cu_ipc_src_unlock);
  basesrc_class->unlock_stop = GST_DEBUG_FUNCPTR (gst_cu_ipc_src_unlock_stop);
  basesrc_class->get_caps = GST_DEBUG_FUNCPTR (gst_cu_ipc_src_get_caps);
  basesrc_class->negotiate = GST_DEBUG_FUNCPTR (gst_cu_ipc_src_negotiate);
  basesrc_class->decide_allocation =
      GST_DEBUG_FUNCPTR (gst_cu_ipc_src_decide_allocation);
  pushsrc_class->create = GST_DEBUG_FUNCPTR (gst_cu_ipc_src_create);

  gst_type_mark_as_plugin_api (GST_TYPE_CU_IPC_SRC_TIMESTAMP_MODE, 0);
}
