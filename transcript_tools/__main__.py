"""``python -m transcript_tools`` works like ``tt``."""

from transcript_tools.cli import run

if __name__ == "__main__":
    run()
