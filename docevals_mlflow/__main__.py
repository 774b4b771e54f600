"""``python -m docevals_mlflow``: the same as the ``docevals`` command."""

import sys

from docevals_mlflow.cli import main

if __name__ == "__main__":
    sys.exit(main())
