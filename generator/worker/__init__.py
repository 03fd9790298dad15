"""Code that runs inside the project's interpreter: standard library only (see boot.py)."""
