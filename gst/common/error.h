/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The project's GError domain. Library objects report failures here;
 * socket and wire code returns negative errno values instead (see
 * connection.h, protocol.h).
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define CUDAIPC_ERROR (cudaipc_error_quark ())

typedef enum
{
  CUDAIPC_ERROR_NO_DRIVER,      /* libcuda.so.1 missing or cuInit failed */
  CUDAIPC_ERROR_NO_DEVICE,      /* no such device ordinal */
  CUDAIPC_ERROR_NOT_SUPPORTED,  /* no VMM / POSIX fd handle support */
  CUDAIPC_ERROR_CUDA,           /* a driver call failed */
  CUDAIPC_ERROR_INVALID,        /* a descriptor or message failed a check */
  CUDAIPC_ERROR_LIMIT,          /* a size or count beyond a documented limit */
  CUDAIPC_ERROR_IO,             /* a system call failed */
  CUDAIPC_ERROR_PROTOCOL,       /* the peer broke the protocol */
  CUDAIPC_ERROR_VERSION,        /* protocol version mismatch */
  CUDAIPC_ERROR_DEVICE_MISMATCH, /* the peers are on different devices */
  CUDAIPC_ERROR_PERMISSION,     /* access refused */
  CUDAIPC_ERROR_BUSY,           /* another server is live on the socket */
  CUDAIPC_ERROR_TIMEOUT,        /* a wait ran past its limit */
} CudaIpcError;

GQuark cudaipc_error_quark (void);

G_END_DECLS
