# Tool provisioning shared by scripts/demo, scripts/test and scripts/bench.
#
# Everything the scripts need beyond a Rust and Go toolchain is installed on first use into a
# cache outside the clone, keyed by version, so a fresh clone (and CI) reuses earlier builds:
#   ${SPECTACULAR_TOOLS:-$HOME/.cache/spectacular-tools}/<tool>-<version>/bin/
# Source this file; call ensure_git_spice / ensure_nextest; each prints the bin directory.
# ensure_claude and ensure_chromium print the program itself.

GIT_SPICE_VERSION=v0.31.2
NEXTEST_VERSION=0.9.151
CLAUDE_CODE_VERSION=2.1.330

tools_root() {
    printf '%s\n' "${SPECTACULAR_TOOLS:-${XDG_CACHE_HOME:-$HOME/.cache}/spectacular-tools}"
}

tools_die() {
    printf 'error: %s\n' "$1" >&2
    [ -n "${2:-}" ] && printf '  fix: %s\n' "$2" >&2
    exit 1
}

# The Go module proxy this project can reach refuses two things `go install go.abhg.dev/gs@v0.31.2`
# needs: the module's version list (asked for to report deprecations) and the unpublished fork of
# the kong CLI parser that git-spice's go.mod pins with a replace directive. So git-spice is built
# from a throwaway module that requires the exact version and replaces that fork with upstream kong
# v1.17.0, the first release with the fork's change (negatable flags on bool-mapper types such as
# `--[no-]restack`); with kong v1.15.0 the binary panics at start. tests/ drive the result for real.
GIT_SPICE_KONG_REPLACE="github.com/alecthomas/kong=github.com/alecthomas/kong@v1.17.0"

# Builds <package> of <module>@<version> into <bin dir>; extra arguments go to `go install`.
go_install_pinned() {
    local bin=$1 module=$2 version=$3 package=$4
    shift 4
    local scratch status
    scratch=$(mktemp -d) || return 1
    (
        cd "$scratch" &&
            go mod init spectacular.local/tools >/dev/null 2>&1 &&
            go mod edit -require="$module@$version" -replace="$GIT_SPICE_KONG_REPLACE" &&
            GOBIN="$bin" GOFLAGS=-mod=mod go install "$@" "$package"
    )
    status=$?
    rm -rf "$scratch"
    return $status
}

# Prints the directory holding `gs` (git-spice), installing it with `go install` when missing.
# The version is stamped in as git-spice's releases do (built from source it says "dev", and then
# neither `wt doctor` nor wt's minimum-version check can read it); an unstamped build is made again.
ensure_git_spice() {
    local dir
    dir="$(tools_root)/git-spice-$GIT_SPICE_VERSION/bin"
    if [ ! -x "$dir/gs" ] || ! "$dir/gs" --version 2>/dev/null | grep -qx "git-spice ${GIT_SPICE_VERSION#v}"; then
        command -v go >/dev/null 2>&1 ||
            tools_die "git-spice $GIT_SPICE_VERSION is not installed and Go is not on PATH to build it" \
                "install Go >= 1.26 (https://go.dev/doc/install), then run this script again"
        printf 'installing git-spice %s into %s (one time, about a minute)\n' "$GIT_SPICE_VERSION" "$dir" >&2
        go_install_pinned "$dir" go.abhg.dev/gs "$GIT_SPICE_VERSION" go.abhg.dev/gs \
            "-ldflags=-X=main._version=${GIT_SPICE_VERSION#v}" ||
            tools_die "building go.abhg.dev/gs@$GIT_SPICE_VERSION failed (see above)" \
                "git-spice needs Go >= 1.26; check 'go version'"
    fi
    printf '%s\n' "$dir"
}

# Prints the directory holding cargo-nextest, installing it with `cargo install` when missing.
ensure_nextest() {
    local root
    root="$(tools_root)/cargo-nextest-$NEXTEST_VERSION"
    if [ ! -x "$root/bin/cargo-nextest" ]; then
        command -v cargo >/dev/null 2>&1 ||
            tools_die "cargo is not on PATH" "install Rust with rustup (https://rustup.rs)"
        printf 'installing cargo-nextest %s into %s (one time, a few minutes)\n' "$NEXTEST_VERSION" "$root" >&2
        cargo install cargo-nextest --locked --version "$NEXTEST_VERSION" --root "$root" >&2 ||
            tools_die "cargo install cargo-nextest failed (see above)" "check 'cargo --version' (needs Rust >= 1.91)"
    fi
    printf '%s\n' "$root/bin"
}

# Prints the path of the Claude Code client (the native binary from the npm package), installing
# the package into the cache when missing. Tests run it offline against a scripted model server.
ensure_claude() {
    local root binary
    root="$(tools_root)/claude-code-$CLAUDE_CODE_VERSION"
    binary="$root/node_modules/@anthropic-ai/claude-code-linux-x64/claude"
    if [ ! -x "$binary" ]; then
        command -v npm >/dev/null 2>&1 ||
            tools_die "Claude Code $CLAUDE_CODE_VERSION is not installed and npm is not on PATH to install it" \
                "install Node.js and npm (https://nodejs.org), then run this script again"
        printf 'installing Claude Code %s into %s (one time, about 380 MB)\n' "$CLAUDE_CODE_VERSION" "$root" >&2
        mkdir -p "$root"
        (cd "$root" && npm install --no-audit --no-fund --ignore-scripts --loglevel=error \
            "@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION" >&2) ||
            tools_die "npm install @anthropic-ai/claude-code@$CLAUDE_CODE_VERSION failed (see above)" \
                "check that the npm registry is reachable"
        [ -x "$binary" ] || tools_die "the Claude Code package has no native binary for this machine at $binary"
    fi
    printf '%s\n' "$binary"
}

# Prints the directory holding git-spice's offline forge for submit tests: `shamhub-serve` (the
# server), `shamhub` (its admin client) and a `gs` built with the shamhub forge. It is a separate
# GOBIN so this `gs` never shadows the normal build.
ensure_shamhub() {
    local dir
    dir="$(tools_root)/shamhub-$GIT_SPICE_VERSION/bin"
    if [ ! -x "$dir/gs" ] || [ ! -x "$dir/shamhub-serve" ] || [ ! -x "$dir/shamhub" ]; then
        command -v go >/dev/null 2>&1 ||
            tools_die "git-spice's offline forge is not installed and Go is not on PATH to build it" \
                "install Go >= 1.26, then run this script again"
        printf 'installing the shamhub forge of git-spice %s into %s (one time)\n' "$GIT_SPICE_VERSION" "$dir" >&2
        mkdir -p "$dir"
        go_install_pinned "$dir" go.abhg.dev/gs "$GIT_SPICE_VERSION" go.abhg.dev/gs -tags shamhub &&
            go_install_pinned "$dir" go.abhg.dev/gs "$GIT_SPICE_VERSION" go.abhg.dev/gs/cmd/shamhub-serve &&
            go_install_pinned "$dir" go.abhg.dev/gs "$GIT_SPICE_VERSION" go.abhg.dev/gs/cmd/shamhub ||
            tools_die "building git-spice's shamhub forge failed (see above)" "check 'go version' (needs Go >= 1.26)"
    fi
    printf '%s\n' "$dir"
}

# Prints the path of a headless Chromium for the tests that look at `wt status --timeline`'s
# pictures. WT_TEST_CHROMIUM, when set, is used as it is; else a `chromium` on PATH; else Debian's
# package is unpacked into the cache, without root: apt says which packages this machine lacks for
# it (`apt-get -s install`, a simulation), `apt-get download` fetches them, `dpkg -x` unpacks them,
# and a wrapper points the loader at the unpacked libraries. The cache is keyed by the version apt
# offers; when apt offers none, a Chromium unpacked earlier is used.
ensure_chromium() {
    if [ -n "${WT_TEST_CHROMIUM:-}" ]; then
        [ -x "$WT_TEST_CHROMIUM" ] ||
            tools_die "WT_TEST_CHROMIUM=$WT_TEST_CHROMIUM is not an executable" "unset it to let this script install Chromium"
        printf '%s\n' "$WT_TEST_CHROMIUM"
        return
    fi
    local found version root
    found=$(command -v chromium || command -v chromium-browser || true)
    if [ -n "$found" ]; then
        printf '%s\n' "$found"
        return
    fi
    version=$(apt-cache policy chromium 2>/dev/null | awk '$1 == "Candidate:" && $2 != "(none)" {print $2}')
    if [ -z "$version" ]; then
        found=$(find "$(tools_root)" -maxdepth 2 -path '*/chromium-*/chromium' -type f 2>/dev/null | sort -V | tail -n 1)
        [ -n "$found" ] && { printf '%s\n' "$found"; return; }
        tools_die "Chromium is not installed and apt offers no chromium package to unpack" \
            "on Debian or Ubuntu run 'apt-get update' as root, then this script again; elsewhere install Chromium and set WT_TEST_CHROMIUM=<its binary>"
    fi
    root="$(tools_root)/chromium-$version"
    [ -x "$root/chromium" ] || unpack_chromium "$root" "$version"
    printf '%s\n' "$root/chromium"
}

# Unpacks Chromium <version> and the packages this machine lacks for it into <root>: built in a
# scratch folder next to it, checked, then renamed into place.
unpack_chromium() {
    local root=$1 version=$2 scratch packages deb libraries dir
    command -v apt-get >/dev/null 2>&1 && command -v dpkg >/dev/null 2>&1 ||
        tools_die "apt-get and dpkg are needed to unpack Chromium" "install Chromium and set WT_TEST_CHROMIUM=<its binary>"
    printf 'unpacking Chromium %s into %s (one time, about 400 MB)\n' "$version" "$root" >&2
    mkdir -p "$(tools_root)"
    scratch=$(mktemp -d "$(tools_root)/.chromium-XXXXXX") || tools_die "cannot make a folder in $(tools_root)"
    # libc6 is never taken from elsewhere: the loader and the C library must be the machine's own.
    packages=$(apt-get -s install --no-install-recommends chromium fonts-dejavu-core 2>/dev/null |
        awk '$1 == "Inst" && $2 != "libc6" && $2 != "libc-bin" {print $2}')
    case " $(printf '%s ' $packages)" in
    *" chromium "*) ;;
    *)
        rm -rf "$scratch"
        tools_die "apt cannot resolve the chromium package's dependencies ('apt-get -s install chromium' fails)" \
            "run 'apt-get -s install chromium' to see why, or install Chromium and set WT_TEST_CHROMIUM=<its binary>"
        ;;
    esac
    local sandbox=()
    [ "$(id -u)" = 0 ] && sandbox=(-o APT::Sandbox::User=root)
    mkdir -p "$scratch/debs" "$scratch/root"
    # shellcheck disable=SC2086 # one package a word
    (cd "$scratch/debs" && apt-get download -q "${sandbox[@]}" $packages >&2) || {
        rm -rf "$scratch"
        tools_die "apt-get download of Chromium's packages failed (see above)" "check that the Debian mirror is reachable"
    }
    for deb in "$scratch"/debs/*.deb; do
        dpkg -x "$deb" "$scratch/root" || { rm -rf "$scratch"; tools_die "dpkg -x $deb failed"; }
    done
    rm -rf "$scratch/debs"
    # Every folder that holds a shared library, relative to the wrapper (some, like
    # pulseaudio's, are found through an rpath that points at /usr).
    libraries=$(cd "$scratch" && find root -name '*.so*' \( -type f -o -type l \) -printf '%h\n' | sort -u)
    {
        printf '#!/bin/sh\n# Chromium %s unpacked by scripts/lib/tools.sh (ensure_chromium).\n' "$version"
        printf 'here=$(cd "$(dirname "$0")" && pwd)\n'
        printf 'LD_LIBRARY_PATH=%s${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}\n' \
            "$(printf '$here/%s\n' $libraries | paste -sd: -)"
        printf 'FONTCONFIG_FILE=$here/fonts.conf\n'
        printf 'export LD_LIBRARY_PATH FONTCONFIG_FILE\n'
        printf 'exec "$here/root/usr/lib/chromium/chromium" "$@"\n'
    } >"$scratch/chromium"
    chmod +x "$scratch/chromium"
    # The machine's fonts, and those unpacked here (fonts-dejavu-core, when the machine has none).
    cat >"$scratch/fonts.conf" <<'CONF'
<?xml version="1.0"?>
<!DOCTYPE fontconfig SYSTEM "fonts.dtd">
<fontconfig>
  <include ignore_missing="yes">/etc/fonts/fonts.conf</include>
  <include ignore_missing="yes" prefix="relative">root/etc/fonts/fonts.conf</include>
  <dir prefix="relative">root/usr/share/fonts</dir>
  <cachedir prefix="relative">fontconfig-cache</cachedir>
</fontconfig>
CONF
    local dom
    dom=$(HOME="$scratch/home" timeout 120 "$scratch/chromium" --headless --no-sandbox --disable-gpu \
        --user-data-dir="$scratch/profile" --dump-dom 'data:text/html,<p>chromium%20works</p>' 2>"$scratch/stderr")
    case "$dom" in
    *"<p>chromium works</p>"*) ;;
    *)
        tail -n 20 "$scratch/stderr" >&2
        rm -rf "$scratch"
        tools_die "the unpacked Chromium does not start (its last messages are above)" \
            "install Chromium and set WT_TEST_CHROMIUM=<its binary>"
        ;;
    esac
    rm -rf "$scratch/home" "$scratch/profile" "$scratch/stderr"
    rm -rf "$root"
    mv "$scratch" "$root" || tools_die "cannot move the unpacked Chromium to $root"
}
