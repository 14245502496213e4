"""The entry: python3 bench/numabench ARGS (a directory with __main__.py), or
python3 -m numabench ARGS from bench/."""

import os
import sys

if __package__ in (None, ""):
    # run as a directory: the package is the directory itself
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from numabench._cli import main
else:
    from ._cli import main

sys.exit(main(sys.argv[1:]))
