#!/usr/bin/env bash
# Prepares the test VM's kernel, unpacked from Debian's packages (never
# installed), and prints its directory: vmlinuz, and modules/ with the
# modules the VM's initramfs loads, in load order (modules.order).  Run as
# root:
#
#     bash test/vm/kernel.sh            # Debian 12's kernel (6.1)
#     bash test/vm/kernel.sh sid        # sid's (sched_ext: CONFIG_SCHED_CLASS_EXT)
#     bash test/vm/kernel.sh trixie-backports   # Debian 13's newest (sched_ext;
#                                       # trixie's own 6.12 has none)
#
# The version is the one the suite's linux-image-amd64 depends on today, not
# a wildcard; it moves, and a new one is fetched when it does.
set -euo pipefail

suite=${1:-bookworm}
cache=/var/cache/numasched-vm
fail() {
	echo "kernel.sh: $*" >&2
	exit 1
}
mkdir -p "$cache"
case "$suite" in
	bookworm)
		# the system's own suite: its apt
		apt=(apt-get -o APT::Sandbox::User=root)
		depends() { apt-cache depends "$1" 2>/dev/null; }
		depends linux-image-amd64 | grep 'Depends: linux-image-' >/dev/null || apt-get update -qq
		;;
	sid | trixie-backports)
		. "$(dirname "${BASH_SOURCE[0]}")/../debian_suite.sh"
		debian_suite_apt "$cache/$suite" "$suite" || fail "cannot read Debian's $suite from $mirror (see $cache/$suite/apt/log)"
		apt=(apt-get "${apt_opts[@]}")
		depends() { apt-cache "${apt_opts[@]}" depends "$1" 2>/dev/null; }
		;;
	*) fail "the suite is bookworm, sid or trixie-backports, not \"$suite\"" ;;
esac
kver=$(depends linux-image-amd64 | sed -n 's/.*Depends: linux-image-\(.*\)/\1/p' | head -1)
[ -n "$kver" ] || fail "no linux-image-amd64 in Debian's $suite"
dir=$cache/$kver
if [ -f "$dir/modules.order" ]; then
	echo "$dir"
	exit 0
fi

# bookworm's linux-image holds the kernel and its modules; sid's splits them
# into linux-binary (vmlinuz) and linux-modules.  grep reads all of apt-cache's
# lines: with -q it can exit while apt-cache still writes, which then dies of
# SIGPIPE, and under pipefail the split went unseen ("no vmlinuz", in the
# test command's prefetch on a fresh machine)
unpacked=$(mktemp -d)
trap 'rm -rf "$unpacked"' EXIT
packages=("linux-image-$kver")
depends "linux-image-$kver" | grep "Depends: linux-binary-$kver" >/dev/null &&
	packages=("linux-binary-$kver" "linux-modules-$kver")
(cd "$unpacked" && timeout 600 "${apt[@]}" download -qq "${packages[@]}") ||
	fail "cannot download ${packages[*]} from Debian's $suite"
for deb in "$unpacked"/*.deb; do
	dpkg-deb -x "$deb" "$unpacked/root"
done
rm -rf "$dir"
mkdir -p "$dir/modules"
vmlinuz=$(find "$unpacked/root" -name "vmlinuz*" -type f | head -1)
[ -n "$vmlinuz" ] || fail "no vmlinuz in ${packages[*]}"
cp "$vmlinuz" "$dir/vmlinuz"
# virtio, 9p and overlay, in load order: those the kernel has as modules
# (6.1's virtio is a module, 7.2's is built in); busybox's insmod reads no xz
modules=$(find "$unpacked/root" -type d -path "*/modules/$kver/kernel" | head -1)
[ -n "$modules" ] || fail "no modules for $kver in ${packages[*]}"
for m in drivers/virtio/virtio_ring drivers/virtio/virtio drivers/virtio/virtio_pci_legacy_dev \
	drivers/virtio/virtio_pci_modern_dev drivers/virtio/virtio_pci fs/netfs/netfs \
	fs/fscache/fscache net/9p/9pnet net/9p/9pnet_virtio fs/9p/9p fs/overlayfs/overlay; do
	if [ -f "$modules/$m.ko" ]; then
		cp "$modules/$m.ko" "$dir/modules/"
	elif [ -f "$modules/$m.ko.xz" ]; then
		xz -dc "$modules/$m.ko.xz" >"$dir/modules/$(basename "$m").ko"
	else
		continue
	fi
	basename "$m.ko" >>"$dir/modules/modules.order.new"
done
mv "$dir/modules/modules.order.new" "$dir/modules.order"
echo "$dir"
