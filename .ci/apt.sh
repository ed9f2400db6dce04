#!/usr/bin/env bash
# Sourced by the CI scripts: `apt_install PACKAGE…` installs the Debian packages that are not
# installed yet (as root; otherwise it says what to install and fails).
apt_install() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" -ne 0 ]; then
    echo "apt.sh: missing Debian packages: ${missing[*]} (apt-get install them as root)" >&2
    return 1
  fi
  echo "== apt-get install ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}
