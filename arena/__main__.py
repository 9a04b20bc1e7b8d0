"""`python -m arena` runs the command-line interface."""

from arena.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
