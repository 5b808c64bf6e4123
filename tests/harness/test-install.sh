#!/usr/bin/env bash
# test-install.sh - what a packager and an admin get from `make install`, on the host:
#  - a build with Debian's hardening flags (dpkg-buildflags: FORTIFY, stack protector, relro,
#    BIND_NOW) honoured, warnings fatal (WERROR=-Werror), and the result really hardened;
#  - a missing library stops the build with meson's message and "make deps", not with a
#    compiler error;
#  - install-user (meson install) into DESTDIR with PREFIX=/usr puts every file where Debian
#    expects it (the unit and modules-load.d where systemd.pc says for /usr, the udev rules
#    where udev.pc says), the unit with this install's paths; `systemd-analyze verify` accepts the unit and
#    `systemd-analyze security` rates its sandbox below 3.0 (OK);
#  - config errors carry the error priority when stderr is the journal;
#  - the installed config is valid on a machine without a VX855 and serves no camera there;
#  - an admin's edited config survives a second install and uninstall; uninstall removes
#    everything else install wrote;
#  - install-kmod puts viacam.ko under DESTDIR/lib/modules/KVER through kbuild (the first
#    cached kernel);
#  - the man pages format without warnings and describe every option, command and key the
#    programs know (viacamd --help, viacamctl --help, viacamd --list-backends, the generic
#    keys of docs/config.md).
set -u
src=$(cd "$(dirname "$0")/../.." && pwd)
work=${1:-$(mktemp -d)}
rm -rf "$work"
mkdir -p "$work"
ok=1
bad() { echo "NOT OK: $*"; ok=0; }
good() { echo "ok: $*"; }
cd "$src" || exit 1
b=$work/build root=$work/root

# --- A packager's build: dpkg-buildflags, every warning an error.
eval "$(DEB_BUILD_MAINT_OPTIONS=hardening=+all dpkg-buildflags --export=sh)"
if make -s --no-print-directory BUILD="$b" WERROR=-Werror "$b/host/viacamd" "$b/host/viacamctl" \
	>"$work/build.log" 2>&1; then
	good "built with dpkg-buildflags and -Werror"
else
	bad "the build with dpkg-buildflags failed:"; tail -n 15 "$work/build.log"
fi
unset CFLAGS CPPFLAGS CXXFLAGS LDFLAGS OBJCFLAGS OBJCXXFLAGS FFLAGS FCFLAGS
for p in viacamd viacamctl; do
	[ -x "$b/host/$p" ] || continue
	readelf -d "$b/host/$p" | grep -q 'BIND_NOW' && good "$p: BIND_NOW (LDFLAGS honoured)" ||
		bad "$p: no BIND_NOW: LDFLAGS were not used"
	nm -D "$b/host/$p" | grep -qE ' U __[a-z_]+_chk' && good "$p: fortified calls (CPPFLAGS honoured)" ||
		bad "$p: no __*_chk calls: CPPFLAGS (_FORTIFY_SOURCE) were not used"
	nm -D "$b/host/$p" | grep -q '__stack_chk_fail' && good "$p: stack protector (CFLAGS honoured)" ||
		bad "$p: no stack protector: CFLAGS were not used"
done

# --- A missing library is named, with the way out.
PKG_CONFIG_LIBDIR=$work/nopc PKG_CONFIG_PATH= make -s --no-print-directory BUILD="$work/b2" \
	"$work/b2/host/viacamctl" >"$work/nolib.log" 2>&1
rc=$?
if [ "$rc" != 0 ] && grep -q "make deps" "$work/nolib.log" && grep -qi "libsystemd\|inih\|libv4l2" "$work/nolib.log"; then
	good "without the libraries: exit $rc, names them and 'make deps'"
else
	bad "without the libraries: exit $rc, output: $(head -c 400 "$work/nolib.log")"
fi

# --- install-user into DESTDIR, as a Debian package would.
inst() { make -s --no-print-directory BUILD="$b" DESTDIR="$root" PREFIX=/usr "$@"; }
if ! inst install-user >"$work/install.log" 2>&1; then
	bad "make install-user failed:"; tail -n 15 "$work/install.log"
fi
udevdir=$(pkg-config --variable=udevdir udev)
udevdir=${udevdir:-/usr/lib/udev}
want="/usr/sbin/viacamd 755
/usr/bin/viacamctl 755
/usr/lib/systemd/system/viacamd.service 644
$udevdir/rules.d/70-viacam.rules 644
/usr/lib/modprobe.d/viacam.conf 644
/usr/lib/modules-load.d/viacam.conf 644
/usr/lib/sysusers.d/viacam.conf 644
/usr/include/linux/viacam.h 644
/etc/viacam/viacam.conf 644
/etc/viacam/viacam.conf.dist 644
/usr/share/man/man8/viacamd.8 644
/usr/share/man/man1/viacamctl.1 644
/usr/share/man/man5/viacam.conf.5 644"
while read -r f mode; do
	if [ ! -f "$root$f" ]; then
		bad "install-user did not install $f"
	elif [ "$(stat -c %a "$root$f")" != "$mode" ]; then
		bad "$f has mode $(stat -c %a "$root$f"), expected $mode"
	fi
done <<<"$want"
extra=$(cd "$root" && find . -type f | sed 's/^\.//' | grep -vxF -f <(cut -d' ' -f1 <<<"$want"))
[ -z "$extra" ] || bad "install-user wrote files nobody listed: $extra"
[ "$ok" = 1 ] && good "install-user: $(wc -l <<<"$want") files, where Debian expects them, with their modes"

unit=$root/usr/lib/systemd/system/viacamd.service
if grep -q '@[A-Z]*@' "$unit"; then
	bad "the installed unit still has placeholders: $(grep '@[A-Z]*@' "$unit")"
elif ! grep -qx 'ExecStart=/usr/sbin/viacamd -c /etc/viacam/viacam.conf' "$unit"; then
	bad "the installed unit does not start /usr/sbin/viacamd on /etc/viacam/viacam.conf: $(grep ExecStart "$unit")"
else
	good "the unit starts /usr/sbin/viacamd -c /etc/viacam/viacam.conf"
fi
# A bad config at boot: without RestartSec (100 ms) the unit hit the start limit (5 starts in
# 10 s) within half a second and stayed failed. With RestartSec x StartLimitBurst at least
# StartLimitIntervalSec it keeps trying, and starts within RestartSec once the file is fixed.
restart=$(sed -n 's/^RestartSec=//p' "$unit")
restart_us=$(systemd-analyze timespan "${restart:-100ms}" 2>/dev/null | sed -n 's/^ *μs: *//p')
burst=$(sed -n 's/^StartLimitBurst=//p' "$unit")
interval=$(sed -n 's/^StartLimitIntervalSec=//p' "$unit")
interval_us=$(systemd-analyze timespan "${interval:-10s}" 2>/dev/null | sed -n 's/^ *μs: *//p')
if [ -n "$restart_us" ] && [ -n "$interval_us" ] &&
	[ $((restart_us * ${burst:-5})) -ge "$interval_us" ]; then
	good "a failing start is tried again every ${restart:-?} (${burst:-5} starts per ${interval:-10s}: no start limit)"
else
	bad "RestartSec=${restart:-(none, 100ms)}: a bad config hits the start limit (${burst:-5} starts per ${interval:-10s}) in $((${restart_us:-100000} * ${burst:-5} / 1000)) ms"
fi
# systemd checks that ExecStart and ExecReload exist: point them at the DESTDIR copies; man:
# pages from DESTDIR.
mkdir -p "$work/unit"
sed -e "s|=/usr/sbin/viacamd|=$root/usr/sbin/viacamd|" -e "s|=/usr/bin/viacamctl|=$root/usr/bin/viacamctl|" \
	"$unit" >"$work/unit/viacamd.service"
if MANPATH=$root/usr/share/man systemd-analyze verify "$work/unit/viacamd.service" >"$work/verify.log" 2>&1 &&
	[ ! -s "$work/verify.log" ]; then
	good "systemd-analyze verify: no complaint"
else
	bad "systemd-analyze verify: $(head -c 600 "$work/verify.log")"
fi
systemd-analyze security --offline=true "$work/unit/viacamd.service" >"$work/security.log" 2>&1
exposure=$(sed -nE 's/.*Overall exposure level for viacamd.service: ([0-9.]+).*/\1/p' "$work/security.log")
if [ -n "$exposure" ] && awk -v e="$exposure" 'BEGIN { exit !(e < 3.0) }'; then
	good "systemd-analyze security: exposure $exposure (< 3.0)"
else
	bad "systemd-analyze security: exposure '${exposure:-?}', want < 3.0: $(tail -n 3 "$work/security.log")"
fi
rules=$root$udevdir/rules.d/70-viacam.rules
if udevadm verify "$rules" >/dev/null 2>&1 || ! udevadm verify --help >/dev/null 2>&1; then
	grep -q 'KERNEL=="viacam".*TAG+="systemd".*SYSTEMD_WANTS.*viacamd.service' "$rules" &&
		good "udev starts viacamd when /dev/viacam appears (TAG+=systemd, SYSTEMD_WANTS)" ||
		bad "the udev rules do not start viacamd with /dev/viacam"
else
	bad "udevadm verify: $(udevadm verify "$rules" 2>&1 | head -c 400)"
fi

# --- The installed config serves no camera that is not there (this host has no VX855).
"$b/host/viacamd" --check -c "$root/etc/viacam/viacam.conf" >"$work/check.log" 2>&1
rc=$?
if [ "$rc" = 0 ] && grep -q "via: backend via, optional and absent, not served: via: no VIA VX855/VX900 found" "$work/check.log"; then
	good "the installed config is valid here and serves no camera: $(sed -n 2p "$work/check.log" | cut -c1-80)..."
else
	bad "viacamd --check on the installed config: exit $rc: $(head -c 400 "$work/check.log")"
fi
grep -qE '^transport *= *model' "$root/etc/viacam/viacam.conf" &&
	bad "the installed config serves the model (a camera that does not exist)"

# Under systemd (JOURNAL_STREAM names stderr) config errors carry a priority for the journal;
# on a terminal or in a file they are plain.
printf '[camera a]\nvideo_nr = banana\n' >"$work/bad.conf"
: >"$work/journal.log"
JOURNAL_STREAM=$(stat -c '%d:%i' "$work/journal.log") "$b/host/viacamd" --check -c "$work/bad.conf" \
	2>>"$work/journal.log"
"$b/host/viacamd" --check -c "$work/bad.conf" 2>"$work/plain.log"
if grep -q "^<3>$work/bad.conf:2: bad value 'banana'" "$work/journal.log" &&
	grep -q "^$work/bad.conf:2: bad value 'banana'" "$work/plain.log"; then
	good "config errors reach the journal as <3>FILE:LINE: reason (plain elsewhere)"
else
	bad "config errors and the journal: '$(head -c 200 "$work/journal.log")' / '$(head -c 200 "$work/plain.log")'"
fi

# --- The admin's config survives; uninstall removes the rest.
echo "; edited by the admin" >>"$root/etc/viacam/viacam.conf"
cp "$root/etc/viacam/viacam.conf" "$work/edited.conf"
inst install-user >"$work/install2.log" 2>&1 || bad "a second install-user failed"
if cmp -s "$root/etc/viacam/viacam.conf" "$work/edited.conf" && grep -q "kept" "$work/install2.log"; then
	good "a second install keeps the edited config, and says so"
else
	bad "a second install replaced the edited config (or did not say it kept it)"
fi
inst uninstall >"$work/uninstall.log" 2>&1 || bad "make uninstall failed"
left=$(cd "$root" && find . -type f | sed 's/^\.//')
if [ "$left" = /etc/viacam/viacam.conf ] && cmp -s "$root/etc/viacam/viacam.conf" "$work/edited.conf"; then
	good "uninstall removed every file but the edited config"
else
	bad "after uninstall: files left: $(tr '\n' ' ' <<<"$left")"
fi
rm -rf "$root"
inst install-user >/dev/null 2>&1 && inst uninstall >/dev/null 2>&1
left=$(cd "$root" 2>/dev/null && find . -type f)
[ -z "$left" ] && good "install then uninstall, config unchanged: nothing left" ||
	bad "install then uninstall left: $(tr '\n' ' ' <<<"$left")"

# --- The module through kbuild, for one cached kernel.
series=$(tools/vm/kernels.sh list | awk 'NR == 1 { print $1 }')
kdir=$(tools/vm/kernels.sh kdir "$series" 2>/dev/null)
if [ -n "$kdir" ] && [ -f "$kdir/Makefile" ]; then
	kver=$(sed -nE 's/^#define UTS_RELEASE "(.*)"$/\1/p' "$kdir/include/generated/utsrelease.h")
	if make -s --no-print-directory KDIR="$kdir" DESTDIR="$work/kroot" install-kmod >"$work/kmod.log" 2>&1 &&
		ko=$(find "$work/kroot/lib/modules/$kver" -name 'viacam.ko*' | head -n1) && [ -n "$ko" ]; then
		good "install-kmod: ${ko#"$work/kroot"}"
	else
		bad "install-kmod did not install viacam.ko for $kver: $(tail -n 5 "$work/kmod.log")"
	fi
else
	bad "no cached kernel to install the module for (make kernels)"
fi

# --- Man pages: clean, and complete against the programs.
for m in man/*.[158]; do
	w=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -E UTF-8 -l "$m" 2>&1 >/dev/null)
	[ -z "$w" ] && good "$m formats without warnings" || bad "$m: $w"
done
# A man page mentions NAME as roff writes it (a '-' is '\-').
mentions() { grep -qF -- "$(sed 's/-/\\-/g' <<<"$2")" "$1"; }
missing=""
for o in $("$b/host/viacamd" --help | grep -oE -- '--[a-z-]+' | sort -u); do
	mentions man/viacamd.8 "$o" || missing+=" $o"
done
[ -z "$missing" ] && good "viacamd.8 describes every option of viacamd --help" ||
	bad "viacamd.8 lacks:$missing"
missing=""
for c in $("$b/host/viacamctl" --help | sed -n '/^Commands:/,/^$/p' | awk 'NR > 1 && NF { print $1 }'); do
	grep -qE "^\.(B|BI|BR) $c( |$)" man/viacamctl.1 || missing+=" $c"
	"$b/host/viacamctl" "$c" --help >"$work/chelp" 2>&1 && grep -q "Usage: viacamctl.* $c" "$work/chelp" ||
		bad "viacamctl $c --help: $(head -c 200 "$work/chelp")"
done
[ -z "$missing" ] && good "viacamctl.1 describes every command of viacamctl --help" ||
	bad "viacamctl.1 lacks:$missing"
keys=$( ("$b/host/viacamd" --list-backends | sed -n 's/^ *keys://p'
	sed -n '/^## Keys every camera has/,/^## /p' docs/config.md | grep -oE '^\| `[a-z_.A-Z]+`' |
		tr -d '|` ' | sed 's/NAME$//') | tr ' ' '\n' | sed '/^$/d' | sort -u)
missing=""
for k in $keys; do
	grep -qE "^\.(B|BI|BR) $k( |$)" man/viacam.conf.5 || missing+=" $k"
done
n=$(wc -w <<<"$keys")
[ "$n" -gt 20 ] || bad "only $n config keys found to check (the lists changed shape?)"
[ -z "$missing" ] && good "viacam.conf.5 describes all $n keys (backends' and generic)" ||
	bad "viacam.conf.5 lacks:$missing"
[ "$ok" = 1 ]
