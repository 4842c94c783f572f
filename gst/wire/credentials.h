/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The producer's access control lists: who, besides its own user and
 * root, may connect (server.h, CudaIpcServerConfig). A list is user (or
 * group) names and numeric ids separated by commas or spaces, as the
 * sink's allowed-users and allowed-groups properties take them. Names are
 * looked up with the reentrant calls (getpwnam_r, getgrnam_r): any thread,
 * two producers starting at once included.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Parses @list (NULL: empty) into a new array of guint ids in @out. With
 * @groups the producer's own group comes first, always: it matches the
 * socket's default mode 0660. CUDAIPC_ERROR_INVALID names an unknown user
 * or group. */
gboolean cudaipc_credentials_parse_ids (const gchar * list, gboolean groups,
    GArray ** out, GError ** error);

G_END_DECLS
