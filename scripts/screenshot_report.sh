#!/usr/bin/env bash
# Screenshot a rendered report page in headless Chromium (Debian's `chromium`), to look at it.
#   scripts/screenshot_report.sh REPORT_DIR/index.html [OUT.png] [WIDTHxHEIGHT]
# Install once (as root): apt-get update && apt-get install -y chromium
set -euo pipefail
page=${1:?usage: $0 PAGE.html [OUT.png] [WIDTH,HEIGHT]}
out=${2:-${page%.html}.png}
size=${3:-1280,2000}
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -z "$browser" ]; then
  echo "chromium not found; install it with: apt-get update && apt-get install -y chromium" >&2
  exit 3
fi
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
abs=$(cd "$(dirname "$page")" && pwd)/$(basename "$page")
outabs=$(cd "$(dirname "$out")" 2>/dev/null && pwd || (mkdir -p "$(dirname "$out")" && cd "$(dirname "$out")" && pwd))/$(basename "$out")
timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --user-data-dir="$profile" --hide-scrollbars --screenshot="$outabs" --window-size="$size" \
  "file://$abs" >/dev/null 2>&1
[ -s "$outabs" ] || { echo "no screenshot written" >&2; exit 1; }
echo "$outabs"
