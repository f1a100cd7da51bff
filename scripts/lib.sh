# Helpers shared by scripts/serve and scripts/test. Sourced, never run directly.
# Every step checks a stamp first, so a second run on a prepared machine costs well under a second.

# The Python that makes our venvs. Debian bookworm's python3 is 3.11, the version kafka-python 2.0.2 still
# runs on (its vendored `six` breaks on 3.12+), so we insist on 3.11 for every venv.
find_python311() {
    local candidate
    for candidate in python3.11 python3; do
        if command -v "$candidate" >/dev/null 2>&1 &&
            "$candidate" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' 2>/dev/null; then
            command -v "$candidate"
            return 0
        fi
    done
    echo "error: Python 3.11 not found (looked for python3.11 and python3)" >&2
    return 1
}

# ensure_apt_packages PACKAGE...: apt-get install those not installed yet (with sudo when not root).
ensure_apt_packages() {
    local package missing=() sudo=()
    for package in "$@"; do
        dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
    done
    [ ${#missing[@]} -gt 0 ] || return 0
    echo "==> apt-get install ${missing[*]}"
    [ "$(id -u)" -eq 0 ] || sudo=(sudo)
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# lock_setup / unlock_setup: one set-up at a time. Several scripts/serve started at once (the README's three-node
# block on a fresh clone) or beside a scripts/test would otherwise race to create and fill the same venv.
lock_setup() {
    exec 9>.setup.lock
    flock 9
}
unlock_setup() {
    flock -u 9
    exec 9>&-
}

# ensure_venv DIR: create the venv DIR if it has no python yet.
ensure_venv() {
    local dir=$1
    if [ ! -x "$dir/bin/python" ]; then
        echo "==> creating $dir"
        "$(find_python311)" -m venv "$dir"
        "$dir/bin/python" -m pip install --quiet --upgrade pip
    fi
}

# ensure_installed DIR STAMP_NAME KEY PIP_ARGS...: run `pip install PIP_ARGS` in the venv DIR unless the stamp
# file DIR/STAMP_NAME already holds KEY. KEY is a hash of whatever the install depends on, so editing
# pyproject.toml (new dependency) triggers exactly one reinstall.
ensure_installed() {
    local dir=$1 stamp="$1/$2" key=$3
    shift 3
    if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$key" ]; then
        return 0
    fi
    echo "==> pip install $* (into $dir)"
    "$dir/bin/python" -m pip install --quiet --disable-pip-version-check "$@"
    echo "$key" >"$stamp"
}

# The key for an editable install of this project: pyproject.toml decides what gets installed.
project_key() {
    sha256sum pyproject.toml | cut -d' ' -f1
}
