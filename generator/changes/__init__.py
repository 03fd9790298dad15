"""What changed: base and head checked out side by side, the diff mapped onto modules and units, the
files a run takes changes from, and which changed lines can run and did run."""
