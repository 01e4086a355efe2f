# Sourced by scripts/test: Graphviz's `dot` for the `owed graph --format svg` tests (Debian `graphviz`).
# Idempotent and quiet: nothing happens when `dot` is already there, or without root or apt-get (the SVG
# test then skips, saying why). As root (CI) the SVG test needs `dot`: a failed install makes it fail.
if ! command -v dot >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends graphviz; } \
    >/dev/null 2>&1 || echo "scripts/test: could not install graphviz (apt-get); the SVG test will fail" >&2
fi
