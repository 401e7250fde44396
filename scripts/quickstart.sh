#!/usr/bin/env bash
# quickstart.sh - set up (packages, build) and run the default probe: `cxlsim probe` on the ASIC preset.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh" "$root/build"
exec "$root/build/cxlsim" probe "$@"
