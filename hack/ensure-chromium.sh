#!/usr/bin/env bash
# ensure-chromium.sh installs Debian's chromium when it is missing: the live
# view's browser test (examples/05-live-view) drives it headless. As root
# on Debian it installs it; anywhere else it says what to install.
set -euo pipefail
[ -x /usr/bin/chromium ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
	echo "installing Debian's chromium for the live view's browser test ..." >&2
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
	exit 0
fi
echo "the live view's browser test needs /usr/bin/chromium: install Debian's chromium package (apt-get install chromium)" >&2
exit 1
