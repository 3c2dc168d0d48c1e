#!/bin/sh
# SessionStart hook: a quick check that the pieces /spectacular:execute needs are there. What it
# prints goes into the session's context.
if ! command -v wt >/dev/null 2>&1; then
    echo "spectacular: wt is not on PATH; /spectacular:execute needs it (build it with cargo install --path <spectacular repo>)."
    exit 0
fi
exec wt hook session-start
