"""The graphshim command (``graphshim`` and ``python -m graphshim``).

It is the launcher (scripts/graphshim) that the package carries next to
libgraphshim.so and graphshim-report: this process becomes the launcher, with
the same arguments, so both commands have the launcher's behaviour, help and
exit statuses.  ``graphshim run -- PROGRAM`` runs PROGRAM with the package's
libgraphshim.so first in LD_PRELOAD (by absolute path, ahead of any already
there).
"""
import os
import sys


def main():
    launcher = os.path.join(os.path.dirname(os.path.abspath(__file__)), "graphshim")
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execv(launcher, [launcher] + sys.argv[1:])
    except OSError as e:
        print(f"graphshim: cannot run the launcher {launcher}: {e.strerror}", file=sys.stderr)
        return 126


if __name__ == "__main__":
    sys.exit(main())
