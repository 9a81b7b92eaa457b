#!/usr/bin/env bash
# Builds the demo guest's bootable disk image from Debian packages into
# ~/.cache/virt-testenv/guest-image-<rev>/ (same VIRT_TESTENV_CACHE override as the other builds) and
# prints that directory: `disk.img` (raw; a FAT file system whose boot sector is syslinux's, holding
# the kernel of Debian's linux-image-amd64, an initramfs of busybox-static with our init and guest
# agent from guest-image/ and Debian's dropbear SSH server with the libraries it links, and
# syslinux.cfg sending the console to ttyS0), plus `VERSIONS` (the packages it came from). Idempotent: with the image present it returns at once.
# Needs apt-get (packages are downloaded and unpacked with dpkg-deb -x, never installed).
set -euo pipefail
GB_NAME=build-guest-image
CACHE_ROOT="${VIRT_TESTENV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/virt-testenv}"
step() { printf '[%s] %s\n' "$GB_NAME" "$*" >&2; }
fail() { printf '[%s] FAILED at step "%s": %s\n' "$GB_NAME" "$1" "$2" >&2; exit 1; }

# Bump when the image's content changes (init, agent, packages chosen, layout).
GUEST_IMAGE_REV="${GUEST_IMAGE_REV:-3}"
SRC="$(cd "$(dirname "$0")" && pwd)/guest-image"
OUT="$CACHE_ROOT/guest-image-$GUEST_IMAGE_REV"
if [[ -s "$OUT/disk.img" ]]; then
  echo "$OUT"
  exit 0
fi
command -v apt-get >/dev/null || fail "find apt-get" "a Debian system with apt-get is needed to fetch the guest's packages"

TMP="$(mktemp -d "$CACHE_ROOT/.guest-image.XXXXXX" 2>/dev/null || { mkdir -p "$CACHE_ROOT"; mktemp -d "$CACHE_ROOT/.guest-image.XXXXXX"; })"
trap 'rm -rf "$TMP"' EXIT
cd "$TMP"

# dropbear-bin and what it links (checked below: a library not among these stops the build, naming it).
SSH_PKGS=(dropbear-bin libc6 libcrypt1 libtomcrypt1 libtommath1 libgmp10 zlib1g)
step "downloading Debian packages (kernel, busybox-static, dropbear, syslinux, mtools)"
KPKG="$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/{print $2; exit}')"
[[ -n "$KPKG" ]] || fail "resolve linux-image-amd64" "apt-cache knows no linux-image-amd64 (run apt-get update)"
chmod 777 "$TMP"
apt-get download -q "$KPKG" busybox-static "${SSH_PKGS[@]}" syslinux syslinux-common mtools >/dev/null 2>apt.log \
  || fail "apt-get download" "$(tail -3 apt.log)"
mkdir x
for d in *.deb; do dpkg-deb -x "$d" x; done
dpkg-deb -f "$KPKG"_*.deb Package Version > VERSIONS.tmp
for d in busybox-static dropbear-bin syslinux mtools; do dpkg-deb -f "$d"_*.deb Package Version >> VERSIONS.tmp; done

step "assembling the initramfs"
KVER="$(ls x/lib/modules)"
MODDIR="x/lib/modules/$KVER"
R=root
mkdir -p $R/bin $R/sbin $R/etc/acpi/PWRF $R/proc $R/sys $R/dev $R/root $R/lib/modules $R/usr/bin $R/usr/sbin
cp x/bin/busybox $R/bin/busybox
for a in $(x/bin/busybox --list); do [[ -e $R/bin/$a ]] || ln -s busybox "$R/bin/$a"; done
install -m 0755 "$SRC/init" $R/init
install -m 0755 "$SRC/guest-agent" $R/sbin/guest-agent
# dropbear and dropbearkey, with every library the packages' own loader resolves for them (paths kept;
# a package's absolute symlink is followed inside x/, never into this machine's own /lib).
in_x() {
  local p="$1" t
  while [[ -L "$p" ]]; do
    t="$(readlink "$p")"
    if [[ "$t" == /* ]]; then p="x$t"; else p="$(dirname "$p")/$t"; fi
  done
  echo "$p"
}
for bin in usr/sbin/dropbear usr/bin/dropbearkey; do
  install -D -m 0755 "x/$bin" "$R/$bin"
  links="$(x/lib64/ld-linux-x86-64.so.2 --library-path x/lib/x86_64-linux-gnu:x/usr/lib/x86_64-linux-gnu --list "x/$bin")" \
    || fail "list the libraries of $bin" "$links"
  if grep -q 'not found' <<<"$links"; then fail "link $bin" "$(grep 'not found' <<<"$links") (add its package to SSH_PKGS)"; fi
  for lib in $(awk '$2 == "=>" && $3 ~ /^x\// {print $3}' <<<"$links"); do
    install -D -m 0755 "$(in_x "$lib")" "$R/${lib#x/}"
  done
done
# The drivers the demo VM's devices need, dependencies first (from each module's `depends=`; the
# package carries no modules.dep, depmod runs at install).
: > $R/etc/modules
add_module() {
  local name="$1" file dep
  grep -qx "$name.ko" $R/etc/modules && return 0
  file="$(find "$MODDIR/kernel" -name "$name.ko" | head -1)"
  [[ -n "$file" ]] || fail "find module $name" "not in $KPKG"
  for dep in $(grep -a -o 'depends=[a-z0-9_,-]*' "$file" | head -1 | cut -d= -f2 | tr ',' ' '); do add_module "$dep"; done
  cp "$file" "$R/lib/modules/"
  echo "$name.ko" >> $R/etc/modules
}
for m in virtio_pci virtio_console virtio_blk virtio_net button evdev; do add_module "$m"; done
echo d8v-demo > $R/etc/hostname
printf 'root::0:0:root:/root:/bin/sh\n' > $R/etc/passwd
printf 'root:x:0:\n' > $R/etc/group
printf '/bin/sh\n' > $R/etc/shells
printf 'Debian GNU/Linux 12 (d8v demo guest) \\n \\l\n\n' > $R/etc/issue
printf 'PRETTY_NAME="Debian GNU/Linux 12 (bookworm, d8v demo guest)"\nNAME="Debian GNU/Linux"\nVERSION_ID="12"\nVERSION="12 (bookworm)"\nID=debian\n' > $R/etc/os-release
printf '#!/bin/sh\nsync; poweroff -f\n' > $R/etc/acpi/PWRF/00000080 && chmod 0755 $R/etc/acpi/PWRF/00000080
(cd $R && find . | "$TMP/x/bin/busybox" cpio -o -H newc 2>/dev/null | gzip -9) > initrd.gz

step "packing the bootable disk (FAT + syslinux)"
export PATH="$TMP/x/usr/bin:$PATH"
SIZE_MB=$(( ($(stat -c %s "x/boot/vmlinuz-$KVER") + $(stat -c %s initrd.gz)) / 1048576 + 8 ))
truncate -s "${SIZE_MB}M" disk.img
export MTOOLS_SKIP_CHECK=1
mformat -i disk.img -v D8VDEMO ::
cat > syslinux.cfg <<CFG
SERIAL 0 115200
DEFAULT linux
TIMEOUT 0
PROMPT 0
LABEL linux
  KERNEL vmlinuz
  APPEND initrd=initrd.gz console=ttyS0,115200 console=tty0 quiet panic=-1
CFG
cp "x/boot/vmlinuz-$KVER" vmlinuz
mcopy -i disk.img vmlinuz initrd.gz syslinux.cfg ::/
x/usr/bin/syslinux --install disk.img || fail "syslinux --install" "could not make the disk bootable"
mkdir -p "$OUT.tmp"
mv disk.img VERSIONS.tmp "$OUT.tmp/"
mv "$OUT.tmp/VERSIONS.tmp" "$OUT.tmp/VERSIONS"
rm -rf "$OUT" && mv "$OUT.tmp" "$OUT"
step "built $OUT/disk.img ($(stat -c %s "$OUT/disk.img") bytes)"
echo "$OUT"
