"""Helpers the tests share: builders of small git repositories, the fake GitHub, the App's
processes, hostile projects, and the engine's parts set up the way the engine sets them up."""
