# Sourced by the ensure-*.sh scripts: can this machine install a Debian package? Sets SUDO ("" as root,
# "sudo" otherwise) or exits 1 saying why not. Usage: apt_root <script name> <what is missing> <the other way>
apt_root() {
  local name=$1 missing=$2 otherwise=$3
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "$name: $missing and apt-get is not available; $otherwise" >&2
    exit 1
  fi
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
      SUDO="sudo"
    else
      echo "$name: $missing and installing it needs root (or sudo); $otherwise" >&2
      exit 1
    fi
  fi
}
