# Sourced by scripts/test and scripts/demo: create .venv if missing and install the project
# (with test extras) when pyproject.toml changed since the last install.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
py=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$py" -m venv .venv
fi
stamp=.venv/.owed-install-stamp
want=$(sha256sum pyproject.toml | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ] || ! .venv/bin/python -c 'import owed' 2>/dev/null; then
  .venv/bin/python -m pip install -q --disable-pip-version-check -e '.[test]'
  # Bytecode now, once: where PYTHONDONTWRITEBYTECODE is set every `owed` call would compile its modules.
  .venv/bin/python -m compileall -q owed driver runner >/dev/null || true
  echo "$want" > "$stamp"
fi
export PATH="$root/.venv/bin:$PATH"
