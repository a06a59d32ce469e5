"""Entry point: `python3 -m toolbox [--observer]` serves JSON lines on stdin/stdout until EOF."""

import sys

from .server import main

if __name__ == "__main__":
    main(observer="--observer" in sys.argv[1:])
