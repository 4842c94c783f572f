/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What a consumer checks of a page of shared memory a producer sends
 * (the fence page, ring/fence-page.h; the release page,
 * ring/release-page.h) before it maps it: the producer is not trusted
 * to keep it whole.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* TRUE where @fd (not taken) is a regular memory file of at least @size
 * bytes sealed against shrinking (so it cannot be cut under a mapping),
 * and, with @producer_writes_only, against writes through any other
 * mapping made after the seal (F_SEAL_FUTURE_WRITE). Else FALSE with
 * @error (CUDAIPC_ERROR_INVALID) naming "the @what". */
gboolean cudaipc_shared_page_check (int fd, const gchar * what, gsize size,
    gboolean producer_writes_only, GError ** error);

G_END_DECLS
