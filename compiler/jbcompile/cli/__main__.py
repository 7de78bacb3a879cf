"""`python -m jbcompile.cli` runs the command line (used by `accelerate launch`)."""

from . import main

if __name__ == "__main__":
    main()
