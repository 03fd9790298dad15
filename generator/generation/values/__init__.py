"""Argument values: primitives and containers, constants mined from the source, strings of small
languages, and fuzzed variants of values that already work."""
