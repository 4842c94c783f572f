/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * SECTION:element-cudaipcsink
 * @title: cudaipcsink
 * @see_also: cudaipcsrc
 *
 * Shares video frames with other processes. The sink keeps a ring of
 * buffers on one device (CUDA virtual memory, or shared host memory with
 * `backend=host`), exports each buffer once as file descriptors, and tells
 * every cudaipcsrc connected to its Unix socket which buffer holds which
 * frame. A buffer is written again only once every consumer it was
 * published to has released it; `on-full` says what happens meanwhile.
 *
 * Caps, timestamps, buffer flags, plane offsets and strides, and the
 * SEGMENT, TAG, EOS and custom serialized events travel in band.
 *
 * The element posts element messages "cudaipcsink-client-joined" (name,
 * pid) when a consumer finished its handshake and "cudaipcsink-client-left"
 * (name, pid, reason) when it went away.
 *
 * ## Example launch lines
 * |[
 * gst-launch-1.0 videotestsrc ! video/x-raw,format=NV12 ! cudaupload ! \
 *     cudaipcsink socket-path=/tmp/cam1.sock
 * gst-launch-1.0 cudaipcsrc socket-path=/tmp/cam1.sock ! cudadownload ! \
 *     videoconvert ! autovideosink
 * ]|
 * Without a GPU:
 * |[
 * gst-launch-1.0 videotestsrc ! cudaipcsink socket-path=@cam1 backend=host
 * gst-launch-1.0 cudaipcsrc socket-path=@cam1 ! videoconvert ! autovideosink
 * ]|
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <fcntl.h>

#include <gst/video/video.h>

#include "cudaipcsink.h"
#include "cudaipc-enums.h"
#include "connection.h"
#include "cuda-loader.h"
#include "device.h"
#include "error.h"
#include "fdutil.h"
#include "protocol.h"
#include "ring.h"

GST_DEBUG_CATEGORY_STATIC (gst_cu_ipc_sink_debug);
#define GST_CAT_DEFAULT gst_cu_ipc_sink_debug

/* GstCudaMemory's allocator type and map flag (gstcudamemory.h, the same in
 * nvcodec 1.20 and libgstcuda 1.22+); declared here so that building needs
 * neither. */
#define CUDA_MEMORY_TYPE_NAME "gst.cuda.memory"
#define MAP_CUDA (GST_MAP_FLAG_LAST << 1)

/* The GstBufferFlags a consumer may see: no mini-object flags, no
 * TAG_MEMORY (it describes our buffer's memories, not the frame). */
#define PUBLIC_BUFFER_FLAGS \
  ((GST_BUFFER_FLAG_LAST - 1) & ~(GST_MINI_OBJECT_FLAG_LAST - 1) & \
      ~GST_BUFFER_FLAG_TAG_MEMORY)

/* How long a new connection may take to answer our HELLO. Generous: the
 * consumer opens its CUDA device first, and cuInit can take seconds. */
#define HANDSHAKE_TIMEOUT (20 * G_TIME_SPAN_SECOND)

/* How long to stop accepting after accept() failed for want of fds. */
#define ACCEPT_PAUSE (100 * G_TIME_SPAN_MILLISECOND)

/* HELLO capability bits this producer implements: none yet (no
 * interprocess events). */
#define SUPPORTED_CAPS 0u

/* Messages read from one client per wake-up, so a chatty client cannot
 * starve the others. */
#define MAX_MSGS_PER_WAKEUP 64

enum
{
  PROP_0,
  PROP_SOCKET_PATH,
  PROP_SOCKET_MODE,
  PROP_BACKEND,
  PROP_DEVICE_ID,
  PROP_RING_SIZE,
  PROP_ON_FULL,
  PROP_FULL_TIMEOUT,
  PROP_WAIT_FOR_CONNECTION,
  PROP_NUM_CLIENTS,
  PROP_STATS,
  N_PROPERTIES
};

#define DEFAULT_SOCKET_PATH NULL
#define DEFAULT_SOCKET_MODE 0660
#define DEFAULT_BACKEND CUDAIPC_BACKEND_CUDA
#define DEFAULT_DEVICE_ID 0
#define DEFAULT_RING_SIZE 4
#define MIN_RING_SIZE 2
#define MAX_RING_SIZE CUDAIPC_MAX_SLOTS
#define DEFAULT_ON_FULL GST_CU_IPC_SINK_ON_FULL_WAIT
#define DEFAULT_FULL_TIMEOUT 1000
#define DEFAULT_WAIT_FOR_CONNECTION FALSE

static GParamSpec *properties[N_PROPERTIES];

typedef struct
{
  guint id;                     /* for logs */
  CudaIpcConn *conn;
  gchar *name;                  /* from its HELLO; "pid N" until then */
  gint pid;                     /* SO_PEERCRED */
  guint uid;
  CudaIpcLease lease;
  guint64 sent;                 /* FRAMEs sent */
  guint64 released;             /* RELEASEs accepted (stale ones too) */
  gint64 hello_deadline;        /* monotonic time its HELLO is due by */
  gboolean ready;               /* handshake done: gets frames and events */
  gboolean dead;                /* dropped: the I/O thread frees it */
  gchar *reason;                /* why it was dropped */
  gchar *warning;               /* a warning to post when it is freed */
} Client;

struct _GstCuIpcSink
{
  GstBaseSink parent;

  /* properties, object lock */
  gchar *socket_path;
  guint socket_mode;
  CudaIpcBackend backend;
  gint device_id;
  guint ring_size;
  GstCuIpcSinkOnFull on_full;
  guint full_timeout;
  gboolean wait_for_connection;

  /* set in start(), constant until stop() */
  CudaIpcDevice *dev;
  gchar *listen_path;
  gchar *name;
  int listen_fd;
  int wake_fd;
  GThread *thread;

  /* sink lock: everything below */
  GMutex lock;
  GCond cond;                   /* slots freed, clients joined, unlock */
  GList *clients;               /* Client*, only the I/O thread frees them */
  guint next_client_id;
  CudaIpcRing *ring;
  guint32 generation;
  gchar *caps_str;
  guint32 caps_id;
  GstVideoInfo info;
  gboolean have_info;
  gchar *segment_str;           /* the last SEGMENT, for late joiners */
  gboolean eos;                 /* EOS forwarded, no flush since */
  guint64 seq;
  guint64 frames_published;
  guint64 frames_dropped;
  gboolean unlocked;            /* unlock() until unlock_stop() */
  gboolean quit;                /* the I/O thread must exit */
  GPtrArray *holders;           /* scratch for render(): CudaIpcLease* */
};

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE ("sink",
    GST_PAD_SINK,
    GST_PAD_ALWAYS,
    GST_STATIC_CAPS ("video/x-raw(memory:CUDAMemory); video/x-raw"));

#define gst_cu_ipc_sink_parent_class parent_class
G_DEFINE_TYPE (GstCuIpcSink, gst_cu_ipc_sink, GST_TYPE_BASE_SINK);
GST_ELEMENT_REGISTER_DEFINE (cudaipcsink, "cudaipcsink", GST_RANK_NONE,
    GST_TYPE_CU_IPC_SINK);

GType
gst_cu_ipc_sink_on_full_get_type (void)
{
  static gsize type = 0;
  static const GEnumValue values[] = {
    {GST_CU_IPC_SINK_ON_FULL_WAIT,
        "Wait for a free slot, at most full-timeout", "wait"},
    {GST_CU_IPC_SINK_ON_FULL_DROP, "Drop the frame at once", "drop"},
    {0, NULL, NULL},
  };

  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstCuIpcSinkOnFull", values);

    g_once_init_leave (&type, t);
  }
  return (GType) type;
}

/* Notices: what the I/O thread and stop() post once the lock is released */

typedef struct
{
  GstMessage *msg;              /* an element message, or NULL */
  gchar *warning;               /* or a warning: user text */
  gchar *debug;
} Notice;

static void
notice_free (gpointer data)
{
  Notice *n = data;

  if (n->msg)
    gst_message_unref (n->msg);
  g_free (n->warning);
  g_free (n->debug);
  g_free (n);
}

static void
queue_message (GstCuIpcSink * self, GPtrArray * notices, const gchar * what,
    Client * c, const gchar * reason)
{
  Notice *n = g_new0 (Notice, 1);
  GstStructure *s;

  s = gst_structure_new (what, "name", G_TYPE_STRING, c->name,
      "pid", G_TYPE_INT, c->pid, NULL);
  if (reason)
    gst_structure_set (s, "reason", G_TYPE_STRING, reason, NULL);
  n->msg = gst_message_new_element (GST_OBJECT (self), s);
  g_ptr_array_add (notices, n);
}

static void
queue_warning (GPtrArray * notices, gchar * text, gchar * debug)
{
  Notice *n = g_new0 (Notice, 1);

  n->warning = text;
  n->debug = debug;
  g_ptr_array_add (notices, n);
}

/* Posts and empties @notices; the sink lock must not be held. */
static void
post_notices (GstCuIpcSink * self, GPtrArray * notices)
{
  gboolean clients_changed = FALSE;

  for (guint i = 0; i < notices->len; i++) {
    Notice *n = g_ptr_array_index (notices, i);

    if (n->warning) {
      GST_ELEMENT_WARNING (self, RESOURCE, READ, ("%s", n->warning),
          ("%s", n->debug ? n->debug : ""));
    }
    if (n->msg) {
      clients_changed = TRUE;
      gst_element_post_message (GST_ELEMENT (self), g_steal_pointer (&n->msg));
    }
  }
  g_ptr_array_set_size (notices, 0);

  if (clients_changed)
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_NUM_CLIENTS]);
}

/* Clients */

static void
wake_io_thread (GstCuIpcSink * self)
{
  guint64 one = 1;
  ssize_t n;

  if (self->wake_fd < 0)
    return;
  do {
    n = write (self->wake_fd, &one, sizeof (one));
  } while (n < 0 && errno == EINTR);
  /* EAGAIN: the counter is already non-zero, the thread will wake */
}

static void
client_free (Client * c)
{
  cudaipc_conn_free (c->conn);
  g_free (c->name);
  g_free (c->reason);
  g_free (c->warning);
  g_free (c);
}

/* Marks @c dead: no more messages to it, its slots are free again. The
 * I/O thread frees it and posts what it has to. @bye_text NULL: no BYE. */
static void
client_drop_locked (GstCuIpcSink * self, Client * c, guint bye_reason,
    const gchar * bye_text, gchar * reason, gchar * warning)
{
  if (c->dead) {
    g_free (reason);
    g_free (warning);
    return;
  }

  GST_INFO_OBJECT (self, "dropping client %u '%s' (pid %d): %s", c->id,
      c->name, c->pid, reason);

  if (bye_text) {
    CudaIpcMsg msg;

    cudaipc_msg_init (&msg, CUDAIPC_MSG_BYE);
    msg.u.bye.reason = bye_reason;
    msg.u.bye.text = bye_text;
    /* best effort: the peer may not be reading or already gone */
    (void) cudaipc_conn_send (c->conn, &msg);
  }

  c->dead = TRUE;
  c->reason = reason;
  c->warning = warning;
  if (self->ring) {
    guint n = cudaipc_ring_release_all (self->ring, &c->lease);

    if (n > 0)
      GST_DEBUG_OBJECT (self, "client %u gave back %u slot(s)", c->id, n);
  }
  g_cond_broadcast (&self->cond);
  wake_io_thread (self);
}

/* Sends @msg to @c; a failure drops @c. */
static gboolean
client_send_locked (GstCuIpcSink * self, Client * c, const CudaIpcMsg * msg)
{
  gint ret;

  if (c->dead)
    return FALSE;

  ret = cudaipc_conn_send (c->conn, msg);
  if (ret == 0)
    return TRUE;

  if (ret == -EAGAIN) {
    client_drop_locked (self, c, CUDAIPC_BYE_TOO_SLOW,
        "the consumer did not read its messages in time",
        g_strdup ("too slow: its socket buffer is full"),
        g_strdup_printf ("Consumer '%s' (pid %d) is not reading its "
            "messages and was disconnected", c->name, c->pid));
  } else if (ret == -EPIPE) {
    client_drop_locked (self, c, 0, NULL, g_strdup ("connection closed"), NULL);
  } else {
    client_drop_locked (self, c, 0, NULL,
        g_strdup_printf ("sending %s failed: %s",
            cudaipc_msg_type_name (msg->type), g_strerror (-ret)),
        g_strdup_printf ("Could not send %s to consumer '%s' (pid %d): %s",
            cudaipc_msg_type_name (msg->type), c->name, c->pid,
            g_strerror (-ret)));
  }
  return FALSE;
}

static gboolean
client_send_caps_locked (GstCuIpcSink * self, Client * c)
{
  CudaIpcMsg msg;

  if (self->caps_str == NULL)
    return TRUE;
  cudaipc_msg_init (&msg, CUDAIPC_MSG_CAPS);
  msg.u.caps.caps_id = self->caps_id;
  msg.u.caps.caps = self->caps_str;
  return client_send_locked (self, c, &msg);
}

/* RING, one SLOT per slot with its fds, then the current CAPS. */
static gboolean
client_send_ring_locked (GstCuIpcSink * self, Client * c)
{
  CudaIpcRing *ring = self->ring;
  CudaIpcMsg msg;
  guint n_slots;

  if (ring == NULL)
    return TRUE;

  n_slots = cudaipc_ring_get_n_slots (ring);
  cudaipc_msg_init (&msg, CUDAIPC_MSG_RING);
  msg.u.ring.generation = cudaipc_ring_get_generation (ring);
  msg.u.ring.n_slots = n_slots;
  msg.u.ring.slot_size = cudaipc_ring_get_slot_size (ring);
  if (!client_send_locked (self, c, &msg))
    return FALSE;

  for (guint i = 0; i < n_slots; i++) {
    const CudaIpcDescriptor *desc =
        cudaipc_block_get_descriptor (cudaipc_ring_get_block (ring, i));
    guint n_fds = cudaipc_descriptor_get_n_fds (desc);
    const int *fds = cudaipc_descriptor_get_fds (desc);
    const guint64 *sizes = cudaipc_descriptor_get_sizes (desc);

    cudaipc_msg_init (&msg, CUDAIPC_MSG_SLOT);
    msg.u.slot.generation = cudaipc_ring_get_generation (ring);
    msg.u.slot.index = i;
    msg.u.slot.size = cudaipc_descriptor_get_size (desc);
    msg.u.slot.n_allocs = n_fds;
    msg.u.slot.flags = 0;
    for (guint j = 0; j < n_fds; j++) {
      msg.u.slot.alloc_sizes[j] = sizes[j];
      msg.fds[j] = fds[j];      /* borrowed */
    }
    msg.n_fds = n_fds;
    if (!client_send_locked (self, c, &msg))
      return FALSE;
  }

  return client_send_caps_locked (self, c);
}

static void
format_uuid (const guint8 uuid[CUDAIPC_UUID_LEN], gchar out[48])
{
  g_snprintf (out, 48, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
      "%02x%02x%02x%02x%02x%02x", uuid[0], uuid[1], uuid[2], uuid[3],
      uuid[4], uuid[5], uuid[6], uuid[7], uuid[8], uuid[9], uuid[10],
      uuid[11], uuid[12], uuid[13], uuid[14], uuid[15]);
}

static void
client_handle_hello_locked (GstCuIpcSink * self, Client * c,
    const CudaIpcHello * hello, GPtrArray * notices)
{
  CudaIpcBackend backend = cudaipc_device_get_backend (self->dev);
  guint8 uuid[CUDAIPC_UUID_LEN];
  gchar *text;

  if (hello->name && hello->name[0]) {
    g_free (c->name);
    c->name = g_utf8_make_valid (hello->name, -1);
  }

  if (hello->backend != (guint32) backend) {
    text = g_strdup_printf ("the consumer uses the %s backend, this producer "
        "uses %s", cudaipc_backend_name (hello->backend),
        cudaipc_backend_name (backend));
    client_drop_locked (self, c, CUDAIPC_BYE_BACKEND, text,
        g_strdup_printf ("backend mismatch: %s", text),
        g_strdup_printf ("Refused consumer '%s' (pid %d): %s", c->name,
            c->pid, text));
    g_free (text);
    return;
  }

  cudaipc_device_get_uuid (self->dev, uuid);
  if (backend == CUDAIPC_BACKEND_CUDA &&
      memcmp (uuid, hello->uuid, CUDAIPC_UUID_LEN) != 0) {
    gchar ours[48], theirs[48];

    format_uuid (uuid, ours);
    format_uuid (hello->uuid, theirs);
    text = g_strdup_printf ("the consumer's GPU differs from the producer's "
        "GPU %s", ours);
    client_drop_locked (self, c, CUDAIPC_BYE_DEVICE, text,
        g_strdup_printf ("device mismatch: consumer GPU %s", theirs),
        g_strdup_printf ("Refused consumer '%s' (pid %d): its GPU %s differs "
            "from the producer's GPU %s", c->name, c->pid, theirs, ours));
    g_free (text);
    return;
  }

  c->ready = TRUE;
  g_cond_broadcast (&self->cond);
  GST_INFO_OBJECT (self, "client %u '%s' (pid %d, uid %u) joined", c->id,
      c->name, c->pid, c->uid);

  if (self->ring && !client_send_ring_locked (self, c))
    return;
  if (self->segment_str) {
    CudaIpcMsg msg;

    cudaipc_msg_init (&msg, CUDAIPC_MSG_EVENT);
    msg.u.event.event_type = GST_EVENT_SEGMENT;
    msg.u.event.running_time = GST_CLOCK_TIME_NONE;
    msg.u.event.structure = self->segment_str;
    if (!client_send_locked (self, c, &msg))
      return;
  }
  if (self->eos) {
    CudaIpcMsg msg;

    /* or it would wait for frames that will not come */
    cudaipc_msg_init (&msg, CUDAIPC_MSG_EVENT);
    msg.u.event.event_type = GST_EVENT_EOS;
    msg.u.event.running_time = GST_CLOCK_TIME_NONE;
    msg.u.event.structure = "";
    if (!client_send_locked (self, c, &msg))
      return;
  }
  queue_message (self, notices, "cudaipcsink-client-joined", c, NULL);
}

static void
client_handle_release_locked (GstCuIpcSink * self, Client * c,
    const CudaIpcReleaseMsg * rel)
{
  gint ret;

  if (self->ring == NULL) {
    GST_DEBUG_OBJECT (self, "client %u released slot %u of generation %u, "
        "but there is no ring", c->id, rel->slot, rel->generation);
    return;
  }

  ret = cudaipc_ring_release (self->ring, &c->lease, rel->slot,
      rel->generation);
  switch (ret) {
    case 0:
      c->released++;
      g_cond_broadcast (&self->cond);
      break;
    case -ESTALE:
      c->released++;
      GST_DEBUG_OBJECT (self, "client %u released slot %u of old generation "
          "%u", c->id, rel->slot, rel->generation);
      break;
    default:{
      /* -ERANGE: no such slot; -ENOENT: not held by this client */
      const gchar *what = ret == -ERANGE ? "which does not exist" :
          "which it does not hold";

      client_drop_locked (self, c, CUDAIPC_BYE_PROTOCOL,
          "released a slot it does not hold",
          g_strdup_printf ("protocol error: released slot %u of generation "
              "%u, %s", rel->slot, rel->generation, what),
          g_strdup_printf ("Consumer '%s' (pid %d) released slot %u of "
              "generation %u, %s; disconnected it", c->name, c->pid,
              rel->slot, rel->generation, what));
      break;
    }
  }
}

static void
client_handle_msg_locked (GstCuIpcSink * self, Client * c, CudaIpcMsg * msg,
    GPtrArray * notices)
{
  if (!c->ready) {
    if (msg->type == CUDAIPC_MSG_HELLO) {
      client_handle_hello_locked (self, c, &msg->u.hello, notices);
      return;
    }
    if (msg->type == CUDAIPC_MSG_BYE) {
      /* the consumer refused us (version, backend, device): its side
       * reports it; we only log */
      GST_INFO_OBJECT (self, "client %u (pid %d) refused the handshake: %s",
          c->id, c->pid, msg->u.bye.text);
      client_drop_locked (self, c, 0, NULL,
          g_strdup_printf ("refused the handshake: %s", msg->u.bye.text), NULL);
      return;
    }
    client_drop_locked (self, c, CUDAIPC_BYE_PROTOCOL, "expected HELLO",
        g_strdup_printf ("protocol error: %s before HELLO",
            cudaipc_msg_type_name (msg->type)),
        g_strdup_printf ("Consumer (pid %d) sent %s before HELLO; "
            "disconnected it", c->pid, cudaipc_msg_type_name (msg->type)));
    return;
  }

  switch (msg->type) {
    case CUDAIPC_MSG_RELEASE:
      client_handle_release_locked (self, c, &msg->u.release);
      break;
    case CUDAIPC_MSG_BYE:
      client_drop_locked (self, c, 0, NULL,
          g_strdup_printf ("said goodbye: %s", msg->u.bye.text), NULL);
      break;
    default:
      client_drop_locked (self, c, CUDAIPC_BYE_PROTOCOL,
          "unexpected message",
          g_strdup_printf ("protocol error: unexpected %s",
              cudaipc_msg_type_name (msg->type)),
          g_strdup_printf ("Consumer '%s' (pid %d) sent an unexpected %s "
              "message; disconnected it", c->name, c->pid,
              cudaipc_msg_type_name (msg->type)));
      break;
  }
}

/* Reads what @c sent, until it would block. */
static void
client_read_locked (GstCuIpcSink * self, Client * c, GPtrArray * notices)
{
  for (guint i = 0; i < MAX_MSGS_PER_WAKEUP && !c->dead; i++) {
    CudaIpcMsg msg;
    gint ret;

    ret = cudaipc_conn_recv (c->conn, &msg);
    if (ret == -EAGAIN)
      return;

    if (ret == -EPROTONOSUPPORT && !c->ready) {
      gchar *text = g_strdup_printf ("protocol version %u is not supported, "
          "this producer speaks %u", msg.u.hello.version,
          CUDAIPC_PROTOCOL_VERSION);

      client_drop_locked (self, c, CUDAIPC_BYE_VERSION, text,
          g_strdup_printf ("version mismatch: %s", text),
          g_strdup_printf ("Refused consumer (pid %d): %s", c->pid, text));
      g_free (text);
      return;
    }
    if (ret == -EPIPE) {
      client_drop_locked (self, c, 0, NULL, g_strdup ("connection closed"),
          NULL);
      return;
    }
    if (ret < 0) {
      client_drop_locked (self, c, CUDAIPC_BYE_PROTOCOL, "malformed message",
          g_strdup_printf ("protocol error: %s", g_strerror (-ret)),
          g_strdup_printf ("Consumer '%s' (pid %d) sent a malformed message "
              "(%s); disconnected it", c->name, c->pid, g_strerror (-ret)));
      return;
    }

    GST_LOG_OBJECT (self, "client %u: %s", c->id,
        cudaipc_msg_type_name (msg.type));
    client_handle_msg_locked (self, c, &msg, notices);
    cudaipc_msg_clear (&msg);
  }
}

/* Returns FALSE when accepting must pause: out of fds or memory, the
 * pending connection stays queued and poll() would report it at once. */
static gboolean
accept_clients_locked (GstCuIpcSink * self)
{
  for (;;) {
    CudaIpcBackend backend;
    CudaIpcMsg msg;
    Client *c;
    pid_t pid = 0;
    uid_t uid = 0;
    int fd = -1;
    gint ret;

    ret = cudaipc_socket_accept (self->listen_fd, &fd);
    if (ret == -EAGAIN)
      return TRUE;
    if (ret == -ECONNABORTED || ret == -EPROTO)
      continue;
    if (ret < 0) {
      GST_WARNING_OBJECT (self, "accept failed: %s", g_strerror (-ret));
      return FALSE;
    }

    c = g_new0 (Client, 1);
    c->id = self->next_client_id++;
    c->conn = cudaipc_conn_new (fd);
    ret = cudaipc_conn_get_peer_cred (c->conn, &pid, &uid, NULL);
    if (ret < 0)
      GST_WARNING_OBJECT (self, "SO_PEERCRED failed: %s", g_strerror (-ret));
    c->pid = pid;
    c->uid = uid;
    c->name = g_strdup_printf ("pid %d", c->pid);
    c->hello_deadline = g_get_monotonic_time () + HANDSHAKE_TIMEOUT;
    self->clients = g_list_append (self->clients, c);

    ret = cudaipc_conn_set_nonblocking (c->conn, TRUE);
    if (ret < 0) {
      client_drop_locked (self, c, 0, NULL,
          g_strdup_printf ("fcntl failed: %s", g_strerror (-ret)), NULL);
      continue;
    }

    GST_DEBUG_OBJECT (self, "client %u connected (pid %d, uid %u)", c->id,
        c->pid, c->uid);

    backend = cudaipc_device_get_backend (self->dev);
    cudaipc_msg_init (&msg, CUDAIPC_MSG_HELLO);
    msg.u.hello.version = CUDAIPC_PROTOCOL_VERSION;
    msg.u.hello.backend = backend;
    cudaipc_device_get_uuid (self->dev, msg.u.hello.uuid);
    msg.u.hello.caps = CUDAIPC_CAPS_KNOWN & SUPPORTED_CAPS;
    msg.u.hello.pid = getpid ();
    msg.u.hello.name = self->name;
    client_send_locked (self, c, &msg);
  }
  return TRUE;
}

/* Removes the dead clients, queueing what to post about them. */
static void
reap_clients_locked (GstCuIpcSink * self, GPtrArray * notices)
{
  GList *l = self->clients;

  while (l) {
    GList *next = l->next;
    Client *c = l->data;

    if (c->dead) {
      if (c->warning)
        queue_warning (notices, g_steal_pointer (&c->warning),
            g_strdup_printf ("client %u: %s", c->id, c->reason));
      if (c->ready)
        queue_message (self, notices, "cudaipcsink-client-left", c, c->reason);
      self->clients = g_list_delete_link (self->clients, l);
      client_free (c);
    }
    l = next;
  }
}

static gpointer
io_thread_func (gpointer data)
{
  GstCuIpcSink *self = data;
  GArray *pfds = g_array_new (FALSE, FALSE, sizeof (struct pollfd));
  GPtrArray *pclients = g_ptr_array_new ();
  GPtrArray *notices = g_ptr_array_new_with_free_func (notice_free);
  gint64 accept_paused_until = 0;

  GST_DEBUG_OBJECT (self, "I/O thread running");

  for (;;) {
    struct pollfd pfd, *polled;
    int ret, timeout;
    gint64 now;

    g_mutex_lock (&self->lock);
    reap_clients_locked (self, notices);
    if (self->quit) {
      g_mutex_unlock (&self->lock);
      break;
    }

    g_array_set_size (pfds, 0);
    g_ptr_array_set_size (pclients, 0);
    pfd.fd = self->wake_fd;
    pfd.events = POLLIN;
    pfd.revents = 0;
    g_array_append_val (pfds, pfd);
    timeout = -1;
    pfd.fd = self->listen_fd;
    if (accept_paused_until > 0) {
      gint64 left = accept_paused_until - g_get_monotonic_time ();

      if (left > 0) {
        pfd.fd = -1;            /* poll() skips it */
        timeout = (int) ((left + 999) / 1000);
      } else {
        accept_paused_until = 0;
      }
    }
    g_array_append_val (pfds, pfd);
    /* the clients in the set stay allocated until this thread frees them */
    now = g_get_monotonic_time ();
    for (GList * l = self->clients; l; l = l->next) {
      Client *c = l->data;

      if (!c->ready && !c->dead) {
        gint64 left = c->hello_deadline - now;

        if (left <= 0) {
          /* dead now; freed on the next turn, which the wake-up starts */
          client_drop_locked (self, c, CUDAIPC_BYE_PROTOCOL,
              "no HELLO in time", g_strdup ("no HELLO in time"),
              g_strdup_printf ("Consumer (pid %d) did not complete its "
                  "handshake in %d s; disconnected it", c->pid,
                  (gint) (HANDSHAKE_TIMEOUT / G_TIME_SPAN_SECOND)));
          continue;
        }
        if (timeout < 0 || (left + 999) / 1000 < timeout)
          timeout = (int) ((left + 999) / 1000);
      }
      pfd.fd = cudaipc_conn_get_fd (c->conn);
      g_array_append_val (pfds, pfd);
      g_ptr_array_add (pclients, c);
    }
    g_mutex_unlock (&self->lock);

    post_notices (self, notices);

    do {
      ret = poll ((struct pollfd *) pfds->data, pfds->len, timeout);
    } while (ret < 0 && errno == EINTR);
    if (ret < 0) {
      GST_ERROR_OBJECT (self, "poll failed: %s", g_strerror (errno));
      g_usleep (10000);
      continue;
    }

    polled = (struct pollfd *) pfds->data;
    if (polled[0].revents & POLLIN) {
      guint64 count;

      while (read (self->wake_fd, &count, sizeof (count)) < 0 &&
          errno == EINTR);
    }

    g_mutex_lock (&self->lock);
    if (polled[1].revents && !accept_clients_locked (self))
      accept_paused_until = g_get_monotonic_time () + ACCEPT_PAUSE;
    for (guint i = 0; i < pclients->len; i++) {
      Client *c = g_ptr_array_index (pclients, i);

      if (!c->dead && polled[i + 2].revents)
        client_read_locked (self, c, notices);
    }
    g_mutex_unlock (&self->lock);
  }

  post_notices (self, notices);
  g_ptr_array_unref (notices);
  g_ptr_array_unref (pclients);
  g_array_unref (pfds);
  GST_DEBUG_OBJECT (self, "I/O thread done");
  return NULL;
}

/* GObject */

static void
gst_cu_ipc_sink_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstCuIpcSink *self = GST_CU_IPC_SINK (object);

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_SOCKET_PATH:
      g_free (self->socket_path);
      self->socket_path = g_value_dup_string (value);
      break;
    case PROP_SOCKET_MODE:
      self->socket_mode = g_value_get_uint (value);
      break;
    case PROP_BACKEND:
      self->backend = g_value_get_enum (value);
      break;
    case PROP_DEVICE_ID:
      self->device_id = g_value_get_int (value);
      break;
    case PROP_RING_SIZE:
      self->ring_size = g_value_get_uint (value);
      break;
    case PROP_ON_FULL:
      self->on_full = g_value_get_enum (value);
      break;
    case PROP_FULL_TIMEOUT:
      self->full_timeout = g_value_get_uint (value);
      break;
    case PROP_WAIT_FOR_CONNECTION:
      self->wait_for_connection = g_value_get_boolean (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);

  /* a render() waiting for a connection re-reads the setting */
  if (prop_id == PROP_WAIT_FOR_CONNECTION || prop_id == PROP_ON_FULL ||
      prop_id == PROP_FULL_TIMEOUT) {
    g_mutex_lock (&self->lock);
    g_cond_broadcast (&self->cond);
    g_mutex_unlock (&self->lock);
  }
}

static GstStructure *
make_stats_locked (GstCuIpcSink * self)
{
  GValue array = G_VALUE_INIT;
  GstStructure *s;
  guint n_ready = 0;

  g_value_init (&array, GST_TYPE_ARRAY);
  for (GList * l = self->clients; l; l = l->next) {
    Client *c = l->data;
    GValue v = G_VALUE_INIT;
    GstStructure *cs;

    if (!c->ready || c->dead)
      continue;
    n_ready++;
    cs = gst_structure_new ("cudaipcsink-client",
        "name", G_TYPE_STRING, c->name,
        "pid", G_TYPE_INT, c->pid,
        "frames-sent", G_TYPE_UINT64, c->sent,
        "frames-released", G_TYPE_UINT64, c->released,
        "held", G_TYPE_UINT,
        self->ring ? cudaipc_ring_lease_count (self->ring, &c->lease) : 0,
        NULL);
    g_value_init (&v, GST_TYPE_STRUCTURE);
    g_value_take_boxed (&v, cs);
    gst_value_array_append_and_take_value (&array, &v);
  }

  s = gst_structure_new ("application/x-cudaipcsink-stats",
      "frames-published", G_TYPE_UINT64, self->frames_published,
      "frames-dropped", G_TYPE_UINT64, self->frames_dropped,
      "clients", G_TYPE_UINT, n_ready,
      "generation", G_TYPE_UINT, (guint) self->generation, NULL);
  gst_structure_take_value (s, "client-stats", &array);
  return s;
}

static guint
count_ready_locked (GstCuIpcSink * self)
{
  guint n = 0;

  for (GList * l = self->clients; l; l = l->next) {
    Client *c = l->data;

    if (c->ready && !c->dead)
      n++;
  }
  return n;
}

static void
gst_cu_ipc_sink_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec)
{
  GstCuIpcSink *self = GST_CU_IPC_SINK (object);

  switch (prop_id) {
    case PROP_NUM_CLIENTS:
      g_mutex_lock (&self->lock);
      g_value_set_uint (value, count_ready_locked (self));
      g_mutex_unlock (&self->lock);
      return;
    case PROP_STATS:
      g_mutex_lock (&self->lock);
      g_value_take_boxed (value, make_stats_locked (self));
      g_mutex_unlock (&self->lock);
      return;
    default:
      break;
  }

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_SOCKET_PATH:
      g_value_set_string (value, self->socket_path);
      break;
    case PROP_SOCKET_MODE:
      g_value_set_uint (value, self->socket_mode);
      break;
    case PROP_BACKEND:
      g_value_set_enum (value, self->backend);
      break;
    case PROP_DEVICE_ID:
      g_value_set_int (value, self->device_id);
      break;
    case PROP_RING_SIZE:
      g_value_set_uint (value, self->ring_size);
      break;
    case PROP_ON_FULL:
      g_value_set_enum (value, self->on_full);
      break;
    case PROP_FULL_TIMEOUT:
      g_value_set_uint (value, self->full_timeout);
      break;
    case PROP_WAIT_FOR_CONNECTION:
      g_value_set_boolean (value, self->wait_for_connection);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_cu_ipc_sink_finalize (GObject * object)
{
  GstCuIpcSink *self = GST_CU_IPC_SINK (object);

  g_free (self->socket_path);
  g_free (self->listen_path);
  g_free (self->name);
  g_free (self->caps_str);
  g_free (self->segment_str);
  g_ptr_array_unref (self->holders);
  g_mutex_clear (&self->lock);
  g_cond_clear (&self->cond);

  G_OBJECT_CLASS (parent_class)->finalize (object);
}

/* GstBaseSink */

static gboolean
gst_cu_ipc_sink_start (GstBaseSink * bsink)
{
  GstCuIpcSink *self = GST_CU_IPC_SINK (bsink);
  g_autoptr (GError) error = NULL;
  g_autofree gchar *path = NULL;
  CudaIpcBackend backend;
  gint device_id;
  guint mode;
  gint ret;

  GST_OBJECT_LOCK (self);
  path = g_strdup (self->socket_path);
  mode = self->socket_mode;
  backend = self->backend;
  device_id = self->device_id;
  g_free (self->name);
  /* HELLO names are bounded; element names rarely come near */
  self->name = g_strndup (GST_OBJECT_NAME (self), CUDAIPC_MAX_NAME - 1);
  GST_OBJECT_UNLOCK (self);

  if (path == NULL || path[0] == '\0') {
    GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS,
        ("No socket-path set"), ("cudaipcsink needs socket-path to listen"));
    return FALSE;
  }

  self->dev = cudaipc_device_new (backend, device_id, &error);
  if (self->dev == NULL) {
    if (g_error_matches (error, CUDAIPC_ERROR, CUDAIPC_ERROR_NO_DRIVER) ||
        g_error_matches (error, CUDAIPC_ERROR, CUDAIPC_ERROR_NO_DEVICE)) {
      GST_ELEMENT_ERROR (self, RESOURCE, NOT_FOUND, ("%s", error->message),
          ("backend %s, device-id %d", cudaipc_backend_name (backend),
              device_id));
    } else {
      GST_ELEMENT_ERROR (self, RESOURCE, OPEN_READ_WRITE,
          ("%s", error->message), ("backend %s, device-id %d",
              cudaipc_backend_name (backend), device_id));
    }
    return FALSE;
  }
  GST_INFO_OBJECT (self, "opened %s backend on %s",
      cudaipc_backend_name (backend), cudaipc_device_get_name (self->dev));

  ret = cudaipc_socket_listen (path, mode, &self->listen_fd);
  if (ret < 0) {
    if (ret == -EADDRINUSE) {
      GST_ELEMENT_ERROR (self, RESOURCE, BUSY,
          ("another producer is live on %s", path),
          ("cudaipc_socket_listen: %s", g_strerror (-ret)));
    } else if (ret == -EEXIST) {
      GST_ELEMENT_ERROR (self, RESOURCE, OPEN_READ_WRITE,
          ("Cannot listen on %s: it exists and is not a socket", path),
          ("cudaipc_socket_listen: %s", g_strerror (-ret)));
    } else {
      GST_ELEMENT_ERROR (self, RESOURCE, OPEN_READ_WRITE,
          ("Cannot listen on %s: %s", path, g_strerror (-ret)),
          ("cudaipc_socket_listen: %s", g_strerror (-ret)));
    }
    self->listen_fd = -1;
    goto fail;
  }
  /* a peer that gives up between poll() and accept() must not block us */
  if (fcntl (self->listen_fd, F_SETFL,
          fcntl (self->listen_fd, F_GETFL) | O_NONBLOCK) < 0) {
    GST_ELEMENT_ERROR (self, RESOURCE, OPEN_READ_WRITE,
        ("Cannot listen on %s: %s", path, g_strerror (errno)),
        ("fcntl O_NONBLOCK"));
    goto fail;
  }
  self->listen_path = g_steal_pointer (&path);

  self->wake_fd = eventfd (0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (self->wake_fd < 0) {
    GST_ELEMENT_ERROR (self, RESOURCE, FAILED,
        ("Cannot create an eventfd: %s", g_strerror (errno)),
        ("eventfd (EFD_CLOEXEC | EFD_NONBLOCK) failed"));
    goto fail;
  }

  g_mutex_lock (&self->lock);
  self->quit = FALSE;
  self->unlocked = FALSE;
  self->seq = 0;
  self->frames_published = 0;
  self->frames_dropped = 0;
  g_mutex_unlock (&self->lock);

  self->thread = g_thread_try_new ("cudaipcsink-io", io_thread_func, self,
      &error);
  if (self->thread == NULL) {
    GST_ELEMENT_ERROR (self, RESOURCE, FAILED,
        ("Cannot start the I/O thread: %s", error->message),
        ("g_thread_try_new failed"));
    goto fail;
  }

  GST_INFO_OBJECT (self, "listening on %s", self->listen_path);
  return TRUE;

fail:
  cudaipc_close_fd (&self->wake_fd);
  if (self->listen_fd >= 0) {
    cudaipc_close_fd (&self->listen_fd);
    cudaipc_socket_unlink (path ? path : self->listen_path);
  }
  g_clear_pointer (&self->listen_path, g_free);
  g_clear_pointer (&self->dev, cudaipc_device_unref);
  return FALSE;
}

static gboolean
gst_cu_ipc_sink_stop (GstBaseSink * bsink)
{
  GstCuIpcSink *self = GST_CU_IPC_SINK (bsink);
  GPtrArray *notices = g_ptr_array_new_with_free_func (notice_free);

  if (self->thread) {
    g_mutex_lock (&self->lock);
    self->quit = TRUE;
    g_mutex_unlock (&self->lock);
    wake_io_thread (self);
    g_thread_join (self->thread);
    self->thread = NULL;
  }

  g_mutex_lock (&self->lock);
  for (GList * l = self->clients; l; l = l->next) {
    Client *c = l->data;

    client_drop_locked (self, c, CUDAIPC_BYE_NORMAL, "the producer stopped",
        g_strdup ("the producer stopped"), NULL);
  }
  reap_clients_locked (self, notices);
  g_clear_pointer (&self->ring, cudaipc_ring_free);
  g_clear_pointer (&self->caps_str, g_free);
  g_clear_pointer (&self->segment_str, g_free);
  self->eos = FALSE;
  self->have_info = FALSE;
  g_mutex_unlock (&self->lock);

  post_notices (self, notices);
  g_ptr_array_unref (notices);

  cudaipc_close_fd (&self->wake_fd);
  if (self->listen_fd >= 0) {
    cudaipc_close_fd (&self->listen_fd);
    cudaipc_socket_unlink (self->listen_path);
  }
  g_clear_pointer (&self->listen_path, g_free);
  g_clear_pointer (&self->dev, cudaipc_device_unref);
  return TRUE;
}

static gboolean
gst_cu_ipc_sink_set_caps (GstBaseSink * bsink, GstCaps * caps)
{
  GstCuIpcSink *self = GST_CU_IPC_SINK (bsink);
  GstVideoInfo info;
  gchar *str;

  if (!gst_video_info_from_caps (&info, caps)) {
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION,
        ("Cannot share these caps: they are not a complete video format"),
        ("caps %" GST_PTR_FORMAT, caps));
    return FALSE;
  }

  str = gst_caps_to_string (caps);
  if (strlen (str) >= CUDAIPC_MAX_STRING) {
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION,
        ("Caps too long to share (%" G_GSIZE_FORMAT " bytes)", strlen (str)),
        ("limit %d bytes: %s", CUDAIPC_MAX_STRING - 1, str));
    g_free (str);
    return FALSE;
  }

  GST_DEBUG_OBJECT (self, "caps %s", str);

  g_mutex_lock (&self->lock);
  g_free (self->caps_str);
  self->caps_str = str;
  self->caps_id++;
  self->info = info;
  self->have_info = TRUE;
  /* clients without a ring get these caps with the ring */
  if (self->ring) {
    for (GList * l = self->clients; l; l = l->next) {
      Client *c = l->data;

      if (c->ready && !c->dead)
        client_send_caps_locked (self, c);
    }
  }
  g_mutex_unlock (&self->lock);

  return TRUE;
}

static gboolean
gst_cu_ipc_sink_propose_allocation (GstBaseSink * bsink, GstQuery * query)
{
  /* we copy each memory as it is and pass the plane layout on */
  gst_query_add_allocation_meta (query, GST_VIDEO_META_API_TYPE, NULL);
  return TRUE;
}

/* Builds a new ring when there is none or @size does not fit. */
static gboolean
ensure_ring_locked (GstCuIpcSink * self, guint64 size, guint n_slots,
    GError ** error)
{
  CudaIpcRing *ring;
  guint64 want;

  if (self->ring && cudaipc_ring_get_slot_size (self->ring) >= size)
    return TRUE;

  want = MAX (size, self->have_info ? self->info.size : 0);
  want = MAX (want, 1);
  ring = cudaipc_ring_new (self->dev, n_slots, want, 0,
      self->generation + 1, error);
  if (ring == NULL)
    return FALSE;

  self->generation++;
  GST_INFO_OBJECT (self, "new ring, generation %u: %u slots of %"
      G_GUINT64_FORMAT " bytes for frames of %" G_GUINT64_FORMAT " bytes",
      self->generation, n_slots, cudaipc_ring_get_slot_size (ring), size);

  /* consumers keep their own imports of the old one */
  cudaipc_ring_free (self->ring);
  self->ring = ring;

  for (GList * l = self->clients; l; l = l->next) {
    Client *c = l->data;

    if (c->ready && !c->dead)
      client_send_ring_locked (self, c);
  }
  return TRUE;
}

/* Copies every memory of @buf, in order, contiguously to @dst. */
static gboolean
copy_buffer (GstCuIpcSink * self, GstBuffer * buf, guintptr dst,
    guint64 * copied, GError ** error)
{
  gboolean cuda = cudaipc_device_get_backend (self->dev) ==
      CUDAIPC_BACKEND_CUDA;
  const CudaIpcCudaFuncs *cu = cuda ? cudaipc_cuda () : NULL;
  guint n = gst_buffer_n_memory (buf);
  guint64 offset = 0;
  gboolean ok = TRUE;

  if (cuda && !cudaipc_device_push (self->dev, error))
    return FALSE;

  for (guint i = 0; i < n && ok; i++) {
    GstMemory *mem = gst_buffer_peek_memory (buf, i);
    GstMapInfo map;
    CUresult res = CUDA_SUCCESS;

    if (cuda && gst_memory_is_type (mem, CUDA_MEMORY_TYPE_NAME) &&
        gst_memory_map (mem, &map, GST_MAP_READ | MAP_CUDA)) {
      res = cu->MemcpyDtoD ((CUdeviceptr) (dst + offset),
          (CUdeviceptr) (guintptr) map.data, map.size);
    } else if (gst_memory_map (mem, &map, GST_MAP_READ)) {
      if (cuda)
        res = cu->MemcpyHtoD ((CUdeviceptr) (dst + offset), map.data, map.size);
      else
        memcpy ((guint8 *) dst + offset, map.data, map.size);
    } else {
      g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_IO,
          "cannot map memory %u of the buffer for reading", i);
      ok = FALSE;
      break;
    }

    if (res != CUDA_SUCCESS) {
      gchar *text = cudaipc_cuda_error (res);

      g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_CUDA,
          "copying %" G_GSIZE_FORMAT " bytes into the slot failed: %s",
          map.size, text);
      g_free (text);
      ok = FALSE;
    }
    offset += map.size;
    gst_memory_unmap (mem, &map);
  }

  if (cuda)
    cudaipc_device_pop (self->dev);
  if (ok)
    *copied = offset;
  return ok;
}

/* The PTS as a CLOCK_MONOTONIC time (docs/design.md, Timestamps). */
static guint64
frame_clock_time (GstCuIpcSink * self, GstBuffer * buf)
{
  GstBaseSink *bsink = GST_BASE_SINK (self);
  GstClockTime pts = GST_BUFFER_PTS (buf);
  GstClockTime rt = GST_CLOCK_TIME_NONE, base, now;
  GstClock *clock;
  gint64 mono, result;

  if (!GST_CLOCK_TIME_IS_VALID (pts))
    return GST_CLOCK_TIME_NONE;

  GST_OBJECT_LOCK (self);
  if (bsink->segment.format == GST_FORMAT_TIME)
    rt = gst_segment_to_running_time (&bsink->segment, GST_FORMAT_TIME, pts);
  clock = GST_ELEMENT_CLOCK (self) ? gst_object_ref (GST_ELEMENT_CLOCK (self))
      : NULL;
  base = GST_ELEMENT_CAST (self)->base_time;
  GST_OBJECT_UNLOCK (self);

  if (clock == NULL)
    return GST_CLOCK_TIME_NONE;
  if (!GST_CLOCK_TIME_IS_VALID (rt)) {
    gst_object_unref (clock);
    return GST_CLOCK_TIME_NONE;
  }

  now = gst_clock_get_time (clock);
  mono = g_get_monotonic_time () * 1000;
  gst_object_unref (clock);

  result = (gint64) (rt + base) + (mono - (gint64) now);
  return result >= 0 ? (guint64) result : GST_CLOCK_TIME_NONE;
}

static void
fill_planes (GstCuIpcSink * self, GstBuffer * buf, CudaIpcFrameMsg * f)
{
  GstVideoMeta *meta = gst_buffer_get_video_meta (buf);

  f->n_planes = 0;
  if (meta) {
    f->n_planes = MIN (meta->n_planes, CUDAIPC_MAX_PLANES);
    for (guint i = 0; i < f->n_planes; i++) {
      f->planes[i].offset = meta->offset[i];
      f->planes[i].stride = (guint32) meta->stride[i];
    }
  } else if (self->have_info) {
    f->n_planes = MIN (GST_VIDEO_INFO_N_PLANES (&self->info),
        CUDAIPC_MAX_PLANES);
    for (guint i = 0; i < f->n_planes; i++) {
      f->planes[i].offset = GST_VIDEO_INFO_PLANE_OFFSET (&self->info, i);
      f->planes[i].stride = GST_VIDEO_INFO_PLANE_STRIDE (&self->info, i);
    }
  }
}

/* Waits on the sink lock's cond until woken or @deadline (0: none).
 * After unlock() it waits for preroll the way GstBaseSink wants, with the
 * sink lock released; returns GST_FLOW_OK to go on checking, or the flow
 * to return (FLUSHING). The sink lock is held on return either way, except
 * for a flow other than OK, where it is released. */
static GstFlowReturn
wait_locked (GstCuIpcSink * self, gint64 deadline, gboolean * timed_out,
    gboolean * prerolled)
{
  *timed_out = FALSE;
  *prerolled = FALSE;

  if (self->unlocked) {
    GstFlowReturn ret;

    *prerolled = TRUE;
    g_mutex_unlock (&self->lock);
    ret = gst_base_sink_wait_preroll (GST_BASE_SINK (self));
    if (ret != GST_FLOW_OK)
      return ret;
    g_mutex_lock (&self->lock);
    return GST_FLOW_OK;
  }

  if (deadline == 0)
    g_cond_wait (&self->cond, &self->lock);
  else if (!g_cond_wait_until (&self->cond, &self->lock, deadline))
    *timed_out = TRUE;
  return GST_FLOW_OK;
}

static GstFlowReturn
gst_cu_ipc_sink_render (GstBaseSink * bsink, GstBuffer * buf)
{
  GstCuIpcSink *self = GST_CU_IPC_SINK (bsink);
  g_autoptr (GError) error = NULL;
  GstCuIpcSinkOnFull on_full;
  guint full_timeout, ring_size;
  gboolean wait_conn, timed_out, prerolled;
  GstFlowReturn ret;
  CudaIpcMsg msg;
  CudaIpcFrameMsg *f = &msg.u.frame;
  guint64 size = gst_buffer_get_size (buf), copied = 0;
  gint64 deadline;
  gint slot;

  GST_OBJECT_LOCK (self);
  ring_size = self->ring_size;
  GST_OBJECT_UNLOCK (self);

  g_mutex_lock (&self->lock);

  for (;;) {
    GST_OBJECT_LOCK (self);
    wait_conn = self->wait_for_connection;
    GST_OBJECT_UNLOCK (self);
    if (!wait_conn || count_ready_locked (self) > 0)
      break;
    GST_LOG_OBJECT (self, "waiting for a consumer");
    ret = wait_locked (self, 0, &timed_out, &prerolled);
    if (ret != GST_FLOW_OK)
      return ret;
  }

  if (!ensure_ring_locked (self, size, ring_size, &error)) {
    g_mutex_unlock (&self->lock);
    GST_ELEMENT_ERROR (self, RESOURCE, NO_SPACE_LEFT,
        ("Cannot allocate a ring of %u slots for frames of %" G_GUINT64_FORMAT
            " bytes: %s", ring_size, size, error->message),
        ("backend %s, generation %u",
            cudaipc_backend_name (cudaipc_device_get_backend (self->dev)),
            self->generation + 1));
    return GST_FLOW_ERROR;
  }

  /* -1: not waiting yet; 0: waiting without a time limit */
  deadline = -1;
  timed_out = FALSE;
  while ((slot = cudaipc_ring_acquire (self->ring)) < 0) {
    GST_OBJECT_LOCK (self);
    on_full = self->on_full;
    full_timeout = self->full_timeout;
    GST_OBJECT_UNLOCK (self);

    if (on_full == GST_CU_IPC_SINK_ON_FULL_DROP || timed_out) {
      self->frames_dropped++;
      g_mutex_unlock (&self->lock);
      GST_DEBUG_OBJECT (self, "every slot is held: dropped buffer %"
          GST_PTR_FORMAT, buf);
      return GST_FLOW_OK;
    }
    if (deadline < 0)
      deadline = full_timeout == 0 ? 0 :
          g_get_monotonic_time () +
          G_TIME_SPAN_MILLISECOND * (gint64) full_timeout;

    GST_LOG_OBJECT (self, "every slot is held, waiting");
    ret = wait_locked (self, deadline, &timed_out, &prerolled);
    if (ret != GST_FLOW_OK)
      return ret;
    /* paused meanwhile: the time limit starts again */
    if (prerolled)
      deadline = -1;
  }
  g_mutex_unlock (&self->lock);

  /* the slot is WRITING: nobody else touches it, and only this thread
   * replaces the ring */
  if (!copy_buffer (self, buf,
          cudaipc_block_get_ptr (cudaipc_ring_get_block (self->ring, slot)),
          &copied, &error)) {
    g_mutex_lock (&self->lock);
    cudaipc_ring_abort (self->ring, slot);
    g_mutex_unlock (&self->lock);
    GST_ELEMENT_ERROR (self, RESOURCE, WRITE,
        ("Cannot copy the frame into the shared ring: %s", error->message),
        ("slot %d, %" G_GSIZE_FORMAT " bytes in %u memories", slot,
            gst_buffer_get_size (buf), gst_buffer_n_memory (buf)));
    return GST_FLOW_ERROR;
  }

  cudaipc_msg_init (&msg, CUDAIPC_MSG_FRAME);
  f->slot = slot;
  f->flags = GST_BUFFER_FLAGS (buf) & PUBLIC_BUFFER_FLAGS;
  f->pts = GST_BUFFER_PTS (buf);
  f->dts = GST_BUFFER_DTS (buf);
  f->duration = GST_BUFFER_DURATION (buf);
  f->offset = GST_BUFFER_OFFSET (buf);
  f->offset_end = GST_BUFFER_OFFSET_END (buf);
  f->size = copied;
  f->clock_time = frame_clock_time (self, buf);

  g_mutex_lock (&self->lock);
  f->generation = self->generation;
  f->seq = ++self->seq;
  f->caps_id = self->caps_id;
  fill_planes (self, buf, f);

  g_ptr_array_set_size (self->holders, 0);
  for (GList * l = self->clients; l; l = l->next) {
    Client *c = l->data;

    if (c->ready && !c->dead)
      g_ptr_array_add (self->holders, &c->lease);
  }
  cudaipc_ring_publish (self->ring, slot,
      (CudaIpcLease * const *) self->holders->pdata, self->holders->len);
  self->frames_published++;

  f->publish_time = g_get_monotonic_time () * 1000;
  for (GList * l = self->clients; l; l = l->next) {
    Client *c = l->data;

    if (c->ready && !c->dead && client_send_locked (self, c, &msg))
      c->sent++;
  }
  g_mutex_unlock (&self->lock);

  GST_LOG_OBJECT (self, "published frame %" G_GUINT64_FORMAT " in slot %d "
      "to %u client(s)", f->seq, slot, self->holders->len);
  return GST_FLOW_OK;
}

/* The event's payload as the text an EVENT message carries. */
static gchar *
serialize_event (GstEvent * event)
{
  switch (GST_EVENT_TYPE (event)) {
    case GST_EVENT_SEGMENT:{
      const GstSegment *seg;
      GstStructure *s;
      gchar *str;

      gst_event_parse_segment (event, &seg);
      s = gst_structure_new ("cudaipc-segment",
          "format", G_TYPE_INT, (gint) seg->format,
          "rate", G_TYPE_DOUBLE, seg->rate,
          "applied-rate", G_TYPE_DOUBLE, seg->applied_rate,
          "flags", G_TYPE_UINT, (guint) seg->flags,
          "base", G_TYPE_UINT64, seg->base,
          "offset", G_TYPE_UINT64, seg->offset,
          "start", G_TYPE_UINT64, seg->start,
          "stop", G_TYPE_UINT64, seg->stop,
          "time", G_TYPE_UINT64, seg->time,
          "position", G_TYPE_UINT64, seg->position,
          "duration", G_TYPE_UINT64, seg->duration, NULL);
      str = gst_structure_to_string (s);
      gst_structure_free (s);
      return str;
    }
    case GST_EVENT_TAG:{
      GstTagList *tags;

      gst_event_parse_tag (event, &tags);
      return gst_tag_list_to_string (tags);
    }
    default:{
      const GstStructure *s = gst_event_get_structure (event);

      return s ? gst_structure_to_string (s) : g_strdup ("");
    }
  }
}

static void
forward_event (GstCuIpcSink * self, GstEvent * event)
{
  g_autofree gchar *str = serialize_event (event);
  CudaIpcMsg msg;

  if (strlen (str) >= CUDAIPC_MAX_STRING) {
    GST_WARNING_OBJECT (self, "not forwarding %s event: %" G_GSIZE_FORMAT
        " bytes serialized, the limit is %d", GST_EVENT_TYPE_NAME (event),
        strlen (str), CUDAIPC_MAX_STRING - 1);
    return;
  }

  cudaipc_msg_init (&msg, CUDAIPC_MSG_EVENT);
  msg.u.event.event_type = GST_EVENT_TYPE (event);
  msg.u.event.running_time =
      gst_element_get_current_running_time (GST_ELEMENT (self));
  msg.u.event.structure = str;

  GST_DEBUG_OBJECT (self, "forwarding %s: %s", GST_EVENT_TYPE_NAME (event),
      str);

  g_mutex_lock (&self->lock);
  if (GST_EVENT_TYPE (event) == GST_EVENT_SEGMENT) {
    g_free (self->segment_str);
    self->segment_str = g_strdup (str);
  } else if (GST_EVENT_TYPE (event) == GST_EVENT_EOS) {
    self->eos = TRUE;
  }
  for (GList * l = self->clients; l; l = l->next) {
    Client *c = l->data;

    if (c->ready && !c->dead)
      client_send_locked (self, c, &msg);
  }
  g_mutex_unlock (&self->lock);
}

static gboolean
gst_cu_ipc_sink_event (GstBaseSink * bsink, GstEvent * event)
{
  GstCuIpcSink *self = GST_CU_IPC_SINK (bsink);

  switch (GST_EVENT_TYPE (event)) {
    case GST_EVENT_EOS:
    case GST_EVENT_SEGMENT:
    case GST_EVENT_TAG:
    case GST_EVENT_CUSTOM_DOWNSTREAM:
    case GST_EVENT_CUSTOM_DOWNSTREAM_STICKY:
      forward_event (self, event);
      break;
    case GST_EVENT_FLUSH_STOP:
      g_mutex_lock (&self->lock);
      self->eos = FALSE;
      g_mutex_unlock (&self->lock);
      break;
    default:
      break;
  }

  return GST_BASE_SINK_CLASS (parent_class)->event (bsink, event);
}

static gboolean
gst_cu_ipc_sink_unlock (GstBaseSink * bsink)
{
  GstCuIpcSink *self = GST_CU_IPC_SINK (bsink);

  g_mutex_lock (&self->lock);
  self->unlocked = TRUE;
  g_cond_broadcast (&self->cond);
  g_mutex_unlock (&self->lock);
  return TRUE;
}

static gboolean
gst_cu_ipc_sink_unlock_stop (GstBaseSink * bsink)
{
  GstCuIpcSink *self = GST_CU_IPC_SINK (bsink);

  g_mutex_lock (&self->lock);
  self->unlocked = FALSE;
  g_mutex_unlock (&self->lock);
  return TRUE;
}

static void
gst_cu_ipc_sink_class_init (GstCuIpcSinkClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstBaseSinkClass *basesink_class = GST_BASE_SINK_CLASS (klass);

  gobject_class->set_property = gst_cu_ipc_sink_set_property;
  gobject_class->get_property = gst_cu_ipc_sink_get_property;
  gobject_class->finalize = gst_cu_ipc_sink_finalize;

  /**
   * GstCuIpcSink:socket-path:
   *
   * Where to listen for consumers: a file system path, or "@name" for a
   * Linux abstract socket. Required. A socket file left by a producer that
   * died is replaced; a live producer on the same path is an error.
   */
  properties[PROP_SOCKET_PATH] = g_param_spec_string ("socket-path",
      "Socket path", "Unix socket to listen on; \"@name\" for an abstract "
      "socket (required)", DEFAULT_SOCKET_PATH,
      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY);

  /**
   * GstCuIpcSink:socket-mode:
   *
   * Permission bits of the socket file (default 0660: owner and group may
   * connect). Ignored for abstract sockets.
   */
  properties[PROP_SOCKET_MODE] = g_param_spec_uint ("socket-mode",
      "Socket mode", "Permission bits of the socket file (0660 = 432: owner "
      "and group may connect); ignored for abstract sockets", 0, 0777,
      DEFAULT_SOCKET_MODE,
      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY);

  /**
   * GstCuIpcSink:backend:
   *
   * Where the ring lives: "cuda" (CUDA virtual memory on the GPU given by
   * device-id) or "host" (shared host memory, no GPU needed). Consumers
   * must use the same backend.
   */
  properties[PROP_BACKEND] = g_param_spec_enum ("backend", "Backend",
      "Memory the ring lives in: GPU (cuda) or shared host memory (host)",
      GST_TYPE_CU_IPC_BACKEND, DEFAULT_BACKEND,
      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY);

  /**
   * GstCuIpcSink:device-id:
   *
   * CUDA device ordinal the ring is allocated on (cuda backend only).
   */
  properties[PROP_DEVICE_ID] = g_param_spec_int ("device-id", "Device ID",
      "CUDA device ordinal the ring is allocated on (cuda backend)", 0,
      G_MAXINT, DEFAULT_DEVICE_ID,
      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY);

  /**
   * GstCuIpcSink:ring-size:
   *
   * Number of slots in the ring: how many frames consumers may hold, all
   * together, before on-full applies.
   */
  properties[PROP_RING_SIZE] = g_param_spec_uint ("ring-size", "Ring size",
      "Number of frame slots shared with the consumers", MIN_RING_SIZE,
      MAX_RING_SIZE, DEFAULT_RING_SIZE,
      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY);

  /**
   * GstCuIpcSink:on-full:
   *
   * What to do with a frame when every slot is still held by a consumer:
   * "wait" until one is released (at most full-timeout, then the frame is
   * dropped), or "drop" the frame at once. Dropped frames are counted in
   * #GstCuIpcSink:stats.
   */
  properties[PROP_ON_FULL] = g_param_spec_enum ("on-full", "On full",
      "What to do when every slot is held by a consumer",
      GST_TYPE_CU_IPC_SINK_ON_FULL, DEFAULT_ON_FULL,
      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING);

  /**
   * GstCuIpcSink:full-timeout:
   *
   * With on-full=wait, how long in milliseconds to wait for a free slot
   * before the frame is dropped; 0 waits for as long as it takes.
   */
  properties[PROP_FULL_TIMEOUT] = g_param_spec_uint ("full-timeout",
      "Full timeout", "With on-full=wait, milliseconds to wait for a free "
      "slot before dropping the frame (0 = forever)", 0, G_MAXUINT,
      DEFAULT_FULL_TIMEOUT,
      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING);

  /**
   * GstCuIpcSink:wait-for-connection:
   *
   * Hold each frame until at least one consumer is connected and has
   * finished its handshake, instead of publishing it to nobody. Flushing
   * or stopping the pipeline ends the wait.
   */
  properties[PROP_WAIT_FOR_CONNECTION] =
      g_param_spec_boolean ("wait-for-connection", "Wait for connection",
      "Block rendering until at least one consumer is connected",
      DEFAULT_WAIT_FOR_CONNECTION,
      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING);

  /**
   * GstCuIpcSink:num-clients:
   *
   * Number of consumers connected that finished their handshake.
   */
  properties[PROP_NUM_CLIENTS] = g_param_spec_uint ("num-clients",
      "Number of clients", "Consumers connected and past their handshake",
      0, G_MAXUINT, 0, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  /**
   * GstCuIpcSink:stats:
   *
   * Counters, as an "application/x-cudaipcsink-stats" structure:
   * frames-published (guint64), frames-dropped (guint64), clients (guint),
   * generation (guint: the ring's), and client-stats, an array of
   * "cudaipcsink-client" structures with name (string), pid (int),
   * frames-sent (guint64), frames-released (guint64) and held (guint:
   * slots of the current ring it holds now).
   */
  properties[PROP_STATS] = g_param_spec_boxed ("stats", "Statistics",
      "Frames published and dropped, and per-consumer counters",
      GST_TYPE_STRUCTURE, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (gobject_class, N_PROPERTIES, properties);

  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_set_static_metadata (element_class,
      "CUDA IPC sink", "Sink/Video",
      "Shares video frames with cudaipcsrc in other processes through a "
      "ring of GPU (or shared host) buffers", "gst-cudaipc authors");

  basesink_class->start = GST_DEBUG_FUNCPTR (gst_cu_ipc_sink_start);
  basesink_class->stop = GST_DEBUG_FUNCPTR (gst_cu_ipc_sink_stop);
  basesink_class->set_caps = GST_DEBUG_FUNCPTR (gst_cu_ipc_sink_set_caps);
  basesink_class->propose_allocation =
      GST_DEBUG_FUNCPTR (gst_cu_ipc_sink_propose_allocation);
  basesink_class->render = GST_DEBUG_FUNCPTR (gst_cu_ipc_sink_render);
  basesink_class->event = GST_DEBUG_FUNCPTR (gst_cu_ipc_sink_event);
  basesink_class->unlock = GST_DEBUG_FUNCPTR (gst_cu_ipc_sink_unlock);
  basesink_class->unlock_stop = GST_DEBUG_FUNCPTR (gst_cu_ipc_sink_unlock_stop);

  gst_type_mark_as_plugin_api (GST_TYPE_CU_IPC_SINK_ON_FULL, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_CU_IPC_BACKEND, 0);

  GST_DEBUG_CATEGORY_INIT (gst_cu_ipc_sink_debug, "cudaipcsink", 0,
      "CUDA IPC sink");
}

static void
gst_cu_ipc_sink_init (GstCuIpcSink * self)
{
  self->socket_path = g_strdup (DEFAULT_SOCKET_PATH);
  self->socket_mode = DEFAULT_SOCKET_MODE;
  self->backend = DEFAULT_BACKEND;
  self->device_id = DEFAULT_DEVICE_ID;
  self->ring_size = DEFAULT_RING_SIZE;
  self->on_full = DEFAULT_ON_FULL;
  self->full_timeout = DEFAULT_FULL_TIMEOUT;
  self->wait_for_connection = DEFAULT_WAIT_FOR_CONNECTION;

  self->listen_fd = -1;
  self->wake_fd = -1;
  g_mutex_init (&self->lock);
  g_cond_init (&self->cond);
  self->holders = g_ptr_array_new ();
}
