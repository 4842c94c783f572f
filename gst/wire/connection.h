/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A connection: one AF_UNIX SOCK_SEQPACKET socket carrying protocol.h
 * messages, with fds attached by SCM_RIGHTS.
 *
 * Every fd made here is CLOEXEC from birth (SOCK_CLOEXEC, accept4,
 * MSG_CMSG_CLOEXEC). Sends use MSG_NOSIGNAL: a closed peer is -EPIPE, never
 * SIGPIPE. A received datagram whose control data was truncated, whose
 * payload was truncated, whose fd count disagrees with its header, or that
 * fails to parse has every fd that arrived closed before the error returns.
 *
 * Return values: 0 (or a count) on success, negative errno on failure:
 * -EAGAIN (non-blocking, nothing to do), -EPIPE (peer closed), -EMSGSIZE,
 * -EPROTO, -EBADMSG, and the errno of a failed system call.
 *
 * Sequence numbers: each direction counts messages from 1; a received
 * message out of sequence is -EPROTO.
 *
 * A connection is not thread-safe, except that one thread may send while
 * another receives (the two directions share no state). It owns its socket.
 *
 * Socket names: a path, or "@name" for a Linux abstract socket.
 */
#pragma once

#include <sys/types.h>
#include <glib.h>
#include "wire/protocol.h"
#include "wire/channel.h"

G_BEGIN_DECLS

typedef struct _CudaIpcConn CudaIpcConn;

/* Takes ownership of @fd (a connected SOCK_SEQPACKET socket). */
CudaIpcConn *cudaipc_conn_new (int fd);
void cudaipc_conn_free (CudaIpcConn * conn);
int cudaipc_conn_get_fd (const CudaIpcConn * conn);

/* Builds and sends @msg (its fds borrowed: they are duplicated into the
 * peer by the kernel, the caller keeps them). */
gint cudaipc_conn_send (CudaIpcConn * conn, const CudaIpcMsg * msg);
/* Receives and parses one message into @msg (cudaipc_msg_clear() it). */
gint cudaipc_conn_recv (CudaIpcConn * conn, CudaIpcMsg * msg);
/* As recv(), but -EAGAIN at once where no message is there. */
gint cudaipc_conn_try_recv (CudaIpcConn * conn, CudaIpcMsg * msg);
/* Sends a message cudaipc_msg_build() made into @buf (@len bytes, no
 * fds), with this connection's next header sequence written into it: one
 * message built once goes to many connections. As send() otherwise. */
gint cudaipc_conn_send_built (CudaIpcConn * conn, guint8 * buf, gsize len);
/* Waits up to @timeout_ms (-1: forever) for the socket to be readable
 * (with an announce channel: for a record, or the socket). Returns 1 if
 * readable, 0 on time-out, negative errno. */
gint cudaipc_conn_wait (CudaIpcConn * conn, gint timeout_ms);
gint cudaipc_conn_set_nonblocking (CudaIpcConn * conn, gboolean nonblocking);

/* The announce channel (wire/channel.h). Producer: every later message
 * sent goes through @ch (taken), one with fds or too long for a record on
 * the socket behind a mark; a channel the consumer let fill is -EAGAIN,
 * one whose tail it broke -EPROTO. */
void cudaipc_conn_set_tx_channel (CudaIpcConn * conn, CudaIpcChannel * ch);
/* Consumer: every later message is read from @ch (taken), after its
 * mark from the socket; waits read busily for @spin_us first. FALSE with
 * @error where the connection cannot wait on it (@ch freed). */
gboolean cudaipc_conn_set_rx_channel (CudaIpcConn * conn, CudaIpcChannel * ch,
    guint spin_us, GError ** error);
gboolean cudaipc_conn_has_rx_channel (const CudaIpcConn * conn);
/* Consumer, around a poll() for the next message: begin_wait() TRUE
 * means one is there (no poll, no end_wait()); else poll
 * get_wait_fd() (the socket, or with a channel an epoll fd of the socket
 * and the channel's eventfd) for POLLIN, then end_wait(). With @spin, a
 * channel is read busily for the connection's spin_us first (the thread
 * that waits for its next frame; not a reader that reads ahead). A
 * receive after a wake-up that finds nothing is -EAGAIN. */
gboolean cudaipc_conn_begin_wait (CudaIpcConn * conn, gboolean spin);
int cudaipc_conn_get_wait_fd (const CudaIpcConn * conn);
void cudaipc_conn_end_wait (CudaIpcConn * conn);
/* Consumer: whether a receive would find something now (a message, the
 * peer's end), without waiting. */
gboolean cudaipc_conn_pending (CudaIpcConn * conn);
gint cudaipc_conn_get_peer_cred (const CudaIpcConn * conn, pid_t * pid,
    uid_t * uid, gid_t * gid);

/* Listens on @name. A socket file left by a dead server is replaced; a
 * live server on the same name gives -EADDRINUSE, a file that is not a
 * socket -EEXIST, a symbolic link to nothing -ELOOP, a name longer than a
 * socket address holds -ENAMETOOLONG. The file (not for abstract names)
 * gets permissions @mode. */
gint cudaipc_socket_listen (const gchar * name, guint mode, int *fd_out);

/* Which file a listener bound: its device and inode, for removing it
 * later only if it is still that file. */
typedef struct
{
  gboolean valid;               /* FALSE for an abstract name */
  guint64 dev;
  guint64 ino;
} CudaIpcSocketFile;

/* cudaipc_socket_listen() that also tells which file it bound. */
gint cudaipc_socket_listen_owned (const gchar * name, guint mode,
    int *fd_out, CudaIpcSocketFile * file);
/* Removes @name only if it is still the socket @file names (the same
 * device and inode): never another producer's socket, never a file put
 * there meanwhile. Returns 0, -ESTALE (something else is there: left
 * alone) or a negative errno. */
gint cudaipc_socket_unlink_owned (const gchar * name,
    const CudaIpcSocketFile * file);
/* The longest socket name, in bytes (107 on Linux: sun_path without its
 * NUL; an abstract name "@x" has as many). */
gsize cudaipc_socket_max_name (void);
/* Removes the socket file of @name (nothing for abstract names). */
void cudaipc_socket_unlink (const gchar * name);
/* Connects to @name without ever blocking on the listener: -EAGAIN where
 * its backlog is full, -ENOENT or -ECONNREFUSED where nobody listens. The
 * connected socket is blocking. */
gint cudaipc_socket_connect (const gchar * name, int *fd_out);
gint cudaipc_socket_accept (int listen_fd, int *fd_out);
gint cudaipc_socket_pair (int fds[2]);

G_END_DECLS
