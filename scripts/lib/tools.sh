# Tool provisioning shared by scripts/demo, scripts/test and scripts/bench.
#
# Everything the scripts need beyond a Rust and Go toolchain is installed on first use into a
# cache outside the clone, keyed by version, so a fresh clone (and CI) reuses earlier builds:
#   ${SPECTACULAR_TOOLS:-$HOME/.cache/spectacular-tools}/<tool>-<version>/bin/
# Source this file; call ensure_git_spice / ensure_nextest; each prints the bin directory.

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
ensure_git_spice() {
    local dir
    dir="$(tools_root)/git-spice-$GIT_SPICE_VERSION/bin"
    if [ ! -x "$dir/gs" ]; then
        command -v go >/dev/null 2>&1 ||
            tools_die "git-spice $GIT_SPICE_VERSION is not installed and Go is not on PATH to build it" \
                "install Go >= 1.26 (https://go.dev/doc/install), then run this script again"
        printf 'installing git-spice %s into %s (one time, about a minute)\n' "$GIT_SPICE_VERSION" "$dir" >&2
        go_install_pinned "$dir" go.abhg.dev/gs "$GIT_SPICE_VERSION" go.abhg.dev/gs ||
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
