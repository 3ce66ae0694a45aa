#!/usr/bin/env bash
# Installs MPI for the Python package's mpiexec tests into the git-ignored .venv:
# the MPICH wheel (libmpi and Hydra's mpiexec in .venv/bin) and mpi4py,
# pinned in requirements-mpi.txt, then checks that `mpiexec -n 2` starts two
# ranks that talk. Hydra's fork launcher starts the ranks on this machine
# without ssh or a network, also as root.
# Needs scripts/setup-10-venv.sh to have made .venv.
# Prints the environment for the tests on stdout; progress goes to stderr.
set -euo pipefail
cd "$(dirname "$0")/.."
exec 3>&1 1>&2

py=.venv/bin/python
if ! [ -x "$py" ]; then
	echo "setup-50-mpi: .venv is missing (scripts/setup-10-venv.sh makes it)"
	exit 1
fi
if ! cmp -s requirements-mpi.txt .venv/.installed-mpi 2>/dev/null; then
	"$py" -m pip install -q --disable-pip-version-check -r requirements-mpi.txt
	cp requirements-mpi.txt .venv/.installed-mpi
fi
mpiexec="$PWD/.venv/bin/mpiexec"
if ! [ -x "$mpiexec" ]; then
	echo "setup-50-mpi: the mpich wheel installed no $mpiexec"
	exit 1
fi
if ! timeout 120 "$mpiexec" -launcher fork -n 2 "$py" -c '
from mpi4py import MPI
c = MPI.COMM_WORLD
assert c.size == 2 and c.allreduce(c.rank + 1) == 3
if c.rank == 0:
    print("setup-50-mpi: mpi4py", __import__("mpi4py").__version__, "on", MPI.Get_library_version().splitlines()[0].strip())
'; then
	echo "setup-50-mpi: mpiexec -n 2 does not run"
	exit 1
fi
echo "export USMBRIDGE_MPIEXEC=$mpiexec" >&3
