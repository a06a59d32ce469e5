"""Entry point: `python3 -m toolbox` serves JSON lines on stdin/stdout until EOF."""

from .server import main

if __name__ == "__main__":
    main()
