"""``python -m transcript_tools`` works like ``tt``."""

from transcript_tools.cli import main

if __name__ == "__main__":
    main()
