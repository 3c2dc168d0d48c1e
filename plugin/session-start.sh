#!/bin/sh
# SessionStart hook: a quick check that the pieces /spectacular:execute needs are there. What it
# prints goes into the session's context.
if ! command -v spectacular-wt >/dev/null 2>&1; then
    echo "spectacular: spectacular-wt is not on PATH; /spectacular:execute needs it (cargo install --locked --path <spectacular repo> installs wt and spectacular-wt)."
    exit 0
fi
exec spectacular-wt hook session-start
