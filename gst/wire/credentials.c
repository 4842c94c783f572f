/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The producer's access control lists; credentials.h has the contract.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include "wire/credentials.h"
#include "common/error.h"

/* The id of user (or group) @name, looked up with the reentrant calls:
 * two sinks may start at once. */
static gboolean
lookup_id (const gchar * name, gboolean group, guint * id)
{
  long hint = sysconf (group ? _SC_GETGR_R_SIZE_MAX : _SC_GETPW_R_SIZE_MAX);
  gsize size = hint > 0 ? (gsize) hint : 4096;

  for (;;) {
    g_autofree gchar *buf = g_malloc (size);
    int ret;

    if (group) {
      struct group gr, *res = NULL;

      ret = getgrnam_r (name, &gr, buf, size, &res);
      if (ret == 0 && res)
        *id = res->gr_gid;
      if (ret == 0)
        return res != NULL;
    } else {
      struct passwd pw, *res = NULL;

      ret = getpwnam_r (name, &pw, buf, size, &res);
      if (ret == 0 && res)
        *id = res->pw_uid;
      if (ret == 0)
        return res != NULL;
    }
    if (ret != ERANGE || size >= 1024 * 1024)
      return FALSE;
    size *= 2;
  }
}

gboolean
cudaipc_credentials_parse_ids (const gchar * list, gboolean groups,
    GArray ** out, GError ** error)
{
  g_auto (GStrv) items = g_strsplit_set (list ? list : "", ", ", -1);
  GArray *ids = g_array_new (FALSE, FALSE, sizeof (guint));

  if (groups) {
    guint own = getegid ();
    g_array_append_val (ids, own);
  }
  for (guint i = 0; items[i]; i++) {
    const gchar *item = items[i];
    guint64 v;
    guint id;

    if (item[0] == '\0')
      continue;
    if (g_ascii_string_to_unsigned (item, 10, 0, G_MAXUINT32 - 1, &v, NULL)) {
      id = (guint) v;
    } else if (!lookup_id (item, groups, &id)) {
      g_set_error (error, CUDAIPC_ERROR, CUDAIPC_ERROR_INVALID,
          "%s: no %s named \"%s\"", groups ? "allowed-groups" :
          "allowed-users", groups ? "group" : "user", item);
      g_array_unref (ids);
      return FALSE;
    }
    g_array_append_val (ids, id);
  }
  *out = ids;
  return TRUE;
}
