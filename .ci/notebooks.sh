#!/usr/bin/env bash
# Executes every notebooks/*.ipynb on the tslab TypeScript kernel; exits non-zero, naming the
# notebook, if any cell fails. Run after `npm ci` (tslab comes from devDependencies).
#
#   bash .ci/notebooks.sh            # execute; the notebooks in the work tree are left as they are
#   bash .ci/notebooks.sh --inplace  # execute and save the outputs into the notebooks (to commit)
#   bash .ci/notebooks.sh --inplace notebooks/sessions.ipynb   # only these notebooks
#   bash .ci/notebooks.sh --install-kernel   # only register the kernel (for jupyter or VS Code)
#
# Installs Debian's Jupyter (nbclient, jupyter-client) when missing (needs root), and registers
# the kernel "tslab-stepflow" for the current user: tslab started through
# notebooks/tslab-kernel.cjs, so that cells can import the repository's .ts modules.
# The notebooks run on the offline demo model: OPENAI_API_KEY and OPENAI_BASE_URL are unset.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

inplace=false
install_only=false
notebooks=()
for arg in "$@"; do
  case $arg in
    --inplace) inplace=true ;;
    --install-kernel) install_only=true ;;
    -h | --help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) notebooks+=("$arg") ;;
  esac
done
if [ ${#notebooks[@]} -eq 0 ]; then
  shopt -s nullglob
  notebooks=(notebooks/*.ipynb)
  shopt -u nullglob
fi
if [ ${#notebooks[@]} -eq 0 ] && ! $install_only; then
  echo "notebooks.sh: no notebooks/*.ipynb to run" >&2
  exit 1
fi

# -- Jupyter, from Debian's packages (no PyPI). nbclient is what `jupyter nbconvert --execute`
# runs; calling it directly lets this script name the failing cell.
source .ci/apt.sh
apt_install jupyter-nbconvert python3-nbclient python3-ipykernel jupyter-client
# Debian's python3 and jupyter, not ones that a pyenv or venv earlier on PATH may shadow.
python=/usr/bin/python3
jupyter=/usr/bin/jupyter

# -- the kernel
if [ ! -f node_modules/tslab/package.json ]; then
  echo "notebooks.sh: node_modules/tslab is missing: run npm ci first (tslab is a devDependency)" >&2
  exit 1
fi
node=$(command -v node)
spec=$(mktemp -d)
out=$(mktemp -d)
trap 'rm -rf "$spec" "$out"' EXIT
cat >"$spec/kernel.json" <<EOF
{
  "argv": ["$node", "$repo/notebooks/tslab-kernel.cjs", "kernel", "--config-path", "{connection_file}"],
  "display_name": "TypeScript (tslab, stepflow)",
  "language": "typescript"
}
EOF
"$jupyter" kernelspec install --user --replace --name tslab-stepflow "$spec" >/dev/null 2>&1 || {
  "$jupyter" kernelspec install --user --replace --name tslab-stepflow "$spec"
  exit 1
}

if $install_only; then
  echo "Registered the Jupyter kernel \"TypeScript (tslab, stepflow)\" (tslab-stepflow)."
  exit 0
fi

# -- run them: nbclient, as `jupyter nbconvert --to notebook --execute` does, but naming the
# failing notebook and cell with what the kernel printed (tslab reports a failed cell on stderr).
echo "== notebooks: node $(node --version), tslab $(node -p 'require("tslab/package.json").version'), nbclient $($python -c 'import nbclient; print(nbclient.__version__)')"
env -u OPENAI_API_KEY -u OPENAI_BASE_URL "$python" - "$inplace" "${notebooks[@]}" <<'PY'
import os, sys, time
import nbformat
from nbclient import NotebookClient

inplace = sys.argv[1] == "true"
failed = []
for path in sys.argv[2:]:
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb,
        kernel_name="tslab-stepflow",
        timeout=120,  # seconds per cell
        startup_timeout=120,
        record_timing=False,  # no timestamps in the saved notebooks
        resources={"metadata": {"path": os.path.dirname(os.path.abspath(path))}},
    )
    start = time.monotonic()
    try:
        client.execute()
    except Exception as error:  # a failed cell, a cell timeout, a dead kernel
        failed.append(path)
        print(f"FAILED  {path} ({time.monotonic() - start:.0f} s)", file=sys.stderr)
        index = client.code_cells_executed  # 1-based index of the last code cell that was started
        cell = next((c for c in nb.cells if c.get("execution_count") == index), None) if index else None
        if cell is not None:
            print(f"--- code cell {index}:\n{cell.source}\n--- its output:", file=sys.stderr)
            for out in cell.get("outputs", []):
                text = out.get("text") or out.get("data", {}).get("text/plain") or "\n".join(out.get("traceback", []))
                print(text.rstrip()[-4000:], file=sys.stderr)
        print(f"--- {type(error).__name__}: {str(error).strip()[-2000:]}", file=sys.stderr)
        continue
    print(f"ok      {path} ({time.monotonic() - start:.0f} s)")
    if inplace:
        nbformat.write(nb, path)

print(f"notebooks: {len(sys.argv) - 2 - len(failed)} passed, {len(failed)} failed")
if failed:
    print("notebooks.sh: failed: " + " ".join(failed), file=sys.stderr)
    sys.exit(1)
PY
