"""Directed search for changed code that random generation leaves unreached: influence-directed
receivers (JTestCraft), the path memo, and solver-found inputs (CrossHair)."""
