# scripts/apt-private.sh - sourced by scripts/backport-source,
# scripts/debian-kernel and scripts/sparse-for-tree: apt options that read
# a private one-line sources list for one Debian suite and keep its package
# lists in a private directory, so that apt-get update and install for the
# rest of the system never see the suite.  The index is checked against
# Debian's archive keys exactly as for the system's own suites; a .deb
# against the index by apt-get download, a source package's files by
# apt-get source.

# apt_private_setup SUITE [deb|deb-src]: set $apt_state and the array
# apt_private. deb-src lists the suite's source packages instead, in a
# state directory of their own.
apt_private_setup() {
	local suite=$1 kind=${2:-deb}
	local mirror=${OCDIR_DEBIAN_MIRROR:-http://deb.debian.org/debian}
	local keyring=/usr/share/keyrings/debian-archive-keyring.gpg
	[[ -r $keyring ]] || {
		echo "$keyring is missing (apt-get install debian-archive-keyring)" >&2
		return 1
	}
	apt_state=/var/lib/ocdir/apt-$suite
	[[ $kind == deb ]] || apt_state+=-$kind
	mkdir -p "$apt_state/lists/partial" "$apt_state/archives/partial"
	echo "$kind [signed-by=$keyring] $mirror $suite main" >"$apt_state/sources.list"
	apt_private=(
		-o "Dir::Etc::SourceList=$apt_state/sources.list"
		-o "Dir::Etc::SourceParts=-"
		-o "Dir::State::Lists=$apt_state/lists"
		-o "Dir::Cache::Archives=$apt_state/archives"
		-o "Dir::Cache::pkgcache=" -o "Dir::Cache::srcpkgcache="
		-o "APT::Get::List-Cleanup=0"
	)
}
