#!/usr/bin/env bash
# Sourced by .ci/run: installs Debian's chromium for the web page's browser test
# (test/web/web-page.test.ts, driven by playwright-core) and fails loudly if it does not run:
# under CI=true that test fails rather than skips without it. Exports STEPFLOW_SCREENSHOTS, a
# fresh directory where the test saves its screenshots (kept after the run, as CI artifacts).
#
#   source .ci/chromium.sh && ensure_chromium && npm test

ensure_chromium() {
  source "$(dirname "${BASH_SOURCE[0]}")/apt.sh"
  apt_install chromium || return 1
  local version
  # Debian's launcher scripts may grumble on stderr (about /dev/shm); only a failure counts.
  if ! version=$(/usr/bin/chromium --headless --no-sandbox --disable-gpu --version 2>/dev/null); then
    /usr/bin/chromium --headless --no-sandbox --disable-gpu --version >&2 || true
    echo "chromium.sh: /usr/bin/chromium does not start" >&2
    return 1
  fi
  STEPFLOW_SCREENSHOTS=$(mktemp -d /tmp/stepflow-screenshots.XXXXXX)
  export STEPFLOW_SCREENSHOTS
  echo "== $version for the browser test; screenshots in $STEPFLOW_SCREENSHOTS"
}
