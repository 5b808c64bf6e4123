#!/bin/sh
# install-sysusers.sh FILE - meson's install script: on a plain install (no DESTDIR) make the
# user of viacamd's workers at once with systemd-sysusers, where it exists (packages do this
# in their postinst instead). Without the user, workers run as nobody.
[ -z "${DESTDIR:-}" ] || exit 0
command -v systemd-sysusers >/dev/null 2>&1 || exit 0
systemd-sysusers "$1" || true
