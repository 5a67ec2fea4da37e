#!/usr/bin/env bash
# build-tools.sh builds the local control plane's binaries (etcd and
# kube-apiserver) from pinned Go modules, caches them outside the clone, and
# links them into ./bin. It is idempotent: a binary already in the cache is
# only linked, so a fresh clone on the same machine builds nothing.
#
#   hack/build-tools.sh            # build what is missing, link into bin/
#
# Cache: ${LISTWATCH_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/listwatch-informer/tools}
# keyed by binary, version and the tools module's go.sum, so a change of
# version or dependency builds anew instead of reusing a stale binary.
# The first build takes about 10 minutes on 2 cores (kube-apiserver is most of it).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cache=${LISTWATCH_TOOLS_CACHE:-${XDG_CACHE_HOME:-${HOME:?set HOME or LISTWATCH_TOOLS_CACHE}/.cache}/listwatch-informer/tools}
mkdir -p "$root/bin" "$cache"

# Versions live in the tools modules' go.mod files; these only name them.
KUBE_VERSION=v1.37.2
ETCD_VERSION=v3.7.3

# key NAME VERSION MODDIR: the cache path for one binary.
key() {
	local sum
	sum=$(cat "$3/go.mod" "$3/go.sum" | sha256sum | cut -c1-12)
	echo "$cache/$1-$2-$sum"
}

# build NAME VERSION MODDIR PACKAGE LDFLAGS: build into the cache if missing,
# then link into bin/. The build writes to a temporary name and renames, so
# an interrupted build never leaves a half-written binary in the cache.
build() {
	local name=$1 version=$2 moddir=$3 pkg=$4 ldflags=$5
	local out
	out=$(key "$name" "$version" "$moddir")
	if [ ! -x "$out" ]; then
		echo "building $name $version (cached at $out) ..." >&2
		local start=$SECONDS
		(cd "$moddir" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w $ldflags" -o "$out.tmp.$$" "$pkg")
		mv "$out.tmp.$$" "$out"
		echo "built $name in $((SECONDS - start))s" >&2
	fi
	ln -sf "$out" "$root/bin/$name"
}

build etcd "$ETCD_VERSION" "$root/tools/etcd" go.etcd.io/etcd/server/v3 ""

# Without these -X flags /version reports v0.0.0-master, and clients that
# check the server version (kubectl, discovery) get a misleading answer.
v=k8s.io/component-base/version
minor=${KUBE_VERSION#v1.}; minor=${minor%%.*}
build kube-apiserver "$KUBE_VERSION" "$root/tools/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver \
	"-X $v.gitVersion=$KUBE_VERSION -X $v.gitMajor=1 -X $v.gitMinor=$minor -X $v.gitTreeState=clean"

echo "bin/etcd -> $(readlink "$root/bin/etcd")" >&2
echo "bin/kube-apiserver -> $(readlink "$root/bin/kube-apiserver")" >&2
