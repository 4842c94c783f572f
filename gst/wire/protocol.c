/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Encoding and decoding of the wire protocol; protocol.h has the contract,
 * docs/protocol.md the byte layouts.
 *
 * Every received field goes through a GstByteReader getter, which checks
 * the remaining length first; a missing field is -EBADMSG. Bounds follow
 * one rule: a count or size above its documented CUDAIPC_MAX_* is
 * -EMSGSIZE, any other value out of range (zero where one is the minimum,
 * an index, an enum, unknown flag bits) is -EBADMSG.
 *
 * Building checks only what the encoding itself needs (array counts,
 * string lengths, the fd count in the header); the value ranges are the
 * receiver's to check, so tests can build messages a peer must refuse.
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <string.h>
#include <gst/base/gstbytereader.h>
#include <gst/base/gstbytewriter.h>

#include "wire/protocol.h"
#include "common/fdutil.h"

#define EVENT_HANDLE_SIZE \
  (sizeof (((CudaIpcSlotMsg *) NULL)->event_handle))

gboolean
cudaipc_msg_error_is_peers (gint err)
{
  return err == -EPROTO || err == -EMSGSIZE || err == -EBADMSG ||
      err == -EPROTONOSUPPORT;
}

const gchar *
cudaipc_bye_reason_name (guint32 reason)
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
    case CUDAIPC_BYE_LOCAL:
      return "local failure";
    default:
      return "unknown";
  }
}

const gchar *
cudaipc_msg_type_name (guint32 type)
{
  switch (type) {
    case CUDAIPC_MSG_HELLO:
      return "HELLO";
    case CUDAIPC_MSG_RING:
      return "RING";
    case CUDAIPC_MSG_SLOT:
      return "SLOT";
    case CUDAIPC_MSG_CAPS:
      return "CAPS";
    case CUDAIPC_MSG_FRAME:
      return "FRAME";
    case CUDAIPC_MSG_RELEASE:
      return "RELEASE";
    case CUDAIPC_MSG_EVENT:
      return "EVENT";
    case CUDAIPC_MSG_BYE:
      return "BYE";
    case CUDAIPC_MSG_CHANNEL:
      return "CHANNEL";
    default:
      return "unknown";
  }
}

void
cudaipc_msg_init (CudaIpcMsg * msg, CudaIpcMsgType type)
{
  g_return_if_fail (msg != NULL);

  memset (msg, 0, sizeof (*msg));
  msg->type = type;
  for (guint i = 0; i < G_N_ELEMENTS (msg->fds); i++)
    msg->fds[i] = -1;
}

void
cudaipc_msg_clear (CudaIpcMsg * msg)
{
  if (msg == NULL)
    return;

  switch (msg->type) {
    case CUDAIPC_MSG_HELLO:
      g_free ((gchar *) msg->u.hello.name);
      break;
    case CUDAIPC_MSG_CAPS:
      g_free ((gchar *) msg->u.caps.caps);
      break;
    case CUDAIPC_MSG_EVENT:
      g_free ((gchar *) msg->u.event.structure);
      break;
    case CUDAIPC_MSG_BYE:
      g_free ((gchar *) msg->u.bye.text);
      break;
    case CUDAIPC_MSG_FRAME:
      g_free ((guint8 *) msg->u.frame.meta);
      break;
    default:
      break;
  }
  /* only the first n_fds entries: a message someone zero-filled by hand
   * must not close fd 0 */
  cudaipc_close_fds (msg->fds, MIN (msg->n_fds, G_N_ELEMENTS (msg->fds)));
  cudaipc_msg_init (msg, msg->type);
}

/* Building */

static gint
put_string (GstByteWriter * w, const gchar * s, gsize max)
{
  gsize len;

  if (s == NULL)
    s = "";
  len = strlen (s) + 1;
  if (len > max)
    return -EMSGSIZE;
  if (!gst_byte_writer_put_uint32_le (w, len) ||
      !gst_byte_writer_put_data (w, (const guint8 *) s, len))
    return -EMSGSIZE;
  return 0;
}

static gint
build_hello (GstByteWriter * w, const CudaIpcHello * m)
{
  if (!gst_byte_writer_put_uint32_le (w, m->version) ||
      !gst_byte_writer_put_uint32_le (w, m->backend) ||
      !gst_byte_writer_put_data (w, m->uuid, CUDAIPC_UUID_LEN) ||
      !gst_byte_writer_put_uint32_le (w, m->caps) ||
      !gst_byte_writer_put_uint32_le (w, m->pid))
    return -EMSGSIZE;
  return put_string (w, m->name, CUDAIPC_MAX_NAME);
}

static gint
build_ring (GstByteWriter * w, const CudaIpcRingMsg * m)
{
  if (!gst_byte_writer_put_uint32_le (w, m->generation) ||
      !gst_byte_writer_put_uint32_le (w, m->n_slots) ||
      !gst_byte_writer_put_uint64_le (w, m->slot_size) ||
      !gst_byte_writer_put_uint32_le (w, m->flags) ||
      !gst_byte_writer_put_uint32_le (w, 0))
    return -EMSGSIZE;
  return 0;
}

static gint
build_slot (GstByteWriter * w, const CudaIpcSlotMsg * m)
{
  if (m->n_allocs > CUDAIPC_MAX_ALLOCS)
    return -EMSGSIZE;

  if (!gst_byte_writer_put_uint32_le (w, m->generation) ||
      !gst_byte_writer_put_uint32_le (w, m->index) ||
      !gst_byte_writer_put_uint64_le (w, m->size) ||
      !gst_byte_writer_put_uint32_le (w, m->n_allocs))
    return -EMSGSIZE;
  for (guint i = 0; i < m->n_allocs; i++) {
    if (!gst_byte_writer_put_uint64_le (w, m->alloc_sizes[i]))
      return -EMSGSIZE;
  }
  if (!gst_byte_writer_put_uint32_le (w, m->flags))
    return -EMSGSIZE;
  if ((m->flags & CUDAIPC_SLOT_HAS_EVENT) &&
      !gst_byte_writer_put_data (w, m->event_handle, EVENT_HANDLE_SIZE))
    return -EMSGSIZE;
  return 0;
}

static gint
build_caps (GstByteWriter * w, const CudaIpcCapsMsg * m)
{
  if (!gst_byte_writer_put_uint32_le (w, m->caps_id))
    return -EMSGSIZE;
  return put_string (w, m->caps, CUDAIPC_MAX_STRING);
}

static gint
build_frame (GstByteWriter * w, const CudaIpcFrameMsg * m)
{
  if (m->n_planes > CUDAIPC_MAX_PLANES)
    return -EMSGSIZE;

  if (!gst_byte_writer_put_uint32_le (w, m->generation) ||
      !gst_byte_writer_put_uint32_le (w, m->slot) ||
      !gst_byte_writer_put_uint64_le (w, m->seq) ||
      !gst_byte_writer_put_uint32_le (w, m->caps_id) ||
      !gst_byte_writer_put_uint32_le (w, m->flags) ||
      !gst_byte_writer_put_uint64_le (w, m->pts) ||
      !gst_byte_writer_put_uint64_le (w, m->dts) ||
      !gst_byte_writer_put_uint64_le (w, m->duration) ||
      !gst_byte_writer_put_uint64_le (w, m->offset) ||
      !gst_byte_writer_put_uint64_le (w, m->offset_end) ||
      !gst_byte_writer_put_uint64_le (w, m->size) ||
      !gst_byte_writer_put_uint64_le (w, m->publish_time) ||
      !gst_byte_writer_put_uint64_le (w, m->clock_time) ||
      !gst_byte_writer_put_uint32_le (w, m->n_planes))
    return -EMSGSIZE;
  for (guint i = 0; i < m->n_planes; i++) {
    if (!gst_byte_writer_put_uint64_le (w, m->planes[i].offset) ||
        !gst_byte_writer_put_uint32_le (w, m->planes[i].stride))
      return -EMSGSIZE;
  }
  if (m->meta_len > CUDAIPC_MAX_META_BYTES)
    return -EMSGSIZE;
  if (!gst_byte_writer_put_uint32_le (w, m->meta_len) ||
      (m->meta_len > 0 && !gst_byte_writer_put_data (w, m->meta,
              m->meta_len)))
    return -EMSGSIZE;
  return 0;
}

static gint
build_release (GstByteWriter * w, const CudaIpcReleaseMsg * m)
{
  if (!gst_byte_writer_put_uint32_le (w, m->generation) ||
      !gst_byte_writer_put_uint32_le (w, m->slot) ||
      !gst_byte_writer_put_uint64_le (w, m->seq))
    return -EMSGSIZE;
  return 0;
}

static gint
build_event (GstByteWriter * w, const CudaIpcEventMsg * m)
{
  if (!gst_byte_writer_put_uint32_le (w, m->event_type) ||
      !gst_byte_writer_put_uint64_le (w, m->running_time))
    return -EMSGSIZE;
  return put_string (w, m->structure, CUDAIPC_MAX_STRING);
}

static gint
build_bye (GstByteWriter * w, const CudaIpcByeMsg * m)
{
  if (!gst_byte_writer_put_uint32_le (w, m->reason))
    return -EMSGSIZE;
  return put_string (w, m->text, CUDAIPC_MAX_STRING);
}

static gint
build_channel (GstByteWriter * w, const CudaIpcChannelMsg * m)
{
  if (!gst_byte_writer_put_uint32_le (w, m->capacity) ||
      !gst_byte_writer_put_uint32_le (w, m->flags))
    return -EMSGSIZE;
  return 0;
}

gssize
cudaipc_msg_build (const CudaIpcMsg * msg, guint32 seq, guint8 * buf,
    gsize buf_size)
{
  GstByteWriter w;
  guint expected_fds;
  gsize payload;
  gint ret;

  g_return_val_if_fail (msg != NULL, -EINVAL);
  g_return_val_if_fail (buf != NULL || buf_size == 0, -EINVAL);

  if (msg->type < CUDAIPC_MSG_HELLO || msg->type > CUDAIPC_MSG_TYPE_LAST)
    return -EINVAL;
  if (msg->n_fds > CUDAIPC_MAX_MSG_FDS)
    return -EMSGSIZE;

  gst_byte_writer_init_with_data (&w, buf, MIN (buf_size, G_MAXUINT), FALSE);
  /* the payload length is patched in once known */
  if (!gst_byte_writer_put_uint16_le (&w, msg->type) ||
      !gst_byte_writer_put_uint16_le (&w, msg->n_fds) ||
      !gst_byte_writer_put_uint32_le (&w, 0) ||
      !gst_byte_writer_put_uint32_le (&w, seq) ||
      !gst_byte_writer_put_uint32_le (&w, 0))
    return -EMSGSIZE;

  switch (msg->type) {
    case CUDAIPC_MSG_HELLO:
      ret = build_hello (&w, &msg->u.hello);
      break;
    case CUDAIPC_MSG_RING:
      ret = build_ring (&w, &msg->u.ring);
      break;
    case CUDAIPC_MSG_SLOT:
      ret = build_slot (&w, &msg->u.slot);
      break;
    case CUDAIPC_MSG_CAPS:
      ret = build_caps (&w, &msg->u.caps);
      break;
    case CUDAIPC_MSG_FRAME:
      ret = build_frame (&w, &msg->u.frame);
      break;
    case CUDAIPC_MSG_RELEASE:
      ret = build_release (&w, &msg->u.release);
      break;
    case CUDAIPC_MSG_EVENT:
      ret = build_event (&w, &msg->u.event);
      break;
    case CUDAIPC_MSG_BYE:
      ret = build_bye (&w, &msg->u.bye);
      break;
    case CUDAIPC_MSG_CHANNEL:
      ret = build_channel (&w, &msg->u.channel);
      break;
    default:
      g_assert_not_reached ();
      return -EINVAL;
  }
  if (ret < 0)
    return ret;

  /* SLOT has one fd per allocation, a RING one per page it carries */
  if (msg->type == CUDAIPC_MSG_SLOT)
    expected_fds = msg->u.slot.n_allocs;
  else if (msg->type == CUDAIPC_MSG_RING)
    expected_fds = CUDAIPC_RING_N_FDS (msg->u.ring.flags);
  else if (msg->type == CUDAIPC_MSG_CHANNEL)
    expected_fds = CUDAIPC_CHANNEL_N_FDS;
  else
    expected_fds = 0;
  if (msg->n_fds != expected_fds)
    return -EINVAL;

  payload = gst_byte_writer_get_pos (&w) - CUDAIPC_HEADER_SIZE;
  if (payload > CUDAIPC_MAX_PAYLOAD)
    return -EMSGSIZE;
  GST_WRITE_UINT32_LE (buf + 4, (guint32) payload);

  return CUDAIPC_HEADER_SIZE + payload;
}

/* Parsing */

static gint
get_string (GstByteReader * r, gsize max, const gchar ** out)
{
  const guint8 *data;
  guint32 len;

  if (!gst_byte_reader_get_uint32_le (r, &len))
    return -EBADMSG;
  if (len == 0)
    return -EBADMSG;
  if (len > max)
    return -EMSGSIZE;
  if (!gst_byte_reader_get_data (r, len, &data))
    return -EBADMSG;
  if (data[len - 1] != '\0' || memchr (data, '\0', len - 1) != NULL)
    return -EBADMSG;

  *out = g_strndup ((const gchar *) data, len - 1);
  return 0;
}

/* A size a peer sent: at least 1, at most CUDAIPC_MAX_SLOT_SIZE. */
static gint
check_size (guint64 size)
{
  if (size == 0)
    return -EBADMSG;
  if (size > CUDAIPC_MAX_SLOT_SIZE)
    return -EMSGSIZE;
  return 0;
}

static gint
parse_hello (GstByteReader * r, guint n_fds, CudaIpcHello * m)
{
  const guint8 *uuid;

  if (!gst_byte_reader_get_uint32_le (r, &m->version))
    return -EBADMSG;
  /* nothing after the version is known to have this layout */
  if (m->version != CUDAIPC_PROTOCOL_VERSION)
    return -EPROTONOSUPPORT;

  if (!gst_byte_reader_get_uint32_le (r, &m->backend) ||
      !gst_byte_reader_get_data (r, CUDAIPC_UUID_LEN, &uuid) ||
      !gst_byte_reader_get_uint32_le (r, &m->caps) ||
      !gst_byte_reader_get_uint32_le (r, &m->pid))
    return -EBADMSG;
  if (m->backend != CUDAIPC_BACKEND_HOST && m->backend != CUDAIPC_BACKEND_CUDA)
    return -EBADMSG;
  memcpy (m->uuid, uuid, CUDAIPC_UUID_LEN);
  /* a newer peer may offer more; we only ever use what we know */
  m->caps &= CUDAIPC_CAPS_KNOWN;

  return get_string (r, CUDAIPC_MAX_NAME, &m->name);
}

static gint
parse_ring (GstByteReader * r, guint n_fds, CudaIpcRingMsg * m)
{
  guint32 reserved;

  if (!gst_byte_reader_get_uint32_le (r, &m->generation) ||
      !gst_byte_reader_get_uint32_le (r, &m->n_slots) ||
      !gst_byte_reader_get_uint64_le (r, &m->slot_size) ||
      !gst_byte_reader_get_uint32_le (r, &m->flags) ||
      !gst_byte_reader_get_uint32_le (r, &reserved))
    return -EBADMSG;
  if (m->n_slots == 0 || reserved != 0 ||
      (m->flags & ~CUDAIPC_RING_FLAGS_KNOWN) != 0)
    return -EBADMSG;
  if (n_fds != CUDAIPC_RING_N_FDS (m->flags))
    return -EPROTO;
  if (m->n_slots > CUDAIPC_MAX_SLOTS)
    return -EMSGSIZE;
  return check_size (m->slot_size);
}

static gint
parse_slot (GstByteReader * r, guint n_fds, CudaIpcSlotMsg * m)
{
  guint64 total = 0;
  gint ret;

  if (!gst_byte_reader_get_uint32_le (r, &m->generation) ||
      !gst_byte_reader_get_uint32_le (r, &m->index) ||
      !gst_byte_reader_get_uint64_le (r, &m->size) ||
      !gst_byte_reader_get_uint32_le (r, &m->n_allocs))
    return -EBADMSG;
  if (m->index >= CUDAIPC_MAX_SLOTS)
    return -EBADMSG;
  if ((ret = check_size (m->size)) < 0)
    return ret;
  if (m->n_allocs == 0)
    return -EBADMSG;
  if (m->n_allocs > CUDAIPC_MAX_ALLOCS)
    return -EMSGSIZE;
  if (m->n_allocs != n_fds)
    return -EPROTO;

  for (guint i = 0; i < m->n_allocs; i++) {
    if (!gst_byte_reader_get_uint64_le (r, &m->alloc_sizes[i]))
      return -EBADMSG;
    if ((ret = check_size (m->alloc_sizes[i])) < 0)
      return ret;
    /* each term <= 4 GiB and at most 16 of them: no overflow */
    total += m->alloc_sizes[i];
  }
  if (total > CUDAIPC_MAX_SLOT_SIZE)
    return -EMSGSIZE;
  if (m->size > total)
    return -EBADMSG;

  if (!gst_byte_reader_get_uint32_le (r, &m->flags))
    return -EBADMSG;
  if (m->flags & ~CUDAIPC_SLOT_HAS_EVENT)
    return -EBADMSG;
  if (m->flags & CUDAIPC_SLOT_HAS_EVENT) {
    const guint8 *handle;

    if (!gst_byte_reader_get_data (r, EVENT_HANDLE_SIZE, &handle))
      return -EBADMSG;
    memcpy (m->event_handle, handle, EVENT_HANDLE_SIZE);
  }
  return 0;
}

static gint
parse_caps (GstByteReader * r, guint n_fds, CudaIpcCapsMsg * m)
{
  if (!gst_byte_reader_get_uint32_le (r, &m->caps_id))
    return -EBADMSG;
  return get_string (r, CUDAIPC_MAX_STRING, &m->caps);
}

static gint
parse_frame (GstByteReader * r, guint n_fds, CudaIpcFrameMsg * m)
{
  if (!gst_byte_reader_get_uint32_le (r, &m->generation) ||
      !gst_byte_reader_get_uint32_le (r, &m->slot) ||
      !gst_byte_reader_get_uint64_le (r, &m->seq) ||
      !gst_byte_reader_get_uint32_le (r, &m->caps_id) ||
      !gst_byte_reader_get_uint32_le (r, &m->flags) ||
      !gst_byte_reader_get_uint64_le (r, &m->pts) ||
      !gst_byte_reader_get_uint64_le (r, &m->dts) ||
      !gst_byte_reader_get_uint64_le (r, &m->duration) ||
      !gst_byte_reader_get_uint64_le (r, &m->offset) ||
      !gst_byte_reader_get_uint64_le (r, &m->offset_end) ||
      !gst_byte_reader_get_uint64_le (r, &m->size) ||
      !gst_byte_reader_get_uint64_le (r, &m->publish_time) ||
      !gst_byte_reader_get_uint64_le (r, &m->clock_time) ||
      !gst_byte_reader_get_uint32_le (r, &m->n_planes))
    return -EBADMSG;
  if (m->slot >= CUDAIPC_MAX_SLOTS)
    return -EBADMSG;
  /* 0 is allowed: a frame may carry no bytes (a gap) */
  if (m->size > CUDAIPC_MAX_SLOT_SIZE)
    return -EMSGSIZE;
  if (m->n_planes > CUDAIPC_MAX_PLANES)
    return -EMSGSIZE;

  for (guint i = 0; i < m->n_planes; i++) {
    if (!gst_byte_reader_get_uint64_le (r, &m->planes[i].offset) ||
        !gst_byte_reader_get_uint32_le (r, &m->planes[i].stride))
      return -EBADMSG;
    /* the receiver checks planes against the slot; this bound only keeps
     * offset + stride * height far from overflow */
    if (m->planes[i].offset >= CUDAIPC_MAX_SLOT_SIZE)
      return -EBADMSG;
  }
  /* the metas' blob, whose entries metas.c checks */
  if (!gst_byte_reader_get_uint32_le (r, &m->meta_len))
    return -EBADMSG;
  if (m->meta_len > CUDAIPC_MAX_META_BYTES)
    return -EMSGSIZE;
  if (m->meta_len > 0) {
    const guint8 *data;

    if (!gst_byte_reader_get_data (r, m->meta_len, &data))
      return -EBADMSG;
    m->meta = g_memdup2 (data, m->meta_len);
  }
  return 0;
}

static gint
parse_release (GstByteReader * r, guint n_fds, CudaIpcReleaseMsg * m)
{
  if (!gst_byte_reader_get_uint32_le (r, &m->generation) ||
      !gst_byte_reader_get_uint32_le (r, &m->slot) ||
      !gst_byte_reader_get_uint64_le (r, &m->seq))
    return -EBADMSG;
  if (m->slot >= CUDAIPC_MAX_SLOTS)
    return -EBADMSG;
  return 0;
}

static gint
parse_event (GstByteReader * r, guint n_fds, CudaIpcEventMsg * m)
{
  if (!gst_byte_reader_get_uint32_le (r, &m->event_type) ||
      !gst_byte_reader_get_uint64_le (r, &m->running_time))
    return -EBADMSG;
  return get_string (r, CUDAIPC_MAX_STRING, &m->structure);
}

static gint
parse_bye (GstByteReader * r, guint n_fds, CudaIpcByeMsg * m)
{
  if (!gst_byte_reader_get_uint32_le (r, &m->reason))
    return -EBADMSG;
  if (m->reason > CUDAIPC_BYE_LAST)
    return -EBADMSG;
  return get_string (r, CUDAIPC_MAX_STRING, &m->text);
}

static gint
parse_channel (GstByteReader * r, guint n_fds, CudaIpcChannelMsg * m)
{
  if (!gst_byte_reader_get_uint32_le (r, &m->capacity) ||
      !gst_byte_reader_get_uint32_le (r, &m->flags))
    return -EBADMSG;
  if (n_fds != CUDAIPC_CHANNEL_N_FDS)
    return -EPROTO;
  if (m->flags != 0)
    return -EBADMSG;
  return 0;
}

static gint
parse_header (const guint8 * data, gsize len, guint n_fds,
    CudaIpcMsgType * type_out, guint32 * seq_out)
{
  GstByteReader r;
  guint16 type, hdr_fds;
  guint32 payload, seq, reserved;

  if (len < CUDAIPC_HEADER_SIZE)
    return -EBADMSG;

  gst_byte_reader_init (&r, data, CUDAIPC_HEADER_SIZE);
  if (!gst_byte_reader_get_uint16_le (&r, &type) ||
      !gst_byte_reader_get_uint16_le (&r, &hdr_fds) ||
      !gst_byte_reader_get_uint32_le (&r, &payload) ||
      !gst_byte_reader_get_uint32_le (&r, &seq) ||
      !gst_byte_reader_get_uint32_le (&r, &reserved))
    return -EBADMSG;

  if (reserved != 0)
    return -EPROTO;
  if (type < CUDAIPC_MSG_HELLO || type > CUDAIPC_MSG_TYPE_LAST)
    return -EPROTO;
  if (payload > CUDAIPC_MAX_PAYLOAD)
    return -EMSGSIZE;
  if (payload != len - CUDAIPC_HEADER_SIZE)
    return -EPROTO;
  if (hdr_fds != n_fds || n_fds > CUDAIPC_MAX_MSG_FDS)
    return -EPROTO;
  if (type != CUDAIPC_MSG_SLOT && type != CUDAIPC_MSG_RING &&
      type != CUDAIPC_MSG_CHANNEL && n_fds != 0)
    return -EPROTO;

  *type_out = type;
  *seq_out = seq;
  return 0;
}

gint
cudaipc_msg_parse (const guint8 * data, gsize len, int *fds, guint n_fds,
    CudaIpcMsg * msg)
{
  GstByteReader r;
  CudaIpcMsgType type = 0;
  guint32 seq = 0, version;
  gint ret;

  if (G_UNLIKELY (msg == NULL || (data == NULL && len > 0) ||
          (fds == NULL && n_fds > 0))) {
    if (fds != NULL)
      cudaipc_close_fds (fds, n_fds);
    g_return_val_if_reached (-EINVAL);
  }

  cudaipc_msg_init (msg, 0);

  ret = parse_header (data, len, n_fds, &type, &seq);
  if (ret < 0)
    goto fail;

  msg->type = type;
  msg->seq = seq;
  gst_byte_reader_init (&r, data + CUDAIPC_HEADER_SIZE,
      len - CUDAIPC_HEADER_SIZE);

  switch (type) {
    case CUDAIPC_MSG_HELLO:
      ret = parse_hello (&r, n_fds, &msg->u.hello);
      break;
    case CUDAIPC_MSG_RING:
      ret = parse_ring (&r, n_fds, &msg->u.ring);
      break;
    case CUDAIPC_MSG_SLOT:
      ret = parse_slot (&r, n_fds, &msg->u.slot);
      break;
    case CUDAIPC_MSG_CAPS:
      ret = parse_caps (&r, n_fds, &msg->u.caps);
      break;
    case CUDAIPC_MSG_FRAME:
      ret = parse_frame (&r, n_fds, &msg->u.frame);
      break;
    case CUDAIPC_MSG_RELEASE:
      ret = parse_release (&r, n_fds, &msg->u.release);
      break;
    case CUDAIPC_MSG_EVENT:
      ret = parse_event (&r, n_fds, &msg->u.event);
      break;
    case CUDAIPC_MSG_BYE:
      ret = parse_bye (&r, n_fds, &msg->u.bye);
      break;
    case CUDAIPC_MSG_CHANNEL:
      ret = parse_channel (&r, n_fds, &msg->u.channel);
      break;
    default:
      g_assert_not_reached ();
      ret = -EPROTO;
      break;
  }
  if (ret == 0 && gst_byte_reader_get_remaining (&r) != 0)
    ret = -EBADMSG;
  if (ret < 0)
    goto fail;

  for (guint i = 0; i < n_fds; i++)
    msg->fds[i] = cudaipc_steal_fd (&fds[i]);
  msg->n_fds = n_fds;
  return 0;

fail:
  if (fds != NULL)
    cudaipc_close_fds (fds, n_fds);
  /* strings parsed so far are freed; a HELLO keeps its version so the
   * caller can say which one the peer speaks */
  version = msg->u.hello.version;
  cudaipc_msg_clear (msg);
  if (ret == -EPROTONOSUPPORT)
    msg->u.hello.version = version;
  return ret;
}
