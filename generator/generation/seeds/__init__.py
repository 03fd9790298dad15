"""Seed sequences from outside the generator's own pools: calls carved from the project's tests, and
the callables that calls return."""
