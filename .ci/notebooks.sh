#!/usr/bin/env bash
# Executes every notebooks/*.ipynb on the tslab TypeScript kernel; exits non-zero, naming the
# notebook and the cell, if a cell fails or writes to stderr. Run after `npm ci`: it builds
# dist/ (the notebooks import "stepflow") and installs tslab into notebooks/kernel/ if missing.
#
#   bash .ci/notebooks.sh                    # execute; the notebooks are left as they are
#   bash .ci/notebooks.sh --inplace          # execute and save the outputs into the notebooks
#   bash .ci/notebooks.sh --inplace notebooks/sessions.ipynb   # only these notebooks
#   bash .ci/notebooks.sh --install-kernel   # register the kernel for Jupyter, VS Code, …
#
# Runs Debian's Jupyter (/usr/bin/python3 with nbclient), installing it with apt-get when
# missing (as root). The kernel is tslab started through notebooks/tslab-kernel.cjs, so that
# cells can import "stepflow" and declare `@step` classes; for a run it is registered in a temporary
# JUPYTER_PATH (never the user's kernels, which another checkout may be using), and
# --install-kernel registers it for the current user as "tslab-stepflow".
# The notebooks run on the offline demo model: OPENAI_API_KEY and OPENAI_BASE_URL are unset.
# A cell may take NOTEBOOK_CELL_TIMEOUT seconds (default 120).
set -euo pipefail
cd "$(dirname "$0")/.."

inplace=false
install_kernel=false
notebooks=()
for arg in "$@"; do
  case $arg in
    --inplace) inplace=true ;;
    --install-kernel) install_kernel=true ;;
    -h | --help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "notebooks.sh: unknown option $arg (see --help)" >&2; exit 2 ;;
    *) notebooks+=("$arg") ;;
  esac
done

if [ ! -f node_modules/typescript/package.json ]; then
  echo "notebooks.sh: node_modules is missing: run npm ci first" >&2
  exit 1
fi
if [ ! -f notebooks/kernel/node_modules/tslab/package.json ]; then
  echo "== notebooks: installing tslab into notebooks/kernel"
  npm ci --prefix notebooks/kernel --no-audit --no-fund --loglevel=error
fi

# kernel_spec DIR: writes DIR/tslab-stepflow/kernel.json. Jupyter starts a kernel in the
# notebook's folder, so the path is relative to notebooks/: the spec fits any checkout.
kernel_spec() {
  mkdir -p "$1/tslab-stepflow"
  cat >"$1/tslab-stepflow/kernel.json" <<EOF
{
  "argv": ["node", "tslab-kernel.cjs", "kernel", "--config-path", "{connection_file}"],
  "display_name": "TypeScript (tslab, stepflow)",
  "language": "typescript"
}
EOF
}

if $install_kernel; then
  # The Jupyter the user runs (a pip/venv one is fine; a pyenv shim without one is skipped), else
  # Debian's: a kernel installed --user is seen by every Jupyter of the user.
  jupyter=
  for candidate in "$(command -v jupyter || true)" /usr/bin/jupyter; do
    if [ -n "$candidate" ] && "$candidate" --version >/dev/null 2>&1; then jupyter=$candidate; break; fi
  done
  if [ -z "$jupyter" ]; then
    echo "notebooks.sh: jupyter is not installed (apt-get install jupyter-notebook, or pip install jupyterlab)" >&2
    exit 1
  fi
  spec=$(mktemp -d)
  trap 'rm -rf "$spec"' EXIT
  kernel_spec "$spec"
  "$jupyter" kernelspec install --user --replace --name tslab-stepflow "$spec/tslab-stepflow"
  exit 0
fi

if [ ${#notebooks[@]} -eq 0 ]; then
  shopt -s nullglob
  notebooks=(notebooks/*.ipynb)
  shopt -u nullglob
fi
if [ ${#notebooks[@]} -eq 0 ]; then
  echo "notebooks.sh: no notebooks/*.ipynb to run" >&2
  exit 1
fi

# -- Jupyter, from Debian's packages (no PyPI): nbclient is what `jupyter nbconvert --execute`
# runs; calling it directly lets this script name the failing cell.
echo "== notebooks: npm run build (the notebooks import the built package)"
npm run build --silent

source .ci/apt.sh
apt_install jupyter-nbconvert python3-nbclient python3-ipykernel jupyter-client
# Debian's python3, not one that a pyenv or venv earlier on PATH may shadow.
python=/usr/bin/python3

jupyter_path=$(mktemp -d)
trap 'rm -rf "$jupyter_path"' EXIT
kernel_spec "$jupyter_path/kernels"

echo "== notebooks: node $(node --version), tslab $(node -p 'require("./notebooks/kernel/node_modules/tslab/package.json").version'), nbclient $($python -c 'import nbclient; print(nbclient.__version__)')"
env -u OPENAI_API_KEY -u OPENAI_BASE_URL JUPYTER_PATH="$jupyter_path" "$python" -u - "$inplace" "${notebooks[@]}" <<'PY'
import os, sys, time
import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

inplace = sys.argv[1] == "true"
failed = []

def text_of(output):
    if output.get("output_type") == "stream":
        return output.get("text", "")
    if output.get("output_type") == "error":
        return "\n".join(output.get("traceback", [])) or f"{output.get('ename')}: {output.get('evalue')}"
    return output.get("data", {}).get("text/plain", "")

def report(path, index, cell, why):
    number = sum(1 for c in nb.cells[: index + 1] if c.cell_type == "code")
    print(f"FAILED  {path}, cell {index + 1} (code cell {number}): {why}", file=sys.stderr)
    print(f"--- the cell:\n{cell.source}\n--- its output:", file=sys.stderr)
    for output in cell.get("outputs", []):
        print(text_of(output).rstrip()[-4000:], file=sys.stderr)
    print("---", file=sys.stderr)

for path in sys.argv[2:]:
    if not os.path.isfile(path):
        failed.append(path)
        print(f"FAILED  {path}: no such notebook", file=sys.stderr)
        continue
    nb = nbformat.read(path, as_version=4)
    committed = [c.get("outputs") for c in nb.cells if c.cell_type == "code"]
    current = {}
    client = NotebookClient(
        nb,
        kernel_name="tslab-stepflow",
        timeout=int(os.environ.get("NOTEBOOK_CELL_TIMEOUT", "120")),  # seconds per cell
        startup_timeout=120,
        record_timing=False,  # no timestamps in the saved notebooks
        resources={"metadata": {"path": os.path.dirname(os.path.abspath(path))}},
        on_cell_start=lambda cell, cell_index: current.update(cell=cell, index=cell_index),
    )
    start = time.monotonic()
    try:
        client.execute()
    except Exception as error:  # a failed cell (tslab reports it on stderr), a timeout, a dead kernel
        failed.append(path)
        why = "the cell failed" if isinstance(error, CellExecutionError) else f"{type(error).__name__}: {(str(error).strip().splitlines() or [''])[0]}"
        if current:
            report(path, current["index"], current["cell"], why)
        else:
            print(f"FAILED  {path}: {why}", file=sys.stderr)
        continue
    # A cell that "succeeded" but printed to stderr (a warning, an unhandled rejection) fails too.
    noisy = [(i, c) for i, c in enumerate(nb.cells) if any(o.get("name") == "stderr" for o in c.get("outputs", []))]
    if noisy:
        failed.append(path)
        for index, cell in noisy:
            report(path, index, cell, "the cell wrote to stderr")
        continue
    seconds = time.monotonic() - start
    if inplace:
        nbformat.write(nb, path)
        print(f"ok      {path} ({seconds:.0f} s), outputs saved")
    else:
        same = committed == [c.get("outputs") for c in nb.cells if c.cell_type == "code"]
        print(f"ok      {path} ({seconds:.0f} s)" + ("" if same else "; its saved outputs differ from this run's (--inplace updates them)"))

print(f"notebooks: {len(sys.argv) - 2 - len(failed)} passed, {len(failed)} failed")
if failed:
    print("notebooks.sh: failed: " + " ".join(failed), file=sys.stderr)
    sys.exit(1)
PY
