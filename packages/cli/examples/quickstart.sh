#!/bin/sh
# The example of docs/integrations/cli.md; test/docs-example.test.ts runs it and checks the page shows it verbatim.
set -u
TARGET=${SBX_TARGET:-docker://python:3.12-slim}

sbx doctor --quiet || echo "no isolating backend here: see the remedies above"

# Streams output and exits with the command's own exit code.
sbx run --target "$TARGET" -- 'python3 -c "print(6 * 7)"; exit 3'
echo "exit code: $?"

# Code from standard input; --json for scripts.
echo 'print(sum(range(10)))' | sbx code --target "$TARGET" --json - | grep '"stdout"'

# Typed errors come with a remedy (and exit status 124 for a timeout).
sbx run --target "$TARGET" --timeout 1s -- sleep 30
echo "exit code: $?"
