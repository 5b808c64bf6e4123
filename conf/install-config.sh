#!/bin/sh
# install-config.sh DIR - meson's install script: the shipped config (DIR/viacam.conf.dist,
# already installed) becomes DIR/viacam.conf where there is none; an admin's file is never
# replaced. (meson 1.0 shows an install script's output only when it fails: make install-user
# says which file it kept.)
set -e
dir=${DESTDIR:-}$1
[ -e "$dir/viacam.conf" ] || install -m 0644 "$dir/viacam.conf.dist" "$dir/viacam.conf"
