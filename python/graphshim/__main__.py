"""The graphshim command (``graphshim`` and ``python -m graphshim``).

It is the launcher (scripts/graphshim) that the package carries next to
libgraphshim.so and graphshim-report: this process becomes the launcher, with
the same arguments, so both commands have the launcher's behaviour, help and
exit statuses.  ``graphshim run -- PROGRAM`` runs PROGRAM with the package's
libgraphshim.so first in LD_PRELOAD (by absolute path, ahead of any already
there), and, in a virtual environment, its bin first in PATH.
"""
import os
import sys


def main():
    launcher = os.path.join(os.path.dirname(os.path.abspath(__file__)), "graphshim")
    # In a virtual environment, its bin first in PATH, as its activate script
    # puts it: `graphshim run -- python train.py` runs the environment's python,
    # which imports graphshim, even where the environment is not activated.
    if sys.prefix != getattr(sys, "base_prefix", sys.prefix):
        bindir = os.path.dirname(os.path.abspath(sys.executable))
        path = os.environ.get("PATH", "")
        if path.split(os.pathsep)[0:1] != [bindir]:
            os.environ["PATH"] = bindir + (os.pathsep + path if path else "")
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execv(launcher, [launcher] + sys.argv[1:])
    except OSError as e:
        print(f"graphshim: cannot run the launcher {launcher}: {e.strerror}", file=sys.stderr)
        return 126


if __name__ == "__main__":
    sys.exit(main())
