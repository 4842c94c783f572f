/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "common/error.h"

G_DEFINE_QUARK (cudaipc-error-quark, cudaipc_error);
