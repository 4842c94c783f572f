/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Framed AF_UNIX SOCK_SEQPACKET connections and the sockets under them;
 * connection.h has the contract.
 *
 * The two directions share nothing: send uses tx_small, tx_large and
 * tx_seq, receive uses rx_buf, rx_control and rx_seq, so one thread may
 * send while another receives.
 *
 * Memory: a connection that has sent nothing costs little (a producer may
 * hold many waiting for their handshake): the receive buffer is made at
 * the first receive, and messages are built in a small buffer of the
 * connection's until one does not fit (a FRAME with metadata, CAPS, an
 * EVENT, a long BYE); from then on in a buffer of the largest message's
 * size, made then and kept, as the receive buffer is: a FRAME with
 * metadata is built once, and no 64 KiB is taken from the heap and given
 * back for it, every frame.
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE             /* accept4, MSG_CMSG_CLOEXEC, struct ucred */
#endif

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stddef.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <gst/gst.h>

#include "wire/connection.h"
#include "common/error.h"
#include "common/fdutil.h"

#define LISTEN_BACKLOG 16
#define CONTROL_SIZE CMSG_SPACE (sizeof (int) * CUDAIPC_MAX_MSG_FDS)
/* Large enough for every message but CAPS, EVENT and a long BYE. */
#define TX_SMALL 1024
/* One byte more than the largest message, so an oversized datagram is
 * seen even where MSG_TRUNC is not reported. */
#define RX_SIZE (CUDAIPC_MAX_MESSAGE + 1)
/* How long a consumer waits for the message a channel's mark announced
 * on the socket: the producer sends it right after the mark. */
#define MARK_WAIT_MS 1000

struct _CudaIpcConn
{
  int fd;

  guint32 tx_seq;               /* sequence of the last message sent */
  guint8 tx_small[TX_SMALL];
  guint8 *tx_large;             /* CUDAIPC_MAX_MESSAGE bytes, from the first
                                 * message that tx_small does not hold */
  struct
  {
    /* aligned for struct cmsghdr */
    guint8 buf[CONTROL_SIZE] __attribute__((aligned (sizeof (size_t))));
  } tx_control;

  CudaIpcChannel *tx_channel;   /* producer: messages go through it */
  CudaIpcChannel *rx_channel;   /* consumer: messages come through it */
  gboolean rx_marked;           /* the next message is on the socket */
  guint spin_us;
  int wait_fd;                  /* epoll: the socket and the wake */

  guint32 rx_seq;               /* sequence of the last message received */
  guint8 *rx_buf;               /* RX_SIZE bytes, from the first receive */
  struct
  {
    /* aligned for struct cmsghdr */
    guint8 buf[CONTROL_SIZE] __attribute__((aligned (sizeof (size_t))));
  } rx_control;
};

/* Both ends see a peer that went away as -EPIPE, whichever way the kernel
 * says it. */
static gint
errno_to_ret (int err)
{
  if (err == ECONNRESET)
    return -EPIPE;
  return -err;
}

CudaIpcConn *
cudaipc_conn_new (int fd)
{
  CudaIpcConn *conn;

  g_return_val_if_fail (fd >= 0, NULL);

  conn = g_new0 (CudaIpcConn, 1);
  conn->fd = fd;
  conn->wait_fd = -1;
  return conn;
}

void
cudaipc_conn_free (CudaIpcConn * conn)
{
  if (conn == NULL)
    return;
  cudaipc_close_fd (&conn->fd);
  cudaipc_close_fd (&conn->wait_fd);
  cudaipc_channel_free (conn->tx_channel);
  cudaipc_channel_free (conn->rx_channel);
  g_free (conn->tx_large);
  g_free (conn->rx_buf);
  g_free (conn);
}

int
cudaipc_conn_get_fd (const CudaIpcConn * conn)
{
  g_return_val_if_fail (conn != NULL, -1);
  return conn->fd;
}

/* With an announce channel: the @len bytes of @buf (its sequence
 * written) as a record, 1; or, for a message with fds or too long for a
 * record, its mark, 0: the message then goes on the socket. Negative
 * errno where the channel takes neither. */
static gint
channel_send (CudaIpcConn * conn, const guint8 * buf, gsize len, guint n_fds)
{
  gint ret;

  if (n_fds == 0 && len <= CUDAIPC_CHANNEL_MAX_RECORD) {
    ret = cudaipc_channel_write (conn->tx_channel, buf, len);
    if (ret < 0)
      return ret;
    conn->tx_seq++;
    return 1;
  }
  ret = cudaipc_channel_write (conn->tx_channel, NULL, 0);
  return ret < 0 ? ret : 0;
}

gint
cudaipc_conn_send (CudaIpcConn * conn, const CudaIpcMsg * msg)
{
  struct msghdr mh = { 0 };
  guint8 *buf;
  struct iovec iov;
  gssize len, n;

  g_return_val_if_fail (conn != NULL, -EINVAL);
  g_return_val_if_fail (msg != NULL, -EINVAL);

  /* the large buffer, once there, takes every message: a producer's
   * FRAMEs with metadata are built once, not tried in the small one */
  buf = conn->tx_large ? conn->tx_large : conn->tx_small;
  len = cudaipc_msg_build (msg, conn->tx_seq + 1, buf,
      conn->tx_large ? CUDAIPC_MAX_MESSAGE : TX_SMALL);
  if (len == -EMSGSIZE && conn->tx_large == NULL) {
    buf = conn->tx_large = g_malloc (CUDAIPC_MAX_MESSAGE);
    len = cudaipc_msg_build (msg, conn->tx_seq + 1, buf, CUDAIPC_MAX_MESSAGE);
  }
  if (len < 0)
    return len;

  if (conn->tx_channel) {
    gint ret = channel_send (conn, buf, len, msg->n_fds);

    if (ret != 0)
      return ret > 0 ? 0 : ret;
  }

  iov.iov_base = buf;
  iov.iov_len = len;
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;

  if (msg->n_fds > 0) {
    struct cmsghdr *cmsg;
    gsize fds_size = sizeof (int) * msg->n_fds;

    memset (&conn->tx_control, 0, sizeof (conn->tx_control));
    mh.msg_control = conn->tx_control.buf;
    mh.msg_controllen = CMSG_SPACE (fds_size);
    cmsg = CMSG_FIRSTHDR (&mh);
    cmsg->cmsg_level = SOL_SOCKET;
    cmsg->cmsg_type = SCM_RIGHTS;
    cmsg->cmsg_len = CMSG_LEN (fds_size);
    memcpy (CMSG_DATA (cmsg), msg->fds, fds_size);
  }

  do {
    n = sendmsg (conn->fd, &mh, MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);

  if (n < 0)
    return errno_to_ret (errno);
  /* a datagram goes whole or not at all */
  if (n != len)
    return -EIO;

  conn->tx_seq++;
  return 0;
}

/* Moves the fds of every SCM_RIGHTS message into @fds; more than fit are
 * closed at once and counted in the return value all the same, so the
 * caller sees a count that cannot match any header. */
static guint
collect_fds (struct msghdr *mh, int *fds, guint max)
{
  struct cmsghdr *cmsg;
  guint n = 0;

  for (cmsg = CMSG_FIRSTHDR (mh); cmsg != NULL; cmsg = CMSG_NXTHDR (mh, cmsg)) {
    const guint8 *data;
    gsize count;

    if (cmsg->cmsg_level != SOL_SOCKET || cmsg->cmsg_type != SCM_RIGHTS)
      continue;

    data = CMSG_DATA (cmsg);
    count = (cmsg->cmsg_len - CMSG_LEN (0)) / sizeof (int);
    for (gsize i = 0; i < count; i++) {
      int fd;

      memcpy (&fd, data + i * sizeof (int), sizeof (int));
      if (n < max)
        fds[n] = fd;
      else
        cudaipc_close_fd (&fd);
      n++;
    }
  }
  return n;
}

static gint
recv_socket (CudaIpcConn * conn, CudaIpcMsg * msg, int flags)
{
  int fds[CUDAIPC_MAX_MSG_FDS];
  struct msghdr mh = { 0 };
  struct iovec iov;
  guint n_fds;
  gssize n;
  gint ret;

  g_return_val_if_fail (conn != NULL, -EINVAL);
  g_return_val_if_fail (msg != NULL, -EINVAL);

  cudaipc_msg_init (msg, 0);

  if (conn->rx_buf == NULL)
    conn->rx_buf = g_malloc (RX_SIZE);
  iov.iov_base = conn->rx_buf;
  iov.iov_len = RX_SIZE;
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  mh.msg_control = conn->rx_control.buf;
  mh.msg_controllen = sizeof (conn->rx_control.buf);

  do {
    n = recvmsg (conn->fd, &mh, MSG_CMSG_CLOEXEC | flags);
  } while (n < 0 && errno == EINTR);
  /* a peer that closed with messages of ours unread makes the kernel
   * report ECONNRESET once, before the messages it sent last (a BYE and
   * its reason): those are still to read */
  if (n < 0 && errno == ECONNRESET) {
    mh.msg_controllen = sizeof (conn->rx_control.buf);
    do {
      n = recvmsg (conn->fd, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
    } while (n < 0 && errno == EINTR);
    if (n < 0 && errno == EAGAIN)
      errno = ECONNRESET;
  }

  if (n < 0)
    return errno_to_ret (errno);

  /* from here every fd that arrived is ours to close on any error */
  n_fds = collect_fds (&mh, fds, G_N_ELEMENTS (fds));

  if ((mh.msg_flags & MSG_CTRUNC) || n_fds > G_N_ELEMENTS (fds)) {
    ret = -EPROTO;
    goto drop;
  }
  if ((mh.msg_flags & MSG_TRUNC) || n > CUDAIPC_MAX_MESSAGE) {
    ret = -EMSGSIZE;
    goto drop;
  }
  if (n == 0) {
    /* end of stream (an empty datagram is no message either) */
    ret = -EPIPE;
    goto drop;
  }

  /* takes the fds, whatever the outcome */
  ret = cudaipc_msg_parse (conn->rx_buf, n, fds, n_fds, msg);
  if (ret < 0)
    return ret;

  if (msg->seq != conn->rx_seq + 1) {
    cudaipc_msg_clear (msg);
    return -EPROTO;
  }
  conn->rx_seq++;
  return 0;

drop:
  cudaipc_close_fds (fds, MIN (n_fds, G_N_ELEMENTS (fds)));
  return ret;
}

static gint
parse_record (CudaIpcConn * conn, gsize len, CudaIpcMsg * msg)
{
  gint ret = cudaipc_msg_parse (conn->rx_buf, len, NULL, 0, msg);

  if (ret < 0)
    return ret;
  if (msg->seq != conn->rx_seq + 1) {
    cudaipc_msg_clear (msg);
    return -EPROTO;
  }
  conn->rx_seq++;
  return 0;
}

/* With a channel: its next record, else what the socket has: a marked
 * message, the peer's end, or nothing (-EAGAIN, also for a blocking
 * receive: the caller's poll woke for a record read since). */
static gint
recv_channel (CudaIpcConn * conn, CudaIpcMsg * msg)
{
  gsize len = 0;
  gint ret;

  cudaipc_msg_init (msg, 0);
  if (conn->rx_buf == NULL)
    conn->rx_buf = g_malloc (RX_SIZE);
  if (!conn->rx_marked) {
    ret = cudaipc_channel_read (conn->rx_channel, conn->rx_buf, RX_SIZE,
        &len);
    if (ret < 0)
      return ret;
    if (ret == CUDAIPC_CHANNEL_MESSAGE)
      return parse_record (conn, len, msg);
    if (ret == CUDAIPC_CHANNEL_MARK)
      conn->rx_marked = TRUE;
  }
  if (conn->rx_marked) {
    struct pollfd pfd = { conn->fd, POLLIN, 0 };

    /* announced: it comes at once, or the producer is broken */
    do {
      ret = poll (&pfd, 1, MARK_WAIT_MS);
    } while (ret < 0 && errno == EINTR);
    if (ret == 0)
      return -EPROTO;
    ret = recv_socket (conn, msg, MSG_DONTWAIT);
    if (ret == 0)
      conn->rx_marked = FALSE;
    return ret;
  }
  /* nothing in the channel: the socket carries only marked messages, so
   * what it has now is the peer's end or a message out of order */
  ret = recv_socket (conn, msg, MSG_DONTWAIT);
  if (ret == 0) {
    cudaipc_msg_clear (msg);
    return -EPROTO;
  }
  return ret;
}

static gint
recv_one (CudaIpcConn * conn, CudaIpcMsg * msg, int flags)
{
  if (conn->rx_channel)
    return recv_channel (conn, msg);
  return recv_socket (conn, msg, flags);
}

gint
cudaipc_conn_recv (CudaIpcConn * conn, CudaIpcMsg * msg)
{
  return recv_one (conn, msg, 0);
}

gint
cudaipc_conn_try_recv (CudaIpcConn * conn, CudaIpcMsg * msg)
{
  return recv_one (conn, msg, MSG_DONTWAIT);
}

gint
cudaipc_conn_send_built (CudaIpcConn * conn, guint8 * buf, gsize len)
{
  gssize n;

  g_return_val_if_fail (conn != NULL, -EINVAL);
  g_return_val_if_fail (buf != NULL && len >= CUDAIPC_HEADER_SIZE, -EINVAL);
  g_return_val_if_fail (GST_READ_UINT16_LE (buf + 2) == 0, -EINVAL);

  GST_WRITE_UINT32_LE (buf + CUDAIPC_HEADER_SEQ_OFFSET, conn->tx_seq + 1);
  if (conn->tx_channel) {
    gint ret = channel_send (conn, buf, len, 0);

    if (ret != 0)
      return ret > 0 ? 0 : ret;
  }
  do {
    n = send (conn->fd, buf, len, MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  if (n < 0)
    return errno_to_ret (errno);
  if ((gsize) n != len)
    return -EIO;
  conn->tx_seq++;
  return 0;
}

gint
cudaipc_conn_wait (CudaIpcConn * conn, gint timeout_ms)
{
  struct pollfd pfd;
  gint64 deadline = 0;
  int ret;

  g_return_val_if_fail (conn != NULL, -EINVAL);

  if (timeout_ms > 0)
    deadline = g_get_monotonic_time () + timeout_ms * G_TIME_SPAN_MILLISECOND;

  for (;;) {
    if (cudaipc_conn_begin_wait (conn, FALSE))
      return 1;
    pfd.fd = cudaipc_conn_get_wait_fd (conn);
    pfd.events = POLLIN;
    pfd.revents = 0;

    ret = poll (&pfd, 1, timeout_ms);
    cudaipc_conn_end_wait (conn);
    if (ret > 0 && conn->rx_channel && !(pfd.revents & POLLNVAL) &&
        !cudaipc_conn_pending (conn)) {
      /* a wake-up for a record read since: on to the deadline */
    } else if (ret >= 0) {
      break;
    } else if (errno != EINTR) {
      return -errno;
    }
    if (timeout_ms > 0) {
      gint64 left = deadline - g_get_monotonic_time ();

      /* round up: never wake a whole millisecond early */
      timeout_ms = left > 0 ? (gint) ((left + 999) / 1000) : 0;
    }
  }

  if (ret == 0)
    return 0;
  if (pfd.revents & POLLNVAL)
    return -EBADF;
  /* POLLHUP and POLLERR count as readable: recv reports what happened */
  return 1;
}

gint
cudaipc_conn_set_nonblocking (CudaIpcConn * conn, gboolean nonblocking)
{
  int flags;

  g_return_val_if_fail (conn != NULL, -EINVAL);

  flags = fcntl (conn->fd, F_GETFL);
  if (flags < 0)
    return -errno;
  if (nonblocking)
    flags |= O_NONBLOCK;
  else
    flags &= ~O_NONBLOCK;
  if (fcntl (conn->fd, F_SETFL, flags) < 0)
    return -errno;
  return 0;
}

void
cudaipc_conn_set_tx_channel (CudaIpcConn * conn, CudaIpcChannel * ch)
{
  g_return_if_fail (conn != NULL && ch != NULL && conn->tx_channel == NULL);
  conn->tx_channel = ch;
}

gboolean
cudaipc_conn_set_rx_channel (CudaIpcConn * conn, CudaIpcChannel * ch,
    guint spin_us, GError ** error)
{
  struct epoll_event ev = { 0, };
  gboolean ok;
  int efd;

  g_return_val_if_fail (conn != NULL && ch != NULL, FALSE);
  g_return_val_if_fail (conn->rx_channel == NULL, FALSE);

  efd = epoll_create1 (EPOLL_CLOEXEC);
  ok = efd >= 0;
  if (ok) {
    ev.events = EPOLLIN;
    ok = epoll_ctl (efd, EPOLL_CTL_ADD, conn->fd, &ev) == 0;
  }
  if (ok) {
    /* the wake is never read (channel.h): each datagram the producer
     * sends is one event, which end_wait() takes */
    ev.events = EPOLLIN | EPOLLET;
    ok = epoll_ctl (efd, EPOLL_CTL_ADD, cudaipc_channel_get_wake_fd (ch),
        &ev) == 0;
  }
  if (!ok) {
    int e = errno;

    cudaipc_close_fd (&efd);
    cudaipc_channel_free (ch);
    g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_IO,
        "waiting on the announce channel: %s", g_strerror (e));
    return FALSE;
  }
  conn->wait_fd = efd;
  conn->rx_channel = ch;
  conn->spin_us = spin_us;
  return TRUE;
}

gboolean
cudaipc_conn_has_rx_channel (const CudaIpcConn * conn)
{
  return conn->rx_channel != NULL;
}

gboolean
cudaipc_conn_begin_wait (CudaIpcConn * conn, gboolean spin)
{
  if (conn->rx_channel == NULL)
    return FALSE;
  return conn->rx_marked ||
      cudaipc_channel_begin_wait (conn->rx_channel, spin ? conn->spin_us : 0);
}

int
cudaipc_conn_get_wait_fd (const CudaIpcConn * conn)
{
  return conn->rx_channel ? conn->wait_fd : conn->fd;
}

void
cudaipc_conn_end_wait (CudaIpcConn * conn)
{
  struct epoll_event ev[2];

  if (conn->rx_channel == NULL)
    return;
  cudaipc_channel_end_wait (conn->rx_channel);
  /* takes the wake's event, if one came: left there, it would end the
   * next wait at once */
  while (epoll_wait (conn->wait_fd, ev, G_N_ELEMENTS (ev), 0) < 0 &&
      errno == EINTR) {
  }
}

gboolean
cudaipc_conn_pending (CudaIpcConn * conn)
{
  struct pollfd pfd = { conn->fd, POLLIN, 0 };

  if (conn->rx_channel &&
      (conn->rx_marked || cudaipc_channel_pending (conn->rx_channel)))
    return TRUE;
  return poll (&pfd, 1, 0) == 1;
}

gint
cudaipc_conn_get_peer_cred (const CudaIpcConn * conn, pid_t * pid,
    uid_t * uid, gid_t * gid)
{
  struct ucred cred;
  socklen_t len = sizeof (cred);

  g_return_val_if_fail (conn != NULL, -EINVAL);

  if (getsockopt (conn->fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
    return -errno;
  if (len != sizeof (cred))
    return -EIO;

  if (pid)
    *pid = cred.pid;
  if (uid)
    *uid = cred.uid;
  if (gid)
    *gid = cred.gid;
  return 0;
}

/* Sockets */

static gboolean
is_abstract (const gchar * name)
{
  return name[0] == '@';
}

/* Fills @addr for @name; returns the address length or a negative errno. */
static gint
make_address (const gchar * name, struct sockaddr_un *addr, socklen_t * len)
{
  gsize name_len;

  if (name == NULL || name[0] == '\0')
    return -EINVAL;

  memset (addr, 0, sizeof (*addr));
  addr->sun_family = AF_UNIX;
  name_len = strlen (name);

  if (is_abstract (name)) {
    /* "@x" becomes "\0x", and the length is exact: an abstract name is
     * every byte of sun_path that the length covers */
    if (name_len < 2)
      return -EINVAL;
    if (name_len > sizeof (addr->sun_path))
      return -ENAMETOOLONG;
    memcpy (addr->sun_path + 1, name + 1, name_len - 1);
    *len = offsetof (struct sockaddr_un, sun_path) + name_len;
  } else {
    if (name_len >= sizeof (addr->sun_path))
      return -ENAMETOOLONG;
    memcpy (addr->sun_path, name, name_len);
    *len = offsetof (struct sockaddr_un, sun_path) + name_len + 1;
  }
  return 0;
}

static int
new_socket (int extra_flags)
{
  return socket (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | extra_flags, 0);
}

/* After bind() said EADDRINUSE on a path: is someone listening there?
 * Returns -EADDRINUSE (yes, or cannot tell), 0 (a stale socket file,
 * removed: try again), -EEXIST (not a socket: left alone) or -ELOOP (a
 * symbolic link to nothing: left alone). */
static gint
probe_existing (const struct sockaddr_un *addr, socklen_t addr_len)
{
  cudaipc_autofd int probe = -1;
  struct stat st;
  int err;

  /* non-blocking, so a live server with a full backlog answers EAGAIN
   * instead of keeping us waiting */
  probe = new_socket (SOCK_NONBLOCK);
  if (probe < 0)
    return -errno;

  if (connect (probe, (const struct sockaddr *) addr, addr_len) == 0)
    return -EADDRINUSE;
  err = errno;

  if (err == ENOENT) {
    /* removed meanwhile, or a link that points nowhere (bind() does not
     * follow it, connect() does) */
    if (lstat (addr->sun_path, &st) == 0 && S_ISLNK (st.st_mode))
      return -ELOOP;
    return 0;
  }
  if (err != ECONNREFUSED)
    return -EADDRINUSE;

  /* nobody listens; remove it only if it is a socket (never follow a
   * symlink, never delete a regular file that happens to be there) */
  if (lstat (addr->sun_path, &st) < 0)
    return errno == ENOENT ? 0 : -errno;
  if (!S_ISSOCK (st.st_mode))
    return -EEXIST;
  if (unlink (addr->sun_path) < 0 && errno != ENOENT)
    return -errno;
  return 0;
}

gint
cudaipc_socket_listen (const gchar * name, guint mode, int *fd_out)
{
  return cudaipc_socket_listen_owned (name, mode, fd_out, NULL);
}

gint
cudaipc_socket_listen_owned (const gchar * name, guint mode, int *fd_out,
    CudaIpcSocketFile * file)
{
  cudaipc_autofd int fd = -1;
  struct sockaddr_un addr;
  socklen_t addr_len;
  gboolean abstract;
  gint ret;

  g_return_val_if_fail (fd_out != NULL, -EINVAL);

  ret = make_address (name, &addr, &addr_len);
  if (ret < 0)
    return ret;
  abstract = is_abstract (name);

  fd = new_socket (0);
  if (fd < 0)
    return -errno;

  /* bind() gives the file the socket inode's mode minus the umask; set it
   * first so the file is never more open than asked, not even for the
   * moment before the chmod() below */
  if (!abstract)
    (void) fchmod (fd, mode & 0777);

  for (guint attempt = 0;; attempt++) {
    if (bind (fd, (struct sockaddr *) &addr, addr_len) == 0)
      break;
    ret = -errno;
    /* an abstract name disappears with its owner: in use means alive */
    if (ret != -EADDRINUSE || abstract || attempt > 0)
      return ret;
    ret = probe_existing (&addr, addr_len);
    if (ret < 0)
      return ret;
  }

  if (!abstract && chmod (addr.sun_path, mode & 0777) < 0) {
    ret = -errno;
    unlink (addr.sun_path);
    return ret;
  }
  if (file) {
    struct stat st;

    memset (file, 0, sizeof (*file));
    /* at once after bind(): the file is ours from here */
    if (!abstract && lstat (addr.sun_path, &st) == 0) {
      file->valid = TRUE;
      file->dev = st.st_dev;
      file->ino = st.st_ino;
    }
  }

  if (listen (fd, LISTEN_BACKLOG) < 0) {
    ret = -errno;
    if (!abstract)
      unlink (addr.sun_path);
    return ret;
  }

  *fd_out = cudaipc_steal_fd (&fd);
  return 0;
}

gint
cudaipc_socket_unlink_owned (const gchar * name,
    const CudaIpcSocketFile * file)
{
  struct stat st;

  if (name == NULL || is_abstract (name) || file == NULL || !file->valid)
    return 0;
  if (lstat (name, &st) < 0)
    return errno == ENOENT ? 0 : -errno;
  if (!S_ISSOCK (st.st_mode) || (guint64) st.st_dev != file->dev ||
      (guint64) st.st_ino != file->ino)
    return -ESTALE;
  if (unlink (name) < 0 && errno != ENOENT)
    return -errno;
  return 0;
}

gsize
cudaipc_socket_max_name (void)
{
  struct sockaddr_un addr;

  return sizeof (addr.sun_path) - 1;
}

void
cudaipc_socket_unlink (const gchar * name)
{
  if (name == NULL || name[0] == '\0' || is_abstract (name))
    return;
  (void) unlink (name);
}

gint
cudaipc_socket_connect (const gchar * name, int *fd_out)
{
  cudaipc_autofd int fd = -1;
  struct sockaddr_un addr;
  socklen_t addr_len;
  gint ret;

  g_return_val_if_fail (fd_out != NULL, -EINVAL);

  ret = make_address (name, &addr, &addr_len);
  if (ret < 0)
    return ret;

  /* non-blocking: a listener whose backlog is full (a stopped producer,
   * or one that never accepts) answers EAGAIN at once instead of keeping
   * us in connect() past every deadline */
  fd = new_socket (SOCK_NONBLOCK);
  if (fd < 0)
    return -errno;

  if (connect (fd, (struct sockaddr *) &addr, addr_len) < 0) {
    struct pollfd pfd = { fd, POLLOUT, 0 };
    int err = 0;
    socklen_t err_len = sizeof (err);

    if (errno != EINTR && errno != EINPROGRESS)
      return -errno;
    /* an interrupted connect goes on by itself (a Unix socket's completes
     * at once): wait for its outcome */
    while (poll (&pfd, 1, -1) < 0) {
      if (errno != EINTR)
        return -errno;
    }
    if (getsockopt (fd, SOL_SOCKET, SO_ERROR, &err, &err_len) < 0)
      return -errno;
    if (err != 0)
      return -err;
  }
  /* connected: the connection's own calls wait with poll() where needed */
  if (fcntl (fd, F_SETFL, fcntl (fd, F_GETFL) & ~O_NONBLOCK) < 0)
    return -errno;

  *fd_out = cudaipc_steal_fd (&fd);
  return 0;
}

gint
cudaipc_socket_accept (int listen_fd, int *fd_out)
{
  int fd;

  g_return_val_if_fail (listen_fd >= 0, -EINVAL);
  g_return_val_if_fail (fd_out != NULL, -EINVAL);

  do {
    fd = accept4 (listen_fd, NULL, NULL, SOCK_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0)
    return -errno;

  *fd_out = fd;
  return 0;
}

gint
cudaipc_socket_pair (int fds[2])
{
  int pair[2];

  g_return_val_if_fail (fds != NULL, -EINVAL);

  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) < 0)
    return -errno;
  fds[0] = pair[0];
  fds[1] = pair[1];
  return 0;
}
