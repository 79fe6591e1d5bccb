#!/usr/bin/env bash
# Install a CJK font (Debian's fonts-wqy-microhei) when none is there, so Chinese text in the pages and the
# screenshots (the demo's titles, the seed's contract errors) renders as characters, not boxes.
# Idempotent: nothing runs when the font folder exists. apt-get update only when the first install fails
# (stale or empty package lists). Never fatal: without root or apt, it says what to install and carries on.
set -uo pipefail
font_dir=${TRACELOUPE_CJK_FONT_DIR:-/usr/share/fonts/truetype/wqy}
package=fonts-wqy-microhei
[ -d "$font_dir" ] && exit 0
if ! command -v apt-get >/dev/null 2>&1; then
    echo "(no CJK font and no apt-get: install a CJK font such as $package, or Chinese text shows as boxes)" >&2
    exit 0
fi
export DEBIAN_FRONTEND=noninteractive
echo "== installing a CJK font ($package) so Chinese text is not shown as boxes" >&2
{ apt-get install -y -qq "$package" || { apt-get update -qq && apt-get install -y -qq "$package"; }; } >/dev/null 2>&1 \
    || echo "(could not install $package, e.g. not root: Chinese text will show as boxes)" >&2
exit 0
