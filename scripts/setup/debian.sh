# Sourced by the set-up scripts: installs Debian packages when the machine lacks what a test needs,
# and says why when it cannot (not root, no apt-get, apt-get failed). Waits for dpkg's lock rather
# than failing on it; the package lists may be absent on a fresh image, so they are updated only when
# a first install fails. Progress and reasons go to stderr, prefixed with the caller's name.
#   debian_install NAME WHAT PACKAGE...   (WHAT: what is missing, for the messages)
debian_install() {
  local name=$1 what=$2
  shift 2
  if [[ $(id -u) -ne 0 ]]; then
    echo "$name: missing $what; installing $* needs root" >&2
  elif ! command -v apt-get >/dev/null; then
    echo "$name: missing $what; no apt-get on this machine to install $*" >&2
  else
    echo "$name: installing $* from Debian's packages" >&2
    local apt=(apt-get -qq -o DPkg::Lock::Timeout=600)
    DEBIAN_FRONTEND=noninteractive "${apt[@]}" install -y --no-install-recommends "$@" >/dev/null 2>&1 \
      || { DEBIAN_FRONTEND=noninteractive "${apt[@]}" update >&2 \
        && DEBIAN_FRONTEND=noninteractive "${apt[@]}" install -y --no-install-recommends "$@" >/dev/null; } \
      || echo "$name: apt-get could not install $*" >&2
  fi
}
